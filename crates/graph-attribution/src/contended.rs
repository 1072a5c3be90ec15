//! Learning and repairing in windows where threads contend for hardware
//! queues, from the order in which each queue ran its packets.
//!
//! The tracker's claims cannot be trusted in such a window (a thread that
//! writes another thread's packets credits them to its own launch, and a
//! perfect exchange between two threads looks exactly like two clean
//! launches), so nothing here reads the claimed keys. It reads only what the
//! runtime and the SDK say independently of the tracker.
//!
//! # Assumptions about HIP, and why each holds
//!
//! - **A1, whole runs in submission order.** A graph launch appends all of
//!   its kernel packets to its stream's hardware queue as one contiguous
//!   run, in the exec's fixed submission order, during its hipGraphLaunch
//!   call (after ENTER, before EXIT), and to the queue the SDK's HIP_GRAPH
//!   record names. In the simulator the packets are pushed to the queue's
//!   pending FIFO under one lock inside the call; on HIP the launch's
//!   commands are queued on the stream by the calling thread inside
//!   hipGraphLaunch, in the order instantiate fixed, and whichever thread
//!   holds the queue writes pending commands in queue order, so another
//!   launch's commands cannot land between them.
//! - **A2, FIFO execution.** Per hardware queue, packets start in the order
//!   they were written, so sorting a queue's dispatches by start time gives
//!   the packet order. AQL packet processors launch packets in queue order;
//!   equal start times make the order unknown, so such a queue is skipped.
//! - **A3, writes happen inside the writer's API call.** A dispatch record's
//!   correlation id names the API call during which its packet was written
//!   (the SDK's queue intercept runs on the writing thread and takes that
//!   thread's current correlation id), so the packet was written before that
//!   call's EXIT. The simulator does exactly this.
//! - **A4, the SDK's counts.** The HIP_GRAPH record gives each launch's
//!   kernel count and queue, and the caller only sets
//!   [`WindowEvidence::dispatches_complete`] when no dispatch record of the
//!   window's launches is missing. Then a queue whose kernel records number
//!   exactly the sum of its launches' counts ran no other kernel (an
//!   ungraphed kernel there would need a graph dispatch to be missing).
//! - All timestamps of API calls share one clock. Only strict inequalities
//!   are used, so equal timestamps never order anything.
//!
//! # What follows
//!
//! On an eligible queue (no copies in the window, every launch on the queue
//! has the same kernel count k, the counts add up, start times distinct),
//! the dispatches in start order split into runs of k, and by A1 and A2 the
//! p-th run is the packets of the p-th launch to append to the queue. Which
//! launch that is, is bounded by necessary conditions only:
//!
//! - launch Y appended before X if Y's EXIT precedes X's ENTER, so X's
//!   position is at least the number of such Y, and at most n-1 minus the
//!   number of launches that ENTERed after X's EXIT;
//! - the launch at position p appended before the packets of every run
//!   q >= p were written, so (A3) before the EXIT of every call that wrote
//!   one of them: its ENTER precedes the smallest such EXIT.
//!
//! The true launch of each run always satisfies these, so the set of
//! *candidates* of a run always contains it. An exec E runs one fixed
//! sequence S_E (A1), so the hypothesis "S_E = sigma" is only possible if
//! E's launches can be matched one-to-one to runs of sigma inside their
//! candidate windows, together with the launches of every exec already
//! proven to run sigma (interval-to-point matching, decided greedily, which
//! is exact). Hypotheses are removed until nothing changes; the truth is
//! never removed, so an exec left with exactly one possible sequence runs
//! that sequence. Two execs with identical sequences both end with it, which
//! is true and harmless: the key of a run is then decided per run, below.
//!
//! A run's key is emitted only when every candidate launch that could have
//! produced it (after dropping candidates whose exec cannot run its
//! sequence) belongs to one exec whose trusted sequence is that run; its
//! ordinals are then the run's positions. It is linked to a launch only when
//! exactly one candidate is left. A launch whose exec the tracker did not
//! record is a candidate that blocks both.
//!
//! When two assignments of sequences to execs, or of runs to launches, are
//! consistent with these conditions, nothing is concluded.

use std::collections::{BTreeSet, HashMap, HashSet};

use crate::evidence::{DispatchKind, NodeSignature, WindowEvidence};
use crate::ids::AttributionId;
use crate::knowledge::ExecKnowledge;

/// Candidate windows larger than this in total are not enumerated (the
/// queue is skipped), which bounds the work on huge, overlapping windows.
const CANDIDATE_BUDGET: usize = 1 << 22;

#[derive(Clone, Copy, Debug)]
struct Launch {
    correlation_id: u64,
    /// `None`: the tracker has no exec for it; it may be any exec.
    exec: Option<AttributionId>,
    /// First and last run it can be (indices into `Contended::runs`).
    lo: usize,
    hi: usize,
}

/// One run of k dispatches on an eligible queue.
#[derive(Clone, Debug)]
pub(crate) struct Run {
    /// Observation indices, in packet order (ordinal order).
    pub members: Vec<usize>,
    sequence: usize,
    /// Launch indices that may have produced it.
    candidates: Vec<usize>,
}

/// What the contended analysis concluded for one window.
#[derive(Debug, Default)]
pub(crate) struct Contended {
    launches: Vec<Launch>,
    runs: Vec<Run>,
    sequences: Vec<Vec<NodeSignature>>,
    /// Per exec with a launch on an eligible queue: the sequences (ids) it
    /// may run. Sound bound: its true sequence is among them.
    possible: HashMap<AttributionId, Vec<usize>>,
    /// Observation index -> its run.
    run_of: HashMap<usize, usize>,
}

/// A key the position evidence proves for one dispatch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PositionProof {
    pub exec: AttributionId,
    pub ordinal: u32,
    /// The launch, when exactly one candidate is left.
    pub launch: Option<u64>,
}

impl Contended {
    /// The analysis, or `None` where its preconditions fail or the evidence
    /// contradicts its assumptions (then nothing may be concluded from it).
    pub(crate) fn analyse(
        evidence: &WindowEvidence<'_>,
        knowledge: &ExecKnowledge,
    ) -> Option<Contended> {
        if !evidence.dispatches_complete || evidence.launches_lost > 0 {
            return None;
        }
        let sdk = evidence.sdk_launches?;
        let observations = evidence.observations;
        // Copy nodes take ordinals but have no queue in the evidence.
        if observations.iter().any(|o| o.kind == DispatchKind::Copy) {
            return None;
        }
        let mut spans: HashMap<u64, (u64, u64)> = HashMap::new();
        for span in evidence.api_spans {
            if span.exit_ns < span.enter_ns
                || spans
                    .insert(span.correlation_id, (span.enter_ns, span.exit_ns))
                    .is_some()
            {
                return None;
            }
        }
        let mut execs: HashMap<u64, Option<AttributionId>> = HashMap::new();
        for record in evidence.launches {
            if execs
                .insert(record.correlation_id, record.attribution)
                .is_some()
            {
                return None;
            }
        }
        // Every launch of the window must be on a known queue, or a queue's
        // set of launches is not known.
        let mut by_queue: HashMap<u64, Vec<(u64, u32)>> = HashMap::new();
        let mut sdk_seen: HashSet<u64> = HashSet::new();
        for launch in sdk {
            if !sdk_seen.insert(launch.correlation_id) {
                return None;
            }
            by_queue
                .entry(launch.queue_id)
                .or_default()
                .push((launch.correlation_id, launch.kernel_dispatch_count));
        }
        if execs.keys().any(|corr| !sdk_seen.contains(corr)) {
            return None;
        }
        let mut kernels_by_queue: HashMap<u64, Vec<usize>> = HashMap::new();
        for (i, o) in observations.iter().enumerate() {
            kernels_by_queue.entry(o.queue_id).or_default().push(i);
        }

        let mut out = Contended::default();
        let mut interned: HashMap<Vec<NodeSignature>, usize> = HashMap::new();
        let mut queue_ids: Vec<u64> = by_queue.keys().copied().collect();
        queue_ids.sort_unstable();
        for queue in queue_ids {
            let mut launches = by_queue.remove(&queue).unwrap_or_default();
            launches.sort_unstable();
            let k = launches[0].1 as usize;
            if k == 0 || launches.iter().any(|&(_, count)| count as usize != k) {
                continue;
            }
            let mut members = kernels_by_queue.remove(&queue).unwrap_or_default();
            let n = launches.len();
            if members.len() != n * k {
                continue;
            }
            members.sort_by_key(|&i| observations[i].start_ns);
            if members
                .windows(2)
                .any(|w| observations[w[0]].start_ns == observations[w[1]].start_ns)
            {
                continue;
            }
            // Deadline of position p: the earliest EXIT of a call that wrote
            // a packet of run p or later.
            let mut deadline = vec![u64::MAX; n];
            let mut earliest = u64::MAX;
            for p in (0..n).rev() {
                for &i in &members[p * k..(p + 1) * k] {
                    if let Some(&(_, exit)) = spans.get(&observations[i].correlation_id) {
                        earliest = earliest.min(exit);
                    }
                }
                deadline[p] = earliest;
            }
            let interval = |corr: u64| spans.get(&corr).copied().unwrap_or((0, u64::MAX));
            let mut exits: Vec<u64> = launches.iter().map(|&(c, _)| interval(c).1).collect();
            let mut enters: Vec<u64> = launches.iter().map(|&(c, _)| interval(c).0).collect();
            exits.sort_unstable();
            enters.sort_unstable();
            let mut queue_launches = Vec::with_capacity(n);
            let mut total = 0usize;
            for &(corr, _) in &launches {
                let (enter, exit) = interval(corr);
                let before = exits.partition_point(|&e| e < enter);
                let after = n - enters.partition_point(|&s| s <= exit);
                // Positions whose deadline is before ENTER are impossible.
                let too_late = deadline.partition_point(|&d| d < enter);
                let lo = before.max(too_late);
                let hi = (n - 1).saturating_sub(after);
                if lo > hi || after >= n {
                    return None; // contradicts A1-A3
                }
                total += hi - lo + 1;
                queue_launches.push(Launch {
                    correlation_id: corr,
                    exec: execs.get(&corr).copied().flatten(),
                    lo,
                    hi,
                });
            }
            if total > CANDIDATE_BUDGET {
                continue;
            }
            let first_launch = out.launches.len();
            let first_run = out.runs.len();
            for p in 0..n {
                let run_members = members[p * k..(p + 1) * k].to_vec();
                let sequence: Vec<NodeSignature> = run_members
                    .iter()
                    .map(|&i| observations[i].node_signature())
                    .collect();
                let next = interned.len();
                let id = *interned.entry(sequence.clone()).or_insert_with(|| {
                    out.sequences.push(sequence);
                    next
                });
                for &i in &run_members {
                    out.run_of.insert(i, out.runs.len());
                }
                out.runs.push(Run {
                    members: run_members,
                    sequence: id,
                    candidates: Vec::new(),
                });
            }
            for (x, launch) in queue_launches.into_iter().enumerate() {
                for p in launch.lo..=launch.hi {
                    out.runs[first_run + p].candidates.push(first_launch + x);
                }
                out.launches.push(Launch {
                    lo: first_run + launch.lo,
                    hi: first_run + launch.hi,
                    ..launch
                });
            }
        }
        if out.runs.is_empty() {
            return None;
        }
        out.narrow(knowledge)?;
        Some(out)
    }

    /// Remove impossible (exec, sequence) hypotheses until nothing changes.
    /// `None` when the truth would have been removed: the evidence breaks
    /// an assumption.
    fn narrow(&mut self, knowledge: &ExecKnowledge) -> Option<()> {
        let mut by_exec: HashMap<AttributionId, Vec<usize>> = HashMap::new();
        for (x, launch) in self.launches.iter().enumerate() {
            if let Some(exec) = launch.exec {
                by_exec.entry(exec).or_default().push(x);
            }
        }
        // Start: every sequence some launch of the exec could have produced,
        // cut to the trusted one where it is known.
        for (&exec, launches) in &by_exec {
            let mut possible: Option<BTreeSet<usize>> = None;
            for &x in launches {
                let here: BTreeSet<usize> = (self.launches[x].lo..=self.launches[x].hi)
                    .map(|p| self.runs[p].sequence)
                    .collect();
                possible = Some(match possible {
                    None => here,
                    Some(before) => before.intersection(&here).copied().collect(),
                });
            }
            let mut possible: Vec<usize> = possible.unwrap_or_default().into_iter().collect();
            if let Some(known) = knowledge.sequence(exec) {
                possible.retain(|&s| self.sequences[s] == known);
            }
            if possible.is_empty() {
                return None;
            }
            self.possible.insert(exec, possible);
        }
        let mut positions: HashMap<usize, Vec<usize>> = HashMap::new();
        for (p, run) in self.runs.iter().enumerate() {
            positions.entry(run.sequence).or_default().push(p);
        }
        let mut exec_ids: Vec<AttributionId> = by_exec.keys().copied().collect();
        exec_ids.sort_unstable();
        loop {
            let mut changed = false;
            let mut forced: HashMap<usize, Vec<AttributionId>> = HashMap::new();
            for &exec in &exec_ids {
                if let [only] = self.possible[&exec][..] {
                    forced.entry(only).or_default().push(exec);
                }
            }
            for (&sequence, execs) in &forced {
                let launches: Vec<usize> = execs.iter().flat_map(|e| by_exec[e].clone()).collect();
                if !self.matchable(&launches, &positions[&sequence]) {
                    return None;
                }
            }
            for &exec in &exec_ids {
                let possible = &self.possible[&exec];
                if possible.len() < 2 {
                    continue;
                }
                let kept: Vec<usize> = possible
                    .iter()
                    .copied()
                    .filter(|sequence| {
                        let mut launches = by_exec[&exec].clone();
                        for other in forced.get(sequence).into_iter().flatten() {
                            launches.extend_from_slice(&by_exec[other]);
                        }
                        self.matchable(&launches, &positions[sequence])
                    })
                    .collect();
                if kept.is_empty() {
                    return None;
                }
                if kept.len() != possible.len() {
                    changed = true;
                    self.possible.insert(exec, kept);
                }
            }
            if !changed {
                break;
            }
        }
        // A candidate whose exec cannot run the run's sequence is not one.
        for run in &mut self.runs {
            let sequence = run.sequence;
            let launches = &self.launches;
            let possible = &self.possible;
            run.candidates.retain(|&x| match launches[x].exec {
                None => true,
                Some(exec) => possible[&exec].contains(&sequence),
            });
            if run.candidates.is_empty() {
                return None;
            }
        }
        Some(())
    }

    /// Whether every launch in `launches` can be given its own position
    /// among `positions` (sorted) inside its window: greedy by window end,
    /// earliest free position, which is exact for intervals and points.
    fn matchable(&self, launches: &[usize], positions: &[usize]) -> bool {
        if launches.len() > positions.len() {
            return false;
        }
        let mut order: Vec<(usize, usize)> = launches
            .iter()
            .map(|&x| (self.launches[x].hi, self.launches[x].lo))
            .collect();
        order.sort_unstable();
        let mut free: BTreeSet<usize> = positions.iter().copied().collect();
        for (hi, lo) in order {
            match free.range(lo..=hi).next().copied() {
                Some(p) => {
                    free.remove(&p);
                }
                None => return false,
            }
        }
        true
    }

    /// Execs whose sequence the window proves, with how many launches ran it.
    pub(crate) fn proven(&self) -> Vec<(AttributionId, &[NodeSignature], u32)> {
        let mut counts: HashMap<AttributionId, u32> = HashMap::new();
        for launch in &self.launches {
            if let Some(exec) = launch.exec {
                *counts.entry(exec).or_default() += 1;
            }
        }
        let mut out: Vec<_> = self
            .possible
            .iter()
            .filter_map(|(&exec, possible)| match possible[..] {
                [only] => Some((exec, &self.sequences[only][..], counts[&exec])),
                _ => None,
            })
            .collect();
        out.sort_unstable_by_key(|&(exec, _, _)| exec);
        out
    }

    /// The signatures `exec` may run, where the window bounds them.
    pub(crate) fn may_run(&self, exec: AttributionId) -> Option<HashSet<NodeSignature>> {
        self.possible.get(&exec).map(|possible| {
            possible
                .iter()
                .flat_map(|&s| self.sequences[s].iter().copied())
                .collect()
        })
    }

    /// The execs that may have produced observation `i`'s run; `None` when
    /// `i` is in no run or a candidate's exec is unknown.
    pub(crate) fn execs_of(&self, i: usize) -> Option<Vec<AttributionId>> {
        let run = &self.runs[*self.run_of.get(&i)?];
        let mut execs = Vec::new();
        for &x in &run.candidates {
            execs.push(self.launches[x].exec?);
        }
        execs.sort_unstable();
        execs.dedup();
        Some(execs)
    }

    /// The key that the position evidence proves for observation `i`:
    /// every candidate of its run is one exec, whose trusted sequence is
    /// the run.
    pub(crate) fn proof(&self, i: usize, knowledge: &ExecKnowledge) -> Option<PositionProof> {
        let run = &self.runs[*self.run_of.get(&i)?];
        let [exec] = self.execs_of(i)?[..] else {
            return None;
        };
        if knowledge.sequence(exec)? != &self.sequences[run.sequence][..] {
            return None;
        }
        let ordinal = run.members.iter().position(|&m| m == i)? as u32;
        let launch = match run.candidates[..] {
            [only] => Some(self.launches[only].correlation_id),
            _ => None,
        };
        Some(PositionProof {
            exec,
            ordinal,
            launch,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::{ApiSpan, DispatchObservation, SdkLaunch};
    use crate::ids::{ExecHandle, GraphKey, LaunchedExec, Ordinal};
    use crate::launch_log::{LaunchEnding, LaunchRecord};

    /// Two training steps on one queue: thread 1 launches exec 1 three
    /// times (calls 10..20, 30..40, 50..60), then thread 2 launches exec 2,
    /// the same 2-kernel graph, three times (100..110, ...). Each launch
    /// wrote its own packets. `step1_first_start`: when step 1's first
    /// kernel starts; step 0's run at 1000, 1100, 1200 (+10 for the second
    /// kernel).
    fn steps(
        step1_first_start: u64,
    ) -> (
        Vec<DispatchObservation>,
        Vec<LaunchRecord>,
        Vec<SdkLaunch>,
        Vec<ApiSpan>,
    ) {
        let (mut obs, mut launches, mut sdk, mut spans) = (vec![], vec![], vec![], vec![]);
        for (exec, thread, first_enter, first_start) in [
            (1u32, 1u64, 10u64, 1_000u64),
            (2, 2, 100, step1_first_start),
        ] {
            for r in 0..3u64 {
                let corr = 10 * thread + r;
                let enter = first_enter + 20 * r;
                launches.push(LaunchRecord {
                    correlation_id: corr,
                    attribution: AttributionId::new(exec),
                    exec: LaunchedExec::Sdk {
                        graph_exec_id: exec as u64,
                        handle: ExecHandle(0x1000),
                    },
                    thread_id: thread,
                    credited_dispatches: 2,
                    ending: LaunchEnding::Exited,
                });
                sdk.push(SdkLaunch {
                    correlation_id: corr,
                    queue_id: 7,
                    kernel_dispatch_count: 2,
                });
                spans.push(ApiSpan {
                    correlation_id: corr,
                    thread_id: thread,
                    enter_ns: enter,
                    exit_ns: enter + 10,
                });
                for n in 0..2u32 {
                    obs.push(DispatchObservation {
                        correlation_id: corr,
                        external: GraphKey::new(AttributionId::new(exec).unwrap(), Ordinal(n))
                            .pack(),
                        signature: 100 + n as u64,
                        kind: DispatchKind::Kernel,
                        queue_id: 7,
                        thread_id: thread,
                        start_ns: first_start + 100 * r + 10 * n as u64,
                    });
                }
            }
        }
        (obs, launches, sdk, spans)
    }

    fn analyse(step1_first_start: u64) -> Option<Contended> {
        let (obs, launches, sdk, spans) = steps(step1_first_start);
        let evidence = WindowEvidence {
            sdk_launches: Some(&sdk),
            api_spans: &spans,
            dispatches_complete: true,
            ..WindowEvidence::new(&obs, &launches)
        };
        Contended::analyse(&evidence, &ExecKnowledge::new())
    }

    #[test]
    fn sequential_steps_whose_kernels_run_in_append_order_are_analysed() {
        // Step 1's kernels start after step 0's: the queue ran in append order.
        let c = analyse(1_300).expect("consistent evidence");
        // The same graph: both execs run it (true), and every run's only
        // candidates are its own step's launches.
        assert_eq!(c.proven().len(), 2);
        for i in 0..12 {
            let exec = AttributionId::new(if i < 6 { 1 } else { 2 }).unwrap();
            assert_eq!(c.execs_of(i), Some(vec![exec]), "dispatch {i}");
        }
    }

    #[test]
    fn a_queue_whose_start_order_is_not_its_append_order_is_refused() {
        // The steps-4x50 --steps 2 shape in rocprofiler-sim: the second run
        // builds its queues afresh (same queue id, clock back to 0), so step
        // 1's kernels start while step 0's are still queued. Sorted by start,
        // the last runs hold packets written inside step 0's calls, which
        // ended before step 1's launches entered: no position is left for
        // them. That contradicts A2 (FIFO per queue); refusing is right.
        assert!(analyse(1_105).is_none());
    }
}
