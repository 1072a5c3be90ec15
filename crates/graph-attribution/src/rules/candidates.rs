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

use rustc_hash::FxHashSet;

use crate::calls::{CallIndex, Hull, HullProducers, Produces};
use crate::evidence::{Observation, Observations};
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

/// Rule 1 for every record of a window: its candidates, or why its writer
/// cannot be bounded. One flat list, so a million records make two
/// allocations, not a million.
#[derive(Debug, Default)]
pub(crate) struct Candidates {
    slots: Vec<Slot>,
    /// Per record: its range of `slots`, or the reason.
    ranges: Vec<Result<(u32, u32), Reason>>,
    /// Where consecutive records each have one candidate, consecutive
    /// outputs of one launch: what rules 2, 3 and 6 can decide a run at a
    /// time. In record order, not overlapping.
    runs: Vec<LaunchRun>,
}

/// Whether rule 1 looks for launch runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Runs {
    Found,
    /// Every record on its own (to show the runs change no verdict).
    Ignored,
}

/// Records `start..start + len`, each with one candidate: output
/// `first + i` of graph launch `call` for record `start + i`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LaunchRun {
    pub start: u32,
    pub len: u32,
    pub call: u32,
    pub first: u32,
}

impl Candidates {
    pub(crate) fn get(&self, r: usize) -> Result<&[Slot], Reason> {
        self.ranges[r].map(|(a, b)| &self.slots[a as usize..b as usize])
    }

    pub(crate) fn len(&self) -> usize {
        self.ranges.len()
    }

    pub(crate) fn runs(&self) -> &[LaunchRun] {
        &self.runs
    }

    /// A launch run's records, each with its one candidate.
    fn push_run(&mut self, run: LaunchRun) {
        let at = self.slots.len() as u32;
        let outputs = run.first..run.first + run.len;
        self.slots.extend(outputs.map(|k| (run.call, k)));
        self.ranges
            .extend((at..at + run.len).map(|s| Ok((s, s + 1))));
        self.runs.push(run);
    }

    /// Rule 1 for every record. `overflowing`: queues `rules::backlog`
    /// found may have been full.
    pub(crate) fn of_window(
        index: &mut CallIndex<'_>,
        observations: &Observations,
        overflowing: &FxHashSet<u64>,
        runs: Runs,
    ) -> Candidates {
        let mut out = Candidates {
            slots: Vec::with_capacity(observations.len()),
            ranges: Vec::with_capacity(observations.len()),
            runs: Vec::new(),
        };
        // Per call, the output after the last one a record was found to be
        // alone: the next record is most likely that one.
        let mut next = vec![0u32; index.produces.len()];
        let mut r = 0;
        while r < observations.len() {
            // Read only where needed: a launch run starting here needs none of
            // the record's fields, and reading all six columns at each run's
            // first record was a tenth of attributing a window.
            let o = || observations.get(r);
            let start = out.slots.len();
            let found = match index.processed_by(r) {
                _ if !index.evidence.calls_complete => Err(Reason::CallsDropped),
                _ if !overflowing.is_empty() && on_overflowed_queue(&o(), overflowing) => {
                    Err(Reason::QueueMayHaveOverflowed)
                }
                Some(p) => {
                    let hull = index.hull(p);
                    let run = (runs == Runs::Found)
                        .then(|| {
                            launch_run(index, observations, r, p, hull, overflowing, &mut next)
                        })
                        .flatten();
                    if let Some(run) = run {
                        out.push_run(run);
                        r += run.len as usize;
                        continue;
                    }
                    candidates(index, &o(), hull, &mut next, &mut out.slots)
                }
                None => Err(Reason::ProcessedOutsideKnownCall),
            };
            let range = match found {
                Ok(()) => Ok((start as u32, out.slots.len() as u32)),
                Err(reason) => {
                    out.slots.truncate(start);
                    Err(reason)
                }
            };
            out.ranges.push(range);
            r += 1;
        }
        out
    }

    /// Candidates given outright (the joint assignment's tests).
    #[cfg(test)]
    pub(crate) fn from_lists(lists: &[Result<Vec<Slot>, Reason>]) -> Candidates {
        let mut out = Candidates::default();
        for list in lists {
            let start = out.slots.len() as u32;
            out.ranges.push(
                list.as_ref()
                    .map(|l| {
                        out.slots.extend_from_slice(l);
                        (start, out.slots.len() as u32)
                    })
                    .map_err(|r| *r),
            );
        }
        out
    }
}

/// Was the record processed from a queue `rules::backlog` found may have
/// been full (engine copies take no queue slot)?
fn on_overflowed_queue(o: &Observation, overflowing: &FxHashSet<u64>) -> bool {
    o.dispatch_id.is_some() && !overflowing.is_empty() && overflowing.contains(&o.queue_id)
}

/// The records from `r` on that were processed by graph launch `p`, each
/// the one output of `p` it may be, in the launch's output order from
/// where the previous such record left off (`next`, advanced past them):
/// what `candidates` would find for each, found without its per-record
/// checks. `None` when the first is not such a record.
fn launch_run(
    index: &CallIndex<'_>,
    observations: &Observations,
    r: usize,
    p: u32,
    hull: Hull,
    overflowing: &FxHashSet<u64>,
    next: &mut [u32],
) -> Option<LaunchRun> {
    if hull.at_edge || hull.unknown || hull.producers != HullProducers::One(p) {
        return None;
    }
    let (_, exec) = index.keyed_launch(p)?;
    let first = next[p as usize];
    // Rule 7 found the launch's records to be its outputs in order, from
    // here: each is then the one output at its place (when every output is
    // a kernel the exec runs once with that shape), so the loop below
    // would take them all and stop after them.
    if first == 0
        && index.in_order_from(p) == Some(r as u32)
        && exec.all_sole_kernels
        && overflowing.is_empty()
    {
        let len = exec.outputs.len() as u32;
        next[p as usize] = len;
        return (len > 0).then_some(LaunchRun {
            start: r as u32,
            len,
            call: p,
            first: 0,
        });
    }
    let mut run = 0;
    for (i, o) in observations.range(r..observations.len()).enumerate() {
        let k = first + run;
        if index.processed_by(r + i) != Some(p)
            || exec.only_output(k, index.evidence.observed(&o)).is_none()
            || on_overflowed_queue(&o, overflowing)
        {
            break;
        }
        run += 1;
    }
    next[p as usize] = first + run;
    (run > 0).then_some(LaunchRun {
        start: r as u32,
        len: run,
        call: p,
        first,
    })
}

/// Rule 1 for one record of a complete window's calls, on a queue that did
/// not overflow, processed during a call whose neighbourhood is `hull`:
/// every (call, output) that could have written it, appended to `out` in
/// order, or why its writer cannot be bounded.
fn candidates(
    index: &CallIndex<'_>,
    observation: &Observation,
    hull: Hull,
    next: &mut [u32],
    out: &mut Vec<Slot>,
) -> Result<(), Reason> {
    if hull.at_edge {
        return Err(Reason::WindowEdge);
    }
    if hull.unknown {
        return Err(Reason::UnknownWorkNearby);
    }
    let start = out.len();
    let shown = index.evidence.observed(observation);
    match hull.producers {
        HullProducers::None => {}
        // The one producing call in the hull: its outputs under the key,
        // exactly what the interval query below would find.
        HullProducers::One(call) => {
            let guess = next[call as usize];
            if let Some(k) = index.only_output(call, guess, shown) {
                out.push((call, k));
                next[call as usize] = k + 1;
            } else {
                let key = MatchKey::of(shown);
                out.extend(
                    index
                        .outputs_under(call, &key)
                        .iter()
                        .filter(|&&k| index.output(call, k).output.matches(shown))
                        .map(|&k| (call, k)),
                );
                if let [(_, k)] = out[start..] {
                    next[call as usize] = k + 1;
                }
            }
        }
        HullProducers::Several => {
            let key = MatchKey::of(shown);
            let Some(producers) = index.producers().get(&key) else {
                return Err(Reason::NoProducer);
            };
            out.extend(
                producers
                    .intervals
                    .overlapping(hull.start, hull.end)
                    .map(|entry| producers.entries[entry as usize])
                    .filter(|&(call, k)| index.output(call, k).output.matches(shown)),
            );
            let found = &mut out[start..];
            found.sort_unstable();
            let kept = dedup(found);
            out.truncate(start + kept);
        }
    }
    if out.len() == start {
        return Err(Reason::NoProducer);
    }
    Ok(())
}

/// Moves the distinct values of a sorted slice to its front; returns how
/// many there are.
fn dedup(sorted: &mut [Slot]) -> usize {
    let mut kept = 0;
    for i in 0..sorted.len() {
        if kept == 0 || sorted[i] != sorted[kept - 1] {
            sorted[kept] = sorted[i];
            kept += 1;
        }
    }
    kept
}

/// Rules 2 and 3's verdicts for a window's records.
pub(crate) struct Decided {
    pub keys: Vec<KeyVerdict>,
    pub links: Vec<LinkVerdict>,
    /// Some verdict is one rules 4, 5 and 8 to 10 may still settle.
    pub any_open: bool,
}

/// Is a verdict one that rules 4, 5 and 8 to 10 may still settle (its
/// candidates were all known, only too many)?
fn open(key: &KeyVerdict, link: &LinkVerdict) -> bool {
    matches!(
        key,
        KeyVerdict::Withheld(Reason::Ambiguous | Reason::RepeatedKernel)
    ) || matches!(link, LinkVerdict::Unlinked(Reason::SeveralCalls))
}

/// Rules 2 and 3 for every record: a launch run's records at once (each
/// its own node, all the launch's call: never open), the others one by
/// one.
pub(crate) fn decide_all(index: &CallIndex<'_>, candidates: &Candidates) -> Decided {
    let n = candidates.len();
    let mut keys = Vec::with_capacity(n);
    let mut links = Vec::with_capacity(n);
    let mut runs = candidates.runs().iter().peekable();
    let mut any_open = false;
    let mut r = 0;
    while r < n {
        if let Some(run) = runs.next_if(|run| run.start as usize == r) {
            let (graph_id, exec) = index
                .keyed_launch(run.call)
                .expect("a launch run is a keyed graph launch's");
            let outputs = &exec.outputs[run.first as usize..(run.first + run.len) as usize];
            keys.extend(outputs.iter().map(|p| KeyVerdict::Key {
                key: GraphKey::new(graph_id, p.node.expect("a graph output is a node's")),
                proof: KeyProof::OnlyPossibleNode,
            }));
            let link = LinkVerdict::Linked {
                correlation_id: index.call(run.call).correlation_id,
                proof: LinkProof::OnlyPossibleCall,
            };
            links.extend(std::iter::repeat_n(link, run.len as usize));
            r += run.len as usize;
        } else {
            let (key, link) = decide(index, candidates.get(r));
            any_open |= open(&key, &link);
            keys.push(key);
            links.push(link);
            r += 1;
        }
    }
    Decided {
        keys,
        links,
        any_open,
    }
}

/// Rules 2 and 3 for one record, from its candidates (rule 1): its key and
/// its link.
pub(crate) fn decide(
    index: &CallIndex<'_>,
    candidates: Result<&[Slot], Reason>,
) -> (KeyVerdict, LinkVerdict) {
    let candidates = match candidates {
        Ok(c) => c,
        Err(reason) => return (KeyVerdict::Withheld(reason), LinkVerdict::Unlinked(reason)),
    };
    let mut agreement = Agreement::None;
    let mut eager = false;
    let mut first_call: Option<u32> = None;
    let mut several_calls = false;
    for &(call, k) in candidates {
        let produced = index.output(call, k);
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
