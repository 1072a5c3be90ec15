//! Rule 5: one thread's packets of one kind, matched in order.
//!
//! When every call in the window that produces records of some kind (one
//! kernel with one launch shape, or the runtime's blit kernels) is on one
//! thread, the records in dispatch-id order are that thread's packets in the
//! order it wrote them, provided they all went through one queue at a time:
//! a thread claims its slots call after call (HIP writes a call's packets
//! inside the call), a graph launch writes a chain of nodes in dependency
//! order, ROCr processes a queue in slot order, and the SDK takes dispatch
//! ids in processing order. "One queue at a time" holds when every record
//! ran on one queue, or when every producer sends its one packet of that
//! kind down one stream: eager calls on one stream, or launches of one exec
//! from one stream (the exec's node always goes down the same internal stream:
//! hip_graph_internal.cpp `UpdateStreams` reassigns streams only when the
//! launch stream changes). A stream moves to another queue only when it is
//! idle (rocvirtual.cpp `ReleaseHwQueue` needs `IsQueueIdle`), so all its
//! earlier packets were processed before its later ones were written.
//!
//! Counting must be exact, so this needs a window whose calls all began and
//! ended while it was open (every packet its calls wrote was processed by
//! its calls, and the other way round), every record delivered, and no
//! record whose writer might be unknown.

use std::collections::HashMap;
use std::sync::Arc;

use crate::calls::{CallIndex, Produces};
use crate::evidence::Observation;
use crate::ids::{GraphKey, NodeId};
use crate::verdict::{KeyProof, KeyVerdict, LinkProof, LinkVerdict, Reason};
use crate::work::{MatchKey, Observed};

/// Reasons rule 5 may overturn: the candidates were all known, only too many.
fn open_key(key: &KeyVerdict) -> bool {
    matches!(
        key,
        KeyVerdict::Withheld(Reason::Ambiguous | Reason::RepeatedKernel)
    )
}

fn open_link(link: &LinkVerdict) -> bool {
    matches!(link, LinkVerdict::Unlinked(Reason::SeveralCalls))
}

fn resolvable(key: &KeyVerdict, link: &LinkVerdict) -> bool {
    !matches!(
        key,
        KeyVerdict::Withheld(
            Reason::CallsDropped
                | Reason::ProcessedOutsideKnownCall
                | Reason::UnknownWorkNearby
                | Reason::WindowEdge
                | Reason::NoProducer
        )
    ) && !matches!(
        link,
        LinkVerdict::Unlinked(
            Reason::CallsDropped
                | Reason::ProcessedOutsideKnownCall
                | Reason::UnknownWorkNearby
                | Reason::WindowEdge
                | Reason::NoProducer
        )
    )
}

pub(crate) fn apply(
    index: &CallIndex<'_>,
    observations: &[Observation],
    keys: &mut [KeyVerdict],
    links: &mut [LinkVerdict],
) {
    if !index.evidence.complete || index.has_edges() {
        return;
    }
    let mut groups: HashMap<MatchKey, Vec<usize>> = HashMap::new();
    for (i, o) in observations.iter().enumerate() {
        if !matches!(o.observed, Observed::Copy { .. }) {
            groups.entry(MatchKey::of(&o.observed)).or_default().push(i);
        }
    }
    for (key, mut records) in groups {
        if !records
            .iter()
            .any(|&i| open_key(&keys[i]) || open_link(&links[i]))
            || !records.iter().all(|&i| resolvable(&keys[i], &links[i]))
        {
            continue;
        }
        let Some(assignment) = assign(index, key, observations, &mut records) else {
            continue;
        };
        for (i, (call, node)) in records.into_iter().zip(assignment) {
            let call_ref = index.call(call);
            if open_link(&links[i]) {
                links[i] = LinkVerdict::Linked {
                    correlation_id: call_ref.correlation_id,
                    proof: LinkProof::QueueOrder,
                };
            }
            let proven = match (&index.produces[call as usize], node) {
                (
                    Produces::Graph {
                        graph_id: Some(g), ..
                    },
                    Some(node),
                ) => Some(KeyVerdict::Key {
                    key: GraphKey::new(*g, node),
                    proof: KeyProof::QueueOrder,
                }),
                (Produces::Eager(_), None) => Some(KeyVerdict::NotGraphed),
                _ => None,
            };
            match (proven, keys[i]) {
                (Some(proven), current) if open_key(&current) => keys[i] = proven,
                // Two sound rules cannot disagree; if they do, an assumption
                // failed, and neither answer is emitted.
                (Some(proven), KeyVerdict::Key { key, .. }) if proven.key() != Some(key) => {
                    keys[i] = KeyVerdict::Withheld(Reason::Ambiguous);
                    links[i] = LinkVerdict::Unlinked(Reason::Ambiguous);
                }
                _ => {}
            }
        }
    }
}

/// The (call, node) each record of `key` came from, in `records`' order
/// after sorting them by dispatch id; `None` when the rule does not apply.
fn assign(
    index: &CallIndex<'_>,
    key: MatchKey,
    observations: &[Observation],
    records: &mut [usize],
) -> Option<Vec<(u32, Option<NodeId>)>> {
    let producers = index.producers.get(&key)?;
    if records
        .iter()
        .any(|&i| observations[i].dispatch_id.is_none())
    {
        return None;
    }
    let queue = observations[records[0]].queue_id;
    let one_queue = records.iter().all(|&i| observations[i].queue_id == queue);
    // Every producing entry, grouped by call.
    let mut per_call: HashMap<u32, Vec<Option<NodeId>>> = HashMap::new();
    for &(call, k) in &producers.entries {
        let produced = index.outputs[call as usize][k as usize];
        if produced.output.is_alternative() {
            return None; // may have become another kind of record
        }
        per_call.entry(call).or_default().push(produced.node);
    }
    let thread = index.call(*per_call.keys().next()?).thread_id;
    if per_call.keys().any(|&c| index.call(c).thread_id != thread)
        || per_call.values().map(Vec::len).sum::<usize>() != records.len()
    {
        return None;
    }
    // Down one stream: eager work on one stream, or one exec launched from one.
    let lane = |c: u32| {
        let call = index.call(c);
        let exec = match &index.produces[c as usize] {
            Produces::Graph { exec, .. } => Some(Arc::as_ptr(exec)),
            _ => None,
        };
        call.stream.map(|stream| (stream, exec))
    };
    // One packet of this kind per call: a graph that runs the kernel at
    // several nodes may send them down different internal streams.
    let first_lane = lane(*per_call.keys().next()?);
    let one_lane = first_lane.is_some()
        && per_call
            .iter()
            .all(|(&c, nodes)| nodes.len() == 1 && lane(c) == first_lane);
    if !one_queue && !one_lane {
        return None;
    }
    let mut calls: Vec<u32> = per_call.keys().copied().collect();
    calls.sort_unstable_by_key(|&c| (index.call(c).enter_ns, c));
    let mut order = Vec::with_capacity(records.len());
    for call in calls {
        let mut nodes = per_call.remove(&call).unwrap_or_default();
        nodes.sort_unstable();
        let chain = nodes.len() < 2
            || match &index.produces[call as usize] {
                Produces::Graph { exec, .. } => {
                    exec.is_chain(nodes.iter().flatten().map(|n| n.0).collect())
                }
                _ => false,
            };
        order.extend(
            nodes
                .into_iter()
                .map(|n| (call, if chain { n } else { None })),
        );
    }
    records.sort_unstable_by_key(|&i| observations[i].dispatch_id);
    Some(order)
}
