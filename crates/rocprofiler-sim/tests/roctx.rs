//! ROCTX ranges (src/sdk/roctx.rs) return what roctx.cpp returns: a push
//! the level it starts at, a pop the level it closes, -1 with none open;
//! the levels are per thread. (That the SDK traces them to a tool is shown
//! by `kineto-rocm record --roctx-range`, crates/cli/tests/record.rs.)
mod common;
use common::*;

#[test]
fn nesting_levels_are_per_thread_and_a_pop_with_none_open_is_minus_one() {
    let sim = &env().sim;
    assert_eq!(sim.roctx_range_push("outer").unwrap(), 0);
    assert_eq!(sim.roctx_range_push("inner").unwrap(), 1);
    let other = std::thread::scope(|s| {
        s.spawn(|| {
            (
                sim.roctx_range_pop().unwrap(),
                sim.roctx_range_push("elsewhere").unwrap(),
                sim.roctx_range_pop().unwrap(),
            )
        })
        .join()
        .unwrap()
    });
    assert_eq!(other, (-1, 0, 0), "another thread starts at level 0");
    assert_eq!(sim.roctx_range_pop().unwrap(), 1);
    assert_eq!(sim.roctx_range_pop().unwrap(), 0);
    assert_eq!(sim.roctx_range_pop().unwrap(), -1);
}
