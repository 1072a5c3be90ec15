//! The callback dispatch counting service answers as the SDK's
//! counters/dispatch_handlers.cpp and sample_processing.cpp do: the tool
//! picks a config per dispatch, and once the dispatch completed gets one
//! record per counter instance (every instance VERSION_1 lists for the
//! counter), with the dispatch's timestamps, correlation id, agent and the
//! user data it wrote; the values are the ones the ground truth says each
//! instance counted, and they sum to the counter's value.
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

/// The tool's records by dispatch id: counter id -> rows, in record order.
fn by_dispatch(v: &serde_json::Value) -> HashMap<u64, HashMap<u64, Vec<Vec<u64>>>> {
    let mut out: HashMap<u64, HashMap<u64, Vec<Vec<u64>>>> = HashMap::new();
    for row in rows(v, "counter_records") {
        out.entry(row[0])
            .or_default()
            .entry(row[1])
            .or_default()
            .push(row);
    }
    out
}

/// The instance id the SDK's id_decode.hpp encodes for these positions.
fn instance_id(counter: u64, dims: &[(String, usize)]) -> u64 {
    dims.iter().fold(counter << 48, |id, (name, pos)| {
        let dim = match name.as_str() {
            "DIMENSION_XCC" => 1,
            "DIMENSION_SHADER_ENGINE" => 3,
            "DIMENSION_INSTANCE" => 7,
            other => panic!("unexpected dimension {other}"),
        };
        id | ((*pos as u64) << ((dim - 1) * 6))
    })
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
            "dispatch {}: the three counters",
            op.dispatch_id
        );
        // SQ is per XCC and shader engine (8 x 4), GRBM per XCC, GPU_UTIL
        // reduced to one instance.
        let names = [
            (0, "SQ_WAVES", 32),
            (2, "GRBM_COUNT", 8),
            (5, "GPU_UTIL", 1),
        ];
        for (id, name, instances) in names {
            let rows = &got[&id];
            assert_eq!(rows.len(), instances, "{name}: one record per instance");
            let truth: Vec<_> = op
                .counter_instances
                .iter()
                .filter(|i| i.counter == name)
                .collect();
            assert_eq!(
                truth.len(),
                instances,
                "{name}: the truth keeps each instance"
            );
            let sum: f64 = rows.iter().map(|r| f64::from_bits(r[2])).sum();
            assert_eq!(sum, op.counters[name], "{name}: instances sum to the value");
            for (row, t) in rows.iter().zip(&truth) {
                assert_eq!(f64::from_bits(row[2]), t.value, "{name}");
                assert_eq!(row[8], instance_id(id, &t.dimensions), "{name}: {t:?}");
                assert_eq!((row[3], row[4]), (op.start_ns, op.end_ns));
                assert_eq!(
                    row[5],
                    op.dispatch_id + 1000,
                    "the dispatch callback's user data"
                );
                assert_eq!(row[6], op.record_correlation_id);
                assert_eq!(row[7], op.agent_id);
            }
            let ids: std::collections::HashSet<u64> = rows.iter().map(|r| r[8]).collect();
            assert_eq!(ids.len(), instances, "{name}: distinct instances");
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
