//! The callback dispatch counting service answers as the SDK's
//! counters/dispatch_handlers.cpp and sample_processing.cpp do: the tool
//! picks a config per dispatch, and once the dispatch completed gets one
//! record per counter, with the dispatch's timestamps, correlation id,
//! agent and the user data it wrote; the values are the ones the ground
//! truth says the dispatch counted.
mod common;
use common::*;
use rocprofiler_sim::options::{RunOptions, SubmissionModel};
use rocprofiler_sim::truth::{OpKind, RunTruth};
use std::collections::HashMap;

/// SQ_WAVES, GRBM_COUNT and GPU_UTIL (catalog ids 0, 2 and 5).
const IDS: &str = "0,2,5";

fn counting_env() -> &'static Env {
    env_with(&[("ROCSIM_TOOL_COUNTER_IDS", IDS)])
}

/// The tool's records by dispatch id: counter id -> row.
fn by_dispatch(v: &serde_json::Value) -> HashMap<u64, HashMap<u64, Vec<u64>>> {
    let mut out: HashMap<u64, HashMap<u64, Vec<u64>>> = HashMap::new();
    for row in rows(v, "counter_records") {
        out.entry(row[0]).or_default().insert(row[1], row);
    }
    out
}

fn check(truth: &RunTruth, v: &serde_json::Value) {
    let records = by_dispatch(v);
    let kernels: Vec<_> = truth
        .ops
        .iter()
        .filter(|o| o.kind == OpKind::Kernel)
        .collect();
    assert!(!kernels.is_empty());
    assert_eq!(records.len(), kernels.len(), "one record set per dispatch");
    for op in kernels {
        let got = &records[&op.dispatch_id];
        assert_eq!(
            got.len(),
            3,
            "dispatch {}: one record per counter",
            op.dispatch_id
        );
        let names = [(0, "SQ_WAVES"), (2, "GRBM_COUNT"), (5, "GPU_UTIL")];
        for (id, name) in names {
            let row = &got[&id];
            assert_eq!(f64::from_bits(row[2]), op.counters[name], "{name}");
            assert_eq!((row[3], row[4]), (op.start_ns, op.end_ns));
            assert_eq!(
                row[5],
                op.dispatch_id + 1000,
                "the dispatch callback's user data"
            );
            assert_eq!(row[6], op.record_correlation_id);
            assert_eq!(row[7], op.agent_id);
        }
        let groups: u64 = (0..3)
            .map(|i| u64::from(op.grid[i]).div_ceil(u64::from(op.block[i])))
            .product();
        let size: u64 = op.block.iter().map(|&b| u64::from(b)).product();
        assert_eq!(op.counters["SQ_WAVES"], (groups * size.div_ceil(64)) as f64);
        assert_eq!(
            op.counters["GRBM_COUNT"],
            ((op.end_ns - op.start_ns) * 21 / 10) as f64
        );
        assert_eq!(op.counters.len(), 3, "the truth holds what was collected");
    }
    for op in truth.ops.iter().filter(|o| o.kind == OpKind::Memcpy) {
        assert!(op.counters.is_empty(), "copies count nothing");
    }
}

#[test]
fn every_dispatch_counted_on_both_devices_and_models() {
    let _s = serial();
    let e = counting_env();
    for model in [SubmissionModel::Ideal, SubmissionModel::Rocm] {
        let (truth, v) = e.run(
            "two-devices.json",
            RunOptions {
                submission_model: Some(model),
                ..Default::default()
            },
        );
        assert_eq!(truth.devices, 2);
        check(&truth, &v);
        let probes = probes(&v);
        assert_eq!(probes["dispatch counting"], 0);
        assert_eq!(
            probes["dispatch counting unknown context"],
            rocprofiler_sys::rocprofiler_status_t::ERROR_CONTEXT_INVALID.0 as u64
        );
    }
}

#[test]
fn graph_nodes_are_counted() {
    let _s = serial();
    let e = counting_env();
    let (truth, v) = e.run(
        "graph-32x200.json",
        RunOptions {
            virtual_time: true,
            ..Default::default()
        },
    );
    check(&truth, &v);
    assert!(truth.ops.iter().any(|o| o.node_index.is_some()));
}
