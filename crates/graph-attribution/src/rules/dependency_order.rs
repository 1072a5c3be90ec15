//! Rule 4: nodes of one exec that run the same kernel, told apart by their
//! dependencies.
//!
//! When an exec runs one kernel (with one launch shape) at several nodes,
//! what ran cannot say which node a record is. If those nodes are totally
//! ordered by the graph's dependencies, every launch runs them in that
//! order and each starts only after the one it waits for has ended (HIP
//! enforces a node's dependencies with in-order queues and barrier
//! packets), so sorting one launch's records of that kernel by start time
//! gives them in dependency order. It needs every such record of the launch
//! linked to it (rules 3 and 5), and as many as the exec has such nodes.

use std::collections::HashMap;

use crate::calls::{CallIndex, Produces};
use crate::evidence::Observation;
use crate::ids::{GraphKey, NodeId};
use crate::verdict::{KeyProof, KeyVerdict, LinkVerdict, Reason};
use crate::work::Observed;

pub(crate) fn apply(
    index: &CallIndex<'_>,
    observations: &[Observation],
    keys: &mut [KeyVerdict],
    links: &[LinkVerdict],
) {
    // (call, what ran) -> this launch's records of it that are linked to it.
    // Grouped by the whole record (a copy's size too), so one group's nodes
    // are exactly the nodes that could have produced each of its records.
    let mut linked: HashMap<(u32, Observed), Vec<usize>> = HashMap::new();
    let mut waiting = false;
    for (i, link) in links.iter().enumerate() {
        if let Some(corr) = link.correlation_id() {
            if let Some(call) = index.call_of(corr) {
                linked
                    .entry((call, observations[i].observed))
                    .or_default()
                    .push(i);
                waiting |= keys[i] == KeyVerdict::Withheld(Reason::RepeatedKernel);
            }
        }
    }
    if !waiting {
        return;
    }
    for ((call, _), mut records) in linked {
        if !records
            .iter()
            .any(|&i| keys[i] == KeyVerdict::Withheld(Reason::RepeatedKernel))
        {
            continue;
        }
        let Produces::Graph {
            graph_id: Some(graph_id),
            exec,
        } = &index.produces[call as usize]
        else {
            continue;
        };
        let observed = observations[records[0]].observed;
        let mut nodes: Vec<u32> = exec
            .outputs
            .iter()
            .filter(|p| p.output.matches(&observed))
            .filter_map(|p| p.node.map(|n| n.0))
            .collect();
        nodes.sort_unstable();
        if nodes.len() != records.len() || !exec.is_chain(nodes.clone()) {
            continue;
        }
        records.sort_unstable_by_key(|&i| observations[i].start_ns);
        if records
            .windows(2)
            .any(|w| observations[w[0]].start_ns == observations[w[1]].start_ns)
        {
            continue;
        }
        for (i, node) in records.into_iter().zip(nodes) {
            let proven = GraphKey::new(*graph_id, NodeId(node));
            keys[i] = match keys[i] {
                KeyVerdict::Withheld(Reason::RepeatedKernel) => KeyVerdict::Key {
                    key: proven,
                    proof: KeyProof::DependencyOrder,
                },
                KeyVerdict::Key { key, .. } if key != proven => {
                    KeyVerdict::Withheld(Reason::Ambiguous)
                }
                other => other,
            };
        }
    }
}
