//! CPU linkage, per event: the `correlation` a GPU event carries must be its
//! true launching call's (the ac2g arrow is keyed by it), its `External id`
//! the id of the innermost CPU marker active on the launching thread at that
//! call, its stream arg and lane the launching call's stream. Every flow
//! arrow must end at an event of the call it names and start at that call's
//! runtime event, on the launching thread.
use super::{OpRef, Validation};
use crate::markers::MarkerIds;
use crate::trace::Trace;
use rocprofiler_sim::truth::{CallTruth, OpTruth};
use std::collections::HashMap;

/// The External id a GPU event must carry, if the truth can say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExpectedLink {
    /// The launching call ran inside this marker's id (None: inside none).
    Known(Option<u64>),
    /// The truth does not record the launching call's marker.
    Unknown,
}

/// The correlation, External id and stream of one matched event.
pub fn check_event(
    report: &mut Validation,
    event: &crate::trace::GpuEvent,
    op: &OpTruth,
    lane_stream: Option<u64>,
    expected: ExpectedLink,
) {
    match event.correlation {
        None => report.unlinked_events += 1,
        Some(c) if c != op.launch_correlation_id => report.wrong_correlations += 1,
        Some(_) => {}
    }
    match (event.external_id, expected) {
        (Some(shown), expected) => {
            report.linked_events += 1;
            match expected {
                ExpectedLink::Known(Some(id)) if id == shown => {}
                ExpectedLink::Known(_) => report.wrong_external_ids += 1,
                ExpectedLink::Unknown => report.unverified_external_ids += 1,
            }
        }
        (None, ExpectedLink::Known(Some(_))) => report.events_without_external_id += 1,
        (None, _) => {}
    }
    // Our writer shows a stream it does not know as 0 (arg and lane):
    // that is an absent stream, unless the true stream is 0.
    let truth = op.stream_id;
    let shown = |s: &u64| *s != 0 || truth == 0;
    let arg = event.stream.filter(shown);
    let lane = lane_stream.filter(shown);
    if arg.is_none() {
        report.events_without_stream += 1;
    }
    if arg.is_some_and(|s| s != truth) || lane.is_some_and(|s| s != truth) {
        report.wrong_lanes += 1;
    }
}

/// Checks every ac2g arrow of one trace. `matched[i]` is the truth op of
/// `trace.events[i]`.
pub fn check_flows<'t>(
    report: &mut Validation,
    trace: &Trace,
    matched: &[Option<OpRef>],
    op: impl Fn(OpRef) -> &'t OpTruth,
) {
    let mut gpu_at: HashMap<(u64, u64, u64), Vec<usize>> = HashMap::new();
    for (i, e) in trace.events.iter().enumerate() {
        gpu_at
            .entry((e.pid, e.tid, e.start_ns))
            .or_default()
            .push(i);
    }
    let mut calls_at: HashMap<(u64, u64, u64), Vec<usize>> = HashMap::new();
    for (i, c) in trace.runtime.iter().enumerate() {
        calls_at
            .entry((c.pid, c.tid, c.start_ns))
            .or_default()
            .push(i);
    }
    let starts: HashMap<u64, &crate::trace::FlowEnd> = trace
        .flows
        .iter()
        .filter(|f| f.start)
        .map(|f| (f.id, f))
        .collect();
    for finish in trace.flows.iter().filter(|f| !f.start) {
        report.flow_arrows += 1;
        // The finish binds to the slice enclosing it on its lane: the event
        // that starts there (the one of this correlation if several do).
        let bound = gpu_at
            .get(&(finish.pid, finish.tid, finish.ts_ns))
            .and_then(|at| {
                at.iter()
                    .find(|&&i| trace.events[i].correlation == Some(finish.id))
                    .or(at.first())
            })
            .and_then(|&i| matched[i]);
        let Some(target) = bound.map(&op) else {
            report.wrong_flows += 1;
            continue;
        };
        let right_end = target.launch_correlation_id == finish.id;
        let right_start = match starts.get(&finish.id) {
            None => {
                report.flows_without_start += 1;
                true
            }
            Some(start) => {
                start.tid == target.launching_thread
                    && calls_at
                        .get(&(start.pid, start.tid, start.ts_ns))
                        .is_some_and(|at| {
                            at.iter()
                                .any(|&i| trace.runtime[i].correlation == Some(finish.id))
                        })
            }
        };
        if !(right_end && right_start) {
            report.wrong_flows += 1;
        }
    }
}

/// Checks each runtime call's correlation, thread, name and External id
/// against the truth's calls (only when the truth lists calls).
pub fn check_runtime(
    report: &mut Validation,
    trace: &Trace,
    calls: &HashMap<u64, &CallTruth>,
    markers: &MarkerIds,
) {
    report.runtime_events += trace.runtime.len();
    if calls.is_empty() {
        return;
    }
    for event in &trace.runtime {
        let Some(correlation) = event.correlation else {
            continue;
        };
        let right = calls.get(&correlation).is_some_and(|call| {
            let external_right = match (event.external_id, &call.marker) {
                (None, _) => true,
                (Some(_), None) => false,
                (Some(shown), Some(name)) => markers.id(name) == Some(shown),
            };
            // "hipApi": our writer's name for an operation it cannot name.
            let name_right = *event.name == *call.name || &*event.name == "hipApi";
            event.tid == call.thread && name_right && external_right
        });
        if !right {
            report.wrong_runtime_events += 1;
        }
    }
}
