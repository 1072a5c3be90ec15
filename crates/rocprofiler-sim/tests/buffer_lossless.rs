//! LOSSLESS: a tiny buffer and a slow consumer lose nothing.
mod common;
use common::*;
use rocprofiler_sim::options::RunOptions;

#[test]
fn lossless_loses_nothing() {
    let e = env_with(&[
        ("ROCSIM_TOOL_POLICY", "lossless"),
        ("ROCSIM_TOOL_BUFFER_BYTES", "4096"),
        ("ROCSIM_TOOL_WATERMARK", "4096"),
        ("ROCSIM_TOOL_SLOW_CALLBACK_US", "200"),
    ]);
    let (_, v) = e.run(
        "graph-32x200.json",
        RunOptions {
            virtual_time: true,
            ..Default::default()
        },
    );
    assert_eq!(rows(&v, "dispatches").len(), 6400);
    assert_eq!(v["max_drop_count"], 0);
    assert!(v["buffer_callbacks"].as_u64().unwrap() > 100);
}
