//! Rule 7: what ran must be what the graph said. A call that no other
//! thread's packet-writing call overlapped processed exactly its own
//! packets (the two-hop rule in `candidates`, with nobody to hop through),
//! so in a complete window its records must be exactly what its exec's
//! graph-building calls said it runs. An exec whose launch shows anything
//! else is distrusted for the rest of the session: its launches may then
//! produce anything, which withholds every key it could be confused with.

use std::collections::HashMap;

use crate::calls::{CallIndex, Produced, Produces};
use crate::evidence::Observation;
use crate::ids::AttributionId;
use crate::work::{BlitKind, Direction, Observed, Output};

/// Execs (attribution ids) whose isolated launches contradict their graph.
pub(crate) fn contradicted(
    index: &mut CallIndex<'_>,
    observations: &[Observation],
) -> Vec<AttributionId> {
    if !index.evidence.complete {
        return Vec::new();
    }
    let mut by_call: HashMap<u32, Vec<Observed>> = HashMap::new();
    for o in observations {
        if let Some(call) = index.call_of(o.correlation_id) {
            if matches!(
                index.produces[call as usize],
                Produces::Graph {
                    graph_id: Some(_),
                    ..
                }
            ) {
                by_call.entry(call).or_default().push(o.observed);
            }
        }
    }
    let mut calls: Vec<u32> = (0..index.produces.len() as u32)
        .filter(|&c| {
            matches!(
                index.produces[c as usize],
                Produces::Graph {
                    graph_id: Some(_),
                    ..
                }
            )
        })
        .collect();
    calls.sort_unstable();
    let mut out = Vec::new();
    for call in calls {
        if !index.isolated(call) {
            continue;
        }
        let records = by_call.remove(&call).unwrap_or_default();
        if !produces_exactly(&index.outputs[call as usize], &records) {
            if let Produces::Graph {
                graph_id: Some(g), ..
            } = index.produces[call as usize]
            {
                if !out.contains(&g) {
                    out.push(g);
                }
            }
        }
    }
    out
}

/// Can the records be matched one to one with the outputs?
pub(crate) fn produces_exactly(outputs: &[Produced], records: &[Observed]) -> bool {
    if outputs.len() != records.len() {
        return false;
    }
    // Exact outputs (kernels, fills, device copies), and the copies that may
    // have become a copy blit or an engine copy.
    let mut exact: HashMap<Observed, i64> = HashMap::new();
    // (direction, bytes) -> outputs that may be that copy; `None` direction last.
    let mut specific: HashMap<(Direction, u64), i64> = HashMap::new();
    let mut any_direction: HashMap<u64, i64> = HashMap::new();
    let mut alternatives = 0i64;
    for p in outputs {
        match p.output {
            Output::Kernel(shape) => *exact.entry(Observed::Kernel(shape)).or_default() += 1,
            Output::Blit(kind) => *exact.entry(Observed::Blit(kind)).or_default() += 1,
            Output::BlitOrCopy { direction, bytes } => {
                alternatives += 1;
                match direction {
                    Some(d) => *specific.entry((d, bytes)).or_default() += 1,
                    None => *any_direction.entry(bytes).or_default() += 1,
                }
            }
        }
    }
    let mut copy_blits = 0i64;
    for r in records {
        match *r {
            Observed::Blit(BlitKind::Copy) if exact.get(r).is_none_or(|n| *n == 0) => {
                copy_blits += 1
            }
            Observed::Kernel(_) | Observed::Blit(_) => match exact.get_mut(r) {
                Some(n) if *n > 0 => *n -= 1,
                _ => return false,
            },
            Observed::Copy { direction, bytes } => {
                if let Some(n) = specific.get_mut(&(direction, bytes)).filter(|n| **n > 0) {
                    *n -= 1;
                } else if let Some(n) = any_direction.get_mut(&bytes).filter(|n| **n > 0) {
                    *n -= 1;
                } else {
                    return false;
                }
                alternatives -= 1;
            }
        }
    }
    exact.values().all(|&n| n == 0) && copy_blits == alternatives
}
