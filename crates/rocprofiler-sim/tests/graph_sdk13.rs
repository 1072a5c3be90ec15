//! SDK 1.3 in one process: the 32x200 graph, the hazard, the shipped workloads.
mod common;
use common::*;
use rocprofiler_sim::model::SubmissionModel;
use rocprofiler_sim::options::RunOptions;
use rocprofiler_sim::truth::RunTruth;
use std::collections::{HashMap, HashSet};

const HIP_GRAPH_KIND: u64 = 22;
const EXEC_LAUNCH: u64 = 3;
const CODE_OBJECT_KIND: u64 = 10;

/// These tests pin the `ideal` model (today's regression suite).
fn ideal() -> RunOptions {
    RunOptions {
        submission_model: Some(SubmissionModel::Ideal),
        ..Default::default()
    }
}

fn fast() -> RunOptions {
    RunOptions {
        virtual_time: true,
        ..ideal()
    }
}

/// Per-queue non-overlap and start < end on the records the tool received.
fn check_timestamps(dispatches: &[Vec<u64>]) {
    let mut by_queue: HashMap<u64, Vec<(u64, u64)>> = HashMap::new();
    for d in dispatches {
        assert!(d[4] < d[5], "start < end for dispatch {}", d[0]);
        by_queue.entry(d[6]).or_default().push((d[4], d[5]));
    }
    for (q, mut v) in by_queue {
        v.sort();
        for w in v.windows(2) {
            assert!(w[1].0 >= w[0].1, "queue {q:#x}: kernels overlap: {:?}", w);
        }
    }
}

/// Each dispatch's external value names the request that produced it; that
/// request ran on the thread that WROTE the packet, with its correlation id.
fn check_requests_on_writer(truth: &RunTruth, v: &serde_json::Value) {
    let requests: HashMap<u64, Vec<u64>> =
        rows(v, "requests").into_iter().map(|r| (r[0], r)).collect();
    let truth_by_id: HashMap<u64, _> = truth.ops.iter().map(|o| (o.dispatch_id, o)).collect();
    for d in rows(v, "dispatches") {
        let t = truth_by_id[&d[0]];
        let req = &requests[&d[2]];
        assert_eq!(
            req[1], t.processing_thread,
            "request thread = writing thread"
        );
        assert_eq!(d[3], t.processing_thread, "record thread = writing thread");
        assert_eq!(req[2], t.record_correlation_id);
        assert_eq!(d[1], t.record_correlation_id);
    }
}

#[test]
fn graph_32x200() {
    let _s = serial();
    let e = env();
    let (truth, v) = e.run("graph-32x200.json", ideal());
    assert_eq!(v["sdk_version_seen"], 10300);
    let p = probes(&v);
    assert_eq!(p["callback HIP_GRAPH"], 0, "1.3 accepts HIP_GRAPH");
    assert_eq!(p["buffer kind 33"], 0);
    let d = rows(&v, "dispatches");
    assert_eq!(d.len(), 6400);
    let ids: HashSet<u64> = d.iter().map(|r| r[0]).collect();
    assert_eq!(ids.len(), 6400, "distinct dispatch ids");
    check_timestamps(&d);
    // Exactly one request per dispatch, on the writing thread.
    assert_eq!(rows(&v, "requests").len(), 6400);
    check_requests_on_writer(&truth, &v);
    // Single thread: the launch-stack recipe gives ordinal == creation index here.
    for r in rows(&v, "requests") {
        assert_eq!(r[5], truth.launches[0].graph_exec_id);
    }
    let by_req: HashMap<u64, Vec<u64>> = rows(&v, "requests")
        .into_iter()
        .map(|r| (r[0], r))
        .collect();
    let truth_by_id: HashMap<u64, _> = truth.ops.iter().map(|o| (o.dispatch_id, o)).collect();
    for r in &d {
        assert_eq!(
            by_req[&r[2]][6],
            truth_by_id[&r[0]].node_index.unwrap() as u64
        );
    }
    // HIP_GRAPH EXEC_LAUNCH in ENTER/EXIT pairs.
    let launches: Vec<Vec<u64>> = rows(&v, "callbacks")
        .into_iter()
        .filter(|c| c[0] == HIP_GRAPH_KIND && c[1] == EXEC_LAUNCH)
        .collect();
    assert_eq!(launches.len(), 400);
    for pair in launches.chunks(2) {
        assert_eq!((pair[0][2], pair[1][2]), (1, 2), "ENTER then EXIT");
        assert_eq!(pair[0][4], pair[1][4], "same correlation id");
    }
    // Kernel symbols registered before first use, names match the truth.
    let names = v["kernel_names"].as_object().unwrap();
    for o in &truth.ops {
        assert_eq!(
            names[&o.kernel_id.to_string()],
            o.kernel_name.clone().unwrap()
        );
    }
    let _ = CODE_OBJECT_KIND;
    // One HIP_GRAPH record per launch with the dispatch count.
    let g = rows(&v, "graph_records");
    assert_eq!(g.len(), 200);
    assert!(g.iter().all(|r| r[3] == 32));
    // Retirement after the records of each correlation id.
    let ret: HashMap<u64, u64> = rows(&v, "retirements")
        .into_iter()
        .map(|r| (r[0], r[1]))
        .collect();
    for r in &d {
        let at = ret
            .get(&r[1])
            .unwrap_or_else(|| panic!("corr {} never retired", r[1]));
        assert!(
            *at > r[9],
            "retirement of {} delivered before its record",
            r[1]
        );
    }
    assert!(ret.len() as u64 >= truth.api_calls - 2);
}

fn cross_writes(t: &RunTruth) -> usize {
    t.ops
        .iter()
        .filter(|o| o.processing_thread != o.launching_thread)
        .count()
}

#[test]
fn hazard_16_threads_on_4_queues_writes_across_threads() {
    let _s = serial();
    let e = env();
    let (truth, v) = e.run(
        "concurrent-16threads.json",
        RunOptions {
            hw_queues: Some(4),
            ..fast()
        },
    );
    assert_eq!(truth.ops.len(), 16 * 100 * 6);
    assert_eq!(rows(&v, "dispatches").len(), 9600);
    let n = cross_writes(&truth);
    assert!(
        n > 0,
        "16 threads on 4 queues must show packets written by another thread"
    );
    check_requests_on_writer(&truth, &v);
    check_timestamps(&rows(&v, "dispatches"));
    eprintln!(
        "cross-thread writes with 4 queues: {n} of {}",
        truth.ops.len()
    );
}

#[test]
fn hazard_gone_with_16_queues() {
    let _s = serial();
    let e = env();
    let (truth, v) = e.run(
        "concurrent-16threads.json",
        RunOptions {
            hw_queues: Some(16),
            ..fast()
        },
    );
    assert_eq!(truth.hw_queues_per_device, 16);
    assert_eq!(cross_writes(&truth), 0);
    check_requests_on_writer(&truth, &v);
    // One queue per stream: every request's launch stack is its own launch.
    let truth_by_id: HashMap<u64, _> = truth.ops.iter().map(|o| (o.dispatch_id, o)).collect();
    let by_req: HashMap<u64, Vec<u64>> = rows(&v, "requests")
        .into_iter()
        .map(|r| (r[0], r))
        .collect();
    for d in rows(&v, "dispatches") {
        let t = truth_by_id[&d[0]];
        assert_eq!(by_req[&d[2]][5], t.graph_exec_id);
        assert_eq!(by_req[&d[2]][6], t.node_index.unwrap() as u64);
    }
}

#[test]
fn shipped_workloads_run_and_truth_is_consistent() {
    let _s = serial();
    let e = env();
    for (file, dispatches) in [
        ("topology-chain6.json", 1200),
        ("topology-fanout4.json", 1200),
        ("topology-fanout2.json", 1200),
        ("exec-update.json", 1200),
        ("exec-reuse.json", 1800),
        ("two-devices.json", 1800),
        ("concurrent-1threads.json", 600),
        ("concurrent-4threads.json", 2400),
    ] {
        let (truth, v) = e.run(file, fast());
        assert_eq!(truth.ops.len(), dispatches, "{file}");
        assert_eq!(rows(&v, "dispatches").len(), dispatches, "{file}");
        check_timestamps(&rows(&v, "dispatches"));
        // Submission order = creation order for these shapes.
        for o in &truth.ops {
            assert_eq!(o.submission_ordinal, o.node_index.unwrap(), "{file}");
        }
        match file {
            "exec-update.json" => {
                let ev: Vec<&str> = truth.exec_events.iter().map(|e| e.event.as_str()).collect();
                assert_eq!(ev, ["instantiate", "update"]);
                let names: HashSet<&str> = truth
                    .ops
                    .iter()
                    .map(|o| o.kernel_name.as_deref().unwrap())
                    .collect();
                assert_eq!(names.len(), 8);
                assert_eq!(
                    truth
                        .launches
                        .iter()
                        .map(|l| l.graph_exec_id)
                        .collect::<HashSet<_>>()
                        .len(),
                    1
                );
            }
            "exec-reuse.json" => {
                let ev = &truth.exec_events;
                assert_eq!(ev.len(), 4);
                assert_eq!(ev[3].event, "instantiate");
                assert_eq!(
                    ev[3].exec_handle, ev[0].exec_handle,
                    "the allocator reuses the handle"
                );
                assert_ne!(
                    ev[3].graph_exec_id, ev[0].graph_exec_id,
                    "a new SDK exec id"
                );
            }
            "two-devices.json" => {
                let agents: HashSet<u64> = rows(&v, "dispatches").iter().map(|d| d[7]).collect();
                assert_eq!(agents.len(), 2);
            }
            _ => {}
        }
    }
}

/// Hardware queues belong to the process: a second run's kernels on a queue
/// start only after the first run's work on that queue has finished, since
/// the packet processor runs one queue in order whoever fills it.
#[test]
fn a_later_run_queues_behind_the_earlier_runs_work() {
    let _s = serial();
    let e = env();
    let (first, _) = e.run("steps-4x50.json", ideal());
    let (second, _) = e.run("steps-4x50.json", ideal());
    let mut first_end: HashMap<u64, u64> = HashMap::new();
    for op in &first.ops {
        let end = first_end.entry(op.queue_id).or_default();
        *end = (*end).max(op.end_ns);
    }
    let mut shared = 0;
    for op in &second.ops {
        if let Some(&end) = first_end.get(&op.queue_id) {
            shared += 1;
            assert!(op.start_ns >= end, "queue {:#x}: a second-run kernel started at {} before the first run's work ended at {end}", op.queue_id, op.start_ns);
        }
    }
    assert!(
        shared > 0,
        "the two runs never shared a queue; the test checks nothing"
    );
}
