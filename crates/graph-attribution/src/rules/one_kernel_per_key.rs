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

use rustc_hash::FxHashMap;

use crate::evidence::Observation;
use crate::ids::GraphKey;
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

pub(crate) fn apply(
    observations: &[Observation],
    keys: &mut [KeyVerdict],
    links: &mut [LinkVerdict],
    memory: &mut SessionMemory,
) {
    let mut seen: FxHashMap<GraphKey, Option<Observed>> = FxHashMap::default();
    for (key, o) in keys.iter().zip(observations) {
        if let Some(key) = key.key() {
            let entry = seen
                .entry(key)
                .or_insert_with(|| Some(memory.emitted(key).unwrap_or(work(&o.observed))));
            if *entry != Some(work(&o.observed)) {
                *entry = None;
            }
        }
    }
    for (i, key) in keys.iter_mut().enumerate() {
        if let Some(k) = key.key() {
            if !matches!(seen.get(&k), Some(Some(_))) {
                *key = KeyVerdict::Withheld(Reason::KeyCoversSeveralKernels);
                links[i] = LinkVerdict::Unlinked(Reason::KeyCoversSeveralKernels);
            }
        }
    }
    for (k, observed) in seen {
        if let Some(observed) = observed {
            memory.remember(k, observed);
        }
    }
}
