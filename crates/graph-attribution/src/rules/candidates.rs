//! Rules 1 to 3: who could have written a record's packet, and what that
//! proves about its key and its call.
//!
//! # Why the neighbourhood is enough (the two-hop rule)
//!
//! ROCr processes a queue's packets in slot order on whichever thread rings
//! its doorbell, up to the first slot that is claimed but not yet written
//! (intercept_queue.cpp `StoreRelaxed`), and rocprofiler-sdk stamps each
//! record with the correlation id of the call in progress on that thread
//! (hsa/queue.cpp `WriteInterceptor`). HIP writes a call's packets and rings
//! inside the call (direct dispatch). So if call P processed a packet that
//! call W wrote, either P and W overlap in time, or W's ring found an
//! earlier slot unwritten: its writer X was inside a call both while W rang
//! and until P processed, so X overlaps both W and P. In both cases W
//! overlaps the *hull* of P and of the other threads' packet-writing calls
//! that overlap P. Every call that overlaps that hull and produces such a
//! record is a candidate; nothing outside it can be the writer.
//!
//! The hull is only complete when the tool saw every call in it: a call in
//! flight when the window opened or closed may have met calls the tool
//! never saw (`Reason::WindowEdge`), and a call whose work the tool cannot
//! name may have written anything (`Reason::UnknownWorkNearby`).

use crate::calls::{CallIndex, Produces};
use crate::evidence::Observation;
use crate::ids::{AttributionId, GraphKey, NodeId};
use crate::verdict::{KeyProof, KeyVerdict, LinkProof, LinkVerdict, Reason};
use crate::work::MatchKey;

/// What the candidates of one record agree on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Agreement {
    None,
    /// One (exec, node), whatever the number of calls.
    Node(Option<AttributionId>, NodeId),
    /// One exec, several of its nodes (a kernel it runs more than once).
    Exec(Option<AttributionId>),
    Mixed,
}

/// One output of one call: (call index, index into the call's outputs).
pub(crate) type Slot = (u32, u32);

/// Rule 1 for one record: every (call, output) that could have written it,
/// or why its writer cannot be bounded. `overflowing`: queues
/// `rules::backlog` found may have been full.
pub(crate) fn candidates(
    index: &mut CallIndex<'_>,
    observation: &Observation,
    overflowing: &std::collections::HashSet<u64>,
) -> Result<Vec<Slot>, Reason> {
    if !index.evidence.calls_complete {
        return Err(Reason::CallsDropped);
    }
    if observation.dispatch_id.is_some() && overflowing.contains(&observation.queue_id) {
        return Err(Reason::QueueMayHaveOverflowed);
    }
    // The neighbourhood of the processing call.
    let Some(p) = index.call_of(observation.correlation_id) else {
        return Err(Reason::ProcessedOutsideKnownCall);
    };
    let hull = index.hull(p);
    if hull.at_edge {
        return Err(Reason::WindowEdge);
    }
    if index.unknown_within(hull) {
        return Err(Reason::UnknownWorkNearby);
    }
    let Some(producers) = index.producers.get(&MatchKey::of(&observation.observed)) else {
        return Err(Reason::NoProducer);
    };
    let mut out: Vec<Slot> = producers
        .intervals
        .overlapping(hull.start, hull.end)
        .map(|entry| producers.entries[entry as usize])
        .filter(|&(call, k)| {
            index.outputs[call as usize][k as usize]
                .output
                .matches(&observation.observed)
        })
        .collect();
    if out.is_empty() {
        return Err(Reason::NoProducer);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// Rules 2 and 3 for one record, from its candidates (rule 1): its key and
/// its link.
pub(crate) fn decide(
    index: &CallIndex<'_>,
    candidates: &Result<Vec<Slot>, Reason>,
) -> (KeyVerdict, LinkVerdict) {
    let candidates = match candidates {
        Ok(c) => c,
        Err(reason) => {
            return (
                KeyVerdict::Withheld(*reason),
                LinkVerdict::Unlinked(*reason),
            )
        }
    };
    let mut agreement = Agreement::None;
    let mut eager = false;
    let mut first_call: Option<u32> = None;
    let mut several_calls = false;
    for &(call, k) in candidates {
        let produced = index.outputs[call as usize][k as usize];
        match first_call {
            None => first_call = Some(call),
            Some(c) if c != call => several_calls = true,
            Some(_) => {}
        }
        match (produced.node, &index.produces[call as usize]) {
            (Some(node), Produces::Graph { graph_id, .. }) => {
                agreement = match agreement {
                    Agreement::None => Agreement::Node(*graph_id, node),
                    Agreement::Node(g, n) if g == *graph_id && n == node => agreement,
                    Agreement::Node(g, _) | Agreement::Exec(g) if g == *graph_id => {
                        Agreement::Exec(g)
                    }
                    _ => Agreement::Mixed,
                }
            }
            _ => eager = true,
        }
    }
    let first_call = first_call.expect("rule 1 returns no empty candidate list");
    // Rule 2: the key.
    let key = match (eager, agreement) {
        (true, Agreement::None) => KeyVerdict::NotGraphed,
        (true, _) | (false, Agreement::Mixed) => KeyVerdict::Withheld(Reason::Ambiguous),
        (false, Agreement::Node(Some(graph_id), node)) => KeyVerdict::Key {
            key: GraphKey::new(graph_id, node),
            proof: KeyProof::OnlyPossibleNode,
        },
        (false, Agreement::Node(None, _) | Agreement::Exec(None)) => {
            KeyVerdict::Withheld(Reason::ExecHasNoId)
        }
        (false, Agreement::Exec(Some(_))) => KeyVerdict::Withheld(Reason::RepeatedKernel),
        (false, Agreement::None) => unreachable!("a first call was found"),
    };
    // Rule 3: the link.
    let link = if several_calls {
        LinkVerdict::Unlinked(Reason::SeveralCalls)
    } else {
        LinkVerdict::Linked {
            correlation_id: index.call(first_call).correlation_id,
            proof: LinkProof::OnlyPossibleCall,
        }
    };
    (key, link)
}
