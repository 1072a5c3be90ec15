//! stop_context does not wait for work in flight: records keep arriving.
mod common;
use common::*;
use rocprofiler_sim::options::RunOptions;

#[test]
fn records_arrive_after_stop_context() {
    let e = env();
    // 50 kernels of 2 ms each on one queue: ~100 ms of device work after the
    // launching thread returns.
    let w = r#"{"sdk_version": "1.3.0",
        "durations": {"default_kernel_ns": 2000000},
        "graphs": [{"name": "g", "nodes": [{"kernel": "slow_a"}, {"kernel": "slow_b", "deps": [0]}]}],
        "threads": [{"ops": [{"create_stream": {"name": "s"}},
            {"instantiate": {"graph": "g", "as": "e"}},
            {"launch": {"exec": "e", "stream": "s", "times": 25}}]}]}"#;
    e.sim.run_workload(w, &RunOptions::default()).unwrap();
    assert_eq!(e.tool_stop(), 0);
    e.sim.wait_idle(std::time::Duration::from_secs(30)).unwrap();
    let v = e.tool_results();
    let d = rows(&v, "dispatches");
    assert_eq!(d.len(), 50, "nothing lost");
    let after = d.iter().filter(|r| r[10] == 1).count();
    assert!(after > 0, "some records must arrive after stop_context");
}
