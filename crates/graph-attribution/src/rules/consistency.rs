//! Rule 7: what ran must be what the graph said. A call that no other
//! thread's packet-writing call overlapped processed exactly its own
//! packets (the two-hop rule in `candidates`, with nobody to hop through),
//! so in a complete window its records must be exactly what its exec's
//! graph-building calls said it runs. An exec whose launch shows anything
//! else is distrusted for the rest of the session: its launches may then
//! produce anything, which withholds every key it could be confused with.

use rustc_hash::FxHashMap;

use crate::calls::{CallIndex, ResolvedExec};
use crate::evidence::{Observations, WindowEvidence};
use crate::ids::AttributionId;
use crate::work::{BlitKind, Direction, Observed, Output};

/// Execs (attribution ids) whose isolated launches contradict their graph.
pub(crate) fn contradicted(
    index: &mut CallIndex<'_>,
    observations: &Observations,
) -> Vec<AttributionId> {
    if !index.evidence.complete {
        return Vec::new();
    }
    let calls = index.produces.len();
    let grouped = Grouped::by_launch(index, observations);
    let mut out = Vec::new();
    for call in 0..calls as u32 {
        // `isolated` needs the index mutably, so the launch is looked up
        // again after it rather than held across it.
        if index.keyed_launch(call).is_none() || !index.isolated(call) {
            continue;
        }
        let (g, exec) = index.keyed_launch(call).expect("a keyed launch");
        let records = grouped.of(call);
        match produces_exactly(exec, records.clone(), index.evidence) {
            Match::InOrder => {
                // Rule 1 may then take the launch's records whole
                // (`candidates::launch_run`).
                if let Records::Run(run) = records {
                    index.found_in_order(call, run.start);
                }
            }
            Match::Exactly => {}
            Match::Not => {
                if !out.contains(&g) {
                    out.push(g);
                }
            }
        }
    }
    out
}

/// How a launch's records match its outputs.
enum Match {
    /// One to one, each record the output at its place.
    InOrder,
    /// One to one, in another order.
    Exactly,
    Not,
}

/// Each launch's records (indices into the observations).
enum Grouped {
    /// Each launch's records sit together, as they do when launches do not
    /// overlap: launch c's are `runs[c]`, no index list needed.
    Runs(Vec<(u32, u32)>),
    /// Grouped by counting (no map per record): launch c's are
    /// `records[first[c]..first[c + 1]]`.
    Counted { first: Vec<u32>, records: Vec<u32> },
}

/// The records of one launch.
#[derive(Clone)]
enum Records<'a> {
    Run(std::ops::Range<u32>),
    Listed(std::slice::Iter<'a, u32>),
}

impl Iterator for Records<'_> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        match self {
            Records::Run(range) => range.next(),
            Records::Listed(list) => list.next().copied(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            Records::Run(range) => range.size_hint(),
            Records::Listed(list) => list.size_hint(),
        }
    }
}

impl ExactSizeIterator for Records<'_> {}

impl Grouped {
    fn by_launch(index: &CallIndex<'_>, observations: &Observations) -> Grouped {
        let calls = index.produces.len();
        let is_launch = |c: u32| index.keyed_launch(c).is_some();
        let launch_of = |r: usize| index.processed_by(r).filter(|&c| is_launch(c));
        // One pass over the runs of records each call processed: is every
        // launch's set of records one run?
        let mut runs = vec![(0u32, 0u32); calls];
        let mut together = true;
        for (range, call) in index.processed_runs() {
            let Some(c) = call.filter(|&c| is_launch(c)) else {
                continue;
            };
            let run = &mut runs[c as usize];
            if run.1 == run.0 {
                *run = (range.start as u32, range.end as u32);
            } else {
                together = false;
                break;
            }
        }
        if together {
            return Grouped::Runs(runs);
        }
        let mut first = vec![0u32; calls + 1];
        for r in 0..observations.len() {
            if let Some(c) = launch_of(r) {
                first[c as usize + 1] += 1;
            }
        }
        for c in 0..calls {
            first[c + 1] += first[c];
        }
        // Record indices, not copies of what they observed: a window of a
        // million records would copy 40 MB.
        let mut next = first.clone();
        let mut records = vec![0u32; first[calls] as usize];
        for r in 0..observations.len() {
            if let Some(c) = launch_of(r) {
                records[next[c as usize] as usize] = r as u32;
                next[c as usize] += 1;
            }
        }
        Grouped::Counted { first, records }
    }

    fn of(&self, call: u32) -> Records<'_> {
        let c = call as usize;
        match self {
            Grouped::Runs(runs) => Records::Run(runs[c].0..runs[c].1),
            Grouped::Counted { first, records } => {
                Records::Listed(records[first[c] as usize..first[c + 1] as usize].iter())
            }
        }
    }
}

/// Can the records (indices into `observations`) be matched one to one
/// with the exec's outputs, and are they in output order?
fn produces_exactly(
    exec: &ResolvedExec,
    records: Records<'_>,
    evidence: &WindowEvidence<'_>,
) -> Match {
    let outputs = &exec.outputs;
    let observations = evidence.observations;
    if outputs.len() != records.len() {
        return Match::Not;
    }
    let observed = |r: u32| evidence.observed_by_id(observations.observed_ids()[r as usize]);
    // A launch's records mostly arrive in node order: then each shows what
    // its output shows, compared by id, and no count is needed.
    let shown = observations.observed_ids();
    let in_order = exec
        .shown_in_order
        .as_deref()
        .is_some_and(|ids| match &records {
            // One run (as a launch's records mostly are): read it in place.
            Records::Run(run) => ids == &shown[run.start as usize..run.end as usize],
            Records::Listed(_) => ids
                .iter()
                .zip(records.clone())
                .all(|(id, r)| shown[r as usize] == *id),
        });
    if in_order {
        return Match::InOrder;
    }
    // Exact outputs (kernels, fills, device copies), and the copies that may
    // have become a copy blit or an engine copy.
    let mut exact: FxHashMap<Observed, i64> = FxHashMap::default();
    // (direction, bytes) -> outputs that may be that copy; `None` direction last.
    let mut specific: FxHashMap<(Direction, u64), i64> = FxHashMap::default();
    let mut any_direction: FxHashMap<u64, i64> = FxHashMap::default();
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
    for r in records.map(observed) {
        match *r {
            Observed::Blit(BlitKind::Copy) if exact.get(r).is_none_or(|n| *n == 0) => {
                copy_blits += 1
            }
            Observed::Kernel(_) | Observed::Blit(_) => match exact.get_mut(r) {
                Some(n) if *n > 0 => *n -= 1,
                _ => return Match::Not,
            },
            Observed::Copy { direction, bytes } => {
                if let Some(n) = specific.get_mut(&(direction, bytes)).filter(|n| **n > 0) {
                    *n -= 1;
                } else if let Some(n) = any_direction.get_mut(&bytes).filter(|n| **n > 0) {
                    *n -= 1;
                } else {
                    return Match::Not;
                }
                alternatives -= 1;
            }
        }
    }
    if exact.values().all(|&n| n == 0) && copy_blits == alternatives {
        Match::Exactly
    } else {
        Match::Not
    }
}
