//! Rule 4: nodes of one launch that did the same work, told apart by when
//! they ran relative to their dependencies.
//!
//! When an exec runs one kernel (with one launch shape), or several blits,
//! at several nodes, what ran cannot say which node a record is. When ran
//! can: HIP starts a node only after every node it depends on has ended
//! (in-order queues and barrier packets, hip_graph_internal.cpp), so record
//! r can be node n only if it started after every node n waits for ended,
//! and ended before every node that waits for n started. Those nodes'
//! records are known when earlier rules proved their keys; between the
//! records of one group, the same holds pairwise. If exactly one
//! assignment of the group's records to its nodes satisfies every such
//! condition, it is the truth (the truth always satisfies them). It needs
//! every record of the group linked to the launch (rules 3 and 5), and as
//! many records as the exec has such nodes.

use std::collections::HashMap;

use crate::calls::{CallIndex, Produces, ResolvedExec};
use crate::evidence::Observations;
use crate::ids::{GraphKey, NodeId};
use crate::verdict::{KeyProof, KeyVerdict, LinkVerdict, Reason};
use crate::work::Observed;

/// Groups larger than this are not searched (the search is exponential in
/// the worst case; such groups stay withheld).
const LARGEST_GROUP: usize = 12;

pub(crate) fn apply(
    index: &CallIndex<'_>,
    observations: &Observations,
    keys: &mut [KeyVerdict],
    links: &[LinkVerdict],
) {
    // call -> its linked records; only calls with records waiting here.
    if !keys.contains(&KeyVerdict::Withheld(Reason::RepeatedKernel)) {
        return;
    }
    let mut linked: HashMap<u32, Vec<usize>> = HashMap::new();
    let mut waiting: Vec<u32> = Vec::new();
    for (i, link) in links.iter().enumerate() {
        if let Some(call) = link.correlation_id().and_then(|c| index.call_of(c)) {
            linked.entry(call).or_default().push(i);
            if keys[i] == KeyVerdict::Withheld(Reason::RepeatedKernel) {
                waiting.push(call);
            }
        }
    }
    waiting.sort_unstable();
    waiting.dedup();
    for call in waiting {
        let Produces::Graph {
            graph_id: Some(graph_id),
            exec,
        } = &index.produces[call as usize]
        else {
            continue;
        };
        let records = &linked[&call];
        // Where each node of this launch ran, for the ones already proven
        // (a memset node's fill parts: from the first start to the last end).
        let mut proven: HashMap<u32, (u64, u64)> = HashMap::new();
        for &i in records {
            if let KeyVerdict::Key { key, .. } = keys[i] {
                if key.graph_id == *graph_id {
                    let (start, end) = (observations.start_ns()[i], observations.end_ns()[i]);
                    let span = proven.entry(key.node.0).or_insert((start, end));
                    *span = (span.0.min(start), span.1.max(end));
                }
            }
        }
        // (what ran) -> its records of this launch still waiting.
        let mut groups: HashMap<Observed, Vec<usize>> = HashMap::new();
        for &i in records {
            if keys[i] == KeyVerdict::Withheld(Reason::RepeatedKernel) {
                groups
                    .entry(
                        *index
                            .evidence
                            .observed_by_id(observations.observed_ids()[i]),
                    )
                    .or_default()
                    .push(i);
            }
        }
        for (observed, group) in groups {
            // The nodes that could have produced these records and are not
            // already proven, a memset node once per fill part. Each
            // produces one record, and each of the group's records came from
            // one of them, so equal counts make the group exactly those
            // nodes' records.
            let nodes: Vec<u32> = exec
                .outputs
                .iter()
                .filter(|p| p.output.matches(&observed))
                .filter_map(|p| p.node.map(|n| n.0))
                .filter(|n| !proven.contains_key(n))
                .collect();
            if nodes.len() != group.len() || group.len() > LARGEST_GROUP {
                continue;
            }
            let times: Vec<(u64, u64)> = group
                .iter()
                .map(|&i| (observations.start_ns()[i], observations.end_ns()[i]))
                .collect();
            if let Some(assignment) = unique_assignment(exec, &nodes, &times, &proven) {
                for (slot, &i) in group.iter().enumerate() {
                    keys[i] = KeyVerdict::Key {
                        key: GraphKey::new(*graph_id, NodeId(nodes[assignment[slot]])),
                        proof: KeyProof::DependencyOrder,
                    };
                }
            }
        }
    }
}

/// For each record (by position in `times`), the position in `nodes` of the
/// only node it can be, or `None` when no assignment or several fit.
fn unique_assignment(
    exec: &ResolvedExec,
    nodes: &[u32],
    times: &[(u64, u64)],
    proven: &HashMap<u32, (u64, u64)>,
) -> Option<Vec<usize>> {
    let n = nodes.len();
    // allowed[node][record]: the record's times fit the node's proven
    // ancestors and descendants.
    let allowed: Vec<Vec<bool>> = nodes
        .iter()
        .map(|&node| {
            let after = proven
                .iter()
                .filter(|(&other, _)| exec.depends_on(node, other))
                .map(|(_, &(_, end))| end)
                .max()
                .unwrap_or(0);
            let before = proven
                .iter()
                .filter(|(&other, _)| exec.depends_on(other, node))
                .map(|(_, &(start, _))| start)
                .min()
                .unwrap_or(u64::MAX);
            times
                .iter()
                .map(|&(start, end)| start >= after && end <= before)
                .collect()
        })
        .collect();
    // ordered[a][b]: node a must end before node b starts.
    let ordered: Vec<Vec<bool>> = nodes
        .iter()
        .map(|&a| nodes.iter().map(|&b| exec.depends_on(b, a)).collect())
        .collect();
    // A node listed again (a memset's next fill part) takes a later record
    // than its previous listing: which part is which does not change the
    // key, so only one of those assignments is counted.
    let twin: Vec<bool> = (0..n).map(|i| i > 0 && nodes[i] == nodes[i - 1]).collect();
    let mut chosen: Vec<Option<usize>> = vec![None; n]; // node -> record
    let mut used = vec![false; n];
    let mut found: Option<Vec<Option<usize>>> = None;
    let mut count = 0;
    search(
        0,
        &allowed,
        &ordered,
        &twin,
        times,
        &mut chosen,
        &mut used,
        &mut found,
        &mut count,
    );
    if count != 1 {
        return None;
    }
    let by_node = found?;
    let mut by_record = vec![0; n];
    for (node, record) in by_node.into_iter().enumerate() {
        by_record[record?] = node;
    }
    Some(by_record)
}

#[allow(clippy::too_many_arguments)]
fn search(
    node: usize,
    allowed: &[Vec<bool>],
    ordered: &[Vec<bool>],
    twin: &[bool],
    times: &[(u64, u64)],
    chosen: &mut Vec<Option<usize>>,
    used: &mut Vec<bool>,
    found: &mut Option<Vec<Option<usize>>>,
    count: &mut u32,
) {
    if *count > 1 {
        return;
    }
    if node == allowed.len() {
        *count += 1;
        *found = Some(chosen.clone());
        return;
    }
    for record in 0..times.len() {
        if used[record]
            || !allowed[node][record]
            || (twin[node] && chosen[node - 1].is_some_and(|r| record < r))
        {
            continue;
        }
        let fits = (0..node).all(|other| {
            let r = chosen[other].expect("earlier nodes are chosen");
            (!ordered[other][node] || times[r].1 <= times[record].0)
                && (!ordered[node][other] || times[record].1 <= times[r].0)
        });
        if fits {
            used[record] = true;
            chosen[node] = Some(record);
            search(
                node + 1,
                allowed,
                ordered,
                twin,
                times,
                chosen,
                used,
                found,
                count,
            );
            chosen[node] = None;
            used[record] = false;
        }
    }
}
