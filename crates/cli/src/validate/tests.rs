//! The validator on hand-built truth and traces: a faithful trace is clean,
//! and each kind of wrong claim, missing or extra event is caught.
use super::counter_tracks;
use super::keys;
use super::*;
use crate::trace::{FlowEnd, GpuCategory, GpuEvent, RuntimeEvent, Trace};
use rocprofiler_sim::truth::{CounterInstanceTruth, ExecEvent, OpKind, OpTruth, RunTruth};
use rocprofiler_sim::workload::Direction;
use std::sync::Arc;

const SDK_13: u32 = 10300;
const SDK_10: u32 = 10000;
const LAUNCHER: u64 = 100;
const OTHER_THREAD: u64 = 200;
const STREAM: u64 = 5;
const OTHER_STREAM: u64 = 6;

/// Launch `corr` of exec `exec` (epoch `epoch`): a kernel at node 0, a
/// kernel at node 1 and a copy at node 2; node 1 is submitted first.
fn launch(corr: u64, exec: u64, epoch: u32, first_dispatch: u64, t0: u64) -> Vec<OpTruth> {
    let base = |node: u32| OpTruth {
        launch_correlation_id: corr,
        record_correlation_id: corr,
        launching_thread: LAUNCHER,
        processing_thread: LAUNCHER,
        exec_handle: 0x6000 + exec,
        graph_exec_id: exec,
        exec_epoch: epoch,
        graph: Some(format!("g{exec}")),
        node_index: Some(node),
        stream_id: STREAM,
        exec_stream_id: STREAM,
        agent_id: 0xa6e7_0001,
        ..OpTruth::default()
    };
    vec![
        OpTruth {
            dispatch_id: first_dispatch + 1,
            submission_ordinal: 1,
            kernel_name: Some(format!("g{exec}_n0")),
            start_ns: t0 + 1_000,
            end_ns: t0 + 2_000,
            ..base(0)
        },
        OpTruth {
            dispatch_id: first_dispatch,
            submission_ordinal: 0,
            kernel_name: Some(format!("g{exec}_n1")),
            start_ns: t0,
            end_ns: t0 + 1_000,
            ..base(1)
        },
        OpTruth {
            kind: OpKind::Memcpy,
            copy_id: first_dispatch,
            submission_ordinal: 2,
            bytes: 4096,
            direction: Some(Direction::DeviceToHost),
            start_ns: t0 + 2_000,
            end_ns: t0 + 2_500,
            ..base(2)
        },
    ]
}

fn eager_kernel(corr: u64, dispatch: u64, t0: u64) -> OpTruth {
    OpTruth {
        dispatch_id: dispatch,
        launch_correlation_id: corr,
        record_correlation_id: corr,
        launching_thread: OTHER_THREAD,
        processing_thread: OTHER_THREAD,
        stream_id: OTHER_STREAM,
        exec_stream_id: OTHER_STREAM,
        kernel_name: Some("eager".into()),
        start_ns: t0,
        end_ns: t0 + 700,
        ..OpTruth::default()
    }
}

fn call(corr: u64, thread: u64, name: &str, marker: Option<&str>) -> CallTruth {
    CallTruth {
        correlation_id: corr,
        thread,
        name: name.into(),
        stream_id: Some(STREAM),
        enter_ns: corr * 10,
        exit_ns: corr * 10 + 5,
        marker: marker.map(String::from),
        ..CallTruth::default()
    }
}

/// One run: two launches of exec 1 (the first inside marker "7", the
/// second inside marker "step"), an eager kernel from another thread
/// inside no marker.
fn session() -> Vec<RunTruth> {
    let mut ops = launch(10, 1, 0, 1, 1_000_000);
    ops.extend(launch(20, 1, 0, 4, 2_000_000));
    ops.push(eager_kernel(30, 7, 3_000_000));
    vec![RunTruth {
        devices: 1,
        submission_model: "ideal".into(),
        ops,
        calls: vec![
            call(10, LAUNCHER, "hipGraphLaunch", Some("7")),
            call(20, LAUNCHER, "hipGraphLaunch", Some("step")),
            call(30, OTHER_THREAD, "hipLaunchKernel", None),
        ],
        ..RunTruth::default()
    }]
}

fn markers() -> MarkerIds {
    MarkerIds::new([("step".to_string(), 1u64 << 40)].into())
}

/// The event a faithful backend shows for `op`, the graph id of its exec
/// instance given by `graph_id`.
fn faithful(op: &OpTruth, graph_id: impl Fn(u64, u32) -> u64, external: Option<u64>) -> GpuEvent {
    let (category, name) = match op.kind {
        OpKind::Kernel => (GpuCategory::Kernel, op.kernel_name.clone().unwrap()),
        OpKind::Memcpy => (GpuCategory::Memcpy, "Memcpy DtoH".to_string()),
    };
    GpuEvent {
        name: Arc::from(name),
        category,
        pid: u64::from(op.device),
        tid: op.stream_id,
        start_ns: op.start_ns,
        end_ns: op.end_ns,
        device: Some(u64::from(op.device)),
        stream: Some(op.stream_id),
        dispatch_id: (op.kind == OpKind::Kernel).then_some(op.dispatch_id),
        correlation: Some(op.launch_correlation_id),
        external_id: external,
        graph: op.node_index.map(|node| {
            let id = graph_id(op.graph_exec_id, op.exec_epoch);
            (id, (id << 32) | u64::from(node))
        }),
        bytes: (op.kind == OpKind::Memcpy).then_some(op.bytes),
        direction: op.direction,
        counters: op.counters.iter().map(|(n, v)| (n.clone(), *v)).collect(),
        value: None,
        mangled_name: None,
        src_device: None,
        dst_device: None,
        replay_pass: op.replay_pass.map(u64::from),
        thread_trace: None,
        counter_instances: op
            .counter_instances
            .iter()
            .map(|i| (instance_key(i), i.value))
            .collect(),
    }
}

/// The key the tool writes for a truth instance (src/vocabulary.rs
/// `counter_instance_key`).
fn instance_key(i: &CounterInstanceTruth) -> String {
    let dims: Vec<String> = i
        .dimensions
        .iter()
        .map(|(name, pos)| format!("{}={pos}", name.trim_start_matches("DIMENSION_")))
        .collect();
    format!("{}[{}]", i.counter, dims.join(","))
}

fn sdk_ids(exec: u64, epoch: u32) -> u64 {
    if epoch == 0 {
        exec
    } else {
        0xFFFF_FFFF - exec * 16 - u64::from(epoch)
    }
}

/// A faithful trace of `runs`: every op, its runtime call, and one flow
/// arrow per launch to its first event in time.
fn faithful_trace(runs: &[RunTruth], markers: &MarkerIds) -> Trace {
    let calls: HashMap<u64, &CallTruth> = runs
        .iter()
        .flat_map(|r| &r.calls)
        .map(|c| (c.correlation_id, c))
        .collect();
    let external = |corr: u64| {
        calls
            .get(&corr)
            .and_then(|c| c.marker.as_deref())
            .and_then(|m| markers.id(m))
    };
    let mut trace = Trace::default();
    let mut first: HashMap<u64, usize> = HashMap::new();
    for op in runs.iter().flat_map(|r| &r.ops) {
        let event = faithful(op, sdk_ids, external(op.launch_correlation_id));
        let i = trace.events.len();
        match first.get(&op.launch_correlation_id) {
            Some(&j) if trace.events[j].start_ns <= event.start_ns => {}
            _ => {
                first.insert(op.launch_correlation_id, i);
            }
        }
        trace.events.push(event);
    }
    for call in calls.values() {
        trace.runtime.push(RuntimeEvent {
            name: Arc::from(call.name.as_str()),
            pid: 1_000_000,
            tid: call.thread,
            start_ns: call.enter_ns,
            correlation: Some(call.correlation_id),
            external_id: call.marker.as_deref().and_then(|m| markers.id(m)),
        });
    }
    for (&corr, &i) in &first {
        let call = calls[&corr];
        let e = &trace.events[i];
        trace.flows.push(FlowEnd {
            start: true,
            id: corr,
            pid: 1_000_000,
            tid: call.thread,
            ts_ns: call.enter_ns,
        });
        trace.flows.push(FlowEnd {
            start: false,
            id: corr,
            pid: e.pid,
            tid: e.tid,
            ts_ns: e.start_ns,
        });
    }
    trace.summary = vec!["window 0: completeness=complete".into()];
    trace.counter_samples = counter_tracks::samples_called_for(&trace);
    trace
}

/// Where the trace's kernel events are, in order.
fn kernel_indices(trace: &Trace) -> Vec<usize> {
    (0..trace.events.len())
        .filter(|&i| trace.events[i].category == GpuCategory::Kernel)
        .collect()
}

fn check(runs: &[RunTruth], sdk: u32, trace: &Trace) -> Validation {
    validate(
        runs,
        sdk,
        &markers(),
        &[(trace, vec![(0..runs.len()).collect()])],
    )
}

fn events_of(trace: &mut Trace, corr: u64) -> impl Iterator<Item = &mut GpuEvent> {
    trace
        .events
        .iter_mut()
        .filter(move |e| e.correlation == Some(corr))
}

#[test]
fn a_faithful_trace_is_clean_and_counted() {
    let runs = session();
    let trace = faithful_trace(&runs, &markers());
    let v = check(&runs, SDK_13, &trace);
    assert!(v.is_clean, "{v:#?}");
    assert_eq!(v.expected_ops, 7);
    assert_eq!(v.matched_events, 7);
    assert_eq!((v.kernel_events, v.copy_events), (5, 2));
    assert_eq!(v.carrying_both_fields, 6);
    assert_eq!(
        v.carrying_out_of_creation_order, 4,
        "nodes 0 and 1 of both launches"
    );
    assert_eq!(v.eager_events, 1);
    assert_eq!(v.withheld_records, 0);
    assert_eq!(v.distinct_graph_ids, 1);
    assert_eq!(v.distinct_keys, 3);
    assert_eq!(v.occurrences_per_key, [(2, 3)].into());
    assert_eq!(v.linked_events, 6, "both launches ran inside a marker");
    assert_eq!(v.flow_arrows, 3);
    assert_eq!(v.runtime_events, 3);
    assert_eq!(v.devices, 1);
    assert_eq!(v.external_id_reference, "truth calls");
}

#[test]
fn a_node_id_permuted_the_same_way_in_every_replay_is_wrong_in_every_replay() {
    let runs = session();
    let mut trace = faithful_trace(&runs, &markers());
    for e in trace.events.iter_mut() {
        if let Some((g, node)) = e.graph {
            // Dispatch order, not creation order: nodes 0 and 1 swapped.
            let swapped = match node & 0xFFFF_FFFF {
                0 => 1,
                1 => 0,
                n => n,
            };
            e.graph = Some((g, (g << 32) | swapped));
        }
    }
    let v = check(&runs, SDK_13, &trace);
    assert_eq!(
        v.aliased_keys, 0,
        "consistent: the first round's metric sees nothing"
    );
    assert_eq!(v.wrong_keys, 4, "{v:#?}");
    assert_eq!(v.key_errors[keys::NODE_NOT_CREATION_INDEX], 4);
    assert!(!v.is_clean);
}

/// Two execs whose events carry each other's graph ids.
#[test]
fn swapped_graph_ids_are_wrong() {
    let mut runs = session();
    runs[0].ops.extend(launch(40, 2, 0, 20, 4_000_000));
    runs[0]
        .calls
        .push(call(40, LAUNCHER, "hipGraphLaunch", Some("7")));
    let swap = |exec: u64, _epoch: u32| 3 - exec;
    let mut trace = faithful_trace(&runs, &markers());
    for (e, op) in trace.events.iter_mut().zip(&runs[0].ops) {
        *e = faithful(op, swap, e.external_id);
    }
    // On SDK 1.3 an exec at epoch 0 must carry its graph_exec_id.
    let v = check(&runs, SDK_13, &trace);
    assert_eq!(v.wrong_keys, 9, "{v:#?}");
    assert_eq!(v.key_errors[keys::GRAPH_ID_NOT_SDK_EXEC_ID], 9);
    // SDK 1.0 has no exec ids: a consistent swap is still a bijection.
    let v = check(&runs, SDK_10, &trace);
    assert_eq!(v.wrong_keys, 0, "{v:#?}");
    assert!(v.is_clean);
}

#[test]
fn one_graph_id_for_two_execs_or_two_for_one_exec_is_wrong() {
    let mut runs = session();
    runs[0].ops.extend(launch(40, 2, 0, 20, 4_000_000));
    runs[0]
        .calls
        .push(call(40, LAUNCHER, "hipGraphLaunch", Some("7")));
    let mut trace = faithful_trace(&runs, &markers());
    // Both execs under graph id 1.
    let shared = |_: u64, _: u32| 1;
    for (e, op) in trace.events.iter_mut().zip(&runs[0].ops) {
        *e = faithful(op, shared, e.external_id);
    }
    let v = check(&runs, SDK_10, &trace);
    assert_eq!(v.key_errors[keys::GRAPH_ID_SHARED], 9, "{v:#?}");
    assert_eq!(v.wrong_keys, 9);
    assert_eq!(v.aliased_keys, 3);
    // Exec 1 under a second id in its second launch.
    let mut trace = faithful_trace(&runs, &markers());
    for e in events_of(&mut trace, 20) {
        let (_, node) = e.graph.unwrap();
        e.graph = Some((77, (77 << 32) | (node & 0xFFFF_FFFF)));
    }
    let v = check(&runs, SDK_10, &trace);
    assert_eq!(v.key_errors[keys::EXEC_SPLIT], 6, "{v:#?}");
    assert_eq!(v.wrong_keys, 6);
    assert_eq!(v.split_nodes, 3);
}

#[test]
fn an_updated_exec_needs_a_graph_id_of_its_own() {
    let mut runs = session();
    // The second launch ran after an update: epoch 1.
    for op in runs[0]
        .ops
        .iter_mut()
        .filter(|o| o.launch_correlation_id == 20)
    {
        op.exec_epoch = 1;
    }
    let same_id = |exec: u64, _: u32| exec;
    let mut trace = faithful_trace(&runs, &markers());
    for (e, op) in trace.events.iter_mut().zip(&runs[0].ops) {
        *e = faithful(op, same_id, e.external_id);
    }
    let v = check(&runs, SDK_13, &trace);
    assert_eq!(v.key_errors[keys::GRAPH_ID_SHARED], 6, "{v:#?}");
    assert!(!v.is_clean);
    let trace = faithful_trace(&runs, &markers());
    let v = check(&runs, SDK_13, &trace);
    assert!(v.is_clean, "{v:#?}");
    assert_eq!(v.distinct_graph_ids, 2);
}

#[test]
fn a_truth_without_epochs_takes_them_from_the_exec_updates() {
    let mut runs = session();
    runs[0].submission_model = String::new();
    runs[0].calls.clear();
    for op in runs[0].ops.iter_mut() {
        op.exec_epoch = 0;
    }
    runs[0].exec_events.push(ExecEvent {
        event: "update".into(),
        correlation_id: 15,
        thread: LAUNCHER,
        exec_handle: 0x6001,
        graph_exec_id: 1,
        graph: Some("g1u".into()),
    });
    let mut with_epochs = session();
    for op in with_epochs[0]
        .ops
        .iter_mut()
        .filter(|o| o.launch_correlation_id == 20)
    {
        op.exec_epoch = 1;
    }
    let trace = faithful_trace(&with_epochs, &markers());
    let v = check(&runs, SDK_13, &trace);
    assert!(v.is_clean, "{v:#?}");
    assert_eq!(v.distinct_graph_ids, 2);
    assert_eq!(
        v.external_id_reference,
        "trace runtime events (the truth lists no calls)"
    );
    // One id over the update is caught from the derived epochs too.
    let trace = faithful_trace(&session(), &markers());
    let v = check(&runs, SDK_13, &trace);
    assert_eq!(v.key_errors[keys::GRAPH_ID_SHARED], 6, "{v:#?}");
}

#[test]
fn a_node_id_not_packed_with_its_graph_id_is_wrong() {
    let runs = session();
    let mut trace = faithful_trace(&runs, &markers());
    let e = trace.events.iter_mut().find(|e| e.graph.is_some()).unwrap();
    let (g, node) = e.graph.unwrap();
    e.graph = Some((g, ((g + 1) << 32) | (node & 0xFFFF_FFFF)));
    let v = check(&runs, SDK_13, &trace);
    assert_eq!(v.key_errors[keys::NODE_ID_NOT_PACKED], 1, "{v:#?}");
    assert_eq!(v.wrong_keys, 1);
}

#[test]
fn a_pair_on_eager_work_is_wrong_and_a_withheld_pair_is_not() {
    let runs = session();
    let mut trace = faithful_trace(&runs, &markers());
    for e in events_of(&mut trace, 30) {
        e.graph = Some((1, 1 << 32));
    }
    let v = check(&runs, SDK_13, &trace);
    assert_eq!(v.key_errors[keys::PAIR_ON_EAGER_WORK], 1, "{v:#?}");
    assert_eq!(v.wrong_keys, 1);
    assert_eq!(v.aliased_keys, 1, "the key also covers node 0");
    let mut trace = faithful_trace(&runs, &markers());
    for e in events_of(&mut trace, 20) {
        e.graph = None;
    }
    let v = check(&runs, SDK_13, &trace);
    assert!(v.is_clean, "{v:#?}");
    assert_eq!(v.withheld_records, 3);
    assert_eq!(v.carrying_both_fields, 3);
}

#[test]
fn a_wrong_correlation_is_caught_and_so_is_its_arrow() {
    let runs = session();
    let mut trace = faithful_trace(&runs, &markers());
    // The launch's first kernel shows the eager call's correlation, as a
    // packet written by another thread would: the arrow of launch 10 is
    // gone, and the eager call's arrow now also ends on it.
    let first = trace
        .events
        .iter()
        .position(|e| e.correlation == Some(10) && e.start_ns == 1_000_000)
        .unwrap();
    trace.events[first].correlation = Some(30);
    for f in trace.flows.iter_mut().filter(|f| !f.start && f.id == 10) {
        f.id = 30;
    }
    trace.flows.retain(|f| !(f.start && f.id == 10));
    let v = check(&runs, SDK_13, &trace);
    assert_eq!(v.wrong_correlations, 1, "{v:#?}");
    assert_eq!(v.wrong_flows, 1);
    assert!(!v.is_clean);
}

#[test]
fn an_arrow_from_the_wrong_thread_or_to_the_wrong_event_is_wrong() {
    let runs = session();
    let mut trace = faithful_trace(&runs, &markers());
    let start = trace
        .flows
        .iter_mut()
        .find(|f| f.start && f.id == 10)
        .unwrap();
    start.tid = OTHER_THREAD;
    let v = check(&runs, SDK_13, &trace);
    assert_eq!(v.wrong_flows, 1, "{v:#?}");
    let mut trace = faithful_trace(&runs, &markers());
    let eager = trace
        .events
        .iter()
        .find(|e| e.correlation == Some(30))
        .unwrap();
    let (pid, tid, ts) = (eager.pid, eager.tid, eager.start_ns);
    let finish = trace
        .flows
        .iter_mut()
        .find(|f| !f.start && f.id == 10)
        .unwrap();
    (finish.pid, finish.tid, finish.ts_ns) = (pid, tid, ts);
    let v = check(&runs, SDK_13, &trace);
    assert_eq!(v.wrong_flows, 1, "{v:#?}");
    assert_eq!(v.wrong_correlations, 0);
}

#[test]
fn a_wrong_external_id_is_caught_an_absent_one_is_counted() {
    let runs = session();
    let mut trace = faithful_trace(&runs, &markers());
    // The eager call ran inside no marker; launch 10 inside "7".
    events_of(&mut trace, 30).for_each(|e| e.external_id = Some(7));
    events_of(&mut trace, 10)
        .take(1)
        .for_each(|e| e.external_id = Some(1 << 40));
    events_of(&mut trace, 20).for_each(|e| e.external_id = None);
    let v = check(&runs, SDK_13, &trace);
    assert_eq!(v.wrong_external_ids, 2, "{v:#?}");
    assert_eq!(v.events_without_external_id, 3);
    assert!(!v.is_clean);
}

#[test]
fn a_named_marker_is_expected_under_the_id_it_was_given() {
    let runs = session();
    let trace = faithful_trace(&runs, &markers());
    // The same trace, judged with "step" given another id.
    let other = MarkerIds::new([("step".to_string(), 5)].into());
    let v = validate(&runs, SDK_13, &other, &[(&trace, vec![vec![0]])]);
    assert_eq!(v.wrong_external_ids, 3, "{v:#?}");
    assert_eq!(v.wrong_runtime_events, 1);
}

#[test]
fn a_wrong_stream_arg_or_lane_is_a_wrong_lane_and_an_unknown_one_is_absent() {
    let runs = session();
    let mut trace = faithful_trace(&runs, &markers());
    events_of(&mut trace, 10)
        .take(1)
        .for_each(|e| e.stream = Some(OTHER_STREAM));
    events_of(&mut trace, 20)
        .take(1)
        .for_each(|e| e.tid = OTHER_STREAM);
    let v = check(&runs, SDK_13, &trace);
    assert_eq!(v.wrong_lanes, 2, "{v:#?}");
    // A lane named for another stream.
    let mut trace = faithful_trace(&runs, &markers());
    trace
        .lane_names
        .insert((0, STREAM), format!("stream {OTHER_STREAM}"));
    let v = check(&runs, SDK_13, &trace);
    assert_eq!(v.wrong_lanes, 6, "{v:#?}");
    // Unknown: the writer's 0 in both arg and lane.
    let mut trace = faithful_trace(&runs, &markers());
    events_of(&mut trace, 30).for_each(|e| (e.stream, e.tid) = (Some(0), 0));
    events_of(&mut trace, 20).for_each(|e| e.stream = None);
    let v = check(&runs, SDK_13, &trace);
    assert_eq!(v.wrong_lanes, 0, "{v:#?}");
    assert_eq!(v.events_without_stream, 4);
}

#[test]
fn a_wrong_device_is_caught() {
    let runs = session();
    let mut trace = faithful_trace(&runs, &markers());
    trace.events[0].pid = 1;
    let v = check(&runs, SDK_13, &trace);
    assert_eq!(v.wrong_devices, 1, "{v:#?}");
    assert_eq!(v.devices, 2, "devices are counted from the trace");
}

#[test]
fn a_missing_event_fails_unless_the_trace_says_its_window_is_incomplete() {
    let runs = session();
    let mut trace = faithful_trace(&runs, &markers());
    trace.events.retain(|e| e.correlation != Some(30));
    trace.flows.retain(|f| f.id != 30);
    let v = check(&runs, SDK_13, &trace);
    assert_eq!(v.missing_events, 1, "{v:#?}");
    assert!(!v.is_clean);
    trace.summary = vec![
        "window 0: completeness=incomplete (1 correlation ids outstanding at the deadline)".into(),
    ];
    let v = check(&runs, SDK_13, &trace);
    assert_eq!(v.missing_events, 0, "{v:#?}");
    assert_eq!(v.missing_in_incomplete_windows, 1);
    assert_eq!(v.incomplete_windows, 1);
    assert!(v.is_clean);
}

#[test]
fn an_extra_event_fails() {
    let runs = session();
    let mut trace = faithful_trace(&runs, &markers());
    let mut unknown = trace.events[0].clone();
    unknown.dispatch_id = Some(999);
    trace.events.push(unknown);
    let v = check(&runs, SDK_13, &trace);
    assert_eq!((v.extra_events, v.unknown_events), (1, 1), "{v:#?}");
    assert!(!v.is_clean);
    let mut trace = faithful_trace(&runs, &markers());
    let twice = trace.events[0].clone();
    trace.events.push(twice);
    let v = check(&runs, SDK_13, &trace);
    assert_eq!((v.extra_events, v.duplicate_events), (1, 1), "{v:#?}");
}

#[test]
fn each_window_holds_its_own_steps_only() {
    // Two steps, one window each; the second window shows an op of the first.
    let mut runs = session();
    let mut second = session().remove(0);
    for op in second.ops.iter_mut() {
        op.launch_correlation_id += 100;
        op.record_correlation_id += 100;
        op.dispatch_id += 100;
        op.start_ns += 10_000_000;
        op.end_ns += 10_000_000;
        op.graph_exec_id = 2;
    }
    for c in second.calls.iter_mut() {
        c.correlation_id += 100;
        c.enter_ns += 1000;
        c.exit_ns += 1000;
    }
    runs.push(second);
    let m = markers();
    let first = faithful_trace(&runs[..1], &m);
    let mut later = faithful_trace(&runs[1..], &m);
    let v = validate(
        &runs,
        SDK_13,
        &m,
        &[(&first, vec![vec![0]]), (&later, vec![vec![1]])],
    );
    assert!(v.is_clean, "{v:#?}");
    assert_eq!(v.windows, 2);
    assert_eq!(v.distinct_graph_ids, 2);
    later.events.push(first.events[0].clone());
    let v = validate(
        &runs,
        SDK_13,
        &m,
        &[(&first, vec![vec![0]]), (&later, vec![vec![1]])],
    );
    assert_eq!(v.events_outside_their_window, 1, "{v:#?}");
    assert!(!v.is_clean);
    // A step in no window: its events are extra, its ops not missing.
    let v = validate(&runs, SDK_13, &m, &[(&first, vec![vec![0]])]);
    assert!(v.is_clean, "{v:#?}");
    assert_eq!(v.expected_ops, 7);
}

#[test]
fn copies_match_by_exact_times_bytes_and_direction() {
    let runs = session();
    let mut trace = faithful_trace(&runs, &markers());
    let copy = trace
        .events
        .iter_mut()
        .find(|e| e.category == GpuCategory::Memcpy)
        .unwrap();
    copy.end_ns += 1;
    let v = check(&runs, SDK_13, &trace);
    assert_eq!((v.extra_events, v.missing_events), (1, 1), "{v:#?}");
    let mut trace = faithful_trace(&runs, &markers());
    let copy = trace
        .events
        .iter_mut()
        .find(|e| e.category == GpuCategory::Memcpy)
        .unwrap();
    copy.direction = Some(Direction::HostToDevice);
    let v = check(&runs, SDK_13, &trace);
    assert_eq!((v.extra_events, v.missing_events), (1, 1), "{v:#?}");
}

#[test]
fn copies_that_fit_several_truth_copies_are_reported_ambiguous() {
    let mut runs = session();
    // The second launch's copy at the same time as the first's.
    let (a, b) = {
        let copies: Vec<usize> = (0..runs[0].ops.len())
            .filter(|&i| runs[0].ops[i].kind == OpKind::Memcpy)
            .collect();
        (copies[0], copies[1])
    };
    let (start, end) = (runs[0].ops[a].start_ns, runs[0].ops[a].end_ns);
    (runs[0].ops[b].start_ns, runs[0].ops[b].end_ns) = (start, end);
    let trace = faithful_trace(&runs, &markers());
    let v = check(&runs, SDK_13, &trace);
    assert_eq!(v.ambiguous_copy_matches, 1, "{v:#?}");
    assert!(v.is_clean, "{v:#?}");
}

#[test]
fn alike_copies_on_two_devices_are_told_apart_by_device() {
    // Two devices replay one graph at one instant: their copies differ only
    // in device, and the trace withholds both copies' links.
    let mut runs = session();
    runs[0].devices = 2;
    let copies: Vec<usize> = (0..runs[0].ops.len())
        .filter(|&i| runs[0].ops[i].kind == OpKind::Memcpy)
        .collect();
    let (a, b) = (copies[0], copies[1]);
    let (start, end) = (runs[0].ops[a].start_ns, runs[0].ops[a].end_ns);
    (runs[0].ops[b].start_ns, runs[0].ops[b].end_ns) = (start, end);
    runs[0].ops[b].device = 1;
    let mut trace = faithful_trace(&runs, &markers());
    let shown: Vec<usize> = (0..trace.events.len())
        .filter(|&i| trace.events[i].category == GpuCategory::Memcpy)
        .collect();
    for &i in &shown {
        trace.events[i].correlation = None;
    }
    // The device-1 copy's event first, so order alone pairs them wrongly.
    trace.events.swap(shown[0], shown[1]);
    let v = check(&runs, SDK_13, &trace);
    assert_eq!(v.ambiguous_copy_matches, 1, "{v:#?}");
    assert_eq!((v.wrong_devices, v.wrong_copy_devices), (0, 0), "{v:#?}");
    // Both shown on device 0: one of them is on the wrong device.
    let device_1 = shown
        .iter()
        .copied()
        .find(|&i| trace.events[i].pid == 1)
        .unwrap();
    trace.events[device_1].pid = 0;
    trace.events[device_1].device = Some(0);
    let v = check(&runs, SDK_13, &trace);
    assert_eq!(v.wrong_devices, 1, "{v:#?}");
}

#[test]
fn an_empty_trace_is_not_clean() {
    let runs = session();
    let mut trace = faithful_trace(&runs, &markers());
    trace.events.clear();
    trace.flows.clear();
    let v = check(&runs, SDK_13, &trace);
    assert_eq!(v.wrong_total(), 0);
    assert!(!v.is_clean, "{v:#?}");
    // A window that says it ended incomplete may show nothing (a backlog
    // longer than the flush deadline): what it misses is counted apart, and
    // the run is clean only because every missing op is in such windows.
    trace.summary = vec![
        "window 0: completeness=incomplete (7 correlation ids outstanding at the deadline)".into(),
    ];
    let v = check(&runs, SDK_13, &trace);
    assert_eq!(v.missing_events, 0);
    assert_eq!(v.missing_in_incomplete_windows, v.expected_ops);
    assert!(v.is_clean, "{v:#?}");
}

/// Two windows, one step each, nothing shown: clean only when both windows
/// said they ended incomplete.
#[test]
fn an_empty_trace_of_several_windows_needs_every_window_incomplete() {
    let mut runs = session();
    let mut second = session().remove(0);
    for op in second.ops.iter_mut() {
        op.launch_correlation_id += 100;
        op.record_correlation_id += 100;
        op.dispatch_id += 100;
        op.start_ns += 10_000_000;
        op.end_ns += 10_000_000;
    }
    for c in second.calls.iter_mut() {
        c.correlation_id += 100;
    }
    runs.push(second);
    let incomplete = |w: usize| {
        format!(
            "window {w}: completeness=incomplete (7 correlation ids outstanding at the deadline)"
        )
    };
    let mut empty = faithful_trace(&runs, &markers());
    empty.events.clear();
    empty.flows.clear();
    let m = markers();
    empty.summary = vec![incomplete(0), "window 1: completeness=complete".into()];
    let v = validate(&runs, SDK_13, &m, &[(&empty, vec![vec![0], vec![1]])]);
    assert_eq!(
        (v.missing_events, v.missing_in_incomplete_windows),
        (7, 7),
        "{v:#?}"
    );
    assert!(!v.is_clean, "{v:#?}");
    empty.summary = vec![incomplete(0), incomplete(1)];
    let v = validate(&runs, SDK_13, &m, &[(&empty, vec![vec![0], vec![1]])]);
    assert_eq!(v.missing_in_incomplete_windows, 14, "{v:#?}");
    assert!(v.is_clean, "{v:#?}");
}

#[test]
fn a_runtime_call_on_the_wrong_thread_is_wrong() {
    let runs = session();
    let mut trace = faithful_trace(&runs, &markers());
    let c = trace
        .runtime
        .iter_mut()
        .find(|c| c.correlation == Some(30))
        .unwrap();
    c.tid = LAUNCHER;
    let v = check(&runs, SDK_13, &trace);
    assert_eq!(v.wrong_runtime_events, 1, "{v:#?}");
}

/// The session with SQ_WAVES and GRBM_COUNT counted on every kernel.
fn counted_session() -> Vec<RunTruth> {
    let mut runs = session();
    for op in runs[0].ops.iter_mut().filter(|o| o.kind == OpKind::Kernel) {
        op.counters = [
            ("SQ_WAVES".to_string(), op.dispatch_id as f64 * 4.0),
            ("GRBM_COUNT".to_string(), 2100.0),
        ]
        .into();
        let instance = |counter: &str, xcc, value| CounterInstanceTruth {
            counter: counter.to_string(),
            dimensions: vec![
                ("DIMENSION_XCC".to_string(), xcc),
                ("DIMENSION_INSTANCE".to_string(), 0),
            ],
            value,
        };
        let half = op.dispatch_id as f64 * 2.0;
        op.counter_instances = vec![
            instance("SQ_WAVES", 0, half),
            instance("SQ_WAVES", 1, half),
            instance("GRBM_COUNT", 0, 2100.0),
        ];
    }
    runs
}

/// `check` with counter dimensions asked for.
fn check_dimensions(runs: &[RunTruth], trace: &Trace) -> Validation {
    let markers = markers();
    let mut validator = Validator::new(runs, SDK_13, &markers).with_counter_dimensions(true);
    validator.add_trace(trace, &[(0..runs.len()).collect()]);
    validator.finish()
}

#[test]
fn counter_instance_values_equal_to_the_truth_are_clean_and_counted() {
    let runs = counted_session();
    let trace = faithful_trace(&runs, &markers());
    let v = check_dimensions(&runs, &trace);
    assert!(v.is_clean, "{v:#?}");
    assert_eq!(v.counter_instance_values, 15, "5 kernels x 3 instances");
    assert_eq!(
        (
            v.wrong_counter_instance_values,
            v.missing_counter_instance_values
        ),
        (0, 0)
    );
    let mut summed = trace;
    for e in &mut summed.events {
        e.counter_instances.clear();
    }
    let v = check(&runs, SDK_13, &summed);
    assert!(
        v.is_clean,
        "without dimensions asked for, none are expected: {v:#?}"
    );
    assert_eq!(v.missing_counter_instance_values, 0);
}

#[test]
fn a_wrong_unreadable_or_repeated_instance_value_is_wrong_and_a_lacking_one_missing() {
    let runs = counted_session();
    let mut trace = faithful_trace(&runs, &markers());
    let kernels = kernel_indices(&trace);
    trace.events[kernels[0]].counter_instances[1].1 += 1.0;
    trace.events[kernels[1]].counter_instances[0].0 = "SQ_WAVES[XCC=0".into();
    let repeat = trace.events[kernels[2]].counter_instances[0].clone();
    trace.events[kernels[2]].counter_instances.push(repeat);
    trace.events[kernels[3]].counter_instances.pop();
    let v = check_dimensions(&runs, &trace);
    assert_eq!(
        v.wrong_counter_instance_values, 3,
        "a changed value, an unreadable key, a repeat: {v:#?}"
    );
    assert_eq!(
        v.missing_counter_instance_values, 2,
        "the instance whose key was unreadable, the one dropped"
    );
    assert!(!v.is_clean);
    assert_eq!(v.wrong_counter_values, 0, "the sums are still right");
}

#[test]
fn counter_values_equal_to_the_truth_are_clean_and_counted() {
    let runs = counted_session();
    let trace = faithful_trace(&runs, &markers());
    let v = check(&runs, SDK_13, &trace);
    assert!(v.is_clean, "{v:#?}");
    assert_eq!(v.counter_values, 10, "5 kernels x 2 counters");
    assert_eq!((v.wrong_counter_values, v.missing_counter_values), (0, 0));
}

#[test]
fn a_wrong_or_unproven_counter_value_fails_and_a_missing_one_is_counted() {
    let runs = counted_session();
    let mut trace = faithful_trace(&runs, &markers());
    let kernels = kernel_indices(&trace);
    trace.events[kernels[0]].counters[0].1 += 1.0;
    trace.events[kernels[1]]
        .counters
        .push(("TCC_HIT".to_string(), 4.0));
    trace.events[kernels[2]].counters.pop();
    let v = check(&runs, SDK_13, &trace);
    assert_eq!(
        v.wrong_counter_values, 2,
        "a changed value, a value the truth lacks"
    );
    assert_eq!(v.missing_counter_values, 1);
    assert!(!v.is_clean);
}

#[test]
fn a_counter_track_sample_no_kernel_explains_is_wrong_and_a_lacking_one_missing() {
    let runs = counted_session();
    let faithful = faithful_trace(&runs, &markers());
    assert!(!faithful.counter_samples.is_empty());
    let v = check(&runs, SDK_13, &faithful);
    assert!(v.is_clean, "{v:#?}");
    assert_eq!(v.counter_samples, faithful.counter_samples.len());

    let mut changed = faithful_trace(&runs, &markers());
    changed.counter_samples[0].value += 1.0;
    let v = check(&runs, SDK_13, &changed);
    assert_eq!(
        (v.wrong_counter_samples, v.missing_counter_samples),
        (1, 1),
        "the changed sample is unexplained, and the true one lacking"
    );
    assert!(!v.is_clean);

    let mut dropped = faithful_trace(&runs, &markers());
    dropped.counter_samples.pop();
    let v = check(&runs, SDK_13, &dropped);
    assert_eq!((v.wrong_counter_samples, v.missing_counter_samples), (0, 1));
    assert!(!v.is_clean);
}

/// Kernel replay: each pass is its own truth op under the dispatch's one
/// id; the third kernel ran three passes, the second of which was traced
/// (`bytes` of raw data).
fn replayed_session(bytes: u64) -> Vec<RunTruth> {
    let mut runs = session();
    let ops = &mut runs[0].ops;
    let k = (0..ops.len())
        .filter(|&i| ops[i].kind == OpKind::Kernel)
        .nth(2)
        .unwrap();
    ops[k].replay_pass = Some(0);
    for pass in 1..3 {
        let mut op = ops[k].clone();
        op.replay_pass = Some(pass);
        op.start_ns += 1000 * u64::from(pass);
        op.end_ns += 1000 * u64::from(pass);
        if pass == 1 {
            op.thread_trace_bytes = bytes;
        }
        ops.push(op);
    }
    runs
}

fn trace_file(name: &str, bytes: usize) -> String {
    let path = std::env::temp_dir().join(format!("kineto-rocm-vt-{}-{name}", std::process::id()));
    std::fs::write(&path, vec![7u8; bytes]).unwrap();
    path.display().to_string()
}

#[test]
fn each_replay_pass_is_matched_by_its_number_and_a_wrong_number_is_unknown() {
    let runs = replayed_session(0);
    let trace = faithful_trace(&runs, &markers());
    let v = check(&runs, SDK_13, &trace);
    assert!(v.is_clean, "{v:#?}");
    assert_eq!(v.replay_pass_events, 3);

    let mut trace = faithful_trace(&runs, &markers());
    let e = trace
        .events
        .iter_mut()
        .find(|e| e.replay_pass == Some(2))
        .unwrap();
    e.replay_pass = Some(5);
    let v = check(&runs, SDK_13, &trace);
    assert_eq!((v.unknown_events, v.missing_events), (1, 1), "{v:#?}");
    assert!(!v.is_clean);
}

#[test]
fn a_thread_trace_must_name_files_holding_exactly_the_pass_bytes() {
    let runs = replayed_session(100);
    let with_files = |files: Option<String>| {
        let mut trace = faithful_trace(&runs, &markers());
        let e = trace
            .events
            .iter_mut()
            .find(|e| e.replay_pass == Some(1))
            .unwrap();
        e.thread_trace = files.map(|f| f.into());
        check(&runs, SDK_13, &trace)
    };
    let right = trace_file("right", 60) + "," + &trace_file("rest", 40);
    let v = with_files(Some(right.clone()));
    assert!(v.is_clean, "{v:#?}");
    assert_eq!((v.thread_trace_events, v.wrong_thread_traces), (1, 0));

    let v = with_files(Some(trace_file("short", 99)));
    assert_eq!(v.wrong_thread_traces, 1, "a byte short");
    let v = with_files(Some("/nonexistent/kineto-rocm.att".into()));
    assert_eq!(v.wrong_thread_traces, 1, "no such file");
    let v = with_files(None);
    assert_eq!(v.missing_thread_traces, 1);
    assert!(!v.is_clean);

    let mut trace = faithful_trace(&runs, &markers());
    let untraced = trace
        .events
        .iter_mut()
        .find(|e| e.replay_pass == Some(0))
        .unwrap();
    untraced.thread_trace = Some(right.as_str().into());
    let v = check(&runs, SDK_13, &trace);
    assert_eq!(v.wrong_thread_traces, 1, "a pass that was not traced");
    for file in right.split(',').chain([trace_file("short", 0).as_str()]) {
        let _ = std::fs::remove_file(file);
    }
}
