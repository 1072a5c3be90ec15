//! The ROCm timeline beyond kernels and copies, through our writer: the
//! `timeline` workload (memsets eager and graphed, a blit copy and an SDMA
//! copy, a peer copy, an event record and a wait on it, host functions
//! eager and graphed, an empty node, roctx marks and ranges, stream, event
//! and device synchronisation, mangled kernel names) runs through the real
//! tool library; `validate` checks every emitted field against the
//! simulator's truth, and the trace itself is read for each item's
//! category, lane and linkage.
mod common;

use common::{assert_clean, n, validate, workload};
use serde_json::Value;
use std::path::{Path, PathBuf};

const ARROWS: &str = "KINETO_ROCM_GRAPH_DEPENDENCY_ARROWS";

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kineto-rocm-timeline-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn events<'a>(trace: &'a Value, category: &'a str) -> Vec<&'a Value> {
    trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == category && e["ph"] == "X")
        .collect()
}

fn lane_name(trace: &Value, pid: &Value, tid: &Value) -> Option<String> {
    trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|e| {
            (e["ph"] == "M" && e["name"] == "thread_name" && e["pid"] == *pid && e["tid"] == *tid)
                .then(|| e["args"]["name"].as_str().unwrap().to_string())
        })
}

fn run(arrows: &str, out: &Path) -> Value {
    let report = validate(
        &workload("timeline"),
        &["--out", out.to_str().unwrap(), "--seed", "1"],
        &[(ARROWS, arrows)],
    );
    assert_clean(&report);
    report
}

#[test]
fn every_timeline_item_is_shown_and_every_field_is_the_truths() {
    let out = scratch("timeline.json");
    let report = run("0", &out);
    // Memsets: the eager hipMemsetAsync and the graph's memset node in
    // each of 3 replays, none left an anonymous kernel.
    assert_eq!(n(&report, "memset_checks"), 4);
    assert_eq!(n(&report, "blits_shown_as_kernels"), 0);
    assert_eq!(n(&report, "blit_copies_shown"), 1);
    assert_eq!(n(&report, "peer_copies"), 1);
    // Every kernel but `peer_warmup` has an Itanium symbol.
    assert_eq!(n(&report, "demangled_kernels"), 15);
    for (shown, truth) in [
        ("sync_events", "expected_syncs"),
        ("host_function_events", "expected_host_functions"),
    ] {
        assert_eq!(n(&report, shown), n(&report, truth), "{shown}");
    }
    assert_eq!(n(&report, "expected_syncs"), 4);
    assert_eq!(n(&report, "syncs_on_cpu_lane"), 0);
    assert_eq!(n(&report, "waits_without_record"), 0);
    assert_eq!(n(&report, "expected_event_records"), 1);
    assert_eq!(n(&report, "expected_host_functions"), 4);
    assert_eq!(n(&report, "host_functions_not_shown"), 0);
    assert_eq!(n(&report, "expected_annotations"), 3);
    assert!(n(&report, "gpu_annotations") >= 2, "{report:#}");
    assert!(n(&report, "overhead_events") >= 2, "{report:#}");
    assert_eq!(n(&report, "dependency_arrows"), 0, "arrows are opt-in");

    let trace: Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).expect("whole JSON");
    let memsets = events(&trace, "gpu_memset");
    assert!(memsets
        .iter()
        .any(|m| m["args"]["value"] == 171 && m["args"]["bytes"] == 65536));
    assert!(memsets.iter().all(|m| m["name"] == "Memset (Device)"));
    assert_eq!(
        memsets
            .iter()
            .filter(|m| m["args"]["graph node id"].is_u64())
            .count(),
        3,
        "graph memset nodes carry graph fields"
    );
    let peer = events(&trace, "gpu_memcpy")
        .into_iter()
        .find(|c| c["args"]["kind"] == "PtoP")
        .expect("the peer copy");
    assert_eq!(
        (
            &peer["pid"],
            &peer["args"]["src device"],
            &peer["args"]["dst device"]
        ),
        (&Value::from(1), &Value::from(1), &Value::from(0)),
        "on the issuing device's lane, with both devices"
    );
    let reduce = events(&trace, "kernel")
        .into_iter()
        .find(|k| k["args"]["mangled name"] == "_ZN4math6reduceIfEEvPT_i")
        .expect("a demangled kernel");
    assert_eq!(reduce["name"], "void math::reduce<float>(float*, int)");
    let syncs = events(&trace, "cuda_sync");
    let wait = syncs
        .iter()
        .find(|s| s["name"] == "Stream Wait Event")
        .expect("the wait");
    let record = &events(&trace, "cuda_event")[0];
    assert_eq!(
        wait["args"]["wait_on_cuda_event_record_corr_id"], record["args"]["correlation"],
        "the wait points at the record"
    );
    assert_eq!(
        wait["args"]["wait_on_cuda_event_id"],
        record["args"]["event_id"]
    );
    for s in &syncs {
        let lane = lane_name(&trace, &s["pid"], &s["tid"]).unwrap_or_default();
        assert!(
            lane.starts_with("stream ") || lane == "syncs",
            "{s} on {lane}"
        );
    }
    let branch = events(&trace, "kernel")
        .into_iter()
        .find_map(|k| {
            lane_name(&trace, &k["pid"], &k["tid"]).filter(|l| l.contains("graph branch"))
        })
        .expect("a graph branch lane");
    assert!(branch.starts_with("stream 1 "), "{branch}");
    let ranges = events(&trace, "user_annotation");
    assert!(ranges.iter().any(|r| r["name"] == "iteration"));
    assert!(events(&trace, "gpu_user_annotation")
        .iter()
        .any(|g| g["name"] == "iteration"));
    assert!(events(&trace, "overhead")
        .iter()
        .all(|o| o["args"]["overhead count"].is_u64()));
}

#[test]
fn dependency_arrows_when_asked_are_the_graphs_edges_collapsed_through_hidden_nodes() {
    let out = scratch("arrows.json");
    let report = run("1", &out);
    // Per replay: 0->1, 0->2, 1->3 (memset), 3->4 (host node), 4->6, and
    // 2->6 through the empty node 5; 3 replays.
    assert_eq!(n(&report, "dependency_arrows"), 18);
    let trace: Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).expect("whole JSON");
    let flows = trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "fwdbwd")
        .count();
    assert_eq!(flows, 36, "a start and a finish per arrow");
}

#[test]
fn under_the_ideal_model_what_it_does_not_model_is_unverified_not_wrong() {
    let report = validate(
        &workload("timeline"),
        &["--submission-model", "ideal", "--seed", "1"],
        &[(ARROWS, "1")],
    );
    assert_clean(&report);
    assert!(n(&report, "unverified_timeline_events") > 0, "{report:#}");
}

/// Arrows on under contention: random DAGs with copy and memset nodes (SDMA
/// copies overlap kernels on their stream's lane, so carriers can share a
/// time), exec update and re-instantiate churn, a shared exec launched from
/// many threads; every arrow a collapsed edge, none missing, nothing else
/// wrong.
#[test]
fn dependency_arrows_stay_right_on_adversarial_workloads() {
    for name in [
        "01-random-dags-copies-memsets-q4",
        "11-shared-exec-16-threads-q8",
        "15-exec-churn-q2",
    ] {
        let file = common::workloads_dir()
            .join("adversarial")
            .join(format!("{name}.json"));
        let report = validate(&file, &["--seed", "1"], &[(ARROWS, "1")]);
        assert_clean(&report);
        assert!(n(&report, "dependency_arrows") > 0, "{name}: {report:#}");
    }
}

/// Graph event-record nodes: one cuda_event per replay on the launch
/// stream's lane, naming the node and the event, at the end of the node's
/// predecessor (kernel node 2) in that replay; the event and wait nodes
/// dispatch nothing, so the kernels keep their creation indices (1, 2, 4).
#[test]
fn a_graph_event_record_node_is_a_cuda_event_per_replay() {
    let out = scratch("graph-events.json");
    let report = validate(
        &workload("graph-events"),
        &["--out", out.to_str().unwrap(), "--seed", "1"],
        &[(ARROWS, "0")],
    );
    assert_clean(&report);
    assert_eq!(n(&report, "expected_graph_event_records"), 5);
    assert_eq!(n(&report, "graph_event_records_not_shown"), 0);
    let trace: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let node = |e: &Value| e["args"]["graph node id"].as_u64().unwrap() & 0xffff_ffff;
    let kernels = events(&trace, "kernel");
    let mut nodes: Vec<u64> = kernels.iter().map(|k| node(k)).collect();
    nodes.sort();
    nodes.dedup();
    assert_eq!(nodes, vec![1, 2, 4]);
    let records = events(&trace, "cuda_event");
    assert_eq!(records.len(), 5);
    for r in &records {
        assert_eq!(node(r), 3);
        let launch = &r["args"]["correlation"];
        let pred = kernels
            .iter()
            .find(|k| k["args"]["correlation"] == *launch && node(k) == 2)
            .unwrap();
        let end = pred["ts"].as_f64().unwrap() + pred["dur"].as_f64().unwrap();
        assert!((r["ts"].as_f64().unwrap() - end).abs() < 0.01, "{r}");
        assert_eq!((&r["pid"], &r["tid"]), (&pred["pid"], &pred["tid"]));
        assert_eq!(r["args"]["graph id"], pred["args"]["graph id"]);
    }
    let ids: std::collections::HashSet<&Value> =
        records.iter().map(|r| &r["args"]["event_id"]).collect();
    assert_eq!(ids.len(), 1, "one event, recorded by every replay");
}

/// A memset whose start or size is off rocclr's 16-byte unit runs as up to
/// three fill kernels (clr `FillBufferInfo::PackInfo`); the simulator runs
/// them so, the tool expects them from the call's arguments, and each is
/// shown as a memset of its own part's bytes, checked against the truth.
#[test]
fn unaligned_memsets_are_one_memset_per_fill_part() {
    let out = scratch("unaligned-fills.json");
    for model in ["rocm", "ideal"] {
        let report = validate(
            &workload("unaligned-fills"),
            &["--submission-model", model, "--out", out.to_str().unwrap()],
            &[],
        );
        assert_clean(&report);
        // 10 replays of 100 bytes at +4 (12 + 80 + 8), 100 bytes (96 + 4)
        // and 4096 bytes; 10 eager memsets of 100, 28 at +4, 4096, 12 at +8.
        assert_eq!(n(&report, "memset_checks"), 10 * 6 + 18, "{model}");
        assert_eq!(n(&report, "blits_shown_as_kernels"), 0, "{model}");
        assert_eq!(n(&report, "withheld_records"), 0, "{model}");
        let trace: Value =
            serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).expect("whole JSON");
        let mut sizes: Vec<u64> = events(&trace, "gpu_memset")
            .iter()
            .filter(|m| m["args"]["graph node id"].is_u64())
            .map(|m| m["args"]["bytes"].as_u64().unwrap())
            .collect();
        sizes.sort_unstable();
        sizes.dedup();
        assert_eq!(sizes, [4, 8, 12, 80, 96, 4096], "{model}");
    }
}
