//! The ROCm timeline beyond kernels, copies and runtime calls: memsets and
//! blit copies shown as what they are, synchronisation, events, host
//! functions, roctx ranges, graph branch lanes, dependency arrows and the
//! backend's own overhead.
//!
//! The SDK has no record of its own for most of these (SDK 1.0 to 1.3:
//! no memset kind, no HIP_EVENT kind, nothing for host functions), so each
//! comes from what a HIP call's arguments and the proven links say:
//!
//! - a runtime blit kernel (`__amd_rocclr_fill*`, `__amd_rocclr_copy*`)
//!   whose launching call or graph node is proven (the evidence method's
//!   links and keys) is that call's memset or copy, with its size and value;
//!   otherwise it stays a kernel;
//! - a synchronising call is a span over its own CPU times, on the lane of
//!   what it waited on; what an event wait waited for is the event's last
//!   hipEventRecord before it, followed on the calling threads;
//! - an event record and a host function are placed by the proven device
//!   work around them on their stream: bounds, said so in their args; a
//!   graph event-record node's record, per replay, at the end of its
//!   predecessors in that replay, when every one of them is shown;
//! - roctx ranges come from the SDK's marker range domain callbacks.
//!
//! Session state is in [`TimelineEvidence`]; [`finish`] applies it to a
//! finished window.
use crate::vocabulary as vocab;
use crate::window::{
    Annotation, Blit, Dependency, EventActivity, FinishedWindow, GpuAnnotation, GpuRef, GraphNode,
    HostFnActivity, NonMaxU64, Overhead, SyncActivity, SyncKind,
};
use activity_store::{BuildCorrelationHasher, CopyDirection, FastMap, FinalisedWindow};
use dashmap::DashMap;
use graph_attribution::{Direction, ExecContents, FillParts, NodeDetail, NodeWork};
use once_cell::sync::Lazy;
use rocprofiler_sys::hip_runtime_api_id;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// The opt-in setting for graph dependency arrows.
pub const DEPENDENCY_ARROWS_VAR: &str = "KINETO_ROCM_GRAPH_DEPENDENCY_ARROWS";

/// The HIP calls the timeline reads arguments of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimelineCall {
    Memset,
    Copy,
    PeerCopy,
    StreamSync,
    DeviceSync,
    EventSync,
    StreamWaitEvent,
    EventRecord,
    HostFunc,
    SetDevice,
}

/// By operation id, dense (ids are small): asked at every call's ENTER,
/// so no hashing.
static CALLS: Lazy<Vec<Option<TimelineCall>>> = Lazy::new(|| {
    use TimelineCall::*;
    let table: &[(&str, TimelineCall)] = &[
        ("hipMemsetAsync", Memset),
        ("hipMemsetAsync_spt", Memset),
        ("hipMemset", Memset),
        ("hipMemset_spt", Memset),
        ("hipMemcpyAsync", Copy),
        ("hipMemcpyAsync_spt", Copy),
        ("hipMemcpy", Copy),
        ("hipMemcpy_spt", Copy),
        ("hipMemcpyPeerAsync", PeerCopy),
        ("hipMemcpyPeer", PeerCopy),
        ("hipStreamSynchronize", StreamSync),
        ("hipStreamSynchronize_spt", StreamSync),
        ("hipDeviceSynchronize", DeviceSync),
        ("hipEventSynchronize", EventSync),
        ("hipStreamWaitEvent", StreamWaitEvent),
        ("hipStreamWaitEvent_spt", StreamWaitEvent),
        ("hipEventRecord", EventRecord),
        ("hipEventRecord_spt", EventRecord),
        ("hipEventRecordWithFlags", EventRecord),
        ("hipLaunchHostFunc", HostFunc),
        ("hipLaunchHostFunc_spt", HostFunc),
        ("hipSetDevice", SetDevice),
    ];
    let mut calls = Vec::new();
    for (name, kind) in table {
        if let Some(op) = hip_runtime_api_id::by_name(name).and_then(|op| usize::try_from(op).ok())
        {
            if calls.len() <= op {
                calls.resize(op + 1, None);
            }
            calls[op] = Some(*kind);
        }
    }
    calls
});

/// Which timeline call HIP runtime operation `op` is, if any.
pub fn timeline_call(op: i32) -> Option<TimelineCall> {
    usize::try_from(op)
        .ok()
        .and_then(|i| CALLS.get(i).copied().flatten())
}

/// What a call's arguments say, as the SDK adapter reads them at ENTER.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallArgs {
    Memset {
        dst: u64,
        bytes: u64,
        value: u32,
    },
    Copy {
        bytes: u64,
        direction: CopyDirection,
    },
    PeerCopy {
        bytes: u64,
        src_device: i32,
        dst_device: i32,
    },
    StreamSync,
    DeviceSync,
    EventSync {
        event: u64,
    },
    StreamWaitEvent {
        event: u64,
    },
    EventRecord {
        event: u64,
    },
    HostFunc {
        function: u64,
    },
    SetDevice {
        device: i32,
    },
}

/// An event's last record, as a later wait sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventRecordRef {
    pub correlation: u64,
    pub stream: Option<u64>,
}

/// What the timeline keeps of a call issued in a window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Detail {
    /// A memset's fill parts (none: no bytes, nothing dispatched).
    Memset {
        parts: Option<FillParts>,
        value: u32,
    },
    Copy {
        bytes: u64,
        direction: CopyDirection,
    },
    PeerCopy {
        src_device: i32,
        dst_device: i32,
    },
    StreamSync,
    DeviceSync {
        device: u32,
    },
    EventSync {
        event: u64,
        record: Option<EventRecordRef>,
    },
    StreamWaitEvent {
        event: u64,
        record: Option<EventRecordRef>,
    },
    EventRecord {
        event: u64,
    },
    HostFunc {
        function: u64,
    },
}

/// A marker callback's phase; ENTER carries the message (absent when the
/// SDK gave none).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MarkerPhase {
    Enter { message: Option<String> },
    Exit,
}

struct OpenMarker {
    name: String,
    thread_id: u64,
    start_ns: u64,
    process_wide: bool,
}

/// The timeline's evidence, kept over the session. Its maps are keyed by
/// integers the runtime hands out (correlation ids, handles, thread ids)
/// and looked up per call: the fast hasher, not SipHash.
#[derive(Default)]
pub struct TimelineEvidence {
    /// Calls issued in open windows: (detail, stream at ENTER).
    details: DashMap<u64, (Detail, Option<u64>), BuildCorrelationHasher>,
    /// hipEvent_t -> its last record.
    events: DashMap<u64, EventRecordRef, BuildCorrelationHasher>,
    /// Thread -> its current device (hipSetDevice; HIP's default is 0).
    thread_device: DashMap<u64, u32, BuildCorrelationHasher>,
    /// Stream -> device, learned from proven device work.
    stream_device: DashMap<u64, u32, BuildCorrelationHasher>,
    markers_open: DashMap<u64, OpenMarker, BuildCorrelationHasher>,
    markers_closed: Mutex<Vec<Annotation>>,
    overheads: Mutex<Vec<Overhead>>,
    arrows: AtomicBool,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Whether `KINETO_ROCM_GRAPH_DEPENDENCY_ARROWS` turns dependency arrows on
/// (1/true/yes/on; anything else, or unset, leaves them off).
pub fn arrows_from_env() -> bool {
    matches!(
        std::env::var(DEPENDENCY_ARROWS_VAR)
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase()
            .as_str(),
        "1" | "true" | "yes" | "on"
    )
}

impl TimelineEvidence {
    pub fn new() -> TimelineEvidence {
        let t = TimelineEvidence::default();
        t.arrows.store(arrows_from_env(), Ordering::Relaxed);
        t
    }

    /// A timeline call's ENTER on `thread_id`, with the stream HIP_STREAM
    /// SET gave it; `collecting`: a window is open.
    pub fn call_entered(
        &self,
        thread_id: u64,
        correlation: u64,
        stream: Option<u64>,
        args: CallArgs,
        collecting: bool,
    ) {
        let detail = match args {
            CallArgs::SetDevice { device } => {
                if let Ok(device) = u32::try_from(device) {
                    self.thread_device.insert(thread_id, device);
                }
                return;
            }
            CallArgs::EventRecord { event } => {
                self.events.insert(
                    event,
                    EventRecordRef {
                        correlation,
                        stream,
                    },
                );
                Detail::EventRecord { event }
            }
            CallArgs::Memset { dst, bytes, value } => Detail::Memset {
                parts: FillParts::of_1d(dst, bytes),
                value,
            },
            CallArgs::Copy { bytes, direction } => Detail::Copy { bytes, direction },
            CallArgs::PeerCopy {
                src_device,
                dst_device,
                ..
            } => Detail::PeerCopy {
                src_device,
                dst_device,
            },
            CallArgs::StreamSync => Detail::StreamSync,
            CallArgs::DeviceSync => Detail::DeviceSync {
                device: self.thread_device.get(&thread_id).map_or(0, |d| *d),
            },
            CallArgs::EventSync { event } => Detail::EventSync {
                event,
                record: self.events.get(&event).map(|r| *r),
            },
            CallArgs::StreamWaitEvent { event } => Detail::StreamWaitEvent {
                event,
                record: self.events.get(&event).map(|r| *r),
            },
            CallArgs::HostFunc { function } => Detail::HostFunc { function },
        };
        if collecting {
            self.details.insert(correlation, (detail, stream));
        }
    }

    /// A MARKER_CORE_RANGE_API callback: ENTER opens a range (or is a
    /// mark), EXIT closes the range of the same correlation id.
    pub fn marker(
        &self,
        correlation: u64,
        operation: i32,
        phase: MarkerPhase,
        thread_id: u64,
        now_ns: u64,
        collecting: bool,
    ) {
        use rocprofiler_sys::marker_core_range_api_id as op;
        if let MarkerPhase::Enter { message } = phase {
            if !collecting {
                return;
            }
            let name = message.unwrap_or_default();
            if operation == op::roctxMarkA {
                lock(&self.markers_closed).push(Annotation {
                    name,
                    thread_id,
                    start_ns: now_ns,
                    end_ns: now_ns,
                    id: correlation,
                    process_wide: false,
                });
            } else if operation == op::roctxThreadRangeA || operation == op::roctxProcessRangeA {
                self.markers_open.insert(
                    correlation,
                    OpenMarker {
                        name,
                        thread_id,
                        start_ns: now_ns,
                        process_wide: operation == op::roctxProcessRangeA,
                    },
                );
            }
        } else if let Some((_, open)) = self.markers_open.remove(&correlation) {
            lock(&self.markers_closed).push(Annotation {
                name: open.name,
                thread_id: open.thread_id,
                start_ns: open.start_ns,
                end_ns: now_ns.max(open.start_ns),
                id: correlation,
                process_wide: open.process_wide,
            });
        }
    }

    /// One SDK buffer processed (its records decoded and stored).
    pub fn buffer_processed(&self, start_ns: u64, end_ns: u64, records: u64) {
        lock(&self.overheads).push(Overhead {
            name: vocab::OVERHEAD_BUFFER,
            start_ns,
            end_ns,
            count: records,
        });
    }

    /// The SDK reported `count` records dropped.
    pub fn sdk_dropped(&self, now_ns: u64, count: u64) {
        lock(&self.overheads).push(Overhead {
            name: vocab::OVERHEAD_DROPPED,
            start_ns: now_ns,
            end_ns: now_ns,
            count,
        });
    }

    /// Forgets what no window will show.
    pub fn clear(&self) {
        self.details.clear();
        self.markers_open.clear();
        lock(&self.markers_closed).clear();
        lock(&self.overheads).clear();
    }
}

/// What finishing the timeline of a window reads besides the window.
pub struct TimelineContext<'a> {
    /// The evidence method's links: each record's launching call and key
    /// in the columns are proven.
    pub links_proven: bool,
    pub launches: &'a HashMap<u64, Arc<ExecContents>>,
    /// When the window closed (SDK clock).
    pub closed_ns: u64,
}

/// A runtime blit kernel's family, by its symbol.
fn blit_family(symbol: &str) -> Option<bool> {
    let rest = symbol.strip_prefix("__amd_rocclr_")?;
    if rest.starts_with("fill") {
        Some(true)
    } else if rest.starts_with("copy") {
        Some(false)
    } else {
        None
    }
}

fn copy_direction(d: Direction) -> CopyDirection {
    match d {
        Direction::HostToHost => CopyDirection::HostToHost,
        Direction::HostToDevice => CopyDirection::HostToDevice,
        Direction::DeviceToHost => CopyDirection::DeviceToHost,
        Direction::DeviceToDevice => CopyDirection::DeviceToDevice,
    }
}

fn node_of(graph: Option<GraphNode>) -> Option<usize> {
    graph.map(|g| (g.graph_node_id & 0xffff_ffff) as usize)
}

/// One call of the window: thread, times, stream, CPU op.
#[derive(Clone, Copy)]
struct CallInfo {
    thread_id: u64,
    start_ns: u64,
    end_ns: u64,
    stream: Option<u64>,
    external_id: Option<u64>,
}

/// Applies the timeline to a finished window (kernels, copies and runtime
/// calls already built from `window`).
pub fn finish(
    ev: &TimelineEvidence,
    window: &FinalisedWindow,
    out: &mut FinishedWindow,
    cx: &TimelineContext,
    summary: &mut Vec<String>,
) {
    let calls: FastMap<u64, CallInfo> = window
        .api_calls
        .rows()
        .map(|r| {
            (
                r.correlation_id,
                CallInfo {
                    thread_id: r.thread_id,
                    start_ns: r.start_ns,
                    end_ns: r.end_ns,
                    stream: r.stream,
                    external_id: r.external_id_default,
                },
            )
        })
        .collect();
    // Most calls have no detail (kernel launches, getters): a window with
    // none asks nothing per call.
    let details: FastMap<u64, (Detail, Option<u64>)> = if ev.details.is_empty() {
        FastMap::default()
    } else {
        calls.keys().filter_map(|c| ev.details.remove(c)).collect()
    };

    // Streams' devices, from proven work: gathered here first, so the
    // shared map takes one insert per stream, not one per kernel (each a
    // SipHash and a shard lock).
    if cx.links_proven {
        let mut devices: FastMap<u64, u32> = FastMap::default();
        let mut last = None;
        for k in &out.kernels {
            if let (Some(s), Some(_)) = (k.stream(), k.correlation()) {
                // A launch's kernels repeat the pair: inserting it again
                // would change nothing.
                if last != Some((s, k.device)) {
                    devices.insert(s, k.device);
                    last = Some((s, k.device));
                }
            }
        }
        for (stream, device) in devices {
            ev.stream_device.insert(stream, device);
        }
    }
    let device_of = |stream: Option<u64>| stream.and_then(|s| ev.stream_device.get(&s).map(|d| *d));

    let unsure = memsets_and_blit_copies(out, &details, cx);
    if unsure > 0 {
        summary.push(format!("blits_left_kernels={unsure}"));
    }
    peer_copies(out, &details, &device_of);
    branches(out);
    syncs_and_events(out, &calls, &details, &device_of);
    let unbounded = host_functions(out, &calls, &details, cx, &device_of);
    if unbounded > 0 {
        summary.push(format!("host_functions_unbounded={unbounded}"));
    }
    let unproven = graph_event_records(out, &calls, cx);
    if unproven > 0 {
        summary.push(format!("graph_event_records_unproven={unproven}"));
    }
    annotations(ev, out, &calls, cx);
    if ev.arrows.load(Ordering::Relaxed) && cx.links_proven {
        dependencies(out, cx);
    }
    out.overheads
        .extend(std::mem::take(&mut *lock(&ev.overheads)));
}

/// What a call or node says its blit kernels are.
enum BlitPlan {
    /// One kernel per fill part, in dispatch order.
    Memset { parts: FillParts, value: u32 },
    Copy {
        bytes: u64,
        direction: CopyDirection,
    },
}

impl BlitPlan {
    fn kernels(&self) -> usize {
        match self {
            BlitPlan::Memset { parts, .. } => parts.count(),
            BlitPlan::Copy { .. } => 1,
        }
    }
}

/// Shows proven blit kernels as the memsets and copies they are; returns
/// how many stay kernels because their call or node ran as another number
/// of kernels than its arguments say (a memset is one kernel per fill part,
/// `FillParts`; a copy one, though clr may chunk one): which bytes each
/// filled or copied is then unknown.
fn memsets_and_blit_copies(
    out: &mut FinishedWindow,
    details: &FastMap<u64, (Detail, Option<u64>)>,
    cx: &TimelineContext,
) -> u64 {
    if !cx.links_proven {
        return 0;
    }
    // (correlation, node) -> the plan and its kernels' indices.
    let mut groups: FastMap<(u64, Option<usize>), (BlitPlan, Vec<usize>)> = FastMap::default();
    // Once per kernel name, not per kernel.
    let families: Vec<Option<bool>> = out.kernel_symbols.iter().map(|s| blit_family(s)).collect();
    for (i, k) in out.kernels.iter().enumerate() {
        let Some(correlation) = k.correlation() else {
            continue;
        };
        let Some(fill) = families.get(k.name_index as usize).copied().flatten() else {
            continue;
        };
        let node = node_of(k.graph);
        let plan = match (k.graph, node) {
            (Some(_), Some(node)) => cx
                .launches
                .get(&correlation)
                .and_then(|exec| exec.nodes.get(node))
                .and_then(|spec| match (fill, spec.work, spec.detail) {
                    (true, NodeWork::Memset(parts), NodeDetail::Memset { value, .. }) => {
                        Some(BlitPlan::Memset { parts, value })
                    }
                    (
                        false,
                        NodeWork::Memcpy {
                            direction: Some(direction),
                            bytes,
                        },
                        _,
                    ) => Some(BlitPlan::Copy {
                        bytes,
                        direction: copy_direction(direction),
                    }),
                    _ => None,
                }),
            _ => match details.get(&correlation) {
                Some((
                    Detail::Memset {
                        parts: Some(parts),
                        value,
                    },
                    _,
                )) if fill => Some(BlitPlan::Memset {
                    parts: *parts,
                    value: *value,
                }),
                Some((Detail::Copy { bytes, direction }, _)) if !fill => Some(BlitPlan::Copy {
                    bytes: *bytes,
                    direction: *direction,
                }),
                _ => None,
            },
        };
        if let Some(plan) = plan {
            groups
                .entry((correlation, node))
                .or_insert_with(|| (plan, Vec::new()))
                .1
                .push(i);
        }
    }
    let mut unsure = 0;
    for (plan, kernels) in groups.into_values() {
        // A call's or node's parts are written in order into one queue, and
        // dispatch ids follow a queue's slot order. Kernel-replay passes of
        // one dispatch share its id: they are the same part.
        let mut dispatches: Vec<u64> = kernels
            .iter()
            .map(|&i| out.kernels[i].dispatch_id)
            .collect();
        dispatches.sort_unstable();
        dispatches.dedup();
        if dispatches.len() != plan.kernels() {
            unsure += kernels.len() as u64;
            continue;
        }
        for i in kernels {
            let part = dispatches
                .binary_search(&out.kernels[i].dispatch_id)
                .expect("listed above");
            out.kernels[i].extras_mut().blit = Some(match plan {
                BlitPlan::Memset { parts, value } => Blit::Memset {
                    bytes: parts.bytes()[part],
                    value,
                },
                BlitPlan::Copy { bytes, direction } => Blit::Copy { bytes, direction },
            });
        }
    }
    unsure
}

/// A copy issued by hipMemcpyPeer*: drawn on the issuing stream's device,
/// with its source and destination devices from the record's agents.
fn peer_copies(
    out: &mut FinishedWindow,
    details: &FastMap<u64, (Detail, Option<u64>)>,
    device_of: &dyn Fn(Option<u64>) -> Option<u32>,
) {
    for c in &mut out.copies {
        let Some(correlation) = c.correlation else {
            continue;
        };
        if let Some((Detail::PeerCopy { .. }, _)) = details.get(&correlation) {
            if let Some(device) = device_of(c.stream) {
                c.device = device;
            } else if c.src_device >= 0 {
                c.device = c.src_device as u32;
            }
        }
    }
}

/// A graph replay's work on several hardware queues: the queue of the
/// replay's first-starting record keeps the launching stream's lane; the
/// others get branch lanes named after it.
fn branches(out: &mut FinishedWindow) {
    // Each launch's first (start, queue), its kernels taken a run of one
    // correlation at a time (they sit together): one map update a run.
    let mut home: FastMap<u64, (u64, u64)> = FastMap::default();
    let mut run: Option<(u64, (u64, u64))> = None;
    let mut settle = |run: Option<(u64, (u64, u64))>| {
        if let Some((c, first)) = run {
            let e = home.entry(c).or_insert(first);
            *e = (*e).min(first);
        }
    };
    for k in &out.kernels {
        if let (Some(c), Some(_), Some(_)) = (k.correlation(), k.graph, k.stream()) {
            let at = (k.start_ns, k.queue);
            match &mut run {
                Some((rc, first)) if *rc == c => *first = (*first).min(at),
                _ => settle(run.replace((c, at))),
            }
        }
    }
    settle(run);
    let mut last: Option<(u64, Option<u64>)> = None;
    for k in &mut out.kernels {
        if let (Some(c), Some(_), Some(_)) = (k.correlation(), k.graph, k.stream()) {
            let queue = match last {
                Some((lc, q)) if lc == c => q,
                _ => {
                    let q = home.get(&c).map(|&(_, q)| q);
                    last = Some((c, q));
                    q
                }
            };
            if queue.is_some_and(|q| q != k.queue) {
                k.branch = NonMaxU64::new(k.queue);
            }
        }
    }
}

/// The end of the last proven device work on `stream` issued before call
/// `before`, and the start of the first issued after it.
fn stream_neighbours(out: &FinishedWindow, stream: u64, before: u64) -> (Option<u64>, Option<u64>) {
    let mut last_end: Option<u64> = None;
    let mut next_start: Option<u64> = None;
    let work = out
        .kernels
        .iter()
        .map(|k| (k.stream(), k.correlation(), k.start_ns, k.end_ns))
        .chain(
            out.copies
                .iter()
                .map(|c| (c.stream, c.correlation, c.start_ns, c.end_ns)),
        );
    for (s, c, start, end) in work {
        let (Some(s), Some(c)) = (s, c) else { continue };
        if s != stream {
            continue;
        }
        if c < before {
            last_end = Some(last_end.map_or(end, |e: u64| e.max(end)));
        } else if c > before {
            next_start = Some(next_start.map_or(start, |n: u64| n.min(start)));
        }
    }
    (last_end, next_start)
}

fn syncs_and_events(
    out: &mut FinishedWindow,
    calls: &FastMap<u64, CallInfo>,
    details: &FastMap<u64, (Detail, Option<u64>)>,
    device_of: &dyn Fn(Option<u64>) -> Option<u32>,
) {
    let mut ordered: Vec<(&u64, &(Detail, Option<u64>))> = details.iter().collect();
    ordered.sort_by_key(|(c, _)| **c);
    for (&correlation, &(detail, stream)) in ordered {
        let Some(call) = calls.get(&correlation) else {
            continue;
        };
        let stream = stream.or(call.stream);
        let sync = |kind, device, stream, event, record: Option<EventRecordRef>| SyncActivity {
            kind,
            thread_id: call.thread_id,
            correlation,
            start_ns: call.start_ns,
            end_ns: call.end_ns,
            device,
            stream,
            event,
            wait_on_stream: record.and_then(|r| r.stream),
            wait_on_record_correlation: record.map(|r| r.correlation),
            external_id: call.external_id,
        };
        match detail {
            Detail::StreamSync => {
                out.syncs.push(sync(
                    SyncKind::Stream,
                    device_of(stream),
                    stream,
                    None,
                    None,
                ));
            }
            Detail::DeviceSync { device } => {
                out.syncs
                    .push(sync(SyncKind::Device, Some(device), None, None, None));
            }
            Detail::EventSync { event, record } => {
                let device = device_of(record.and_then(|r| r.stream));
                out.syncs
                    .push(sync(SyncKind::Event, device, None, Some(event), record));
            }
            Detail::StreamWaitEvent { event, record } => out.syncs.push(sync(
                SyncKind::StreamWaitEvent,
                device_of(stream),
                stream,
                Some(event),
                record,
            )),
            Detail::EventRecord { event } => {
                let last = stream.and_then(|s| stream_neighbours(out, s, correlation).0);
                out.events.push(EventActivity {
                    event,
                    thread_id: call.thread_id,
                    correlation,
                    device: device_of(stream),
                    stream,
                    ts_ns: last.map_or(call.start_ns, |e| e.max(call.start_ns)),
                    external_id: call.external_id,
                    graph: None,
                });
            }
            _ => {}
        }
    }
}

/// Host functions, bounded by their stream's (or graph's) neighbours.
/// Returns how many could not be bounded (left out).
fn host_functions(
    out: &mut FinishedWindow,
    calls: &FastMap<u64, CallInfo>,
    details: &FastMap<u64, (Detail, Option<u64>)>,
    cx: &TimelineContext,
    device_of: &dyn Fn(Option<u64>) -> Option<u32>,
) -> u64 {
    let mut unbounded = 0;
    let mut eager: Vec<(u64, u64, Option<u64>)> = details
        .iter()
        .filter_map(|(c, (d, s))| match d {
            Detail::HostFunc { function } => Some((*c, *function, *s)),
            _ => None,
        })
        .collect();
    eager.sort();
    for (correlation, function, stream) in eager {
        let Some(call) = calls.get(&correlation) else {
            continue;
        };
        let Some(stream) = stream.or(call.stream) else {
            unbounded += 1;
            continue;
        };
        let (last_end, next_start) = stream_neighbours(out, stream, correlation);
        let start = last_end.map_or(call.start_ns, |e| e.max(call.start_ns));
        // What waited for it: the stream's next work, or a later
        // synchronisation of the stream or of its device.
        let device = device_of(Some(stream));
        let later_sync = out
            .syncs
            .iter()
            .filter(|s| s.correlation > correlation)
            .filter(|s| match s.kind {
                SyncKind::Stream => s.stream == Some(stream),
                SyncKind::Device => device.is_some() && s.device == device,
                SyncKind::Event => s
                    .wait_on_record_correlation
                    .is_some_and(|r| r > correlation && s.wait_on_stream == Some(stream)),
                SyncKind::StreamWaitEvent => false,
            })
            .map(|s| s.end_ns)
            .min();
        let end = match (next_start, later_sync) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        match (end, device) {
            (Some(end), Some(device)) if end >= start => out.host_functions.push(HostFnActivity {
                device,
                stream,
                correlation,
                function,
                start_ns: start,
                end_ns: end,
                graph: None,
                branch: None,
                external_id: call.external_id,
            }),
            _ => unbounded += 1,
        }
    }
    if !cx.links_proven || !any_launch_ran(cx, |d| matches!(d, NodeDetail::Host { .. })) {
        return unbounded;
    }
    // Graph host nodes: after their present predecessors, before their
    // present successors, in the same replay.
    let replays = present_nodes(out);
    let mut found = Vec::new();
    for (&correlation, present) in &replays {
        let Some(exec) = cx.launches.get(&correlation) else {
            continue;
        };
        if !exec
            .nodes
            .iter()
            .any(|n| matches!(n.detail, NodeDetail::Host { .. }))
        {
            continue;
        }
        let Some(call) = calls.get(&correlation) else {
            continue;
        };
        let Some((graph_id, device, stream)) = present.values().find_map(|r| match *r {
            GpuRef::Kernel(i) => {
                let k = &out.kernels[i];
                Some((k.graph?.graph_id.get(), k.device, k.stream()?))
            }
            _ => None,
        }) else {
            continue;
        };
        let succs_of = successors(exec);
        let span = |r: &GpuRef| match *r {
            GpuRef::Kernel(i) => (out.kernels[i].start_ns, out.kernels[i].end_ns),
            GpuRef::Copy(i) => (out.copies[i].start_ns, out.copies[i].end_ns),
            GpuRef::HostFn(i) => (out.host_functions[i].start_ns, out.host_functions[i].end_ns),
        };
        for (index, spec) in exec.nodes.iter().enumerate() {
            let NodeDetail::Host { function } = spec.detail else {
                continue;
            };
            let preds = nearest_present(exec, index, present, |n| &exec.nodes[n].deps);
            let succs = nearest_present(exec, index, present, |n| &succs_of[n]);
            let start = preds
                .iter()
                .map(|r| span(r).1)
                .max()
                .unwrap_or(call.start_ns);
            match succs.iter().map(|r| span(r).0).min() {
                Some(end) if end >= start => found.push(HostFnActivity {
                    device,
                    stream,
                    correlation,
                    function,
                    start_ns: start,
                    end_ns: end,
                    graph: GraphNode::new(graph_id, (graph_id << 32) | index as u64),
                    branch: None,
                    external_id: call.external_id,
                }),
                _ => unbounded += 1,
            }
        }
    }
    out.host_functions.extend(found);
    unbounded
}

/// The predecessors' ends of node `index` in a replay, stepping through
/// nodes that run nothing (empty, event nodes); None when one that runs
/// something is not shown (its end, so the record's time, is unknown).
fn predecessor_ends(
    out: &FinishedWindow,
    exec: &ExecContents,
    index: usize,
    present: &BTreeMap<usize, GpuRef>,
) -> Option<Vec<u64>> {
    let mut ends = Vec::new();
    let mut seen: HashSet<usize> = HashSet::new();
    let mut stack: Vec<usize> = exec.nodes[index].deps.iter().map(|&d| d as usize).collect();
    while let Some(n) = stack.pop() {
        if !seen.insert(n) {
            continue;
        }
        let spec = exec.nodes.get(n)?;
        match present.get(&n) {
            Some(GpuRef::Kernel(i)) => ends.push(out.kernels[*i].end_ns),
            Some(GpuRef::Copy(i)) => ends.push(out.copies[*i].end_ns),
            Some(GpuRef::HostFn(i)) => ends.push(out.host_functions[*i].end_ns),
            // A host node not shown ran for an unknown time.
            None if spec.work == NodeWork::NoDispatch
                && !matches!(spec.detail, NodeDetail::Host { .. }) =>
            {
                stack.extend(spec.deps.iter().map(|&d| d as usize))
            }
            None => return None,
        }
    }
    Some(ends)
}

/// Graph event-record nodes, one record per replay: clr enqueues the node
/// as hipEventRecord's marker on its segment's stream after the node's
/// dependencies (hip_graph_internal.hpp `GraphEventRecordNode`), so it
/// cannot complete before its predecessors' work ended. A record is shown
/// only where every predecessor that dispatches is shown (work of a
/// withheld key leaves its end unknown) and at least one is; returns how
/// many records were left out so.
fn graph_event_records(
    out: &mut FinishedWindow,
    calls: &FastMap<u64, CallInfo>,
    cx: &TimelineContext,
) -> u64 {
    if !cx.links_proven || !any_launch_ran(cx, |d| matches!(d, NodeDetail::EventRecord { .. })) {
        return 0;
    }
    let mut unproven = 0;
    let mut found = Vec::new();
    for (&correlation, present) in &present_nodes(out) {
        let Some(exec) = cx.launches.get(&correlation) else {
            continue;
        };
        let Some(call) = calls.get(&correlation) else {
            continue;
        };
        let Some((graph_id, device, stream)) = present.values().find_map(|r| match *r {
            GpuRef::Kernel(i) => {
                let k = &out.kernels[i];
                Some((k.graph?.graph_id.get(), k.device, k.stream()?))
            }
            _ => None,
        }) else {
            continue;
        };
        for (index, spec) in exec.nodes.iter().enumerate() {
            let NodeDetail::EventRecord { event } = spec.detail else {
                continue;
            };
            let ends = predecessor_ends(out, exec, index, present);
            let Some(end) = ends.and_then(|e| e.into_iter().max()) else {
                unproven += 1;
                continue;
            };
            found.push(EventActivity {
                event,
                thread_id: call.thread_id,
                correlation,
                device: Some(device),
                stream: Some(stream),
                ts_ns: end.max(call.start_ns),
                external_id: call.external_id,
                graph: GraphNode::new(graph_id, (graph_id << 32) | index as u64),
            });
        }
    }
    out.events.extend(found);
    unproven
}

/// Whether a graph launch of the window ran a node of the kind `is` picks.
/// Without one, the passes that look for such nodes per replay find none,
/// so they skip gathering the replays (a map per launch, every record
/// placed in it). Launches of one exec share its contents; each is looked
/// at once in a row.
fn any_launch_ran(cx: &TimelineContext, is: impl Fn(&NodeDetail) -> bool) -> bool {
    let mut last: Option<&Arc<ExecContents>> = None;
    cx.launches.values().any(|exec| {
        if last.is_some_and(|seen| Arc::ptr_eq(seen, exec)) {
            return false;
        }
        last = Some(exec);
        exec.nodes.iter().any(|n| is(&n.detail))
    })
}

/// Per graph replay (its launch's correlation id), the nodes shown and
/// where.
fn present_nodes(out: &FinishedWindow) -> BTreeMap<u64, BTreeMap<usize, GpuRef>> {
    let mut replays: BTreeMap<u64, BTreeMap<usize, GpuRef>> = BTreeMap::new();
    for (i, k) in out.kernels.iter().enumerate() {
        if let (Some(c), Some(n)) = (k.correlation(), node_of(k.graph)) {
            replays.entry(c).or_default().insert(n, GpuRef::Kernel(i));
        }
    }
    for (i, cp) in out.copies.iter().enumerate() {
        if let (Some(c), Some(n)) = (cp.correlation, node_of(cp.graph)) {
            replays.entry(c).or_default().insert(n, GpuRef::Copy(i));
        }
    }
    for (i, h) in out.host_functions.iter().enumerate() {
        if let Some(n) = node_of(h.graph) {
            replays
                .entry(h.correlation)
                .or_default()
                .insert(n, GpuRef::HostFn(i));
        }
    }
    replays
}

fn successors(exec: &ExecContents) -> Vec<Box<[u32]>> {
    let mut succ: Vec<Vec<u32>> = vec![Vec::new(); exec.nodes.len()];
    for (i, spec) in exec.nodes.iter().enumerate() {
        for &d in spec.deps.iter() {
            if let Some(s) = succ.get_mut(d as usize) {
                s.push(i as u32);
            }
        }
    }
    succ.into_iter().map(Vec::into_boxed_slice).collect()
}

/// The nearest nodes shown along `next` (predecessors or successors),
/// stepping through nodes that are not shown (empty, event and host nodes
/// with no span, work whose key was withheld).
fn nearest_present<'e>(
    exec: &'e ExecContents,
    node: usize,
    present: &BTreeMap<usize, GpuRef>,
    next: impl Fn(usize) -> &'e [u32],
) -> Vec<GpuRef> {
    let mut out = Vec::new();
    let mut seen: HashSet<usize> = HashSet::new();
    let mut stack: Vec<usize> = next(node).iter().map(|&d| d as usize).collect();
    while let Some(n) = stack.pop() {
        if n >= exec.nodes.len() || !seen.insert(n) {
            continue;
        }
        match present.get(&n) {
            Some(r) => out.push(*r),
            None => stack.extend(next(n).iter().map(|&d| d as usize)),
        }
    }
    out
}

fn dependencies(out: &mut FinishedWindow, cx: &TimelineContext) {
    for (correlation, present) in present_nodes(out) {
        let Some(exec) = cx.launches.get(&correlation) else {
            continue;
        };
        for (&node, &to) in &present {
            for from in nearest_present(exec, node, &present, |n| &exec.nodes[n].deps) {
                out.dependencies.push(Dependency { from, to });
            }
        }
    }
}

/// roctx ranges of the window on their threads, and the device work each
/// enclosed, per lane.
fn annotations(
    ev: &TimelineEvidence,
    out: &mut FinishedWindow,
    calls: &FastMap<u64, CallInfo>,
    cx: &TimelineContext,
) {
    let taken: Vec<Annotation> = {
        let mut closed = lock(&ev.markers_closed);
        let (mine, later): (Vec<Annotation>, Vec<Annotation>) =
            closed.drain(..).partition(|a| a.start_ns <= cx.closed_ns);
        *closed = later;
        mine
    };
    out.annotations = taken;
    if !cx.links_proven {
        return;
    }
    for a in out.annotations.iter().filter(|a| a.end_ns > a.start_ns) {
        let inside = |c: u64| {
            calls.get(&c).is_some_and(|call| {
                (a.process_wide || call.thread_id == a.thread_id)
                    && call.start_ns >= a.start_ns
                    && call.start_ns <= a.end_ns
            })
        };
        let mut lanes: BTreeMap<(u32, u64, Option<u64>), (u64, u64)> = BTreeMap::new();
        let mut add = |device: u32, stream: u64, branch: Option<u64>, start: u64, end: u64| {
            let e = lanes
                .entry((device, stream, branch))
                .or_insert((start, end));
            e.0 = e.0.min(start);
            e.1 = e.1.max(end);
        };
        for k in &out.kernels {
            if let (Some(c), Some(s)) = (k.correlation(), k.stream()) {
                if inside(c) {
                    add(k.device, s, k.branch(), k.start_ns, k.end_ns);
                }
            }
        }
        for cp in &out.copies {
            if let (Some(c), Some(s)) = (cp.correlation, cp.stream) {
                if inside(c) {
                    add(cp.device, s, None, cp.start_ns, cp.end_ns);
                }
            }
        }
        for ((device, stream, branch), (start_ns, end_ns)) in lanes {
            out.gpu_annotations.push(GpuAnnotation {
                name: a.name.clone(),
                id: a.id,
                device,
                stream,
                branch,
                start_ns,
                end_ns,
            });
        }
    }
}

/// Demangles a kernel symbol (Itanium C++ ABI); anything else is kept.
pub fn demangle(symbol: &str) -> String {
    cpp_demangle::Symbol::new(symbol)
        .ok()
        .and_then(|s| s.demangle(&cpp_demangle::DemangleOptions::default()).ok())
        .unwrap_or_else(|| symbol.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::window::{id, KernelActivity};

    #[test]
    fn kernel_symbols_are_demangled_and_others_kept() {
        assert_eq!(
            demangle("_Z6vecAddPfS_S_i"),
            "vecAdd(float*, float*, float*, int)"
        );
        assert_eq!(demangle("graph32_k04"), "graph32_k04");
        assert_eq!(
            demangle("__amd_rocclr_fillBufferAligned"),
            "__amd_rocclr_fillBufferAligned"
        );
    }

    #[test]
    fn a_graph_event_record_is_shown_only_where_its_predecessors_are() {
        use graph_attribution::NodeSpec;
        const GRAPH: u64 = 5;
        let kernel = |node: u64, correlation: u64, end_ns: u64| KernelActivity {
            name_index: 0,
            device: 0,
            stream: id(Some(1)),
            queue: 0,
            correlation: id(Some(correlation)),
            dispatch_id: correlation * 10 + node,
            start_ns: end_ns - 5,
            end_ns,
            grid: [1, 1, 1],
            block: [1, 1, 1],
            lds_bytes: 0,
            scratch_bytes: 0,
            external_id: None,
            user_external_id: None,
            graph: GraphNode::new(GRAPH, GRAPH << 32 | node),
            branch: None,
            extras: None,
        };
        let spec = |work, deps: &[u32], detail| NodeSpec {
            work,
            deps: deps.into(),
            detail,
        };
        // kernel 0 -> kernel 1 -> empty 2 -> record 3 (event 0x5e)
        let exec = Arc::new(ExecContents {
            nodes: vec![
                spec(NodeWork::Unknown, &[], NodeDetail::None),
                spec(NodeWork::Unknown, &[0], NodeDetail::None),
                spec(NodeWork::NoDispatch, &[1], NodeDetail::None),
                spec(
                    NodeWork::NoDispatch,
                    &[2],
                    NodeDetail::EventRecord { event: 0x5e },
                ),
            ]
            .into(),
            complete: true,
        });
        // Replay 7 shows both kernels; replay 8 lost kernel 1 (withheld).
        let mut out = FinishedWindow {
            kernels: vec![kernel(0, 7, 100), kernel(1, 7, 200), kernel(0, 8, 300)],
            ..FinishedWindow::default()
        };
        let call = CallInfo {
            thread_id: 3,
            start_ns: 50,
            end_ns: 60,
            stream: Some(1),
            external_id: None,
        };
        let calls: FastMap<u64, CallInfo> = [(7, call), (8, call)].into_iter().collect();
        let launches = HashMap::from([(7, exec.clone()), (8, exec)]);
        let cx = TimelineContext {
            links_proven: true,
            launches: &launches,
            closed_ns: 0,
        };
        assert_eq!(graph_event_records(&mut out, &calls, &cx), 1);
        assert_eq!(
            out.events,
            [EventActivity {
                event: 0x5e,
                thread_id: 3,
                correlation: 7,
                device: Some(0),
                stream: Some(1),
                ts_ns: 200,
                external_id: None,
                graph: GraphNode::new(GRAPH, GRAPH << 32 | 3),
            }]
        );
    }

    #[test]
    fn a_memsets_fill_parts_get_their_own_bytes_in_dispatch_order() {
        let fill = |dispatch_id: u64, correlation: u64| KernelActivity {
            name_index: 0,
            device: 0,
            stream: id(Some(1)),
            queue: 0,
            correlation: id(Some(correlation)),
            dispatch_id,
            start_ns: dispatch_id * 10,
            end_ns: dispatch_id * 10 + 5,
            grid: [1, 1, 1],
            block: [1, 1, 1],
            lds_bytes: 0,
            scratch_bytes: 0,
            external_id: None,
            user_external_id: None,
            graph: None,
            branch: None,
            extras: None,
        };
        let mut out = FinishedWindow {
            kernel_symbols: vec!["__amd_rocclr_fillBufferAligned".into()],
            kernels: vec![fill(2, 7), fill(1, 7), fill(3, 8), fill(4, 8), fill(5, 9)],
            ..FinishedWindow::default()
        };
        let memset = |dst, bytes| {
            let parts = FillParts::of_1d(dst, bytes);
            (Detail::Memset { parts, value: 1 }, Some(1))
        };
        // 7: 96 + 4 bytes; 8: one part, but two kernels ran; 9: 12 bytes.
        let details: FastMap<u64, _> = [
            (7, memset(0x1000, 100)),
            (8, memset(0x1000, 64)),
            (9, memset(0x1004, 12)),
        ]
        .into_iter()
        .collect();
        let launches = HashMap::new();
        let cx = TimelineContext {
            links_proven: true,
            launches: &launches,
            closed_ns: 0,
        };
        assert_eq!(memsets_and_blit_copies(&mut out, &details, &cx), 2);
        let bytes: Vec<Option<u64>> = out
            .kernels
            .iter()
            .map(|k| match k.blit() {
                Some(Blit::Memset { bytes, value: 1 }) => Some(bytes),
                _ => None,
            })
            .collect();
        assert_eq!(bytes, [Some(4), Some(96), None, None, Some(12)]);
    }

    #[test]
    fn blit_families_are_told_by_symbol() {
        assert_eq!(blit_family("__amd_rocclr_fillBufferAligned"), Some(true));
        assert_eq!(blit_family("__amd_rocclr_copyBuffer"), Some(false));
        assert_eq!(blit_family("__amd_rocclr_streamOpsWrite"), None);
        assert_eq!(blit_family("k"), None);
    }

    #[test]
    fn a_wait_points_at_the_events_last_record_and_a_sync_at_the_threads_device() {
        let ev = TimelineEvidence::default();
        ev.call_entered(1, 10, Some(3), CallArgs::EventRecord { event: 0x5e }, true);
        ev.call_entered(1, 11, Some(3), CallArgs::EventRecord { event: 0x5e }, true);
        ev.call_entered(
            2,
            12,
            Some(4),
            CallArgs::StreamWaitEvent { event: 0x5e },
            true,
        );
        ev.call_entered(2, 13, None, CallArgs::SetDevice { device: 1 }, true);
        ev.call_entered(2, 14, None, CallArgs::DeviceSync, true);
        ev.call_entered(1, 15, None, CallArgs::DeviceSync, false);
        let wait = ev.details.get(&12).map(|d| d.0);
        assert_eq!(
            wait,
            Some(Detail::StreamWaitEvent {
                event: 0x5e,
                record: Some(EventRecordRef {
                    correlation: 11,
                    stream: Some(3)
                })
            })
        );
        assert_eq!(
            ev.details.get(&14).map(|d| d.0),
            Some(Detail::DeviceSync { device: 1 })
        );
        assert!(ev.details.get(&15).is_none(), "not collecting");
        assert!(ev.details.get(&13).is_none(), "hipSetDevice is state only");
    }

    #[test]
    fn marker_ranges_pair_enter_and_exit_by_correlation_id() {
        use rocprofiler_sys::marker_core_range_api_id as op;
        let ev = TimelineEvidence::default();
        let enter = |m: &str| MarkerPhase::Enter {
            message: Some(m.into()),
        };
        ev.marker(5, op::roctxThreadRangeA, enter("step"), 7, 100, true);
        ev.marker(6, op::roctxMarkA, enter("here"), 7, 150, true);
        ev.marker(5, op::roctxThreadRangeA, MarkerPhase::Exit, 7, 200, true);
        let closed = lock(&ev.markers_closed).clone();
        assert_eq!(closed.len(), 2);
        assert_eq!((closed[0].name.as_str(), closed[0].start_ns), ("here", 150));
        assert_eq!(
            (
                closed[1].name.as_str(),
                closed[1].start_ns,
                closed[1].end_ns
            ),
            ("step", 100, 200)
        );
    }
}
