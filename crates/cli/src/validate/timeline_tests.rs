//! The timeline checks catch what they claim to: a faithful timeline of a
//! small truth is clean, and each planted error is counted wrong.
use super::timeline::{check, Truth};
use super::{OpRef, Validation};
use crate::markers::MarkerIds;
use crate::trace::{GpuCategory, GpuEvent, TimelineEvent, Trace};
use rocprofiler_sim::truth::{
    CallTruth, GraphEventTruth, HostFnTruth, MarkerTruth, OpKind, OpTruth, RunTruth,
};
use std::collections::HashMap;
use std::sync::Arc;

const THREAD: u64 = 9;
const STREAM: u64 = 2;

/// A memset launched inside a roctx range, a stream synchronisation and a
/// host function the stream waited for.
fn truth() -> RunTruth {
    RunTruth {
        submission_model: "rocm".into(),
        ops: vec![OpTruth {
            kind: OpKind::Kernel,
            dispatch_id: 1,
            launch_correlation_id: 10,
            stream_id: STREAM,
            kernel_name: Some("__amd_rocclr_fillBufferAligned".into()),
            blit: true,
            bytes: 64,
            value: Some(7),
            start_ns: 1_000,
            end_ns: 1_100,
            ..OpTruth::default()
        }],
        calls: vec![
            CallTruth {
                correlation_id: 10,
                thread: THREAD,
                name: "hipMemsetAsync".into(),
                stream_id: Some(STREAM),
                enter_ns: 500,
                exit_ns: 600,
                ..CallTruth::default()
            },
            CallTruth {
                correlation_id: 11,
                thread: THREAD,
                name: "hipStreamSynchronize".into(),
                stream_id: Some(STREAM),
                enter_ns: 700,
                exit_ns: 1_500,
                ..CallTruth::default()
            },
        ],
        host_functions: vec![HostFnTruth {
            launch_correlation_id: 12,
            stream_id: STREAM,
            function: 0x4000,
            start_ns: 1_200,
            end_ns: 1_300,
            ..HostFnTruth::default()
        }],
        markers: vec![MarkerTruth {
            kind: "thread_range".into(),
            message: "step".into(),
            thread: THREAD,
            start_ns: 400,
            end_ns: 650,
        }],
        ..RunTruth::default()
    }
}

fn timeline(category: &str, name: &str, start_ns: u64, end_ns: u64) -> TimelineEvent {
    TimelineEvent {
        category: Arc::from(category),
        name: Arc::from(name),
        pid: 0,
        tid: STREAM,
        start_ns,
        end_ns,
        device: None,
        stream: None,
        correlation: None,
        wait_on_stream: None,
        wait_on_record: None,
        wait_on_event: None,
        event_id: None,
        graph: None,
        external_id: None,
        function: None,
    }
}

/// What a faithful backend shows for `truth()`.
fn faithful() -> Trace {
    let mut trace = Trace::default();
    trace.events.push(GpuEvent {
        name: Arc::from("Memset (Device)"),
        category: GpuCategory::Memset,
        pid: 0,
        tid: STREAM,
        start_ns: 1_000,
        end_ns: 1_100,
        device: Some(0),
        stream: Some(STREAM),
        dispatch_id: Some(1),
        correlation: Some(10),
        external_id: None,
        graph: None,
        bytes: Some(64),
        direction: None,
        counters: Vec::new(),
        value: Some(7),
        mangled_name: None,
        src_device: None,
        dst_device: None,
        replay_pass: None,
        thread_trace: None,
        counter_instances: Vec::new(),
    });
    trace.timeline.push(TimelineEvent {
        device: Some(0),
        stream: Some(STREAM),
        correlation: Some(11),
        ..timeline("cuda_sync", "Stream Sync", 700, 1_500)
    });
    trace.timeline.push(TimelineEvent {
        device: Some(0),
        stream: Some(STREAM),
        correlation: Some(12),
        function: Some(0x4000),
        ..timeline("cuda_sync", "Host Function", 1_100, 1_400)
    });
    trace.timeline.push(TimelineEvent {
        pid: 1_000_000,
        tid: THREAD,
        ..timeline("user_annotation", "step", 400, 650)
    });
    trace
        .timeline
        .push(timeline("gpu_user_annotation", "step", 1_000, 1_100));
    trace
}

fn run(trace: &Trace) -> Validation {
    let runs = [truth()];
    let calls: HashMap<u64, &CallTruth> = runs[0]
        .calls
        .iter()
        .map(|c| (c.correlation_id, c))
        .collect();
    let markers = MarkerIds::new(HashMap::new());
    let t = Truth {
        runs: runs.iter().collect(),
        calls: &calls,
        graphs: &[],
        markers: &markers,
    };
    let matched = vec![Some(OpRef { run: 0, op: 0 }); trace.events.len()];
    let mut r = Validation::default();
    check(&mut r, trace, &t, &matched, |at| {
        &runs[at.run as usize].ops[at.op as usize]
    });
    r
}

fn wrong(r: &Validation) -> [usize; 6] {
    [
        r.wrong_memsets,
        r.wrong_syncs,
        r.wrong_host_functions,
        r.wrong_annotations,
        r.wrong_gpu_annotations,
        r.missing_gpu_annotations + r.missing_syncs + r.missing_annotations,
    ]
}

#[test]
fn a_faithful_timeline_is_clean_and_counted() {
    let r = run(&faithful());
    assert_eq!(wrong(&r), [0; 6]);
    assert_eq!(
        (
            r.memset_checks,
            r.expected_syncs,
            r.host_function_events,
            r.gpu_annotations
        ),
        (1, 1, 1, 1)
    );
}

/// What a plant is, how it is planted, the counter of `wrong` it moves.
type Plant = (&'static str, fn(&mut Trace), usize);

#[test]
fn each_planted_error_is_counted_where_it_belongs() {
    let cases: [Plant; 8] = [
        ("memset value", |t| t.events[0].value = Some(8), 0),
        (
            "sync shorter than the call",
            |t| t.timeline[0].end_ns -= 1,
            1,
        ),
        (
            "sync of no synchronising call",
            |t| {
                let mut extra = t.timeline[0].clone();
                extra.correlation = Some(99);
                t.timeline.push(extra);
            },
            1,
        ),
        (
            "host function not containing its run",
            |t| t.timeline[1].end_ns = 1_250,
            2,
        ),
        (
            "host function naming another function",
            |t| t.timeline[1].function = Some(1),
            2,
        ),
        (
            "range of no roctx call",
            |t| {
                let mut extra = t.timeline[2].clone();
                extra.name = Arc::from("other");
                extra.tid = THREAD + 1;
                t.timeline.push(extra);
            },
            3,
        ),
        (
            "GPU span wider than the enclosed work",
            |t| t.timeline[3].end_ns = 1_200,
            4,
        ),
        (
            "GPU span left out",
            |t| {
                t.timeline.pop();
            },
            5,
        ),
    ];
    for (what, plant, counter) in cases {
        let mut trace = faithful();
        plant(&mut trace);
        let got = wrong(&run(&trace));
        let mut want = [0; 6];
        want[counter] = 1;
        assert_eq!(got, want, "{what}");
    }
}

/// A replay whose event-record node (index 3) recorded event 0x5e00 at
/// 2_000, after its kernel node 1 ended at 1_900.
fn graph_record_truth() -> RunTruth {
    RunTruth {
        submission_model: "rocm".into(),
        ops: vec![OpTruth {
            kind: OpKind::Kernel,
            dispatch_id: 1,
            launch_correlation_id: 20,
            stream_id: STREAM,
            node_index: Some(1),
            start_ns: 1_000,
            end_ns: 1_900,
            ..OpTruth::default()
        }],
        calls: vec![CallTruth {
            correlation_id: 20,
            thread: THREAD,
            name: "hipGraphLaunch".into(),
            stream_id: Some(STREAM),
            enter_ns: 500,
            exit_ns: 600,
            ..CallTruth::default()
        }],
        graph_events: vec![GraphEventTruth {
            event: 0x5e00,
            launch_correlation_id: 20,
            stream_id: STREAM,
            node_index: 3,
            completed_ns: 2_000,
            ..GraphEventTruth::default()
        }],
        ..RunTruth::default()
    }
}

fn graph_record_trace() -> Trace {
    let mut trace = Trace::default();
    trace.events.push(GpuEvent {
        name: Arc::from("k"),
        category: GpuCategory::Kernel,
        pid: 0,
        tid: STREAM,
        start_ns: 1_000,
        end_ns: 1_900,
        device: Some(0),
        stream: Some(STREAM),
        dispatch_id: Some(1),
        correlation: Some(20),
        external_id: None,
        graph: Some((7, 7 << 32 | 1)),
        bytes: None,
        direction: None,
        value: None,
        mangled_name: None,
        src_device: None,
        dst_device: None,
        replay_pass: None,
        thread_trace: None,
        counter_instances: Vec::new(),
        counters: Vec::new(),
    });
    trace.timeline.push(TimelineEvent {
        device: Some(0),
        stream: Some(STREAM),
        correlation: Some(20),
        event_id: Some(0x5e00),
        graph: Some((7, 7 << 32 | 3)),
        ..timeline("cuda_event", "Event Record", 1_900, 1_900)
    });
    trace
}

fn run_graph_record(trace: &Trace) -> Validation {
    let runs = [graph_record_truth()];
    let calls: HashMap<u64, &CallTruth> = runs[0]
        .calls
        .iter()
        .map(|c| (c.correlation_id, c))
        .collect();
    let markers = MarkerIds::new(HashMap::new());
    let t = Truth {
        runs: runs.iter().collect(),
        calls: &calls,
        graphs: &[],
        markers: &markers,
    };
    let matched = vec![Some(OpRef { run: 0, op: 0 }); trace.events.len()];
    let mut r = Validation::default();
    check(&mut r, trace, &t, &matched, |at| {
        &runs[at.run as usize].ops[at.op as usize]
    });
    r
}

#[test]
fn a_graph_event_record_is_checked_field_by_field() {
    let r = run_graph_record(&graph_record_trace());
    assert_eq!(
        (
            r.expected_graph_event_records,
            r.graph_event_records_not_shown,
            r.wrong_event_records
        ),
        (1, 0, 0)
    );
    type Planted = (&'static str, fn(&mut Trace));
    let cases: [Planted; 7] = [
        ("another event", |t| t.timeline[0].event_id = Some(0x5e40)),
        ("after the record completed", |t| {
            t.timeline[0].start_ns = 2_001
        }),
        ("before the launch", |t| t.timeline[0].start_ns = 400),
        ("another stream", |t| {
            t.timeline[0].stream = Some(STREAM + 1)
        }),
        ("a graph id the replay's work is not shown under", |t| {
            t.timeline[0].graph = Some((8, 8 << 32 | 3))
        }),
        ("a node id not packed with its graph id", |t| {
            t.timeline[0].graph = Some((7, 3))
        }),
        ("a record of no node", |t| {
            let mut extra = t.timeline[0].clone();
            extra.graph = Some((7, 7 << 32 | 4));
            t.timeline.push(extra);
        }),
    ];
    for (what, plant) in cases {
        let mut trace = graph_record_trace();
        plant(&mut trace);
        let r = run_graph_record(&trace);
        assert_eq!(r.wrong_event_records, 1, "{what}");
    }
    let mut trace = graph_record_trace();
    trace.timeline.clear();
    let r = run_graph_record(&trace);
    assert_eq!(
        (r.graph_event_records_not_shown, r.wrong_event_records),
        (1, 0),
        "left out: counted, not wrong"
    );
}
