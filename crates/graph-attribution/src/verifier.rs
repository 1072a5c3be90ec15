//! The verifier: decides, per dispatch, whether the tracker's pair may leave
//! the backend.
//!
//! Why it is needed: the per-thread launch stack credits a dispatch to the
//! launch that the thread *writing the packet* is inside. When streams share
//! a hardware queue, thread B may write thread A's packets while B is inside
//! its own launch; A's dispatches then carry B's id, B's ordinals past B's
//! node count and B's correlation id, and A's launch is left short. Nothing
//! on the hot path can see this, so it is caught here, when a window's
//! records are consumed.
//!
//! # Rules, in order
//!
//! A *launch instance* is one (attribution id, launch correlation id): the
//! tracker's launch records plus every pair the dispatches claim. The only
//! evidence independent of the tracker is what ran ([`NodeSignature`]), on
//! which queue, written by which thread.
//!
//! 1. **Not graphed.** A slot of 0 is [`Verdict::NotGraphed`] and is never
//!    turned into a graph pair: the dispatch may be ungraphed work, and an
//!    absent pair is never wrong. A slot no key packs to is withheld.
//! 2. **Learning.** An exec's sequence (signature by ordinal) is learned
//!    only from a window with no contamination evidence at all: every
//!    instance has its launch record, exited normally, was credited exactly
//!    the dispatches observed, has ordinals exactly 0..m-1, agrees with the
//!    SDK's kernel count where given and with what is already trusted, and
//!    no launch record was lost. Within such a window only instances on
//!    queues no other thread wrote to (during the launch's call, see
//!    "Turns") are used, all of an exec's instances
//!    must agree, and a sequence is trusted after
//!    [`crate::knowledge::DEFAULT_CONFIRMATIONS`] identical sightings.
//!    A contaminated window teaches only what rule 6 proves.
//! 3. **Vouch.** An instance is clean when its exec's sequence is trusted
//!    and it yields exactly that many dispatches, ordinals 0..n-1, each with
//!    the trusted signature at its ordinal, its record is present, exited
//!    and credited that count, the SDK's count (if any) agrees, and it is
//!    not *exposed*: no other thread's dispatch with one of the exec's
//!    signatures ran on a queue the instance ran on (such a dispatch may be
//!    the instance's own, swapped for a look-alike; see "Turns" for when
//!    only calls overlapping the launch's count), and rule 6 does not
//!    give any of its dispatches to another key or exec. Every dispatch of
//!    a clean instance is [`Verdict::Vouched`].
//! 4. **Repair.** Every other graphed dispatch is *stray*. Its signature is
//!    looked up among the nodes of the execs known in the window (those with
//!    a trusted sequence and an instance here). Exactly one (exec, ordinal)
//!    must match; the signature must not also have run ungraphed in this
//!    window; no exec of the window without a trusted sequence may run it
//!    (unbounded unless rule 6 bounds what it may run); it must not have
//!    run more often in the window, whatever the slots say, than its exec
//!    was launched (more means ungraphed work carrying a graph slot); rule 6
//!    must not rule the exec out for the dispatch's run; and the strays with
//!    that signature must not outnumber the exec's unclean instances (each
//!    has one open slot for it). Strays rule 6 proves are repaired first,
//!    to the proven key and launch. Then the
//!    dispatch is [`Verdict::Repaired`] to that key, and given the launch's
//!    correlation id when exactly one unclean instance of that exec exists.
//!    Otherwise it is withheld with the first reason that applies.
//! 5. **Safety net.** Any key that would be emitted for more than one
//!    signature in the window is withheld for all its records.
//! 6. **Queue order** (`contended.rs`, needs the SDK's launch records,
//!    API spans and a complete window). On a hardware queue whose kernels
//!    are exactly its launches' packets, the dispatches in start order are
//!    whole runs, one per launch, in append order; each run's possible
//!    launches are bounded by ENTER/EXIT precedence and by the EXIT of the
//!    calls that wrote later runs. An exec's sequence is learned when every
//!    other sequence is refuted by matching its launches to runs; a run's
//!    key is proven when all its possible launches are of one exec whose
//!    trusted sequence it is, and linked when only one launch is possible.
//!    Never reads the tracker's claims.
//!
//! # Turns: another thread's work counts only if the calls overlapped
//!
//! Rules 2 (which instances are contended) and 3 (exposure) look for
//! another thread's dispatches on an instance's queue. When the caller sets
//! [`WindowEvidence::holder_writes_pending`] and the instance's launch call
//! has an API span, only dispatches written in a call whose span overlaps
//! the launch's count (a dispatch whose call has no span always counts).
//! Threads that take turns on a queue, such as training steps run on fresh
//! threads, are then not contention. Why this is enough, for an instance
//! that wrote at least one dispatch (rule 2 learns only from well-formed
//! windows, rule 3 vouches only for well-formed instances):
//!
//! - Launch L appends all its packets P_L (after ENTER) before it writes
//!   anything, and whenever it writes it drains every pending packet. So
//!   if L wrote anything, its first write at some time `a` inside its call
//!   took whatever of P_L was still pending.
//! - So a packet of P_L that L did not write was drained by another writer
//!   between the append and `a`, which is inside L's call. A thread writes
//!   packets only inside an API call (A3 in contended.rs), so the writer's
//!   call was in flight then too: the two spans overlap. ENTER is taken
//!   before a call's body and EXIT after it, so touching spans count as
//!   overlapping.
//! - An instance whose dispatches are not exactly P_L either has more
//!   (rule 3's length check and, for rule 2, the SDK's kernel count catch
//!   that; without the count, as before this rule) or lost some of P_L to
//!   such a writer. That writer is on another thread (a thread is in one
//!   call at a time), wrote to L's queue and ran P_L's kernels: what rules
//!   2 and 3 look for, restricted to calls that overlap L's.
//!
//! Pairwise overlap is the right bound, not a chain of overlapping calls:
//! W can write L's packets without overlapping L (L's try fails against
//! holder H, H lets go, W takes the queue before H looks again), but then L
//! wrote nothing and its instance is not well-formed. The ordering matters:
//! if a launch could write others' packets before appending its own, its
//! own could be written later by anyone, and a perfect look-alike swap
//! would pass (tests/interleavings.rs finds such cases in that model).
//! Dispatch start times are not used. Without the flag, or without L's
//! span, any other thread's dispatch on the queue counts, as before.
//!
//! Withholding is always acceptable; a wrong pair is not. Residual risk,
//! documented rather than hidden: a dispatch swapped with an
//! indistinguishable one (same signature) whose swap left no trace on the
//! queues can be given the look-alike's key; the key still names a node
//! that runs exactly that kernel.

use std::collections::{HashMap, HashSet};

use crate::contended::Contended;
use crate::evidence::{DispatchKind, DispatchObservation, NodeSignature, WindowEvidence};
use crate::ids::{AttributionId, GraphKey, Ordinal};
use crate::knowledge::{ExecKnowledge, Sighting};
use crate::launch_log::{LaunchEnding, LaunchRecord};
use crate::verdict::{Verdict, VerificationSummary, WithholdReason};

/// The verifier's answer for one window.
#[derive(Clone, Debug, Default)]
pub struct VerifiedWindow {
    /// One verdict per observation, in the order given.
    pub verdicts: Vec<Verdict>,
    pub summary: VerificationSummary,
}

/// One launch instance of the window.
struct Instance {
    attribution: AttributionId,
    correlation_id: u64,
    record: Option<LaunchRecord>,
    /// A second record with this correlation id, or a record that names
    /// another exec than the dispatches claiming the instance.
    record_conflict: bool,
    /// Observations claiming this instance.
    members: Vec<usize>,
}

/// Which threads wrote dispatches somewhere.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Writers {
    One(u64),
    Several,
}

impl Writers {
    fn add(slot: &mut Option<Writers>, thread: u64) {
        *slot = Some(match *slot {
            None => Writers::One(thread),
            Some(Writers::One(t)) if t == thread => Writers::One(t),
            Some(_) => Writers::Several,
        });
    }

    fn includes_other_than(self, thread: u64) -> bool {
        self != Writers::One(thread)
    }
}

/// Verify one window's graph pairs, learning into `knowledge`.
pub fn verify_window(
    evidence: &WindowEvidence<'_>,
    knowledge: &mut ExecKnowledge,
) -> VerifiedWindow {
    let observations = evidence.observations;
    let mut verdicts = vec![Verdict::NotGraphed; observations.len()];

    // Rule 1: decode the slots.
    let mut claimed: Vec<Option<GraphKey>> = vec![None; observations.len()];
    let mut ungraphed: HashSet<NodeSignature> = HashSet::new();
    for (i, o) in observations.iter().enumerate() {
        if o.external == 0 {
            ungraphed.insert(o.node_signature());
        } else {
            match GraphKey::unpack(o.external) {
                Some(key) => claimed[i] = Some(key),
                None => verdicts[i] = Verdict::Withheld(WithholdReason::MalformedKey),
            }
        }
    }

    // Launch instances: from the records, then from what dispatches claim.
    let mut records: HashMap<u64, (LaunchRecord, bool)> = HashMap::new();
    for record in evidence.launches {
        records
            .entry(record.correlation_id)
            .and_modify(|(_, duplicate)| *duplicate = true)
            .or_insert((*record, false));
    }
    let mut instances: Vec<Instance> = Vec::new();
    let mut instance_of: HashMap<(AttributionId, u64), usize> = HashMap::new();
    for (record, duplicate) in records.values() {
        if let Some(attribution) = record.attribution {
            instance_of.insert((attribution, record.correlation_id), instances.len());
            instances.push(Instance {
                attribution,
                correlation_id: record.correlation_id,
                record: Some(*record),
                record_conflict: *duplicate,
                members: Vec::new(),
            });
        }
    }
    // Deterministic order regardless of hashing.
    instances.sort_by_key(|inst| (inst.correlation_id, inst.attribution));
    instance_of = instances
        .iter()
        .enumerate()
        .map(|(i, inst)| ((inst.attribution, inst.correlation_id), i))
        .collect();
    for (i, key) in claimed.iter().enumerate() {
        let Some(key) = key else { continue };
        let correlation_id = observations[i].correlation_id;
        let index = *instance_of
            .entry((key.graph_id, correlation_id))
            .or_insert_with(|| {
                instances.push(Instance {
                    attribution: key.graph_id,
                    correlation_id,
                    record: None,
                    // A record for this call that names no or another exec.
                    record_conflict: records.contains_key(&correlation_id),
                    members: Vec::new(),
                });
                instances.len() - 1
            });
        instances[index].members.push(i);
    }

    // Who wrote what where: the exposure evidence.
    let mut queue_writers: HashMap<u64, Option<Writers>> = HashMap::new();
    let mut signature_writers: HashMap<(u64, NodeSignature), Option<Writers>> = HashMap::new();
    for o in observations {
        Writers::add(queue_writers.entry(o.queue_id).or_default(), o.thread_id);
        Writers::add(
            signature_writers
                .entry((o.queue_id, o.node_signature()))
                .or_default(),
            o.thread_id,
        );
    }
    let turns = evidence.holder_writes_pending.then(|| Turns::new(evidence));
    let facts = InstanceFacts {
        evidence,
        queue_writers: &queue_writers,
        signature_writers: &signature_writers,
        turns: turns.as_ref(),
    };

    // Rule 2: learn from a window without contamination evidence; rule 6:
    // from a contended one, only what the queues' packet order proves.
    let mut summary = VerificationSummary::default();
    let contaminated = evidence.launches_lost > 0
        || instances
            .iter()
            .any(|inst| !facts.well_formed(inst) || facts.contradicts(inst, knowledge));
    let contended = Contended::analyse(evidence, knowledge);
    if contaminated {
        let proven = contended
            .as_ref()
            .map(Contended::proven)
            .unwrap_or_default();
        if proven.is_empty() {
            summary.windows_not_learned_from = 1;
        }
        for (exec, sequence, launches) in proven {
            if knowledge.record_sighting(exec, sequence, launches) == Sighting::Confirmed {
                summary.execs_learned += 1;
            }
        }
    } else {
        summary.execs_learned = learn(&facts, &instances, knowledge);
    }
    // What the queues say about a dispatch, where they say anything.
    let proof = |i: usize| contended.as_ref().and_then(|c| c.proof(i, knowledge));
    let possible_execs = |i: usize| contended.as_ref().and_then(|c| c.execs_of(i));

    // Rule 3: vouch for clean instances; everything else is stray.
    let mut unclean: HashMap<AttributionId, Vec<u64>> = HashMap::new();
    let mut strays: Vec<usize> = Vec::new();
    for inst in &instances {
        let sequence = knowledge.sequence(inst.attribution);
        // Rule 6 also vetoes: a member whose run the queues give to another
        // exec or key is not vouched for.
        let clean = sequence.is_some_and(|seq| facts.clean(inst, seq))
            && inst.members.iter().all(|&i| {
                let claim = claimed[i].expect("members are graphed");
                proof(i).is_none_or(|p| GraphKey::new(p.exec, Ordinal(p.ordinal)) == claim)
                    && possible_execs(i).is_none_or(|execs| execs.contains(&claim.graph_id))
            });
        if clean {
            for &i in &inst.members {
                verdicts[i] = Verdict::Vouched(claimed[i].expect("members are graphed"));
            }
        } else {
            if sequence.is_some() {
                unclean
                    .entry(inst.attribution)
                    .or_default()
                    .push(inst.correlation_id);
            }
            strays.extend_from_slice(&inst.members);
        }
    }

    // Rule 4: repair strays from what ran.
    let mut nodes: HashMap<NodeSignature, Vec<GraphKey>> = HashMap::new();
    let mut known_in_window: Vec<AttributionId> = instances
        .iter()
        .map(|inst| inst.attribution)
        .filter(|&id| knowledge.knows(id))
        .collect();
    known_in_window.sort_unstable();
    known_in_window.dedup();
    for &exec in &known_in_window {
        for (ordinal, node) in knowledge.sequence(exec).unwrap_or(&[]).iter().enumerate() {
            nodes
                .entry(*node)
                .or_default()
                .push(GraphKey::new(exec, Ordinal(ordinal as u32)));
        }
    }
    // Rule 6: a stray whose run the queues prove is repaired to that key.
    strays.retain(|&i| match proof(i) {
        Some(p) => {
            verdicts[i] = Verdict::Repaired {
                key: GraphKey::new(p.exec, Ordinal(p.ordinal)),
                correlation_id: p.launch,
            };
            false
        }
        None => true,
    });
    // Execs in the window without a trusted sequence: what they run is
    // unknown (or bounded by the queues), so a look-alike may be theirs.
    let mut unlearned: Vec<AttributionId> = instances
        .iter()
        .map(|inst| inst.attribution)
        .filter(|&id| !knowledge.knows(id))
        .collect();
    unlearned.sort_unstable();
    unlearned.dedup();
    let unlearned_may_run: Vec<Option<HashSet<NodeSignature>>> = unlearned
        .iter()
        .map(|&exec| contended.as_ref().and_then(|c| c.may_run(exec)))
        .collect();
    // How often each kernel ran in the window, whatever its slot, and how
    // many launches of each exec the window has.
    let mut ran: HashMap<NodeSignature, usize> = HashMap::new();
    for o in observations {
        *ran.entry(o.node_signature()).or_default() += 1;
    }
    let mut launched: HashMap<AttributionId, usize> = HashMap::new();
    for (record, _) in records.values() {
        if let Some(exec) = record.attribution {
            *launched.entry(exec).or_default() += 1;
        }
    }
    let mut strays_by_signature: HashMap<NodeSignature, Vec<usize>> = HashMap::new();
    for &i in &strays {
        strays_by_signature
            .entry(observations[i].node_signature())
            .or_default()
            .push(i);
    }
    for (signature, group) in &strays_by_signature {
        let candidates = nodes.get(signature).map(Vec::as_slice).unwrap_or(&[]);
        let verdict = match candidates {
            [] => None,
            [key] => Some(if ungraphed.contains(signature) {
                Verdict::Withheld(WithholdReason::SignatureAlsoRunsUngraphed)
            } else if unlearned_may_run
                .iter()
                .any(|may| may.as_ref().is_none_or(|sigs| sigs.contains(signature)))
            {
                Verdict::Withheld(WithholdReason::UnlearnedExecMayRunIt)
            } else if ran.get(signature).copied().unwrap_or(0)
                > launched.get(&key.graph_id).copied().unwrap_or(0)
            {
                // Each launch of the exec runs the kernel once and no other
                // exec of the window runs it, so more dispatches of it than
                // launches (whatever their slots say) means ungraphed work
                // that a stray may be. In a complete window this catches
                // every such case; otherwise a lost dispatch can hide one.
                Verdict::Withheld(WithholdReason::CountMismatch)
            } else {
                let open = unclean.get(&key.graph_id).map(Vec::as_slice).unwrap_or(&[]);
                if group.len() > open.len() {
                    Verdict::Withheld(WithholdReason::CountMismatch)
                } else {
                    Verdict::Repaired {
                        key: *key,
                        correlation_id: match open {
                            [only] => Some(*only),
                            _ => None,
                        },
                    }
                }
            }),
            _ => Some(Verdict::Withheld(WithholdReason::AmbiguousSignature)),
        };
        for &i in group {
            // The queues may rule the key's exec out for this dispatch.
            if let Some(Verdict::Repaired { key, .. }) = verdict {
                if possible_execs(i).is_some_and(|execs| !execs.contains(&key.graph_id)) {
                    verdicts[i] = Verdict::Withheld(WithholdReason::NoEvidence);
                    continue;
                }
            }
            verdicts[i] = verdict.unwrap_or_else(|| {
                let key = claimed[i].expect("strays are graphed");
                Verdict::Withheld(match knowledge.sequence(key.graph_id) {
                    None => WithholdReason::UnknownExec,
                    Some(seq) if key.ordinal.index() >= seq.len() => {
                        WithholdReason::OrdinalOutOfRange
                    }
                    Some(_) => WithholdReason::NoEvidence,
                })
            });
        }
    }

    // Rule 5: one signature per emitted key. Unreachable while knowledge
    // is consistent (vouched and repaired keys both take their signature
    // from the trusted sequence); kept as the last line of defence.
    withhold_keys_covering_several_signatures(&mut verdicts, observations);

    for verdict in &verdicts {
        summary.count(verdict);
    }
    VerifiedWindow { verdicts, summary }
}

/// Rule 5: withhold every record of a key that would be emitted for more
/// than one signature.
fn withhold_keys_covering_several_signatures(
    verdicts: &mut [Verdict],
    observations: &[DispatchObservation],
) {
    let mut emitted: HashMap<GraphKey, Option<NodeSignature>> = HashMap::new();
    for (verdict, o) in verdicts.iter().zip(observations) {
        if let Some(key) = verdict.emitted_key() {
            let seen = emitted.entry(key).or_insert(Some(o.node_signature()));
            if *seen != Some(o.node_signature()) {
                *seen = None;
            }
        }
    }
    for verdict in verdicts.iter_mut() {
        if let Some(key) = verdict.emitted_key() {
            if emitted.get(&key) == Some(&None) {
                *verdict = Verdict::Withheld(WithholdReason::KeyCoversSeveralKernels);
            }
        }
    }
}

/// Learn from the uncontended instances of a window without contamination
/// evidence. Returns how many execs became trusted.
fn learn(facts: &InstanceFacts<'_>, instances: &[Instance], knowledge: &mut ExecKnowledge) -> u64 {
    // Per exec: the one sequence all its usable instances agree on, and how
    // many agreed; `None` once two disagree.
    let mut sightings: HashMap<AttributionId, Option<(Vec<NodeSignature>, u32)>> = HashMap::new();
    for inst in instances {
        if facts.contended(inst) {
            continue;
        }
        let sequence = facts.sequence(inst);
        let entry = sightings
            .entry(inst.attribution)
            .or_insert_with(|| Some((sequence.clone(), 0)));
        match entry {
            Some((agreed, n)) if *agreed == sequence => *n += 1,
            _ => *entry = None,
        }
    }
    let mut exec_ids: Vec<_> = sightings.keys().copied().collect();
    exec_ids.sort_unstable();
    let mut learned = 0;
    for exec in exec_ids {
        if let Some(Some((sequence, n))) = sightings.get(&exec) {
            if knowledge.record_sighting(exec, sequence, *n) == Sighting::Confirmed {
                learned += 1;
            }
        }
    }
    learned
}

/// Questions about one instance, answered from the window's evidence.
struct InstanceFacts<'a> {
    evidence: &'a WindowEvidence<'a>,
    queue_writers: &'a HashMap<u64, Option<Writers>>,
    signature_writers: &'a HashMap<(u64, NodeSignature), Option<Writers>>,
    /// When the caller vouches for the submission model: who wrote what
    /// where, and during which call.
    turns: Option<&'a Turns>,
}

/// One API call that wrote dispatches to a queue.
struct WriterCall {
    enter: u64,
    exit: u64,
    thread: u64,
    signatures: Vec<NodeSignature>,
}

/// One queue's writers, for the time-aware rule.
#[derive(Default)]
struct QueueCalls {
    /// Calls with a usable span, by ENTER.
    calls: Vec<WriterCall>,
    /// The longest of their spans: bounds how far back an overlap can start.
    longest: u64,
    /// Writes whose call has no usable span: they may overlap anything.
    untimed: Option<Writers>,
    untimed_signatures: HashMap<NodeSignature, Option<Writers>>,
}

/// Rules 2 and 3 with time ("Turns" in the module docs): which other
/// threads wrote to a queue during a given launch call.
struct Turns {
    /// Correlation id -> (ENTER, EXIT), for calls with exactly one sane span.
    spans: HashMap<u64, (u64, u64)>,
    queues: HashMap<u64, QueueCalls>,
}

impl Turns {
    fn new(evidence: &WindowEvidence<'_>) -> Turns {
        let mut spans: HashMap<u64, Option<(u64, u64)>> = HashMap::new();
        for span in evidence.api_spans {
            let sane = (span.enter_ns <= span.exit_ns).then_some((span.enter_ns, span.exit_ns));
            spans
                .entry(span.correlation_id)
                .and_modify(|seen| *seen = None) // two spans: trust neither
                .or_insert(sane);
        }
        let spans: HashMap<u64, (u64, u64)> = spans
            .into_iter()
            .filter_map(|(corr, span)| Some((corr, span?)))
            .collect();
        let mut grouped: HashMap<(u64, u64, u64), Vec<NodeSignature>> = HashMap::new();
        let mut queues: HashMap<u64, QueueCalls> = HashMap::new();
        for o in evidence.observations {
            if spans.contains_key(&o.correlation_id) {
                grouped
                    .entry((o.queue_id, o.correlation_id, o.thread_id))
                    .or_default()
                    .push(o.node_signature());
            } else {
                let queue = queues.entry(o.queue_id).or_default();
                Writers::add(&mut queue.untimed, o.thread_id);
                Writers::add(
                    queue
                        .untimed_signatures
                        .entry(o.node_signature())
                        .or_default(),
                    o.thread_id,
                );
            }
        }
        for ((queue, corr, thread), mut signatures) in grouped {
            signatures.sort_unstable();
            signatures.dedup();
            let (enter, exit) = spans[&corr];
            let queue = queues.entry(queue).or_default();
            queue.longest = queue.longest.max(exit - enter);
            queue.calls.push(WriterCall {
                enter,
                exit,
                thread,
                signatures,
            });
        }
        for queue in queues.values_mut() {
            queue
                .calls
                .sort_unstable_by_key(|c| (c.enter, c.exit, c.thread));
        }
        Turns { spans, queues }
    }

    /// A thread other than `thread` wrote to `queue` (one of `signatures`'
    /// kernels, if given) in a call that overlaps `[enter, exit]`, or in a
    /// call whose span is unknown. Touching spans count as overlapping.
    fn foreign_write_during(
        &self,
        queue: u64,
        thread: u64,
        (enter, exit): (u64, u64),
        signatures: Option<&[NodeSignature]>,
    ) -> bool {
        let Some(q) = self.queues.get(&queue) else {
            return false;
        };
        let other = |w: Option<Writers>| w.is_some_and(|w| w.includes_other_than(thread));
        let untimed = match signatures {
            None => other(q.untimed),
            Some(sigs) => sigs
                .iter()
                .any(|s| other(q.untimed_signatures.get(s).copied().flatten())),
        };
        if untimed {
            return true;
        }
        let end = q.calls.partition_point(|c| c.enter <= exit);
        for call in q.calls[..end].iter().rev() {
            if call.enter.saturating_add(q.longest) < enter {
                break; // this call and every earlier one ended before ENTER
            }
            if call.exit >= enter
                && call.thread != thread
                && signatures.is_none_or(|sigs| call.signatures.iter().any(|s| sigs.contains(s)))
            {
                return true;
            }
        }
        false
    }
}

impl InstanceFacts<'_> {
    fn thread(&self, inst: &Instance) -> Option<u64> {
        inst.record.map(|record| record.thread_id).or_else(|| {
            inst.members
                .first()
                .map(|&i| self.evidence.observations[i].thread_id)
        })
    }

    fn ordinal(&self, i: usize) -> Ordinal {
        GraphKey::unpack(self.evidence.observations[i].external)
            .map(|key| key.ordinal)
            .unwrap_or(Ordinal(u32::MAX))
    }

    /// Ordinals are exactly 0..m-1, each once.
    fn ordinals_complete(&self, inst: &Instance) -> bool {
        let m = inst.members.len();
        let mut seen = vec![false; m];
        inst.members.iter().all(|&i| {
            let ordinal = self.ordinal(i).index();
            ordinal < m && !std::mem::replace(&mut seen[ordinal], true)
        })
    }

    /// The SDK's kernel count for the launch, where given, matches.
    fn sdk_count_agrees(&self, inst: &Instance) -> bool {
        let Some(counts) = self.evidence.sdk_kernel_counts else {
            return true;
        };
        let Some(&expected) = counts.get(&inst.correlation_id) else {
            return true;
        };
        let kernels = inst
            .members
            .iter()
            .filter(|&&i| self.evidence.observations[i].kind == DispatchKind::Kernel)
            .count();
        kernels == expected as usize
    }

    /// Nothing about the instance on its own suggests contamination.
    fn well_formed(&self, inst: &Instance) -> bool {
        let Some(record) = inst.record else {
            return false;
        };
        !inst.record_conflict
            && record.ending == LaunchEnding::Exited
            && !inst.members.is_empty()
            && record.credited_dispatches as usize == inst.members.len()
            && inst
                .members
                .iter()
                .all(|&i| self.evidence.observations[i].thread_id == record.thread_id)
            && self.ordinals_complete(inst)
            && self.sdk_count_agrees(inst)
    }

    /// The instance disagrees with the trusted sequence of its exec.
    fn contradicts(&self, inst: &Instance, knowledge: &ExecKnowledge) -> bool {
        knowledge
            .sequence(inst.attribution)
            .is_some_and(|seq| !self.matches(inst, seq))
    }

    /// The instance's dispatches are exactly `sequence`, by ordinal.
    fn matches(&self, inst: &Instance, sequence: &[NodeSignature]) -> bool {
        inst.members.len() == sequence.len()
            && inst.members.iter().all(|&i| {
                sequence.get(self.ordinal(i).index())
                    == Some(&self.evidence.observations[i].node_signature())
            })
    }

    /// The signatures by ordinal (call only on well-formed instances).
    fn sequence(&self, inst: &Instance) -> Vec<NodeSignature> {
        let mut by_ordinal: Vec<(Ordinal, NodeSignature)> = inst
            .members
            .iter()
            .map(|&i| {
                (
                    self.ordinal(i),
                    self.evidence.observations[i].node_signature(),
                )
            })
            .collect();
        by_ordinal.sort_unstable();
        by_ordinal.into_iter().map(|(_, node)| node).collect()
    }

    fn queues(&self, inst: &Instance) -> Vec<u64> {
        let mut queues: Vec<u64> = inst
            .members
            .iter()
            .map(|&i| self.evidence.observations[i].queue_id)
            .collect();
        queues.sort_unstable();
        queues.dedup();
        queues
    }

    /// The time-aware rule applies: the submission model holds and the
    /// instance's launch call has a span.
    fn timed(&self, inst: &Instance) -> Option<(&Turns, (u64, u64))> {
        let turns = self.turns?;
        Some((turns, *turns.spans.get(&inst.correlation_id)?))
    }

    /// Another thread wrote anything to a queue this instance ran on (with
    /// the submission model: in a call overlapping the instance's launch).
    /// Only meaningful for a well-formed instance.
    fn contended(&self, inst: &Instance) -> bool {
        let Some(thread) = self.thread(inst) else {
            return true;
        };
        if let Some((turns, span)) = self.timed(inst) {
            return self
                .queues(inst)
                .iter()
                .any(|&queue| turns.foreign_write_during(queue, thread, span, None));
        }
        self.queues(inst).iter().any(|queue| {
            self.queue_writers
                .get(queue)
                .copied()
                .flatten()
                .is_some_and(|writers| writers.includes_other_than(thread))
        })
    }

    /// Another thread wrote a dispatch that runs one of `sequence`'s
    /// signatures to a queue this instance ran on (with the submission
    /// model: in a call overlapping the instance's launch). Only meaningful
    /// for a well-formed instance.
    fn exposed(&self, inst: &Instance, sequence: &[NodeSignature]) -> bool {
        let Some(thread) = self.thread(inst) else {
            return true;
        };
        if let Some((turns, span)) = self.timed(inst) {
            return self
                .queues(inst)
                .iter()
                .any(|&queue| turns.foreign_write_during(queue, thread, span, Some(sequence)));
        }
        self.queues(inst).iter().any(|&queue| {
            sequence.iter().any(|node| {
                self.signature_writers
                    .get(&(queue, *node))
                    .copied()
                    .flatten()
                    .is_some_and(|writers| writers.includes_other_than(thread))
            })
        })
    }

    /// Rule 3.
    fn clean(&self, inst: &Instance, sequence: &[NodeSignature]) -> bool {
        self.well_formed(inst) && self.matches(inst, sequence) && !self.exposed(inst, sequence)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_safety_net_withholds_every_record_of_a_key_with_two_signatures() {
        let obs = |signature| DispatchObservation {
            correlation_id: 1,
            external: 0,
            signature,
            kind: DispatchKind::Kernel,
            queue_id: 1,
            thread_id: 1,
            start_ns: 0,
        };
        let k0 = GraphKey::new(AttributionId::new(1).unwrap(), Ordinal(0));
        let k1 = GraphKey::new(AttributionId::new(1).unwrap(), Ordinal(1));
        let observations = [obs(5), obs(6), obs(5), obs(7)];
        let mut verdicts = [
            Verdict::Vouched(k0),
            Verdict::Repaired {
                key: k0,
                correlation_id: None,
            },
            Verdict::Vouched(k0),
            Verdict::Vouched(k1),
        ];
        withhold_keys_covering_several_signatures(&mut verdicts, &observations);
        let several = Verdict::Withheld(WithholdReason::KeyCoversSeveralKernels);
        assert_eq!(verdicts, [several, several, several, Verdict::Vouched(k1)]);
    }
}
