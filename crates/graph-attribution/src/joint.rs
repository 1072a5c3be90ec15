//! The joint assignment: what every consistent assignment of a window's
//! records to its calls' outputs agrees on.
//!
//! Rules 1 to 5 decide one record, or one thread's records, at a time. Where
//! many threads launch graphs built from the same kernels, each record has
//! many candidates (rule 1) and none of those rules can pick one, although
//! the records together often leave only one possibility: every output of a
//! complete window's calls is exactly one of its records, a launch's nodes
//! run after the nodes they wait for, the work of a stream runs in the order
//! it was enqueued, and a packet is processed after its writer entered its
//! call.
//!
//! So the records' candidates (rule 1, narrowed by whatever rules 2 to 5
//! proved) are *domains*, and three rules remove from them what no
//! consistent assignment can contain, until nothing changes:
//!
//! 8. **Processing order** (`rules::processing_order`): a record's writer
//!    entered its call before the record was processed, which was before
//!    every call that processed a later dispatch id returned.
//! 9. **Exact cover** (`rules::exact_cover`): records and outputs of one
//!    kind are matched one to one; an edge in no such matching is removed
//!    (Régin's all-different filtering, with outputs that may have no record
//!    in the window).
//! 10. **Time order** (`rules::time_order`): a node starts after the nodes
//!     it waits for ended, and a call's work after the work of every
//!     earlier call on its stream ended.
//!
//! Each removal holds in every assignment that satisfies the rules, so the
//! truth (which satisfies them when their assumptions hold) survives; a
//! record whose remaining candidates all name one node of one exec has that
//! key in every consistent assignment, and one whose candidates are all one
//! call has that link. Stopping early (the round budget) only leaves the
//! domains larger: fewer answers, never a wrong one.
//!
//! If the rules leave a record no candidate, or a kind's records and outputs
//! cannot be matched, an assumption failed in this window: nothing is
//! decided from the domains, and every record of the kinds involved is
//! withheld (`Reason::Contradiction`), whatever earlier rules said.

use std::collections::HashSet;

use crate::ambiguity::{self, Answer};
use crate::assumptions::Assumptions;
use crate::calls::{CallIndex, Produces};
use crate::evidence::Observations;
use crate::ids::{AttributionId, GraphKey, NodeId};
use crate::rules;
use crate::rules::candidates::{Candidates, Slot};
use crate::verdict::{KeyProof, KeyVerdict, LinkProof, LinkVerdict, Reason};
use crate::work::{MatchKey, Output};

/// Propagation rounds before the rules stop (each round is near-linear in
/// the number of candidate edges).
const MAX_ROUNDS: usize = 50;

/// Windows with more candidate edges than this are not searched (about 17
/// bytes each while the rules run).
const MAX_EDGES: usize = 4_000_000;

/// One output of one call, as the rules see it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SlotInfo {
    pub call: u32,
    /// Index into the call's outputs.
    pub k: u32,
    /// The output certainly produced exactly one record of this window
    /// (`Joint::new` says when).
    pub mandatory: bool,
}

/// The domains: which records each output may be, and the other way round.
pub(crate) struct Joint {
    pub slots: Vec<SlotInfo>,
    /// Call -> its first slot id (slot ids of call c are
    /// `first_slot[c]..first_slot[c + 1]`).
    pub first_slot: Vec<u32>,
    /// Per record: its writer is among its candidates (rule 1 bounded it).
    pub bounded: Vec<bool>,
    /// Per slot: an optional output that every matching the rules allow
    /// gives one of its kind's records (rule 9 found it), so it bounds
    /// others as a mandatory one does.
    pub taken: Vec<bool>,
    edge_record: Vec<u32>,
    edge_slot: Vec<u32>,
    alive: Vec<bool>,
    record_edges: Vec<Vec<u32>>,
    slot_edges: Vec<Vec<u32>>,
    removed: usize,
    /// Records left without a candidate, or whose kind could not be matched.
    pub contradicted: HashSet<MatchKey>,
}

impl Joint {
    /// Domains from rule 1's candidates, narrowed by what `keys` and `links`
    /// already say. An output is mandatory when the window is closed and
    /// complete (every record its calls' packets made is here, processed by
    /// one of its calls), it is a program kernel (a launch or a kernel node
    /// is one dispatch; the runtime's fills and copies may run on the host or
    /// the copy engine instead, rocblit.cpp), and every record of its kind
    /// has a bounded writer.
    pub(crate) fn new(
        index: &CallIndex<'_>,
        observations: &Observations,
        candidates: &Candidates,
        keys: &[KeyVerdict],
        links: &[LinkVerdict],
    ) -> Joint {
        let calls = index.produces.len();
        let mut first_slot = Vec::with_capacity(calls + 1);
        let mut slots = Vec::new();
        for call in 0..calls as u32 {
            first_slot.push(slots.len() as u32);
            for k in 0..index.outputs(call).len() {
                slots.push(SlotInfo {
                    call,
                    k: k as u32,
                    mandatory: false,
                });
            }
        }
        first_slot.push(slots.len() as u32);
        let unbounded_kinds: HashSet<MatchKey> = observations
            .iter()
            .enumerate()
            .filter(|&(r, _)| candidates.get(r).is_err())
            .map(|(_, o)| MatchKey::of(index.evidence.observed(&o)))
            .collect();
        let closed = index.evidence.complete && index.evidence.calls_complete && !index.has_edges();
        for slot in &mut slots {
            let output = index.output(slot.call, slot.k).output;
            slot.mandatory = closed
                && matches!(output, Output::Kernel(_))
                && output.keys().all(|k| !unbounded_kinds.contains(&k));
        }
        let mut joint = Joint {
            taken: vec![false; slots.len()],
            record_edges: vec![Vec::new(); observations.len()],
            slot_edges: vec![Vec::new(); slots.len()],
            slots,
            first_slot,
            bounded: (0..candidates.len())
                .map(|r| candidates.get(r).is_ok())
                .collect(),
            edge_record: Vec::new(),
            edge_slot: Vec::new(),
            alive: Vec::new(),
            removed: 0,
            contradicted: HashSet::new(),
        };
        for r in 0..candidates.len() {
            let Ok(c) = candidates.get(r) else { continue };
            for &(call, k) in c {
                if !agrees(index, (call, k), &keys[r], &links[r]) {
                    continue;
                }
                let s = joint.first_slot[call as usize] + k;
                let e = joint.edge_record.len() as u32;
                joint.edge_record.push(r as u32);
                joint.edge_slot.push(s);
                joint.alive.push(true);
                joint.record_edges[r].push(e);
                joint.slot_edges[s as usize].push(e);
            }
        }
        joint
    }

    pub(crate) fn edge_count(&self) -> usize {
        self.edge_record.len()
    }

    pub(crate) fn record_of(&self, edge: u32) -> u32 {
        self.edge_record[edge as usize]
    }

    pub(crate) fn slot_of(&self, edge: u32) -> u32 {
        self.edge_slot[edge as usize]
    }

    /// The live edges of record `r`.
    pub(crate) fn record_edges(&self, r: u32) -> impl Iterator<Item = u32> + '_ {
        self.record_edges[r as usize]
            .iter()
            .copied()
            .filter(|&e| self.alive[e as usize])
    }

    /// Record `r`'s edges, dead ones included (check `is_alive`).
    pub(crate) fn record_edge_list(&self, r: u32) -> &[u32] {
        &self.record_edges[r as usize]
    }

    /// The live edges of slot `s`.
    pub(crate) fn slot_edges(&self, s: u32) -> impl Iterator<Item = u32> + '_ {
        self.slot_edges[s as usize]
            .iter()
            .copied()
            .filter(|&e| self.alive[e as usize])
    }

    pub(crate) fn is_alive(&self, edge: u32) -> bool {
        self.alive[edge as usize]
    }

    /// Removes an edge no consistent assignment contains.
    pub(crate) fn remove(&mut self, edge: u32) {
        if std::mem::replace(&mut self.alive[edge as usize], false) {
            self.removed += 1;
        }
    }

    /// Edges removed so far.
    pub(crate) fn removed(&self) -> usize {
        self.removed
    }

    /// Drops dead edges from the adjacency lists.
    fn compact(&mut self) {
        let alive = &self.alive;
        for list in self
            .record_edges
            .iter_mut()
            .chain(self.slot_edges.iter_mut())
        {
            list.retain(|&e| alive[e as usize]);
        }
    }

    /// Is slot `s` certainly some record's: mandatory, or found taken?
    pub(crate) fn certainly_taken(&self, s: u32) -> bool {
        self.slots[s as usize].mandatory || self.taken[s as usize]
    }

    /// The kind of every slot that can only be one kind of record.
    pub(crate) fn slot_kind(&self, index: &CallIndex<'_>, s: u32) -> Option<MatchKey> {
        let slot = self.slots[s as usize];
        let output = index.output(slot.call, slot.k).output;
        let mut keys = output.keys();
        let first = keys.next();
        if keys.next().is_some() {
            None
        } else {
            first
        }
    }
}

/// Does candidate `slot` agree with what earlier rules proved?
fn agrees(index: &CallIndex<'_>, (call, k): Slot, key: &KeyVerdict, link: &LinkVerdict) -> bool {
    let node = index.output(call, k).node;
    let key_ok = match *key {
        KeyVerdict::Key { key, .. } => {
            node == Some(key.node)
                && matches!(
                    index.produces[call as usize],
                    Produces::Graph { graph_id: Some(g), .. } if g == key.graph_id
                )
        }
        KeyVerdict::NotGraphed => node.is_none(),
        KeyVerdict::Withheld(_) => true,
    };
    let link_ok = match link.correlation_id() {
        Some(c) => index.call(call).correlation_id == c,
        None => true,
    };
    key_ok && link_ok
}

/// Reasons the joint assignment may overturn: the candidates were all
/// known, only too many.
fn open_key(key: &KeyVerdict) -> bool {
    matches!(
        key,
        KeyVerdict::Withheld(Reason::Ambiguous | Reason::RepeatedKernel)
    )
}

fn open_link(link: &LinkVerdict) -> bool {
    matches!(link, LinkVerdict::Unlinked(Reason::SeveralCalls))
}

/// What the rules did to one window.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct JointOutcome {
    pub keyed: usize,
    pub linked: usize,
    /// Records withheld because the rules contradicted the evidence.
    pub contradicted: usize,
    /// Keys and links withheld with a second consistent assignment found.
    pub ambiguous_keys: usize,
    pub ambiguous_links: usize,
}

/// Rules 8 to 10 over the window, then the answers every consistent
/// assignment agrees on.
pub(crate) fn apply(
    index: &CallIndex<'_>,
    observations: &Observations,
    candidates: &Candidates,
    keys: &mut [KeyVerdict],
    links: &mut [LinkVerdict],
    assumptions: Assumptions,
) -> JointOutcome {
    let mut outcome = JointOutcome::default();
    if !index.evidence.calls_complete
        || !keys
            .iter()
            .zip(links.iter())
            .any(|(k, l)| open_key(k) || open_link(l))
    {
        return outcome;
    }
    let mut joint = Joint::new(index, observations, candidates, keys, links);
    if joint.edge_count() > MAX_EDGES {
        return outcome;
    }
    if !assumptions.one_dispatch_per_kernel {
        for slot in &mut joint.slots {
            slot.mandatory = false;
        }
    }
    if assumptions.processing_order {
        rules::processing_order::prune(index, observations, &mut joint);
    }
    let plan = rules::time_order::Plan::new(index, &joint, assumptions);
    let mut matching = rules::exact_cover::Matching::new(observations.len(), joint.slots.len());
    let mut rounds = 0;
    let e0 = joint.edge_count();
    for _ in 0..MAX_ROUNDS {
        rounds += 1;
        let before = joint.removed();
        rules::time_order::prune(index, observations, &mut joint, &plan);
        joint.compact();
        rules::exact_cover::prune(index, observations, &mut joint, &mut matching);
        joint.compact();
        if !joint.contradicted.is_empty() || joint.removed() == before {
            break;
        }
    }
    log::debug!(
        "kineto-rocm: joint assignment: {e0} candidate edges, {} removed in {rounds} rounds",
        joint.removed()
    );
    for (r, o) in observations.iter().enumerate() {
        if joint.bounded[r] && joint.record_edges(r as u32).next().is_none() {
            joint
                .contradicted
                .insert(MatchKey::of(index.evidence.observed(&o)));
        }
    }
    if !joint.contradicted.is_empty() {
        for (r, o) in observations.iter().enumerate() {
            if joint
                .contradicted
                .contains(&MatchKey::of(index.evidence.observed(&o)))
            {
                keys[r] = KeyVerdict::Withheld(Reason::Contradiction);
                links[r] = LinkVerdict::Unlinked(Reason::Contradiction);
                outcome.contradicted += 1;
            }
        }
        return outcome;
    }
    for r in 0..observations.len() {
        if !joint.bounded[r] || !(open_key(&keys[r]) || open_link(&links[r])) {
            continue;
        }
        let (key, call) = agreement(index, &joint, r as u32);
        if open_key(&keys[r]) {
            settle_key(key, &mut keys[r], &mut outcome);
        }
        if open_link(&links[r]) {
            if let Some(call) = call {
                settle_link(index, call, &mut links[r], &mut outcome);
            }
        }
    }
    // What is still open: provably ambiguous where a second consistent
    // assignment gives another answer, decided where none can, undecided
    // otherwise (`crate::ambiguity`).
    let still_key: Vec<bool> = keys.iter().map(open_key).collect();
    let still_link: Vec<bool> = links.iter().map(open_link).collect();
    let classified =
        ambiguity::classify(index, observations, &joint, &plan, &still_key, &still_link);
    for r in 0..observations.len() {
        if still_key[r] {
            match classified.key[r] {
                Answer::Ambiguous => {
                    keys[r] = KeyVerdict::Withheld(Reason::ProvablyAmbiguous);
                    outcome.ambiguous_keys += 1;
                }
                Answer::Decided(s) => {
                    let key = slot_agreement(index, joint.slots[s as usize]);
                    settle_key(key, &mut keys[r], &mut outcome);
                }
                Answer::Undecided => {}
            }
        }
        if still_link[r] {
            match classified.link[r] {
                Answer::Ambiguous => {
                    links[r] = LinkVerdict::Unlinked(Reason::ProvablyAmbiguous);
                    outcome.ambiguous_links += 1;
                }
                Answer::Decided(s) => {
                    let call = joint.slots[s as usize].call;
                    settle_link(index, call, &mut links[r], &mut outcome);
                }
                Answer::Undecided => {}
            }
        }
    }
    outcome
}

/// What a record's remaining candidates agree on.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Agreement {
    Node(Option<AttributionId>, NodeId),
    Eager,
    Several,
}

/// The verdict every consistent assignment gives a record's key.
fn settle_key(key: Agreement, verdict: &mut KeyVerdict, outcome: &mut JointOutcome) {
    match key {
        Agreement::Node(Some(graph_id), node) => {
            *verdict = KeyVerdict::Key {
                key: GraphKey::new(graph_id, node),
                proof: KeyProof::OnlyConsistentAssignment,
            };
            outcome.keyed += 1;
        }
        Agreement::Node(None, _) => *verdict = KeyVerdict::Withheld(Reason::ExecHasNoId),
        Agreement::Eager => {
            *verdict = KeyVerdict::NotGraphed;
            outcome.keyed += 1;
        }
        Agreement::Several => {}
    }
}

/// The link every consistent assignment gives a record: `call`'s.
fn settle_link(
    index: &CallIndex<'_>,
    call: u32,
    verdict: &mut LinkVerdict,
    outcome: &mut JointOutcome,
) {
    *verdict = LinkVerdict::Linked {
        correlation_id: index.call(call).correlation_id,
        proof: LinkProof::OnlyConsistentAssignment,
    };
    outcome.linked += 1;
}

/// The key one output gives its record.
fn slot_agreement(index: &CallIndex<'_>, slot: SlotInfo) -> Agreement {
    match (
        &index.produces[slot.call as usize],
        index.output(slot.call, slot.k).node,
    ) {
        (Produces::Graph { graph_id, .. }, Some(node)) => Agreement::Node(*graph_id, node),
        (_, None) => Agreement::Eager,
        // A node of work that is not a graph launch names no key.
        (_, Some(_)) => Agreement::Several,
    }
}

/// The key and the call every remaining candidate of record `r` names.
fn agreement(index: &CallIndex<'_>, joint: &Joint, r: u32) -> (Agreement, Option<u32>) {
    let mut key: Option<Agreement> = None;
    let mut calls: Option<Option<u32>> = None;
    for e in joint.record_edges(r) {
        let slot = joint.slots[joint.slot_of(e) as usize];
        let here = slot_agreement(index, slot);
        key = match key {
            None => Some(here),
            Some(k) if k == here => Some(k),
            _ => Some(Agreement::Several),
        };
        calls = match calls {
            None => Some(Some(slot.call)),
            Some(Some(c)) if c == slot.call => Some(Some(c)),
            _ => Some(None),
        };
    }
    (key.unwrap_or(Agreement::Several), calls.flatten())
}

/// Small windows for the rules' unit tests.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;
    pub(crate) use crate::evidence::testing::{kernel_shown, KERNELS_SHOWN};
    use crate::evidence::{Call, CallWork, Observation, WindowEvidence};
    use crate::structure::{ExecContents, NodeSpec, NodeWork};
    use crate::work::HostKernel;
    use std::collections::HashMap;
    use std::sync::Arc;

    /// Host stub `0xa0 + k` is kernel id `k`, launched as 64 x 64.
    pub fn kernel(k: u64) -> HostKernel {
        HostKernel::from_blocks(0xa0 + k, [1, 1, 1], [64, 1, 1])
    }

    pub fn kernels() -> HashMap<u64, u64> {
        (0..16).map(|k| (0xa0 + k, k)).collect()
    }

    /// An eager launch of kernel `k`.
    pub fn eager(corr: u64, thread: u64, span: (u64, u64), stream: u64, k: u64) -> Call {
        Call {
            correlation_id: corr,
            thread_id: thread,
            enter_ns: span.0,
            exit_ns: span.1,
            stream: Some(stream),
            work: CallWork::Kernel(kernel(k)),
        }
    }

    /// A graph launch of an exec whose nodes run `nodes` (kernel, deps).
    pub fn launch(
        corr: u64,
        thread: u64,
        span: (u64, u64),
        stream: u64,
        graph_id: u32,
        nodes: &[(u64, &[u32])],
    ) -> Call {
        let exec = ExecContents {
            nodes: nodes
                .iter()
                .map(|&(k, deps)| NodeSpec {
                    work: NodeWork::Kernel(kernel(k)),
                    deps: deps.into(),
                    detail: Default::default(),
                })
                .collect(),
            complete: true,
        };
        Call {
            correlation_id: corr,
            thread_id: thread,
            enter_ns: span.0,
            exit_ns: span.1,
            stream: Some(stream),
            work: CallWork::Graph {
                graph_id: AttributionId::new(graph_id),
                exec: Arc::new(exec),
            },
        }
    }

    /// A record of kernel `k`, processed in call `corr`, run at `times`.
    pub fn record(corr: u64, k: u64, dispatch_id: u64, times: (u64, u64)) -> Observation {
        Observation {
            correlation_id: corr,
            observed: kernel_shown(k),
            queue_id: 1,
            dispatch_id: Some(dispatch_id),
            start_ns: times.0,
            end_ns: times.1,
        }
    }

    /// Runs `f` on the window's index and on domains built from
    /// `candidates` (call index, output index), nothing proven yet.
    /// `closed`: the window is complete and has no edge.
    pub fn with_joint<T>(
        calls: &[Call],
        observations: &[Observation],
        candidates: &[Vec<(u32, u32)>],
        closed: bool,
        f: impl FnOnce(&CallIndex<'_>, &mut Joint) -> T,
    ) -> T {
        let kernels = kernels();
        let observations: Observations = observations.iter().copied().collect();
        let observations = &observations;
        let evidence = WindowEvidence {
            complete: closed,
            ..WindowEvidence::whole(observations, &KERNELS_SHOWN, calls, &kernels, u64::MAX / 2)
        };
        let index = CallIndex::new(&evidence, &|_| false);
        let candidates =
            Candidates::from_lists(&candidates.iter().map(|c| Ok(c.clone())).collect::<Vec<_>>());
        let keys = vec![KeyVerdict::Withheld(Reason::Ambiguous); observations.len()];
        let links = vec![LinkVerdict::Unlinked(Reason::SeveralCalls); observations.len()];
        let mut joint = Joint::new(&index, observations, &candidates, &keys, &links);
        f(&index, &mut joint)
    }

    /// The calls record `r` may still come from.
    pub fn calls_of(joint: &Joint, r: u32) -> Vec<u32> {
        let mut out: Vec<u32> = joint
            .record_edges(r)
            .map(|e| joint.slots[joint.slot_of(e) as usize].call)
            .collect();
        out.sort_unstable();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::testing::*;
    use super::*;
    use crate::evidence::{Call, Observation};

    #[test]
    fn only_kernels_of_a_closed_window_are_mandatory() {
        let calls = [
            eager(1, 1, (0, 10), 1, 3),
            launch(2, 2, (0, 10), 2, 5, &[(3, &[])]),
        ];
        let obs = [record(1, 3, 1, (20, 30)), record(2, 3, 2, (40, 50))];
        let cands = [vec![(0, 0), (1, 0)], vec![(0, 0), (1, 0)]];
        with_joint(&calls, &obs, &cands, true, |_, joint| {
            assert!(joint.slots.iter().all(|s| s.mandatory));
            assert_eq!(joint.edge_count(), 4);
        });
        with_joint(&calls, &obs, &cands, false, |_, joint| {
            assert!(
                joint.slots.iter().all(|s| !s.mandatory),
                "records may be missing"
            );
        });
    }

    #[test]
    fn what_earlier_rules_proved_narrows_the_domains() {
        let calls = [
            eager(1, 1, (0, 10), 1, 3),
            launch(2, 2, (0, 10), 2, 5, &[(3, &[])]),
        ];
        let obs: Observations = [record(1, 3, 1, (20, 30))].into_iter().collect();
        let kernels = kernels();
        let evidence =
            crate::evidence::WindowEvidence::whole(&obs, &KERNELS_SHOWN, &calls, &kernels, 1000);
        let index = CallIndex::new(&evidence, &|_| false);
        let cands = Candidates::from_lists(&[Ok(vec![(0, 0), (1, 0)])]);
        let joint = Joint::new(
            &index,
            &obs,
            &cands,
            &[KeyVerdict::NotGraphed],
            &[LinkVerdict::Unlinked(Reason::SeveralCalls)],
        );
        assert_eq!(testing::calls_of(&joint, 0), [0]);
        let joint = Joint::new(
            &index,
            &obs,
            &cands,
            &[KeyVerdict::Withheld(Reason::Ambiguous)],
            &[LinkVerdict::Linked {
                correlation_id: 2,
                proof: LinkProof::OnlyPossibleCall,
            }],
        );
        assert_eq!(testing::calls_of(&joint, 0), [1]);
    }

    fn run(
        calls: &[Call],
        obs: &[Observation],
        cands: &[Vec<(u32, u32)>],
    ) -> (Vec<KeyVerdict>, Vec<LinkVerdict>, JointOutcome) {
        let kernels = kernels();
        let obs: Observations = obs.iter().copied().collect();
        let obs = &obs;
        let evidence =
            crate::evidence::WindowEvidence::whole(obs, &KERNELS_SHOWN, calls, &kernels, 1000);
        let index = CallIndex::new(&evidence, &|_| false);
        let candidates =
            Candidates::from_lists(&cands.iter().map(|c| Ok(c.clone())).collect::<Vec<_>>());
        let mut keys = vec![KeyVerdict::Withheld(Reason::Ambiguous); obs.len()];
        let mut links = vec![LinkVerdict::Unlinked(Reason::SeveralCalls); obs.len()];
        let outcome = apply(
            &index,
            obs,
            &candidates,
            &mut keys,
            &mut links,
            Assumptions::ALL,
        );
        (keys, links, outcome)
    }

    fn key(graph_id: u32, node: u32) -> Option<GraphKey> {
        Some(GraphKey::new(
            AttributionId::new(graph_id).unwrap(),
            NodeId(node),
        ))
    }

    /// Two threads launch graphs sharing kernel A at once (thread 1: A then
    /// B, thread 2: A then C); each A record could be either launch's. But
    /// a launch's A ends before its other node starts: the A at 200 ended
    /// after thread 1's B started at 110, so it is thread 2's.
    #[test]
    fn shared_kernels_are_told_apart_by_what_ran_after_them() {
        let calls = [
            launch(1, 1, (0, 50), 1, 1, &[(1, &[]), (2, &[0])]),
            launch(2, 2, (0, 50), 2, 2, &[(1, &[]), (3, &[0])]),
        ];
        let obs = [
            record(1, 1, 1, (100, 110)),
            record(1, 2, 2, (110, 120)),
            record(2, 1, 3, (200, 210)),
            record(2, 3, 4, (210, 220)),
        ];
        let cands = [
            vec![(0, 0), (1, 0)],
            vec![(0, 1)],
            vec![(0, 0), (1, 0)],
            vec![(1, 1)],
        ];
        let (keys, links, outcome) = run(&calls, &obs, &cands);
        assert_eq!(outcome.contradicted, 0);
        assert_eq!(keys[0].key(), key(1, 0));
        assert_eq!(keys[2].key(), key(2, 0));
        assert_eq!(links[0].correlation_id(), Some(1));
        assert_eq!(links[2].correlation_id(), Some(2));
        assert_eq!(keys[1].key(), key(1, 1));
        assert_eq!(keys[3].key(), key(2, 1));
    }

    /// The same launches with both A records before either B or C: both
    /// assignments fit every rule, so neither is emitted, and the trace
    /// says the evidence cannot decide.
    #[test]
    fn a_swap_that_fits_every_rule_is_withheld() {
        let calls = [
            launch(1, 1, (0, 50), 1, 1, &[(1, &[]), (2, &[0])]),
            launch(2, 2, (0, 50), 2, 2, &[(1, &[]), (3, &[0])]),
        ];
        let obs = [
            record(1, 1, 1, (100, 110)),
            record(2, 1, 2, (110, 120)),
            record(1, 2, 3, (200, 210)),
            record(2, 3, 4, (210, 220)),
        ];
        let cands = [
            vec![(0, 0), (1, 0)],
            vec![(0, 0), (1, 0)],
            vec![(0, 1)],
            vec![(1, 1)],
        ];
        let (keys, links, outcome) = run(&calls, &obs, &cands);
        assert_eq!(
            (outcome.keyed, outcome.contradicted),
            (2, 0),
            "only B and C"
        );
        for r in [0, 1] {
            assert_eq!(keys[r], KeyVerdict::Withheld(Reason::ProvablyAmbiguous));
            assert_eq!(links[r], LinkVerdict::Unlinked(Reason::ProvablyAmbiguous));
        }
    }

    /// A window whose records cannot all be matched (a launch's kernel
    /// missing): nothing of that kind is trusted.
    #[test]
    fn a_contradiction_withholds_the_kind() {
        let calls = [
            launch(1, 1, (0, 50), 1, 1, &[(1, &[])]),
            launch(2, 2, (0, 50), 2, 2, &[(1, &[])]),
            eager(3, 3, (0, 50), 3, 4),
        ];
        let obs = [record(1, 1, 1, (100, 110)), record(3, 4, 2, (100, 110))];
        let cands = [vec![(0, 0), (1, 0)], vec![(2, 0)]];
        let (keys, links, outcome) = run(&calls, &obs, &cands);
        assert_eq!(outcome.contradicted, 1);
        assert_eq!(keys[0], KeyVerdict::Withheld(Reason::Contradiction));
        assert_eq!(links[0], LinkVerdict::Unlinked(Reason::Contradiction));
        assert_eq!(
            keys[1],
            KeyVerdict::Withheld(Reason::Ambiguous),
            "another kind"
        );
    }
}
