//! The assignment problem the rules leave: what each record may still be,
//! and the rules a complete assignment must keep, with a check of an
//! assignment that shares nothing with the solver.

use crate::calls::{CallIndex, Produces};
use crate::evidence::Observations;
use crate::ids::{AttributionId, NodeId};
use crate::joint::Joint;
use crate::rules::time_order::Plan;

pub(super) const NONE: u32 = u32::MAX;

/// A slot's graph key: `None` for eager work.
pub(super) type SlotKey = Option<(Option<AttributionId>, NodeId)>;

/// The window's records and slots as the rules left them.
pub(super) struct Model<'a> {
    pub joint: &'a Joint,
    pub plan: &'a Plan,
    pub start: &'a [u64],
    pub end: &'a [u64],
    /// Records with a dispatch id: kernels and blits, on the device's
    /// clock. Copy-engine copies are only matched.
    pub timed: Vec<bool>,
    /// Per record: its remaining candidates (slots), ascending; empty for
    /// a record outside the problem (rule 1 could not bound its writer).
    pub domain: Vec<Vec<u32>>,
    /// Per slot: the records it may be.
    pub cands: Vec<Vec<u32>>,
    pub slot_call: Vec<u32>,
    pub slot_key: Vec<SlotKey>,
    pub enter: Vec<u64>,
    pub exit: Vec<u64>,
    /// Per stream of the plan: its calls, by EXIT and by ENTER.
    pub by_exit: Vec<Vec<u32>>,
    pub by_enter: Vec<Vec<u32>>,
    /// Per slot: the slots that wait for it.
    pub succs: Vec<Vec<u32>>,
}

impl<'a> Model<'a> {
    pub fn new(
        index: &CallIndex<'_>,
        observations: &'a Observations,
        joint: &'a Joint,
        plan: &'a Plan,
    ) -> Model<'a> {
        let domain: Vec<Vec<u32>> = (0..observations.len() as u32)
            .map(|r| {
                if !joint.bounded[r as usize] {
                    return Vec::new();
                }
                let mut d: Vec<u32> = joint.record_edges(r).map(|e| joint.slot_of(e)).collect();
                d.sort_unstable();
                d.dedup();
                d
            })
            .collect();
        let mut cands = vec![Vec::new(); joint.slots.len()];
        for (r, d) in domain.iter().enumerate() {
            for &s in d {
                cands[s as usize].push(r as u32);
            }
        }
        let slot_key = joint
            .slots
            .iter()
            .map(|s| {
                match (
                    &index.produces[s.call as usize],
                    index.output(s.call, s.k).node,
                ) {
                    (Produces::Graph { graph_id, .. }, Some(node)) => Some((*graph_id, node)),
                    _ => None,
                }
            })
            .collect();
        let mut by_exit: Vec<Vec<u32>> = plan
            .streams
            .iter()
            .map(|s| vec![NONE; s.exits.len()])
            .collect();
        let mut by_enter = by_exit.clone();
        for (c, on) in plan.on_stream.iter().enumerate() {
            if let Some((si, x, e)) = *on {
                by_exit[si as usize][x as usize] = c as u32;
                by_enter[si as usize][e as usize] = c as u32;
            }
        }
        let calls = index.evidence.calls;
        let mut succs = vec![Vec::new(); joint.slots.len()];
        for (c, preds) in plan.preds.iter().enumerate() {
            let Some(preds) = preds else { continue };
            let first = joint.first_slot[c];
            for (k, ps) in preds.iter().enumerate() {
                for &q in ps {
                    succs[(first + q) as usize].push(first + k as u32);
                }
            }
        }
        Model {
            succs,
            joint,
            plan,
            start: observations.start_ns(),
            end: observations.end_ns(),
            timed: (0..observations.len())
                .map(|r| observations.dispatch_id(r).is_some())
                .collect(),
            domain,
            cands,
            slot_call: joint.slots.iter().map(|s| s.call).collect(),
            slot_key,
            enter: calls.iter().map(|c| c.enter_ns).collect(),
            exit: calls.iter().map(|c| c.exit_ns.max(c.enter_ns)).collect(),
            by_exit,
            by_enter,
        }
    }

    pub fn records(&self) -> usize {
        self.domain.len()
    }

    pub fn in_problem(&self, r: u32) -> bool {
        !self.domain[r as usize].is_empty()
    }

    pub fn allows(&self, r: u32, s: u32) -> bool {
        self.domain[r as usize].binary_search(&s).is_ok()
    }

    pub fn mandatory(&self, s: u32) -> bool {
        self.joint.slots[s as usize].mandatory
    }

    pub fn call_slots(&self, c: u32) -> std::ops::Range<u32> {
        self.joint.first_slot[c as usize]..self.joint.first_slot[c as usize + 1]
    }

    /// The slots slot `s` waits for (its node's nearest producing
    /// predecessors, rule 10's dependencies).
    pub fn preds(&self, s: u32) -> impl Iterator<Item = u32> + '_ {
        let c = self.slot_call[s as usize];
        let first = self.call_slots(c).start;
        self.plan.preds[c as usize]
            .as_deref()
            .map_or(&[][..], |p| p[(s - first) as usize].as_slice())
            .iter()
            .map(move |&q| first + q)
    }

    /// Call `c`'s stream (by the plan's index) and how many of its calls
    /// come before and after `c`: those in `by_exit` before the position
    /// returned before `c` entered, those in `by_enter` from the other
    /// position on entered after it returned.
    pub fn stream_sides(&self, c: u32) -> Option<(usize, usize, usize)> {
        let (si, _, _) = self.plan.on_stream[c as usize]?;
        let s = &self.plan.streams[si as usize];
        let before = s.exits.partition_point(|&x| x < self.enter[c as usize]);
        let after = s.enters.partition_point(|&x| x <= self.exit[c as usize]);
        Some((si as usize, before, after))
    }

    /// The calls record `r` may be part of.
    pub fn calls_of(&self, r: u32) -> Vec<u32> {
        let mut c: Vec<u32> = self.domain[r as usize]
            .iter()
            .map(|&s| self.slot_call[s as usize])
            .collect();
        c.dedup();
        c
    }
}

/// Does `assignment` (per record its slot, `NONE` outside the problem)
/// satisfy every rule: each record of the problem on one of its
/// candidates, no slot taken twice, every mandatory slot taken, and the
/// time rules (dependencies, stream order) kept by its timed records?
pub(super) fn consistent(m: &Model<'_>, assignment: &[u32]) -> bool {
    let mut taken = vec![NONE; m.slot_call.len()];
    for r in 0..m.records() as u32 {
        if !m.in_problem(r) {
            continue;
        }
        let s = assignment[r as usize];
        if s == NONE || !m.allows(r, s) || taken[s as usize] != NONE {
            return false;
        }
        taken[s as usize] = r;
    }
    if (0..m.slot_call.len()).any(|s| m.mandatory(s as u32) && taken[s] == NONE) {
        return false;
    }
    let timed = |r: u32| r != NONE && m.timed[r as usize];
    let mut hi = vec![0u64; m.enter.len()];
    let mut lo = vec![u64::MAX; m.enter.len()];
    for (s, &r) in taken.iter().enumerate() {
        if !timed(r) {
            continue;
        }
        let c = m.slot_call[s] as usize;
        hi[c] = hi[c].max(m.end[r as usize]);
        lo[c] = lo[c].min(m.start[r as usize]);
        for p in m.preds(s as u32) {
            let y = taken[p as usize];
            if timed(y) && m.start[r as usize] < m.end[y as usize] {
                return false;
            }
        }
    }
    // Stream order: every call's work starts after that of the calls that
    // returned before it entered ended.
    for (by_exit, by_enter) in m.by_exit.iter().zip(&m.by_enter) {
        let mut latest = 0u64;
        let mut i = 0;
        for &c in by_enter {
            while i < by_exit.len() && m.exit[by_exit[i] as usize] < m.enter[c as usize] {
                latest = latest.max(hi[by_exit[i] as usize]);
                i += 1;
            }
            if lo[c as usize] < latest {
                return false;
            }
        }
    }
    true
}
