//! SDK 1.0: no HIP_GRAPH domain; configuring it gets the real status.
mod common;
use common::*;
use rocprofiler_sim::options::RunOptions;

#[test]
fn sdk_1_0_rejects_hip_graph_and_still_traces_dispatches() {
    let e = env();
    let w = std::fs::read_to_string(workload("topology-fanout2.json"))
        .unwrap()
        .replace("\"1.3.0\"", "\"1.0.0\"");
    e.sim
        .run_workload(
            &w,
            &RunOptions {
                virtual_time: true,
                ..Default::default()
            },
        )
        .unwrap();
    e.sim.wait_idle(std::time::Duration::from_secs(30)).unwrap();
    let v = e.tool_results();
    assert_eq!(v["sdk_version_seen"], 10000);
    let p = probes(&v);
    // domain.cpp add_domain: past LAST -> ROCPROFILER_STATUS_ERROR_KIND_NOT_FOUND (4).
    assert_eq!(p["callback HIP_GRAPH"], 4);
    assert_eq!(p["buffer kind 33"], 4);
    assert_eq!(p["callback kind 5"], 0);
    assert!(
        rows(&v, "callbacks").iter().all(|c| c[0] != 22),
        "no HIP_GRAPH callbacks on 1.0"
    );
    assert_eq!(rows(&v, "dispatches").len(), 1200);
    assert_eq!(rows(&v, "requests").len(), 1200);
    assert!(rows(&v, "graph_records").is_empty());
    // A 1.3 workload in the same process is refused: one SDK per process.
    let err = e
        .sim
        .run_workload_file(&workload("topology-fanout2.json"), &RunOptions::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("1.0.0") && err.contains("1.3.0"), "{err}");
}
