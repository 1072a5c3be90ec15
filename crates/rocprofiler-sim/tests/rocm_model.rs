//! The `rocm` submission model: each modelled behaviour, seen happening in
//! the ground truth and in what the tool received.
mod common;
use common::*;
use rocprofiler_sim::model::{RocmParams, SubmissionModel};
use rocprofiler_sim::options::RunOptions;
use rocprofiler_sim::truth::{OpKind, OpTruth, RunTruth};
use rocprofiler_sim::workload::Workload;
use std::collections::{HashMap, HashSet};

fn rocm(seed: u64) -> RunOptions {
    RunOptions {
        submission_model: Some(SubmissionModel::Rocm),
        seed,
        ..Default::default()
    }
}

fn calls_by_corr(t: &RunTruth) -> HashMap<u64, &rocprofiler_sim::truth::CallTruth> {
    t.calls.iter().map(|c| (c.correlation_id, c)).collect()
}

/// Ops on one HW queue (or one device's copy engine) never overlap.
fn check_engines_in_order(t: &RunTruth) {
    let mut by_engine: HashMap<(u64, u32), Vec<&OpTruth>> = HashMap::new();
    for o in &t.ops {
        by_engine.entry((o.queue_id, o.device)).or_default().push(o);
    }
    for ((q, _), mut ops) in by_engine {
        ops.sort_by_key(|o| (o.start_ns, o.end_ns));
        for w in ops.windows(2) {
            assert!(
                w[1].start_ns >= w[0].end_ns,
                "queue {q:#x}: {:?} starts at {} before {:?} ends at {}",
                w[1].kernel_name,
                w[1].start_ns,
                w[0].kernel_name,
                w[0].end_ns
            );
        }
    }
}

#[test]
fn a_branchy_launch_runs_on_several_hw_queues() {
    let _s = serial();
    let (t, _) = env().run("topology-fanout4.json", rocm(1));
    assert_eq!(t.submission_model, "rocm");
    let mut by_launch: HashMap<u64, Vec<&OpTruth>> = HashMap::new();
    for o in &t.ops {
        by_launch
            .entry(o.launch_correlation_id)
            .or_default()
            .push(o);
    }
    assert_eq!(by_launch.len(), 200);
    for ops in by_launch.values() {
        let queues: HashSet<u64> = ops.iter().map(|o| o.queue_id).collect();
        let streams: HashSet<u64> = ops.iter().map(|o| o.exec_stream_id).collect();
        assert!(queues.len() >= 2, "one launch's packets on {queues:?}");
        // root -> 4 branches -> join: the four branches on four streams.
        assert_eq!(streams.len(), 4, "streams {streams:?}");
        for o in ops {
            // The first segment of each level runs on the launch stream.
            if matches!(o.node_index, Some(0) | Some(1) | Some(5)) {
                assert_eq!(o.exec_stream_id, o.stream_id, "node {:?}", o.node_index);
            } else {
                assert_ne!(o.exec_stream_id, o.stream_id, "node {:?}", o.node_index);
            }
        }
        let ordinals: HashSet<u32> = ops.iter().map(|o| o.submission_ordinal).collect();
        assert_eq!(ordinals, (0..6).collect());
    }
    check_engines_in_order(&t);
}

#[test]
fn without_segment_scheduling_a_launch_stays_on_its_stream() {
    let _s = serial();
    let opts = RunOptions {
        rocm: RocmParams {
            segment_scheduling: Some(0),
            ..Default::default()
        },
        ..rocm(1)
    };
    let (t, _) = env().run("topology-fanout4.json", opts);
    let mut by_launch: HashMap<u64, Vec<&OpTruth>> = HashMap::new();
    for o in &t.ops {
        assert_eq!(o.exec_stream_id, o.stream_id);
        by_launch
            .entry(o.launch_correlation_id)
            .or_default()
            .push(o);
    }
    for ops in by_launch.values_mut() {
        assert_eq!(
            ops.iter().map(|o| o.queue_id).collect::<HashSet<_>>().len(),
            1
        );
        // Kahn FIFO: root, the four branches in creation order, the join.
        ops.sort_by_key(|o| o.submission_ordinal);
        let nodes: Vec<u32> = ops.iter().map(|o| o.node_index.unwrap()).collect();
        assert_eq!(nodes, [0, 1, 2, 3, 4, 5]);
    }
    check_engines_in_order(&t);
}

#[test]
fn another_thread_processes_a_launch_after_it_returned_and_graph_records_say_so() {
    let _s = serial();
    let (t, v) = env().run("cross-processing-2threads.json", rocm(1));
    let calls = calls_by_corr(&t);
    let late = t
        .ops
        .iter()
        .filter(|o| {
            o.processing_thread != o.launching_thread
                && o.process_ns > calls[&o.launch_correlation_id].exit_ns
        })
        .count();
    assert!(
        late > 0,
        "no packet was processed by another thread after its launch returned"
    );
    // Processed inside the other thread's call: the record carries that call.
    for o in t
        .ops
        .iter()
        .filter(|o| o.processing_thread != o.launching_thread)
    {
        let c = calls[&o.record_correlation_id];
        assert_eq!(c.thread, o.processing_thread);
        assert!(c.enter_ns <= o.process_ns && o.process_ns <= c.exit_ns);
    }
    // HIP_GRAPH records: queue 0, and the count of dispatches intercepted on
    // the launching thread during the launch, foreign ones included.
    let records = rows(&v, "graph_records");
    assert_eq!(records.len(), t.launches.len());
    let by_corr: HashMap<u64, &Vec<u64>> = records.iter().map(|r| (r[0], r)).collect();
    let mut with_foreign = 0;
    for l in &t.launches {
        let r = by_corr[&l.correlation_id];
        assert_eq!(r[4], 0, "HIP_GRAPH records carry queue 0");
        let counted: Vec<&OpTruth> = t
            .ops
            .iter()
            .filter(|o| {
                o.kind == OpKind::Kernel
                    && o.processing_thread == l.thread
                    && o.record_correlation_id == l.correlation_id
            })
            .collect();
        assert_eq!(r[3], counted.len() as u64);
        assert_eq!(r[3], l.record_kernel_dispatch_count);
        if counted
            .iter()
            .any(|o| o.launch_correlation_id != l.correlation_id)
        {
            with_foreign += 1;
        }
    }
    assert!(
        with_foreign > 0,
        "no launch record counted another launch's dispatch"
    );
    check_engines_in_order(&t);
}

#[test]
fn blit_kernels_of_two_streams_share_a_queue_and_large_copies_use_sdma() {
    let _s = serial();
    let (t, v) = env().run("blits-2streams.json", rocm(1));
    // Per thread: 20 memsets, 10 device copies, 10 small host copies (blit
    // kernels), 5 large host copies (SDMA), 5 kernels; host-to-host moves
    // nothing.
    assert_eq!(t.ops.len(), 2 * 50);
    let blits: Vec<&OpTruth> = t.ops.iter().filter(|o| o.blit).collect();
    assert_eq!(blits.len(), 2 * 40);
    let mut streams_per_queue: HashMap<u64, HashSet<u64>> = HashMap::new();
    for o in &blits {
        streams_per_queue
            .entry(o.queue_id)
            .or_default()
            .insert(o.stream_id);
        let name = o.kernel_name.as_deref().unwrap();
        match o.direction {
            None => assert_eq!(name, "__amd_rocclr_fillBufferAligned"),
            Some(_) => assert_eq!(name, "__amd_rocclr_copyBuffer"),
        }
    }
    assert!(
        streams_per_queue.values().any(|s| s.len() == 2),
        "blit kernels of two streams on one queue: {streams_per_queue:?}"
    );
    let sdma: Vec<&OpTruth> = t.ops.iter().filter(|o| o.kind == OpKind::Memcpy).collect();
    assert_eq!(sdma.len(), 10);
    assert!(sdma.iter().all(|o| o.queue_id == 0 && o.bytes == 1 << 20));
    assert_eq!(rows(&v, "copies").len(), 10);
    assert_eq!(rows(&v, "dispatches").len(), 90);
    let k = t
        .ops
        .iter()
        .find(|o| !o.blit && o.kind == OpKind::Kernel)
        .unwrap();
    assert_eq!((k.grid, k.block), ([64 * 128, 2, 1], [128, 1, 1]));
    // Each stream runs its calls in order, across the queue and the copy
    // engine.
    let mut by_stream: HashMap<u64, Vec<&OpTruth>> = HashMap::new();
    for o in &t.ops {
        by_stream.entry(o.stream_id).or_default().push(o);
    }
    for ops in by_stream.values_mut() {
        ops.sort_by_key(|o| o.launch_correlation_id);
        for w in ops.windows(2) {
            assert!(w[1].start_ns >= w[0].end_ns, "stream order broken: {w:?}");
        }
    }
    check_engines_in_order(&t);
}

#[test]
fn a_full_queue_overflows_to_rocrs_async_thread() {
    let _s = serial();
    let (t, v) = env().run("overflow.json", rocm(1));
    let asynchronous: Vec<&OpTruth> = t.ops.iter().filter(|o| o.async_processed).collect();
    assert!(!asynchronous.is_empty(), "nothing overflowed with 8 slots");
    let calls = calls_by_corr(&t);
    let app: HashSet<u64> = t.threads.iter().copied().collect();
    for o in &asynchronous {
        assert!(!app.contains(&o.processing_thread) && o.processing_thread != t.setup_thread);
        assert!(
            !calls.contains_key(&o.record_correlation_id),
            "the SDK makes a correlation id on the async thread"
        );
    }
    // Nothing is lost, and the SDK's own correlation ids retire too.
    assert_eq!(rows(&v, "dispatches").len(), 48);
    let retired: HashSet<u64> = rows(&v, "retirements").iter().map(|r| r[0]).collect();
    assert!(asynchronous
        .iter()
        .all(|o| retired.contains(&o.record_correlation_id)));
    check_engines_in_order(&t);
}

/// Under every seed (KINETO_ROCM_TEST_SEEDS, default 1,2,3): no node starts
/// before its dependencies ended, no call overtakes its stream, and the
/// tool received every record.
#[test]
fn nothing_starts_before_what_it_waits_for() {
    let _s = serial();
    let w = Workload::load(&workload("random-dag.json")).unwrap();
    let deps: Vec<&Vec<usize>> = w.graphs[0].nodes.iter().map(|n| &n.deps).collect();
    for seed in seeds(&[1, 2, 3]) {
        let (t, v) = env().run("random-dag.json", rocm(seed));
        let mut launches: HashMap<u64, HashMap<u32, &OpTruth>> = HashMap::new();
        for o in &t.ops {
            if let Some(n) = o.node_index {
                launches
                    .entry(o.launch_correlation_id)
                    .or_default()
                    .insert(n, o);
            }
        }
        assert_eq!(launches.len(), 100);
        for nodes in launches.values() {
            assert_eq!(nodes.len(), 16);
            for (&n, o) in nodes {
                for &d in deps[n as usize] {
                    let dep = nodes[&(d as u32)];
                    assert!(
                        o.start_ns >= dep.end_ns,
                        "seed {seed}: node {n} started at {} before node {d} ended at {}",
                        o.start_ns,
                        dep.end_ns
                    );
                }
            }
        }
        // A stream's work runs in call order: each launch or kernel after
        // everything the stream ran before.
        let mut by_stream: HashMap<u64, Vec<(u64, u64, u64)>> = HashMap::new();
        for o in &t.ops {
            by_stream.entry(o.stream_id).or_default().push((
                o.launch_correlation_id,
                o.start_ns,
                o.end_ns,
            ));
        }
        for ops in by_stream.values_mut() {
            ops.sort();
            let mut ended_before = 0;
            let mut current = (0, 0);
            for &(corr, start, end) in ops.iter() {
                if corr != current.0 {
                    ended_before = ended_before.max(current.1);
                    current = (corr, 0);
                }
                assert!(
                    start >= ended_before,
                    "seed {seed}: call {corr} overtook its stream"
                );
                current.1 = current.1.max(end);
            }
        }
        check_engines_in_order(&t);
        let kernels = t.ops.iter().filter(|o| o.kind == OpKind::Kernel).count();
        assert_eq!(rows(&v, "dispatches").len(), kernels);
        assert_eq!(rows(&v, "copies").len(), t.ops.len() - kernels);
    }
}

#[test]
fn an_idle_stream_moves_to_a_less_loaded_queue() {
    let _s = serial();
    // Six streams on four queues: s4 shares s0's queue. s0 runs a kernel and
    // goes idle (synchronised, not slept on: a loaded machine can take
    // longer than any sleep); s4 then keeps that queue busy; s0's next kernel finds the
    // device with more streams than queues and moves.
    let w = r#"{"sdk_version": "1.3.0", "hw_queues_per_device": 4,
        "durations": {"kernel_ns": {"busy": 20000000}},
        "threads": [{"ops": [
            {"create_stream": {"name": "s0"}}, {"create_stream": {"name": "s1"}},
            {"create_stream": {"name": "s2"}}, {"create_stream": {"name": "s3"}},
            {"create_stream": {"name": "s4"}}, {"create_stream": {"name": "s5"}},
            {"kernel": {"name": "first", "stream": "s0"}},
            {"synchronize_stream": {"stream": "s0"}},
            {"kernel": {"name": "busy", "stream": "s4"}},
            {"kernel": {"name": "second", "stream": "s0"}}]}]}"#;
    let e = env();
    e.tool_clear();
    e.sim.run_workload(w, &rocm(1)).unwrap();
    e.sim.wait_idle(std::time::Duration::from_secs(30)).unwrap();
    let t = e.sim.ground_truth().unwrap().runs.pop().unwrap();
    let q = |name: &str| {
        t.ops
            .iter()
            .find(|o| o.kernel_name.as_deref() == Some(name))
            .unwrap()
            .queue_id
    };
    assert_eq!(q("busy"), q("first"), "s4 shares s0's first queue");
    assert_ne!(q("second"), q("first"), "the idle stream moved");
}

#[test]
fn the_hip_graph_api_builds_graphs_once_and_destroys_them_at_the_end() {
    let _s = serial();
    let (t, _) = env().run("random-dag.json", rocm(1));
    let names: Vec<&str> = t.calls.iter().map(|c| c.name.as_str()).collect();
    let count = |n: &str| names.iter().filter(|x| **x == n).count();
    assert_eq!(count("hipGraphCreate"), 1);
    assert_eq!(count("hipGraphDestroy"), 1);
    assert_eq!(
        count("hipGraphAddKernelNode")
            + count("hipGraphAddMemcpyNode1D")
            + count("hipGraphAddMemsetNode"),
        16
    );
    // Built on the setup thread (the shared exec's), before any launch.
    let create = t.calls.iter().find(|c| c.name == "hipGraphCreate").unwrap();
    assert_eq!(create.thread, t.setup_thread);
    let destroy = t
        .calls
        .iter()
        .find(|c| c.name == "hipGraphDestroy")
        .unwrap();
    assert_eq!(destroy.thread, t.setup_thread);
    let last_launch = t
        .calls
        .iter()
        .filter(|c| c.name == "hipGraphLaunch")
        .map(|c| c.exit_ns)
        .max();
    assert!(Some(destroy.enter_ns) > last_launch);
}

#[test]
fn graph_event_nodes_record_after_their_dependencies_and_order_the_next_replay() {
    let _s = serial();
    let (t, _) = env().run("graph-events.json", rocm(3));
    let calls = |n: &str| -> Vec<&rocprofiler_sim::truth::CallTruth> {
        t.calls.iter().filter(|c| c.name == n).collect()
    };
    // One event for the graph, created while it is built; both add calls
    // carry it.
    let created = calls("hipEventCreate");
    assert_eq!(created.len(), 1);
    let event = created[0].event.expect("the created event");
    for n in ["hipGraphAddEventRecordNode", "hipGraphAddEventWaitNode"] {
        let c = calls(n);
        assert_eq!(c.len(), 1, "{n}");
        assert_eq!(c[0].event, Some(event), "{n}");
    }
    // Markers, not dispatches: only the three kernels of each replay are
    // device records, and their node ids are their creation indices.
    let launches = &t.launches;
    assert_eq!(launches.len(), 5);
    let mut nodes: Vec<u32> = t.ops.iter().filter_map(|o| o.node_index).collect();
    nodes.sort();
    nodes.dedup();
    assert_eq!(nodes, vec![1, 2, 4]);
    assert_eq!(t.ops.len(), 15);
    // One record per replay, after the node it depends on (kernel 2).
    assert_eq!(t.graph_events.len(), 5);
    let op_of = |launch: u64, node: u32| {
        t.ops
            .iter()
            .find(|o| o.launch_correlation_id == launch && o.node_index == Some(node))
            .unwrap()
    };
    let mut ordered: Vec<_> = launches.iter().collect();
    ordered.sort_by_key(|l| l.correlation_id);
    for (k, l) in ordered.iter().enumerate() {
        let rec: Vec<_> = t
            .graph_events
            .iter()
            .filter(|g| g.launch_correlation_id == l.correlation_id)
            .collect();
        assert_eq!(rec.len(), 1, "launch {}", l.correlation_id);
        let r = rec[0];
        assert_eq!((r.event, r.node_index), (event, 3));
        assert_eq!(r.graph_exec_id, l.graph_exec_id);
        assert_eq!(r.stream_id, l.stream_id);
        assert!(r.completed_ns >= op_of(l.correlation_id, 2).end_ns);
        // The wait node: this replay's first kernel starts after the
        // previous replay's record, whichever stream it ran on.
        if k > 0 {
            let prev = t
                .graph_events
                .iter()
                .find(|g| g.launch_correlation_id == ordered[k - 1].correlation_id)
                .unwrap();
            assert!(op_of(l.correlation_id, 1).start_ns >= prev.completed_ns);
        }
    }
}

/// A synchronising call returns after the work it waited for has ended, under
/// virtual time too (where work completes as soon as its times are known):
/// otherwise the host's clock falls behind the device's and every later
/// launch looks queued behind all earlier ones.
#[test]
fn under_virtual_time_a_stream_synchronize_returns_after_its_work_ends() {
    let _s = serial();
    let e = env();
    let steps: Vec<String> = (0..4)
        .map(|_| {
            r#"{"launch": {"exec": "e", "stream": "s", "times": 20}},
               {"synchronize_stream": {"stream": "s"}}"#
                .to_string()
        })
        .collect();
    let workload = format!(
        r#"{{"sdk_version": "1.3.0", "devices": 1,
            "durations": {{"default_kernel_ns": 50000}},
            "graphs": [{{"name": "g", "nodes": [{{"kernel": "a"}}, {{"kernel": "b", "deps": [0]}}]}}],
            "threads": [{{"name": "main", "ops": [
                {{"create_stream": {{"name": "s"}}}},
                {{"instantiate": {{"graph": "g", "as": "e"}}}},
                {}]}}]}}"#,
        steps.join(",")
    );
    let options = RunOptions {
        virtual_time: true,
        ..rocm(3)
    };
    e.tool_clear();
    e.sim
        .run_workload(&workload, &options)
        .expect("the workload runs");
    e.sim
        .wait_idle(std::time::Duration::from_secs(60))
        .expect("idle");
    let t = e.sim.ground_truth().unwrap().runs.pop().unwrap();
    let syncs: Vec<_> = t
        .calls
        .iter()
        .filter(|c| c.name == "hipStreamSynchronize")
        .collect();
    assert_eq!(syncs.len(), 4);
    for sync in syncs {
        let awaited: Vec<&OpTruth> = t
            .ops
            .iter()
            .filter(|o| o.launch_correlation_id < sync.correlation_id)
            .collect();
        assert!(!awaited.is_empty());
        let last_end = awaited.iter().map(|o| o.end_ns).max().unwrap();
        assert!(
            sync.exit_ns >= last_end,
            "hipStreamSynchronize (correlation {}) returned at {} before its stream's work ended at {}",
            sync.correlation_id,
            sync.exit_ns,
            last_end
        );
        // And the next step's work is processed after it, not before.
        for later in t
            .ops
            .iter()
            .filter(|o| o.launch_correlation_id > sync.correlation_id)
        {
            assert!(later.start_ns >= last_end);
        }
    }
}
