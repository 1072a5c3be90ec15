//! The timeline beyond kernels, copies and runtime calls, against the
//! truth: memsets and blit copies shown as what they are (bytes, value,
//! direction), peer copies' devices, demangled names, sync spans and what
//! they waited on, event records, host functions, roctx ranges, graph
//! dependency arrows, and that the backend's overhead is shown.
//!
//! Shown times the SDK cannot measure are bounds: an event record must lie
//! between its call and the event's true completion, a host function's
//! span must contain its true run, a range must lie inside the SDK's
//! callback times.
use super::{OpRef, Validation};
use crate::trace::{GpuCategory, Trace, TimelineEvent};
use rocprofiler_sim::truth::{CallTruth, OpTruth, RunTruth};
use rocprofiler_sim::workload::Graph;
use std::collections::{HashMap, HashSet};

/// The truth a trace's timeline is checked against.
pub(super) struct Truth<'t> {
    /// The runs (steps) the trace covered.
    pub runs: Vec<&'t RunTruth>,
    pub calls: &'t HashMap<u64, &'t CallTruth>,
    pub graphs: &'t [Graph],
}

const SYNC_CALLS: [(&str, &str); 4] = [
    ("hipStreamSynchronize", "Stream Sync"),
    ("hipDeviceSynchronize", "Context Sync"),
    ("hipEventSynchronize", "Event Sync"),
    ("hipStreamWaitEvent", "Stream Wait Event"),
];

/// Is `to` reachable from `from` along the graph's dependencies?
fn reaches(graph: &Graph, from: u32, to: u32) -> bool {
    let mut stack = vec![to as usize];
    let mut seen = HashSet::new();
    while let Some(n) = stack.pop() {
        if !seen.insert(n) {
            continue;
        }
        for &d in graph.nodes.get(n).map_or(&[][..], |node| &node.deps[..]) {
            if d == from as usize {
                return true;
            }
            stack.push(d);
        }
    }
    false
}

pub(super) fn check<'t>(
    r: &mut Validation,
    trace: &Trace,
    truth: &Truth<'t>,
    matched: &[Option<OpRef>],
    op: impl Fn(OpRef) -> &'t OpTruth,
) {
    // Streams' devices, from the truth's eager and graph ops.
    let mut stream_device: HashMap<u64, u64> = HashMap::new();
    for run in &truth.runs {
        for o in &run.ops {
            stream_device.insert(o.stream_id, u64::from(o.device));
        }
        for e in &run.events {
            stream_device.insert(e.stream_id, u64::from(e.device));
        }
    }

    // GPU events: memsets, blit copies, peer copies, names.
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
            GpuCategory::Memcpy if event.dispatch_id.is_some() => {
                r.blit_copies_shown += 1;
                if !o.blit || event.bytes != Some(o.bytes) || event.direction != o.direction {
                    r.wrong_memsets += 1;
                }
            }
            GpuCategory::Memcpy => {
                if o.src_device.is_some() {
                    r.peer_copies += 1;
                    if event.src_device != o.src_device.map(i64::from)
                        || event.dst_device != o.dst_device.map(i64::from)
                    {
                        r.wrong_copy_devices += 1;
                    }
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

    let of = |cat: &str| -> Vec<&TimelineEvent> {
        trace
            .timeline
            .iter()
            .filter(|e| &*e.category == cat)
            .collect()
    };
    let syncs = of("cuda_sync");
    let (host_fns, syncs): (Vec<&TimelineEvent>, Vec<&TimelineEvent>) =
        syncs.into_iter().partition(|e| &*e.name == "Host Function");

    // Sync spans: one per synchronising call, its own times, on the lane of
    // what it waited on, pointing at the event's last record.
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
            let Some(e) = by_corr.get(&call.correlation_id) else {
                r.missing_syncs += 1;
                continue;
            };
            let mut wrong = &*e.name != name
                || e.start_ns != call.enter_ns
                || e.end_ns != call.exit_ns;
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
                        wrong |= Some(s) != call.stream_id || trace.lane_stream(e.pid, e.tid) != Some(s);
                    }
                }
                None => r.syncs_on_cpu_lane += 1,
            }
            if matches!(call.name.as_str(), "hipEventSynchronize" | "hipStreamWaitEvent") {
                let shown = e.wait_on_record.filter(|c| *c >= 0).map(|c| c as u64);
                wrong |= shown.is_some() && shown != call.waited_record_correlation_id;
                if shown.is_none() && call.waited_record_correlation_id.is_some() {
                    r.waits_without_record += 1;
                }
                let shown_stream = e.wait_on_stream.filter(|s| *s >= 0).map(|s| s as u64);
                wrong |= shown_stream.is_some() && shown_stream != record_stream;
            }
            if wrong {
                r.wrong_syncs += 1;
            }
        }
    }
    r.sync_events += syncs.len();

    // Event records: between the call and the event's completion, on its
    // stream.
    let events: HashMap<u64, &TimelineEvent> = of("cuda_event")
        .into_iter()
        .filter_map(|e| Some((e.correlation?, e)))
        .collect();
    for run in &truth.runs {
        for t in &run.events {
            r.expected_event_records += 1;
            let Some(e) = events.get(&t.record_correlation_id) else {
                r.missing_event_records += 1;
                continue;
            };
            let placed = e.start_ns >= t.enter_ns && e.start_ns <= t.completed_ns;
            let lane = e.stream.is_none_or(|s| s == t.stream_id)
                && e.device.is_none_or(|d| d == u64::from(t.device));
            if !placed || !lane || e.event_id != Some(t.event) {
                r.wrong_event_records += 1;
            }
        }
    }

    // Host functions: the shown span contains the true run.
    for run in &truth.runs {
        for t in &run.host_functions {
            r.expected_host_functions += 1;
            let node = t.node_index.map(u64::from);
            let shown = host_fns.iter().find(|e| {
                e.correlation == Some(t.launch_correlation_id)
                    && e.graph.map(|(_, n)| n & 0xffff_ffff) == node
            });
            match shown {
                None => r.host_functions_not_shown += 1,
                Some(e) => {
                    if e.start_ns > t.start_ns
                        || e.end_ns < t.end_ns
                        || e.pid != u64::from(t.device)
                        || e.stream != Some(t.stream_id)
                    {
                        r.wrong_host_functions += 1;
                    }
                }
            }
        }
    }
    r.host_function_events += host_fns.len();

    // roctx ranges: on their thread, inside the SDK's callback times.
    let annotations = of("user_annotation");
    for run in &truth.runs {
        for m in &run.markers {
            r.expected_annotations += 1;
            let found = annotations.iter().find(|a| {
                *a.name == *m.message && a.tid == m.thread && a.start_ns >= m.start_ns
            });
            match found {
                None => r.missing_annotations += 1,
                Some(a) => {
                    if a.end_ns > m.end_ns {
                        r.wrong_annotations += 1;
                    }
                }
            }
        }
    }
    let gpu_annotations = of("gpu_user_annotation");
    r.gpu_annotations += gpu_annotations
        .iter()
        .filter(|a| &*a.name != "graph dependency")
        .count();
    r.overhead_events += of("overhead").len();

    // Dependency arrows: both ends in one replay, the later node depending
    // on the earlier.
    let mut ends: HashMap<u64, (Option<&crate::trace::FlowEnd>, Option<&crate::trace::FlowEnd>)> =
        HashMap::new();
    for f in &trace.dependency_flows {
        let e = ends.entry(f.id).or_default();
        if f.start {
            e.0 = Some(f);
        } else {
            e.1 = Some(f);
        }
    }
    // (pid, tid) -> GPU events there, with their truth node.
    let mut at_lane: HashMap<(u64, u64), Vec<(u64, u64, Option<(u64, String, u32)>)>> =
        HashMap::new();
    for (event, at) in trace.events.iter().zip(matched) {
        let node = at.map(|at| op(at)).and_then(|o| {
            Some((o.launch_correlation_id, o.graph.clone()?, o.node_index?))
        });
        at_lane
            .entry((event.pid, event.tid))
            .or_default()
            .push((event.start_ns, event.end_ns, node));
    }
    for h in &host_fns {
        let graph = h.correlation.and_then(|c| {
            let (_, node) = h.graph?;
            let launch = truth.runs.iter().flat_map(|r| &r.launches).find(|l| l.correlation_id == c)?;
            Some((c, launch.graph.clone(), (node & 0xffff_ffff) as u32))
        });
        at_lane
            .entry((h.pid, h.tid))
            .or_default()
            .push((h.start_ns, h.end_ns, graph));
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
    let node_at = |f: &crate::trace::FlowEnd| -> Option<(u64, String, u32)> {
        at_lane
            .get(&(f.pid, f.tid))?
            .iter()
            .find(|(s, e, _)| carrier(*s, *e, f.start) == f.ts_ns)
            .and_then(|(_, _, n)| n.clone())
    };
    for (from, to) in ends.values() {
        r.dependency_arrows += 1;
        let ok = match (from.and_then(node_at), to.and_then(node_at)) {
            (Some((c1, g1, n1)), Some((c2, g2, n2))) => {
                c1 == c2
                    && g1 == g2
                    && truth
                        .graphs
                        .iter()
                        .find(|g| g.name == g1)
                        .is_some_and(|g| reaches(g, n1, n2))
            }
            _ => false,
        };
        if !ok {
            r.wrong_dependency_arrows += 1;
        }
    }
}
