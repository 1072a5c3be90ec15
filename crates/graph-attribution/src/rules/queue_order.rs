//! Rule 5: one thread's records of one kind, matched to its calls in order.
//!
//! When every call in the window that produces records of some kind (one
//! kernel with one launch shape, or the runtime's blit kernels) is on one
//! thread, the thread's calls produced them in call order, and one of two
//! orders on the records says which is which:
//!
//! - **Slot order**, when every such record ran on one hardware queue: a
//!   thread claims its slots call after call (HIP writes a call's packets
//!   inside the call), a graph launch writes its nodes in a topological
//!   order, ROCr processes a queue in slot order, and the SDK takes dispatch
//!   ids in processing order. So dispatch-id order is call order.
//! - **Stream order**, when every producer names one stream: work on a
//!   stream runs in the order it was enqueued, a graph launch after
//!   everything before it on the stream and before everything after (HIP's
//!   stream semantics), and a graph's nodes after the nodes they depend on.
//!   So start-time order is call order, whatever queues the stream's
//!   internal streams used.
//!
//! Within one launch, several nodes running the kernel are told apart only
//! when their dependencies order them (a chain); otherwise the records are
//! linked to the launch but keep no key. Counting must be exact, so this
//! needs a window whose calls all began and ended while it was open (every
//! packet its calls wrote was processed by its calls, and the other way
//! round), every record delivered, and no record whose writer might be
//! unknown.

use std::collections::HashMap;

use crate::assumptions::Assumptions;
use crate::calls::{CallIndex, Produces};
use crate::evidence::Observations;
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
                | Reason::QueueMayHaveOverflowed
                | Reason::ProcessedOutsideKnownCall
                | Reason::UnknownWorkNearby
                | Reason::WindowEdge
                | Reason::NoProducer
        )
    ) && !matches!(
        link,
        LinkVerdict::Unlinked(
            Reason::CallsDropped
                | Reason::QueueMayHaveOverflowed
                | Reason::ProcessedOutsideKnownCall
                | Reason::UnknownWorkNearby
                | Reason::WindowEdge
                | Reason::NoProducer
        )
    )
}

pub(crate) fn apply(
    index: &CallIndex<'_>,
    observations: &Observations,
    keys: &mut [KeyVerdict],
    links: &mut [LinkVerdict],
    assumptions: Assumptions,
) {
    if !index.evidence.complete || index.has_edges() {
        return;
    }
    let mut groups: HashMap<MatchKey, Vec<usize>> = HashMap::new();
    for (i, o) in observations.iter().enumerate() {
        let shown = index.evidence.observed(&o);
        if !matches!(shown, Observed::Copy { .. }) {
            groups.entry(MatchKey::of(shown)).or_default().push(i);
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
        let Some((assignment, proof)) = assign(
            index,
            key,
            observations,
            &mut records,
            assumptions.stream_order,
        ) else {
            continue;
        };
        for (i, (call, node)) in records.into_iter().zip(assignment) {
            let call_ref = index.call(call);
            if open_link(&links[i]) {
                links[i] = LinkVerdict::Linked {
                    correlation_id: call_ref.correlation_id,
                    proof,
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
                (Produces::Eager(_) | Produces::Fill(_), None) => Some(KeyVerdict::NotGraphed),
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

/// The (call, node) a record came from; `None` for the node when the call's
/// nodes are not one chain.
type Assignment = Vec<(u32, Option<NodeId>)>;

/// The (call, node) each record of `key` came from, in `records`' order
/// after sorting them by dispatch id; `None` when the rule does not apply.
fn assign(
    index: &CallIndex<'_>,
    key: MatchKey,
    observations: &Observations,
    records: &mut [usize],
    stream_order: bool,
) -> Option<(Assignment, LinkProof)> {
    let producers = index.producers().get(&key)?;
    // Every producing entry, grouped by call. A copy that may have run as a
    // blit or on the copy engine produced a blit here only if no engine copy
    // of its direction and size is in the window (the window is closed and
    // complete, so its one record is here).
    let copies: Vec<&Observed> = observations
        .iter()
        .map(|o| index.evidence.observed(&o))
        .filter(|o| matches!(o, Observed::Copy { .. }))
        .collect();
    let mut per_call: HashMap<u32, Vec<Option<NodeId>>> = HashMap::new();
    for &(call, k) in &producers.entries {
        let produced = index.output(call, k);
        if produced.output.is_alternative() && copies.iter().any(|c| produced.output.matches(c)) {
            return None; // may have become another kind of record
        }
        per_call.entry(call).or_default().push(produced.node);
    }
    let first = *per_call.keys().next()?;
    let thread = index.call(first).thread_id;
    if per_call.keys().any(|&c| index.call(c).thread_id != thread)
        || per_call.values().map(Vec::len).sum::<usize>() != records.len()
    {
        return None;
    }
    let (queues, starts) = (observations.queue_ids(), observations.start_ns());
    let queue = queues[records[0]];
    let slot_order = records
        .iter()
        .all(|&i| queues[i] == queue && observations.dispatch_id(i).is_some());
    let stream = index.call(first).stream;
    let stream_order = stream_order
        && stream.is_some()
        && per_call.keys().all(|&c| index.call(c).stream == stream);
    let proof = if slot_order {
        records.sort_unstable_by_key(|&i| observations.dispatch_id(i));
        LinkProof::QueueOrder
    } else if stream_order {
        records.sort_unstable_by_key(|&i| starts[i]);
        if records.windows(2).any(|w| starts[w[0]] == starts[w[1]]) {
            return None;
        }
        LinkProof::StreamOrder
    } else {
        return None;
    };
    let mut calls: Vec<u32> = per_call.keys().copied().collect();
    calls.sort_unstable_by_key(|&c| (index.call(c).enter_ns, c));
    let mut order = Vec::with_capacity(records.len());
    for call in calls {
        let mut nodes = per_call.remove(&call).unwrap_or_default();
        nodes.sort_unstable();
        let chain = nodes.len() < 2
            || match &index.produces[call as usize] {
                // A memset node's fill parts are one node: its records are
                // consecutive however the parts ran.
                Produces::Graph { exec, .. } => {
                    let mut distinct: Vec<u32> = nodes.iter().flatten().map(|n| n.0).collect();
                    distinct.dedup();
                    exec.is_chain(distinct)
                }
                _ => false,
            };
        order.extend(
            nodes
                .into_iter()
                .map(|n| (call, if chain { n } else { None })),
        );
    }
    Some((order, proof))
}
