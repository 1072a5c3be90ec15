//! Rule 9: every output is one record, every record one output.
//!
//! A graph launch runs each node of its exec once, and an eager call its one
//! operation (HIP's semantics); each packet becomes one record. So in a
//! window the records of one kind (one kernel and launch shape, fills, copy
//! blits, copies of one direction) and the outputs that may become them are
//! matched one to one: every record by the output that wrote it (rule 1
//! bounds it among its candidates), every *mandatory* output (one certainly
//! in the window: `Joint::new`) by exactly one record, every other output by
//! at most one.
//!
//! A candidate edge that no such matching contains is in no consistent
//! assignment, and is removed. Which edges those are follows from one
//! matching (Régin's filtering for all-different constraints, Dulmage and
//! Mendelsohn's decomposition): with M a matching that covers every record
//! and every mandatory output, orient unmatched edges record -> output,
//! matched ones output -> record, and add one node Φ standing for "no record
//! in this window" with Φ -> o for every optional output o that M gives a
//! record and o -> Φ for every optional output it leaves free. An unmatched
//! edge lies in some valid matching exactly when its ends are in one
//! strongly connected component (an alternating cycle swaps it in; the
//! cycles through Φ trade one optional output for another). If no matching
//! covers every record and mandatory output, the window contradicts the
//! rules and its kind is reported.

use std::collections::{BTreeMap, VecDeque};

use crate::calls::CallIndex;
use crate::evidence::Observations;
use crate::joint::Joint;
use crate::work::MatchKey;

const NONE: u32 = u32::MAX;

/// A matching kept from one round to the next (edges removed since are
/// dropped from it, the rest stays), and scratch space.
pub(crate) struct Matching {
    /// Record -> the edge that matches it.
    record_edge: Vec<u32>,
    /// Slot -> the record matched to it.
    slot_record: Vec<u32>,
    dist: Vec<u32>,
    pos: Vec<u32>,
    local: Vec<u32>,
}

impl Matching {
    pub(crate) fn new(records: usize, slots: usize) -> Matching {
        Matching {
            record_edge: vec![NONE; records],
            slot_record: vec![NONE; slots],
            dist: vec![NONE; records],
            pos: vec![0; records],
            local: vec![NONE; slots],
        }
    }

    fn unmatch(&mut self, joint: &Joint, r: u32) {
        let e = std::mem::replace(&mut self.record_edge[r as usize], NONE);
        if e != NONE {
            let s = joint.slot_of(e) as usize;
            if self.slot_record[s] == r {
                self.slot_record[s] = NONE;
            }
        }
    }
}

/// Rule 9 over every kind in the window.
pub(crate) fn prune(
    index: &CallIndex<'_>,
    observations: &Observations,
    joint: &mut Joint,
    matching: &mut Matching,
) {
    let mut groups: BTreeMap<MatchKey, (Vec<u32>, Vec<u32>)> = BTreeMap::new();
    for (r, o) in observations.iter().enumerate() {
        if joint.bounded[r] {
            groups
                .entry(MatchKey::of(index.evidence.observed(&o)))
                .or_default()
                .0
                .push(r as u32);
        }
    }
    for s in 0..joint.slots.len() as u32 {
        if joint.slots[s as usize].mandatory {
            if let Some(kind) = joint.slot_kind(index, s) {
                groups.entry(kind).or_default().1.push(s);
            }
        }
    }
    for (kind, (records, mandatory)) in groups {
        if !filter(index, joint, matching, &records, &mandatory) {
            joint.contradicted.insert(kind);
        }
    }
}

/// Filters one kind; false when no matching covers every record and every
/// mandatory output.
fn filter(
    index: &CallIndex<'_>,
    joint: &mut Joint,
    m: &mut Matching,
    records: &[u32],
    mandatory: &[u32],
) -> bool {
    // Keep what is left of the last round's matching on mandatory outputs.
    for &r in records {
        let e = m.record_edge[r as usize];
        if e != NONE && (!joint.is_alive(e) || !joint.slots[joint.slot_of(e) as usize].mandatory) {
            m.unmatch(joint, r);
        }
    }
    // Mandatory outputs first, so that the second phase (whose augmenting
    // paths never unmatch an output) keeps them all covered.
    augment(joint, m, records, true);
    augment(joint, m, records, false);
    if records.iter().any(|&r| m.record_edge[r as usize] == NONE)
        || mandatory.iter().any(|&s| m.slot_record[s as usize] == NONE)
    {
        return false;
    }
    remove_unmatchable(index, joint, m, records, mandatory);
    // An output that may become either of two kinds is matched again with
    // each: leave it free for the other.
    for &r in records {
        let e = m.record_edge[r as usize];
        if e != NONE && !joint.slots[joint.slot_of(e) as usize].mandatory {
            m.unmatch(joint, r);
        }
    }
    true
}

/// Hopcroft and Karp: grows the matching of `records` to a maximum one,
/// over mandatory outputs only or over all.
fn augment(joint: &Joint, m: &mut Matching, records: &[u32], mandatory_only: bool) {
    let allowed = |s: u32| !mandatory_only || joint.slots[s as usize].mandatory;
    loop {
        let mut queue = VecDeque::new();
        for &r in records {
            if m.record_edge[r as usize] == NONE {
                m.dist[r as usize] = 0;
                queue.push_back(r);
            } else {
                m.dist[r as usize] = NONE;
            }
        }
        let mut found = false;
        while let Some(r) = queue.pop_front() {
            for e in joint.record_edges(r) {
                let s = joint.slot_of(e);
                if !allowed(s) {
                    continue;
                }
                match m.slot_record[s as usize] {
                    NONE => found = true,
                    r2 if m.dist[r2 as usize] == NONE => {
                        m.dist[r2 as usize] = m.dist[r as usize] + 1;
                        queue.push_back(r2);
                    }
                    _ => {}
                }
            }
        }
        if !found {
            return;
        }
        for &r in records {
            m.pos[r as usize] = 0;
        }
        for &r in records {
            if m.record_edge[r as usize] == NONE {
                path_from(joint, m, r, &allowed);
            }
        }
    }
}

/// One augmenting path from free record `root` along the BFS layers
/// (iterative depth-first search); applies it when found.
fn path_from(joint: &Joint, m: &mut Matching, root: u32, allowed: &dyn Fn(u32) -> bool) {
    // (record, the edge taken from it)
    let mut stack: Vec<(u32, u32)> = vec![(root, NONE)];
    while let Some(&(r, _)) = stack.last() {
        let list = joint.record_edge_list(r);
        let mut next = None;
        while (m.pos[r as usize] as usize) < list.len() {
            let e = list[m.pos[r as usize] as usize];
            let s = joint.slot_of(e);
            if joint.is_alive(e) && allowed(s) {
                match m.slot_record[s as usize] {
                    NONE => {
                        next = Some((e, NONE));
                        break;
                    }
                    r2 if m.dist[r2 as usize] == m.dist[r as usize].wrapping_add(1)
                        && m.dist[r2 as usize] != NONE =>
                    {
                        next = Some((e, r2));
                        break;
                    }
                    _ => {}
                }
            }
            m.pos[r as usize] += 1;
        }
        match next {
            Some((e, NONE)) => {
                stack.last_mut().expect("not empty").1 = e;
                for &(r, e) in &stack {
                    m.record_edge[r as usize] = e;
                    m.slot_record[joint.slot_of(e) as usize] = r;
                }
                return;
            }
            Some((e, r2)) => {
                stack.last_mut().expect("not empty").1 = e;
                stack.push((r2, NONE));
            }
            None => {
                m.dist[r as usize] = NONE;
                stack.pop();
                if let Some(&(parent, _)) = stack.last() {
                    m.pos[parent as usize] += 1;
                }
            }
        }
    }
}

/// Removes the edges of `records` that are in no matching covering every
/// record and mandatory output (`m` is one).
fn remove_unmatchable(
    index: &CallIndex<'_>,
    joint: &mut Joint,
    m: &mut Matching,
    records: &[u32],
    mandatory: &[u32],
) {
    // Local numbering: records, then slots, then Φ.
    let mut slots: Vec<u32> = Vec::new();
    let note = |s: u32, slots: &mut Vec<u32>, local: &mut Vec<u32>| {
        if local[s as usize] == NONE {
            local[s as usize] = (records.len() + slots.len()) as u32;
            slots.push(s);
        }
    };
    for &s in mandatory {
        note(s, &mut slots, &mut m.local);
    }
    for &r in records {
        for e in joint.record_edges(r) {
            note(joint.slot_of(e), &mut slots, &mut m.local);
        }
    }
    let phi = (records.len() + slots.len()) as u32;
    let n = phi as usize + 1;
    let mut arcs: Vec<(u32, u32)> = Vec::new();
    for (lr, &r) in records.iter().enumerate() {
        for e in joint.record_edges(r) {
            let ls = m.local[joint.slot_of(e) as usize];
            if m.record_edge[r as usize] == e {
                arcs.push((ls, lr as u32));
            } else {
                arcs.push((lr as u32, ls));
            }
        }
    }
    for &s in &slots {
        if joint.slots[s as usize].mandatory {
            continue;
        }
        let ls = m.local[s as usize];
        if m.slot_record[s as usize] == NONE {
            arcs.push((ls, phi));
        } else {
            arcs.push((phi, ls));
        }
    }
    let comp = strongly_connected(n, &arcs);
    // An optional output that `m` gives a record keeps one in every
    // matching unless an alternating cycle through Φ frees it: outside
    // Φ's component it is certainly taken, and rule 10 may bound with it.
    for &s in &slots {
        let ls = m.local[s as usize] as usize;
        if m.slot_record[s as usize] != NONE
            && comp[ls] != comp[phi as usize]
            && joint.slot_kind(index, s).is_some()
        {
            joint.taken[s as usize] = true;
        }
    }
    let mut doomed = Vec::new();
    for (lr, &r) in records.iter().enumerate() {
        for e in joint.record_edges(r) {
            let ls = m.local[joint.slot_of(e) as usize];
            if m.record_edge[r as usize] != e && comp[lr] != comp[ls as usize] {
                doomed.push(e);
            }
        }
    }
    for e in doomed {
        joint.remove(e);
    }
    for &s in &slots {
        m.local[s as usize] = NONE;
    }
}

/// Tarjan's strongly connected components (iterative); the component of
/// each node.
pub(crate) fn strongly_connected(n: usize, arcs: &[(u32, u32)]) -> Vec<u32> {
    let mut start = vec![0u32; n + 1];
    for &(a, _) in arcs {
        start[a as usize + 1] += 1;
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut adj = vec![0u32; arcs.len()];
    for &(a, b) in arcs {
        adj[fill[a as usize] as usize] = b;
        fill[a as usize] += 1;
    }
    let mut index = vec![NONE; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut comp = vec![NONE; n];
    let mut stack: Vec<u32> = Vec::new();
    let mut next_index = 0u32;
    let mut next_comp = 0u32;
    let mut call: Vec<(u32, u32)> = Vec::new();
    for root in 0..n as u32 {
        if index[root as usize] != NONE {
            continue;
        }
        call.push((root, start[root as usize]));
        index[root as usize] = next_index;
        low[root as usize] = next_index;
        next_index += 1;
        stack.push(root);
        on_stack[root as usize] = true;
        while let Some(&mut (v, ref mut at)) = call.last_mut() {
            if *at < start[v as usize + 1] {
                let w = adj[*at as usize];
                *at += 1;
                if index[w as usize] == NONE {
                    index[w as usize] = next_index;
                    low[w as usize] = next_index;
                    next_index += 1;
                    stack.push(w);
                    on_stack[w as usize] = true;
                    call.push((w, start[w as usize]));
                } else if on_stack[w as usize] {
                    low[v as usize] = low[v as usize].min(index[w as usize]);
                }
            } else {
                call.pop();
                if let Some(&(u, _)) = call.last() {
                    low[u as usize] = low[u as usize].min(low[v as usize]);
                }
                if low[v as usize] == index[v as usize] {
                    loop {
                        let w = stack.pop().expect("v is on the stack");
                        on_stack[w as usize] = false;
                        comp[w as usize] = next_comp;
                        if w == v {
                            break;
                        }
                    }
                    next_comp += 1;
                }
            }
        }
    }
    comp
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::joint::testing::*;

    /// Eager launches of kernel 3, one per thread, all at once.
    fn calls(n: u64) -> Vec<crate::evidence::Call> {
        (0..n)
            .map(|i| eager(i + 1, i + 1, (0, 50), i + 1, 3))
            .collect()
    }

    fn records(n: u64) -> Vec<crate::evidence::Observation> {
        (0..n)
            .map(|i| record(1, 3, i + 1, (100 + 10 * i, 105 + 10 * i)))
            .collect()
    }

    fn filtered(n: u64, cands: &[Vec<(u32, u32)>], closed: bool) -> (Vec<Vec<u32>>, bool) {
        let obs = records(cands.len() as u64);
        with_joint(&calls(n), &obs, cands, closed, |index, joint| {
            let mut m = Matching::new(obs.len(), joint.slots.len());
            prune(index, index.evidence.observations, joint, &mut m);
            let domains = (0..obs.len() as u32).map(|r| calls_of(joint, r)).collect();
            (domains, !joint.contradicted.is_empty())
        })
    }

    #[test]
    fn an_output_another_record_needs_is_no_candidate() {
        let (d, bad) = filtered(
            3,
            &[vec![(0, 0), (1, 0)], vec![(1, 0), (2, 0)], vec![(2, 0)]],
            true,
        );
        assert!(!bad);
        assert_eq!(d, [vec![0], vec![1], vec![2]]);
    }

    #[test]
    fn a_swap_keeps_both_candidates() {
        let (d, bad) = filtered(2, &[vec![(0, 0), (1, 0)], vec![(0, 0), (1, 0)]], true);
        assert!(!bad);
        assert_eq!(d, [vec![0, 1], vec![0, 1]]);
    }

    #[test]
    fn a_mandatory_output_takes_the_only_record_that_can_be_it() {
        // Three launches, three records; the third record can be any, but
        // call 2 can only be the third record.
        let (d, _) = filtered(
            3,
            &[
                vec![(0, 0), (1, 0)],
                vec![(0, 0), (1, 0)],
                vec![(0, 0), (1, 0), (2, 0)],
            ],
            true,
        );
        assert_eq!(d, [vec![0, 1], vec![0, 1], vec![2]]);
    }

    #[test]
    fn outputs_that_may_have_no_record_bound_nothing_but_are_still_taken_once() {
        // Not closed: every output may be missing from the window.
        let (d, bad) = filtered(3, &[vec![(0, 0), (1, 0), (2, 0)]], false);
        assert!(!bad);
        assert_eq!(d, [vec![0, 1, 2]]);
        let (d, _) = filtered(3, &[vec![(0, 0), (1, 0)], vec![(1, 0)]], false);
        assert_eq!(d, [vec![0], vec![1]]);
        // Closed, the same would force the third output's record: there is
        // none, so the window contradicts the rules.
        let (_, bad) = filtered(3, &[vec![(0, 0), (1, 0)], vec![(1, 0)]], true);
        assert!(bad);
    }

    #[test]
    fn components_are_the_strongly_connected_ones() {
        // 0 <-> 1 -> 2 <-> 3, 4 alone.
        let comp = strongly_connected(5, &[(0, 1), (1, 0), (1, 2), (2, 3), (3, 2)]);
        assert_eq!(comp[0], comp[1]);
        assert_eq!(comp[2], comp[3]);
        assert_ne!(comp[1], comp[2]);
        assert!(comp[4] != comp[0] && comp[4] != comp[2]);
    }
}
