//! DISCARD: a full buffer drops records and the callback reports drop_count.
mod common;
use common::*;
use rocprofiler_sim::options::RunOptions;

#[test]
fn discard_reports_drop_count() {
    let e = env_with(&[
        ("ROCSIM_TOOL_POLICY", "discard"),
        ("ROCSIM_TOOL_BUFFER_BYTES", "4096"),
        ("ROCSIM_TOOL_WATERMARK", "4096"),
        ("ROCSIM_TOOL_SLOW_CALLBACK_US", "2000"),
    ]);
    let (_, v) = e.run(
        "graph-32x200.json",
        RunOptions {
            virtual_time: true,
            ..Default::default()
        },
    );
    let got = rows(&v, "dispatches").len();
    let dropped = v["max_drop_count"].as_u64().unwrap();
    assert!(dropped > 0, "drop_count reported");
    assert!(got < 6400, "records were dropped ({got} delivered)");
}
