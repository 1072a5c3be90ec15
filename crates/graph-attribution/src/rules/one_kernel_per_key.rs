//! Rule 6, the safety net: a key names one node, so every record emitted
//! with it must show the same work, in this window and in every window of
//! the session. Unreachable while the graph-building calls were followed
//! correctly; kept as the last line of defence against what they did not
//! say (a node changed through an API the tool does not model).
//!
//! A copy that touches host memory is one node whatever engine ran it: the
//! runtime picks a blit kernel or the copy engine per copy (rocblit.cpp
//! `KernelBlitManager::copyBuffer`), so a blit and an engine copy count as
//! the same work here.

use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::calls::{CallIndex, ResolvedExec};
use crate::evidence::Observations;
use crate::ids::{AttributionId, GraphKey, NodeId};
use crate::rules::candidates::LaunchRun;
use crate::session::SessionMemory;
use crate::verdict::{KeyVerdict, LinkVerdict, Reason};
use crate::work::{BlitKind, Observed};

/// What must stay the same under one key.
fn work(observed: &Observed) -> Observed {
    match observed {
        Observed::Copy { .. } => Observed::Blit(BlitKind::Copy),
        other => *other,
    }
}

/// What a window's records showed under one key.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Seen {
    Unseen,
    Work(Observed),
    Several,
}

/// Node ids below this are kept in a per-exec array: they are creation
/// indices, so an exec's ids are dense and a record's entry is found
/// without hashing its key (a window of a million records asks a million
/// times). Anything larger goes to a map.
const DENSE_NODES: u32 = 1 << 16;

/// What each key of a window showed.
#[derive(Default)]
struct SeenKeys {
    /// Per exec, by node id.
    dense: Vec<(AttributionId, Vec<Seen>)>,
    exec_index: FxHashMap<AttributionId, usize>,
    sparse: FxHashMap<GraphKey, Seen>,
    /// The previous record's exec, and where its array is: a launch's
    /// records are next to each other.
    last: Option<(AttributionId, usize)>,
}

impl SeenKeys {
    fn entry(&mut self, key: GraphKey) -> &mut Seen {
        if key.node.0 >= DENSE_NODES {
            return self.sparse.entry(key).or_insert(Seen::Unseen);
        }
        let exec = match self.last {
            Some((g, i)) if g == key.graph_id => i,
            _ => {
                let dense = &mut self.dense;
                let i = *self.exec_index.entry(key.graph_id).or_insert_with(|| {
                    dense.push((key.graph_id, Vec::new()));
                    dense.len() - 1
                });
                self.last = Some((key.graph_id, i));
                i
            }
        };
        let nodes = &mut self.dense[exec].1;
        let node = key.node.index();
        if nodes.len() <= node {
            nodes.resize(node + 1, Seen::Unseen);
        }
        &mut nodes[node]
    }

    fn get(&self, key: GraphKey) -> Seen {
        if key.node.0 >= DENSE_NODES {
            return self.sparse.get(&key).copied().unwrap_or(Seen::Unseen);
        }
        self.exec_index
            .get(&key.graph_id)
            .and_then(|&i| self.dense[i].1.get(key.node.index()))
            .copied()
            .unwrap_or(Seen::Unseen)
    }

    /// Every key whose records all showed one work, with that work.
    fn consistent(self) -> impl Iterator<Item = (GraphKey, Observed)> {
        let dense = self.dense.into_iter().flat_map(|(graph_id, nodes)| {
            nodes
                .into_iter()
                .enumerate()
                .filter_map(move |(node, seen)| match seen {
                    Seen::Work(observed) => {
                        Some((GraphKey::new(graph_id, NodeId(node as u32)), observed))
                    }
                    _ => None,
                })
        });
        let sparse = self
            .sparse
            .into_iter()
            .filter_map(|(key, seen)| match seen {
                Seen::Work(observed) => Some((key, observed)),
                _ => None,
            });
        dense.chain(sparse)
    }
}

/// A launch run's records show its exec's outputs `first..first + len`:
/// two runs with the same key show the same keys with the same work.
type RunShape = (AttributionId, *const ResolvedExec, u32, u32);

pub(crate) fn apply(
    index: &CallIndex<'_>,
    observations: &Observations,
    runs: &[LaunchRun],
    keys: &mut [KeyVerdict],
    links: &mut [LinkVerdict],
    memory: &mut SessionMemory,
) {
    let mut seen = SeenKeys::default();
    let mut several = false;
    // Runs whose every record was entered: a later run of the same shape
    // adds nothing, so its records are not looked at one by one.
    let mut entered: FxHashSet<RunShape> = FxHashSet::default();
    let mut runs = runs.iter().peekable();
    let mut r = 0;
    while r < observations.len() {
        let mut end = r + 1;
        let mut shape = None;
        if let Some(run) = runs.next_if(|run| run.start as usize == r) {
            end = r + run.len as usize;
            if let Some((graph_id, exec)) = index.keyed_launch(run.call) {
                let this = (graph_id, Arc::as_ptr(exec), run.first, run.len);
                if entered.contains(&this) {
                    r = end;
                    continue;
                }
                shape = Some(this);
            }
        }
        let mut all_keyed = true;
        for (key, o) in keys[r..end].iter().zip(observations.range(r..end)) {
            let Some(key) = key.key() else {
                all_keyed = false;
                continue;
            };
            let now = work(index.evidence.observed(&o));
            let entry = seen.entry(key);
            match *entry {
                Seen::Unseen => {
                    let before = memory.emitted(key).unwrap_or(now);
                    *entry = if before == now {
                        Seen::Work(now)
                    } else {
                        several = true;
                        Seen::Several
                    };
                }
                Seen::Work(w) if w != now => {
                    several = true;
                    *entry = Seen::Several;
                }
                Seen::Work(_) | Seen::Several => {}
            }
        }
        if let Some(shape) = shape.filter(|_| all_keyed) {
            entered.insert(shape);
        }
        r = end;
    }
    // Nearly always nothing to withhold: skip the second pass then.
    if several {
        for (i, key) in keys.iter_mut().enumerate() {
            if let Some(k) = key.key() {
                if seen.get(k) == Seen::Several {
                    *key = KeyVerdict::Withheld(Reason::KeyCoversSeveralKernels);
                    links[i] = LinkVerdict::Unlinked(Reason::KeyCoversSeveralKernels);
                }
            }
        }
    }
    for (k, observed) in seen.consistent() {
        memory.remember(k, observed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::testing::{kernel_shown, KERNELS_SHOWN};
    use crate::evidence::{Observation, WindowEvidence};
    use crate::verdict::{KeyProof, LinkProof};

    fn record(kernel_id: u64) -> Observation {
        Observation {
            correlation_id: 1,
            observed: kernel_shown(kernel_id),
            queue_id: 1,
            dispatch_id: Some(kernel_id),
            start_ns: 0,
            end_ns: 1,
        }
    }

    fn key(graph: u32, node: u32) -> KeyVerdict {
        KeyVerdict::Key {
            key: GraphKey::new(AttributionId::new(graph).unwrap(), NodeId(node)),
            proof: KeyProof::OnlyPossibleNode,
        }
    }

    fn linked() -> LinkVerdict {
        LinkVerdict::Linked {
            correlation_id: 1,
            proof: LinkProof::OnlyPossibleCall,
        }
    }

    fn run(
        records: &[(u64, KeyVerdict)],
        memory: &mut SessionMemory,
    ) -> (Vec<KeyVerdict>, Vec<LinkVerdict>) {
        let observations: Observations = records.iter().map(|&(k, _)| record(k)).collect();
        let mut keys: Vec<KeyVerdict> = records.iter().map(|&(_, v)| v).collect();
        let mut links = vec![linked(); records.len()];
        // No calls: every record is looked at alone (no launch runs).
        let stubs = std::collections::HashMap::<u64, u64>::new();
        let evidence = WindowEvidence::whole(&observations, &KERNELS_SHOWN, &[], &stubs, u64::MAX);
        let index = CallIndex::new(&evidence, &|_| false);
        apply(&index, &observations, &[], &mut keys, &mut links, memory);
        (keys, links)
    }

    const WITHHELD: KeyVerdict = KeyVerdict::Withheld(Reason::KeyCoversSeveralKernels);

    #[test]
    fn a_key_that_shows_two_kernels_in_one_window_is_withheld_everywhere() {
        // Dense and sparse node ids alike; other keys of the same exec keep
        // theirs.
        for node in [3, DENSE_NODES + 7] {
            let mut memory = SessionMemory::new();
            let (keys, links) = run(
                &[(10, key(1, node)), (11, key(1, 0)), (12, key(1, node))],
                &mut memory,
            );
            assert_eq!(keys, [WITHHELD, key(1, 0), WITHHELD], "node {node}");
            assert_eq!(
                links[0],
                LinkVerdict::Unlinked(Reason::KeyCoversSeveralKernels)
            );
            assert_eq!(links[1], linked());
            assert_eq!(memory.len(), 1, "only the consistent key is remembered");
        }
    }

    #[test]
    fn a_key_must_show_in_later_windows_what_it_showed_before() {
        let mut memory = SessionMemory::new();
        let first = [(10, key(1, 2)), (20, key(2, 2)), (30, key(1, 70_000))];
        assert_eq!(run(&first, &mut memory).0, first.map(|(_, k)| k));
        assert_eq!(memory.len(), 3);
        // Same kernels again: kept. Another kernel under an old key: withheld,
        // while records of other execs between them keep theirs.
        let again = [(10, key(1, 2)), (20, key(2, 2)), (30, key(1, 70_000))];
        assert_eq!(run(&again, &mut memory).0, again.map(|(_, k)| k));
        let changed = [(20, key(2, 2)), (11, key(1, 2)), (31, key(1, 70_000))];
        assert_eq!(
            run(&changed, &mut memory).0,
            [key(2, 2), WITHHELD, WITHHELD]
        );
    }

    #[test]
    fn records_without_a_key_are_left_alone() {
        let mut memory = SessionMemory::new();
        let other = KeyVerdict::Withheld(Reason::Ambiguous);
        let (keys, _) = run(
            &[
                (1, KeyVerdict::NotGraphed),
                (2, other),
                (3, key(4, 0)),
                (5, key(4, 0)),
            ],
            &mut memory,
        );
        assert_eq!(keys, [KeyVerdict::NotGraphed, other, WITHHELD, WITHHELD]);
        assert!(memory.is_empty());
    }
}
