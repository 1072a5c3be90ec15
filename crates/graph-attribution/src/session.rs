//! What attribution remembers from one window to the next: which key was
//! emitted for which work (rule 6 holds across the session, so a key never
//! names two different nodes in two windows), and which execs contradicted
//! their graph (rule 7). Bounded by live execs: forget what the tracker
//! retires.

use std::collections::{HashMap, HashSet};

use crate::assumptions::Assumptions;
use crate::ids::{AttributionId, GraphKey};
use crate::work::Observed;

#[derive(Debug, Default)]
pub struct SessionMemory {
    emitted: HashMap<GraphKey, Observed>,
    distrusted: HashSet<AttributionId>,
    assumptions: Assumptions,
}

impl SessionMemory {
    /// Every assumption held (`Assumptions::ALL`).
    pub fn new() -> SessionMemory {
        SessionMemory::default()
    }

    /// A session whose rules use only `assumptions`.
    pub fn with_assumptions(assumptions: Assumptions) -> SessionMemory {
        SessionMemory {
            assumptions,
            ..SessionMemory::default()
        }
    }

    pub fn assumptions(&self) -> Assumptions {
        self.assumptions
    }

    pub(crate) fn emitted(&self, key: GraphKey) -> Option<Observed> {
        self.emitted.get(&key).copied()
    }

    pub(crate) fn remember(&mut self, key: GraphKey, observed: Observed) {
        self.emitted.insert(key, observed);
    }

    /// Has `exec` run something its graph did not say?
    pub fn distrusts(&self, exec: AttributionId) -> bool {
        self.distrusted.contains(&exec)
    }

    pub(crate) fn distrust(&mut self, exec: AttributionId) -> bool {
        self.distrusted.insert(exec)
    }

    /// Drop everything about execs no future launch will carry (destroyed,
    /// replaced or updated).
    pub fn forget(&mut self, retired: &[AttributionId]) {
        if retired.is_empty() {
            return;
        }
        let retired: HashSet<AttributionId> = retired.iter().copied().collect();
        self.emitted
            .retain(|key, _| !retired.contains(&key.graph_id));
        self.distrusted.retain(|id| !retired.contains(id));
    }

    /// Keys remembered (for tests and the bounded-memory check).
    pub fn len(&self) -> usize {
        self.emitted.len()
    }

    pub fn is_empty(&self) -> bool {
        self.emitted.is_empty()
    }
}
