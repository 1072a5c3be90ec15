//! The timeline beyond kernels, copies and runtime calls, against the
//! truth: memsets and blit copies shown as what they are (bytes, value,
//! direction), every copy's source and destination devices, demangled
//! names, sync spans and what they waited on, event records, host
//! functions, roctx ranges and the device work they enclose, graph
//! dependency arrows, and the backend's overhead events.
//!
//! Shown times the SDK cannot measure are bounds: an event record must lie
//! between its call and the event's true completion, a host function's
//! span must contain its true run, a range must lie inside the SDK's
//! callback times. A timeline event no truth item backs is wrong, as is
//! one whose `External id` is not its call's.
use super::{OpRef, Validation};
use crate::markers::MarkerIds;
use crate::trace::{FlowEnd, GpuCategory, TimelineEvent, Trace};
use rocprofiler_sim::truth::{CallTruth, OpTruth, RunTruth};
use rocprofiler_sim::workload::{Direction, Graph};
use std::collections::{BTreeSet, HashMap, HashSet};

/// The truth a trace's timeline is checked against.
pub(super) struct Truth<'t> {
    /// The runs (steps) the trace covered.
    pub runs: Vec<&'t RunTruth>,
    pub calls: &'t HashMap<u64, &'t CallTruth>,
    pub graphs: &'t [Graph],
    pub markers: &'t MarkerIds,
}

const SYNC_CALLS: [(&str, &str); 4] = [
    ("hipStreamSynchronize", "Stream Sync"),
    ("hipDeviceSynchronize", "Context Sync"),
    ("hipEventSynchronize", "Event Sync"),
    ("hipStreamWaitEvent", "Stream Wait Event"),
];

/// The carrier events of dependency arrows (gpu_user_annotation, zero
/// length), not roctx ranges.
const DEPENDENCY_NAME: &str = "graph dependency";
/// Every overhead event's name starts so.
const OVERHEAD_PREFIX: &str = "kineto-rocm: ";

/// A graph replay's node: (launch correlation, graph name, creation index).
type ReplayNode = (u64, String, u32);

/// A shown span of a replay node: (start, end, node).
type NodeSpan = (u64, u64, ReplayNode);

/// A dependency arrow: (launch correlation, graph name, from, to).
type Edge = (u64, String, u32, u32);

/// A copy's (source, destination) devices, -1 for the host: a peer copy's
/// from the truth, any other's from its direction and device.
fn copy_ends(o: &OpTruth) -> Option<(i64, i64)> {
    if let (Some(s), Some(d)) = (o.src_device, o.dst_device) {
        return Some((s.into(), d.into()));
    }
    let device = i64::from(o.device);
    Some(match o.direction? {
        Direction::HostToHost => (-1, -1),
        Direction::HostToDevice => (-1, device),
        Direction::DeviceToHost => (device, -1),
        Direction::DeviceToDevice => (device, device),
    })
}

/// Is the shown `External id` the one of the call it names?
fn external_right(shown: Option<u64>, call: Option<&&CallTruth>, markers: &MarkerIds) -> bool {
    match (shown, call.and_then(|c| c.marker.as_deref())) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some(id), Some(name)) => markers.id(name) == Some(id),
    }
}

/// The nearest predecessors of `node` among `present`, stepping through
/// nodes that are not shown (as the backend collapses them).
fn nearest_present(graph: &Graph, node: u32, present: &HashSet<u32>) -> BTreeSet<u32> {
    let mut out = BTreeSet::new();
    let mut seen = HashSet::new();
    let deps = |n: u32| -> Vec<u32> {
        graph
            .nodes
            .get(n as usize)
            .map_or_else(Vec::new, |x| x.deps.iter().map(|&d| d as u32).collect())
    };
    let mut stack = deps(node);
    while let Some(n) = stack.pop() {
        if !seen.insert(n) {
            continue;
        }
        if present.contains(&n) {
            out.insert(n);
        } else {
            stack.extend(deps(n));
        }
    }
    out
}

pub(super) fn check<'t>(
    r: &mut Validation,
    trace: &Trace,
    truth: &Truth<'t>,
    matched: &[Option<OpRef>],
    op: impl Fn(OpRef) -> &'t OpTruth,
) {
    gpu_events(r, trace, matched, &op);
    let of = |cat: &str| -> Vec<&TimelineEvent> {
        trace
            .timeline
            .iter()
            .filter(|e| &*e.category == cat)
            .collect()
    };
    let (host_fns, syncs): (Vec<&TimelineEvent>, Vec<&TimelineEvent>) = of("cuda_sync")
        .into_iter()
        .partition(|e| &*e.name == "Host Function");
    check_syncs(r, trace, truth, &syncs);
    check_event_records(r, truth, &of("cuda_event"));
    check_host_functions(r, truth, &host_fns);
    check_annotations(r, truth, &of("user_annotation"));
    check_gpu_annotations(r, trace, truth, matched, &op);
    for o in of("overhead") {
        r.overhead_events += 1;
        let on_lane = trace
            .lane_names
            .get(&(o.pid, o.tid))
            .is_some_and(|n| n.contains("overhead"));
        if !o.name.starts_with(OVERHEAD_PREFIX) || !on_lane {
            r.wrong_overheads += 1;
        }
    }
    check_dependencies(r, trace, truth, matched, &op, &host_fns);
}

/// Does every run's model keep the truth of event records and host
/// functions (`rocm`; `ideal` submits nothing for them)?
fn models_marks(truth: &Truth) -> bool {
    truth.runs.iter().all(|r| r.submission_model == "rocm")
}

/// Shown items of no truth item: wrong where the model keeps their truth,
/// unverified where it does not.
fn count_extras(r: &mut Validation, truth: &Truth, extras: usize) -> usize {
    if models_marks(truth) {
        extras
    } else {
        r.unverified_timeline_events += extras;
        0
    }
}

/// Memsets, blit copies, copies' devices, names.
fn gpu_events<'t>(
    r: &mut Validation,
    trace: &Trace,
    matched: &[Option<OpRef>],
    op: &impl Fn(OpRef) -> &'t OpTruth,
) {
    for (event, at) in trace.events.iter().zip(matched) {
        let Some(at) = *at else { continue };
        let o = op(at);
        match event.category {
            GpuCategory::Memset => {
                r.memset_checks += 1;
                if !o.blit || event.bytes != Some(o.bytes) || event.value != o.value.map(u64::from)
                {
                    r.wrong_memsets += 1;
                }
            }
            GpuCategory::Memcpy => {
                if event.dispatch_id.is_some() {
                    r.blit_copies_shown += 1;
                    if !o.blit || event.bytes != Some(o.bytes) || event.direction != o.direction {
                        r.wrong_memsets += 1;
                    }
                }
                if o.src_device.is_some() {
                    r.peer_copies += 1;
                }
                let shown = (event.src_device, event.dst_device);
                if shown != (None, None)
                    && copy_ends(o).map(|(s, d)| (Some(s), Some(d))) != Some(shown)
                {
                    r.wrong_copy_devices += 1;
                }
            }
            GpuCategory::Kernel => {
                if o.blit {
                    r.blits_shown_as_kernels += 1;
                }
                let raw = o.kernel_name.as_deref().unwrap_or_default();
                let demangled = event.mangled_name.is_some();
                if demangled {
                    r.demangled_kernels += 1;
                }
                let wrong = if raw.starts_with("_Z") {
                    event.mangled_name.as_deref() != Some(raw) || *event.name == *raw
                } else {
                    demangled || *event.name != *raw
                };
                if wrong {
                    r.wrong_names += 1;
                }
            }
        }
    }
}

/// Streams' devices, from the truth's ops and event records.
fn stream_devices(truth: &Truth) -> HashMap<u64, u64> {
    let mut out = HashMap::new();
    for run in &truth.runs {
        for o in &run.ops {
            out.insert(o.stream_id, u64::from(o.device));
        }
        for e in &run.events {
            out.insert(e.stream_id, u64::from(e.device));
        }
    }
    out
}

/// One span per synchronising call: its own times, on the lane of what it
/// waited on, pointing at the event's last record. A span of no
/// synchronising call is wrong.
fn check_syncs(r: &mut Validation, trace: &Trace, truth: &Truth, syncs: &[&TimelineEvent]) {
    let stream_device = stream_devices(truth);
    r.sync_events += syncs.len();
    let mut expected: HashSet<u64> = HashSet::new();
    let by_corr: HashMap<u64, &TimelineEvent> = syncs
        .iter()
        .filter_map(|e| Some((e.correlation?, *e)))
        .collect();
    for run in &truth.runs {
        for call in &run.calls {
            let Some(&(_, name)) = SYNC_CALLS.iter().find(|(c, _)| *c == call.name) else {
                continue;
            };
            r.expected_syncs += 1;
            expected.insert(call.correlation_id);
            let Some(e) = by_corr.get(&call.correlation_id) else {
                r.missing_syncs += 1;
                continue;
            };
            let mut wrong = &*e.name != name
                || e.start_ns != call.enter_ns
                || e.end_ns != call.exit_ns
                || !external_right(
                    e.external_id,
                    truth.calls.get(&call.correlation_id),
                    truth.markers,
                );
            let record_stream = call
                .waited_record_correlation_id
                .and_then(|c| truth.calls.get(&c))
                .and_then(|c| c.stream_id);
            let expected_device = match call.name.as_str() {
                "hipDeviceSynchronize" => call.device.map(u64::from),
                "hipEventSynchronize" => record_stream.and_then(|s| stream_device.get(&s).copied()),
                _ => call.stream_id.and_then(|s| stream_device.get(&s).copied()),
            };
            match e.device {
                Some(d) => {
                    wrong |= Some(d) != expected_device || e.pid != d;
                    if let Some(s) = e.stream {
                        wrong |=
                            Some(s) != call.stream_id || trace.lane_stream(e.pid, e.tid) != Some(s);
                    }
                }
                None => r.syncs_on_cpu_lane += 1,
            }
            if matches!(
                call.name.as_str(),
                "hipEventSynchronize" | "hipStreamWaitEvent"
            ) {
                let shown = e.wait_on_record.filter(|c| *c >= 0).map(|c| c as u64);
                wrong |= shown.is_some() && shown != call.waited_record_correlation_id;
                if shown.is_none() && call.waited_record_correlation_id.is_some() {
                    r.waits_without_record += 1;
                }
                let shown_stream = e.wait_on_stream.filter(|s| *s >= 0).map(|s| s as u64);
                wrong |= shown_stream.is_some() && shown_stream != record_stream;
                wrong |= e.wait_on_event.is_some_and(|id| Some(id) != call.event);
            }
            if wrong {
                r.wrong_syncs += 1;
            }
        }
    }
    r.wrong_syncs += syncs
        .iter()
        .filter(|e| e.correlation.is_none_or(|c| !expected.contains(&c)))
        .count();
}

/// Event records: between the call and the event's completion, on its
/// stream; a record of no hipEventRecord is wrong (unverified under a
/// model that keeps no event truth).
fn check_event_records(r: &mut Validation, truth: &Truth, shown: &[&TimelineEvent]) {
    let events: HashMap<u64, &TimelineEvent> = shown
        .iter()
        .filter_map(|e| Some((e.correlation?, *e)))
        .collect();
    let mut expected = HashSet::new();
    for run in &truth.runs {
        for t in &run.events {
            r.expected_event_records += 1;
            expected.insert(t.record_correlation_id);
            let Some(e) = events.get(&t.record_correlation_id) else {
                r.missing_event_records += 1;
                continue;
            };
            let placed = e.start_ns >= t.enter_ns && e.start_ns <= t.completed_ns;
            let lane = e.stream.is_none_or(|s| s == t.stream_id)
                && e.device.is_none_or(|d| d == u64::from(t.device));
            let external = external_right(
                e.external_id,
                truth.calls.get(&t.record_correlation_id),
                truth.markers,
            );
            if !placed || !lane || !external || e.event_id != Some(t.event) {
                r.wrong_event_records += 1;
            }
        }
    }
    let extras = shown
        .iter()
        .filter(|e| e.correlation.is_none_or(|c| !expected.contains(&c)))
        .count();
    r.wrong_event_records += count_extras(r, truth, extras);
}

/// Host functions: the shown span contains the true run, on the device and
/// stream that waited for it, naming the function; one that ran nowhere is
/// wrong (unverified under a model that runs no host functions).
fn check_host_functions(r: &mut Validation, truth: &Truth, shown: &[&TimelineEvent]) {
    r.host_function_events += shown.len();
    let mut used: HashSet<usize> = HashSet::new();
    for run in &truth.runs {
        for t in &run.host_functions {
            r.expected_host_functions += 1;
            let node = t.node_index.map(u64::from);
            let found = shown.iter().enumerate().find(|(i, e)| {
                !used.contains(i)
                    && e.correlation == Some(t.launch_correlation_id)
                    && e.graph.map(|(_, n)| n & 0xffff_ffff) == node
            });
            let Some((i, e)) = found else {
                r.host_functions_not_shown += 1;
                continue;
            };
            used.insert(i);
            let external = external_right(
                e.external_id,
                truth.calls.get(&t.launch_correlation_id),
                truth.markers,
            );
            if e.start_ns > t.start_ns
                || e.end_ns < t.end_ns
                || e.pid != u64::from(t.device)
                || e.device != Some(u64::from(t.device))
                || e.stream != Some(t.stream_id)
                || e.function != Some(t.function)
                || !external
            {
                r.wrong_host_functions += 1;
            }
        }
    }
    r.wrong_host_functions += count_extras(r, truth, shown.len() - used.len());
}

/// roctx marks and ranges: on their thread, inside the SDK's callback
/// times; one of no roctx call is wrong.
fn check_annotations(r: &mut Validation, truth: &Truth, shown: &[&TimelineEvent]) {
    let mut used: HashSet<usize> = HashSet::new();
    for run in &truth.runs {
        for m in &run.markers {
            r.expected_annotations += 1;
            let found = shown.iter().enumerate().find(|(i, a)| {
                !used.contains(i)
                    && *a.name == *m.message
                    && a.tid == m.thread
                    && a.start_ns >= m.start_ns
                    && a.start_ns <= m.end_ns
            });
            match found {
                None => r.missing_annotations += 1,
                Some((i, a)) => {
                    used.insert(i);
                    if a.end_ns > m.end_ns {
                        r.wrong_annotations += 1;
                    }
                }
            }
        }
    }
    r.wrong_annotations += shown.len() - used.len();
}

/// A range's GPU spans: per lane, from the first start to the last end of
/// the device work launched by calls inside it (of the range's thread; of
/// any thread for a process range, roctxRangeStart/Stop), one span per
/// lane such work is on and none elsewhere.
fn check_gpu_annotations<'t>(
    r: &mut Validation,
    trace: &Trace,
    truth: &Truth<'t>,
    matched: &[Option<OpRef>],
    op: &impl Fn(OpRef) -> &'t OpTruth,
) {
    let process_wide = |a: &TimelineEvent| {
        truth.runs.iter().flat_map(|r| &r.markers).any(|m| {
            m.kind == "process_range"
                && *m.message == *a.name
                && m.thread == a.tid
                && a.start_ns >= m.start_ns
                && a.end_ns <= m.end_ns
        })
    };
    let ranges: Vec<(&TimelineEvent, bool)> = trace
        .timeline
        .iter()
        .filter(|e| &*e.category == "user_annotation" && e.end_ns > e.start_ns)
        .map(|e| (e, process_wide(e)))
        .collect();
    // (name, pid, tid) -> (start, end) of the enclosed work.
    let mut expected: HashMap<(String, u64, u64), (u64, u64)> = HashMap::new();
    for (event, at) in trace.events.iter().zip(matched) {
        let (Some(at), Some(_)) = (*at, event.correlation) else {
            continue;
        };
        let Some(call) = truth.calls.get(&op(at).launch_correlation_id) else {
            continue;
        };
        for (a, process_wide) in &ranges {
            if (*process_wide || a.tid == call.thread)
                && call.enter_ns >= a.start_ns
                && call.enter_ns <= a.end_ns
            {
                let e = expected
                    .entry((a.name.to_string(), event.pid, event.tid))
                    .or_insert((event.start_ns, event.end_ns));
                e.0 = e.0.min(event.start_ns);
                e.1 = e.1.max(event.end_ns);
            }
        }
    }
    let shown: Vec<&TimelineEvent> = trace
        .timeline
        .iter()
        .filter(|e| &*e.category == "gpu_user_annotation" && &*e.name != DEPENDENCY_NAME)
        .collect();
    r.gpu_annotations += shown.len();
    let mut seen = HashSet::new();
    for g in shown {
        let key = (g.name.to_string(), g.pid, g.tid);
        let right = expected.get(&key) == Some(&(g.start_ns, g.end_ns));
        if !seen.insert(key) || !right {
            r.wrong_gpu_annotations += 1;
        }
    }
    r.missing_gpu_annotations += expected.keys().filter(|k| !seen.contains(*k)).count();
}

/// Dependency arrows: per replay, exactly the graph's edges between the
/// nodes shown, collapsed through the nodes that are not.
fn check_dependencies<'t>(
    r: &mut Validation,
    trace: &Trace,
    truth: &Truth<'t>,
    matched: &[Option<OpRef>],
    op: &impl Fn(OpRef) -> &'t OpTruth,
    host_fns: &[&TimelineEvent],
) {
    // (pid, tid) -> shown graph work there, with its replay node.
    let mut at_lane: HashMap<(u64, u64), Vec<NodeSpan>> = HashMap::new();
    for (event, at) in trace.events.iter().zip(matched) {
        // A node belongs to a replay the backend can draw only when it shows
        // both its key and its (true) launching call.
        let node = at.map(op).and_then(|o| {
            event.graph?;
            (event.correlation == Some(o.launch_correlation_id)).then_some(())?;
            Some((o.launch_correlation_id, o.graph.clone()?, o.node_index?))
        });
        if let Some(node) = node {
            at_lane.entry((event.pid, event.tid)).or_default().push((
                event.start_ns,
                event.end_ns,
                node,
            ));
        }
    }
    for h in host_fns {
        let node = h.correlation.and_then(|c| {
            let (_, node) = h.graph?;
            let launch = truth
                .runs
                .iter()
                .flat_map(|r| &r.launches)
                .find(|l| l.correlation_id == c)?;
            Some((c, launch.graph.clone(), (node & 0xffff_ffff) as u32))
        });
        if let Some(node) = node {
            at_lane
                .entry((h.pid, h.tid))
                .or_default()
                .push((h.start_ns, h.end_ns, node));
        }
    }
    // A carrier sits just inside its event's end (an arrow's source) or
    // start (its destination), as the writers place it.
    let carrier = |start: u64, end: u64, source: bool| {
        if source {
            end.saturating_sub(1).max(start)
        } else {
            (start + 1).min(end.max(start))
        }
    };
    // Every node a flow end may stand for: work overlapping on one lane (an
    // SDMA copy node beside a kernel of its stream) can share a carrier time.
    let nodes_at = |f: &FlowEnd| -> Vec<ReplayNode> {
        at_lane
            .get(&(f.pid, f.tid))
            .into_iter()
            .flatten()
            .filter(|(s, e, _)| carrier(*s, *e, f.start) == f.ts_ns)
            .map(|(_, _, n)| n.clone())
            .collect()
    };
    let mut ends: HashMap<u64, (Option<&FlowEnd>, Option<&FlowEnd>)> = HashMap::new();
    for f in &trace.dependency_flows {
        let e = ends.entry(f.id).or_default();
        if f.start {
            e.0 = Some(f);
        } else {
            e.1 = Some(f);
        }
    }
    if ends.is_empty() {
        return;
    }
    // The arrows the shown nodes call for, per replay.
    let mut present: HashMap<(u64, String), HashSet<u32>> = HashMap::new();
    for (_, _, (c, g, n)) in at_lane.values().flatten() {
        present.entry((*c, g.clone())).or_default().insert(*n);
    }
    let mut expected: HashSet<Edge> = HashSet::new();
    for ((c, g), nodes) in &present {
        let Some(graph) = truth.graphs.iter().find(|x| x.name == *g) else {
            continue;
        };
        for &to in nodes {
            for from in nearest_present(graph, to, nodes) {
                expected.insert((*c, g.clone(), from, to));
            }
        }
    }
    // Each arrow is one expected edge its ends may stand for, each edge
    // drawn once; the least ambiguous arrows are matched first.
    let mut candidates: Vec<Vec<Edge>> = ends
        .values()
        .map(|(from, to)| {
            let froms = from.map(nodes_at).unwrap_or_default();
            let tos = to.map(nodes_at).unwrap_or_default();
            let mut out = Vec::new();
            for (c1, g1, n1) in &froms {
                for (c2, g2, n2) in &tos {
                    let edge = (*c1, g1.clone(), *n1, *n2);
                    if c1 == c2 && g1 == g2 && expected.contains(&edge) {
                        out.push(edge);
                    }
                }
            }
            out
        })
        .collect();
    candidates.sort_by_key(Vec::len);
    let mut shown: HashSet<Edge> = HashSet::new();
    for edges in candidates {
        r.dependency_arrows += 1;
        match edges.into_iter().find(|e| !shown.contains(e)) {
            Some(edge) => {
                shown.insert(edge);
            }
            None => r.wrong_dependency_arrows += 1,
        }
    }
    r.missing_dependency_arrows += expected.difference(&shown).count();
}
