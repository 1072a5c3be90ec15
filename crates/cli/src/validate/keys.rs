//! Graph keys, per dispatch: `graph node id` must be `(graph id << 32) |
//! node`, node the true node's CREATION index (the backend reports
//! CUPTI-like node ids in creation order, not the dispatch ordinal), and the
//! graph id must name the true exec instance consistently across the whole
//! session: emitted graph ids and true (graph_exec_id, exec_epoch) identities
//! form a bijection. No majority vote: a node id permuted the same way in
//! every replay is wrong in every replay.
use std::collections::{BTreeMap, HashMap, HashSet};

/// A true exec instance: the SDK's graph_exec_id and how many successful
/// updates it had before the launch.
pub type Identity = (u64, u32);
/// A true node: its exec instance and creation index.
pub type TrueNode = (u64, u32, u32);
/// A key as emitted: (graph id, graph node id).
pub type Key = (u64, u64);

pub const PAIR_ON_EAGER_WORK: &str = "pair_on_eager_work";
pub const NODE_ID_NOT_PACKED: &str = "node_id_not_packed_with_graph_id";
pub const NODE_NOT_CREATION_INDEX: &str = "node_not_creation_index";
pub const GRAPH_ID_NOT_SDK_EXEC_ID: &str = "graph_id_not_sdk_exec_id";
pub const GRAPH_ID_SHARED: &str = "graph_id_bound_to_several_execs";
pub const EXEC_SPLIT: &str = "exec_under_several_graph_ids";

/// What one emitted graph id or one true identity is bound to, and whether
/// it was ever bound to a second one.
struct Binding<T> {
    first: T,
    conflicted: bool,
}

fn bind<K: std::hash::Hash + Eq, T: PartialEq>(map: &mut HashMap<K, Binding<T>>, key: K, to: T) {
    map.entry(key)
        .and_modify(|b| b.conflicted |= b.first != to)
        .or_insert(Binding {
            first: to,
            conflicted: false,
        });
}

struct KeyUse {
    first: Option<TrueNode>,
    occurrences: usize,
    aliased: bool,
}

/// Everything the key checks accumulate over the session.
pub struct KeyBook {
    /// SDK 1.3: an exec at epoch 0 must carry its graph_exec_id.
    sdk_has_exec_ids: bool,
    keys: HashMap<Key, KeyUse>,
    nodes: HashSet<TrueNode>,
    node_keys: HashSet<(TrueNode, Key)>,
    graph_ids: HashMap<u64, Binding<Identity>>,
    identities: HashMap<Identity, Binding<u64>>,
    /// Per carrying graph dispatch: its graph id, identity, and whether a
    /// per-dispatch check already found it wrong. The bijection is judged
    /// once the whole session has been seen.
    deferred: Vec<(u64, Identity, bool)>,
    pub carrying: usize,
    pub withheld: usize,
    pub eager: usize,
    pub wrong: usize,
    pub reasons: BTreeMap<&'static str, usize>,
}

impl KeyBook {
    pub fn new(sdk_has_exec_ids: bool) -> KeyBook {
        KeyBook {
            sdk_has_exec_ids,
            keys: HashMap::new(),
            nodes: HashSet::new(),
            node_keys: HashSet::new(),
            graph_ids: HashMap::new(),
            identities: HashMap::new(),
            deferred: Vec::new(),
            carrying: 0,
            withheld: 0,
            eager: 0,
            wrong: 0,
            reasons: BTreeMap::new(),
        }
    }

    fn reason(&mut self, reason: &'static str) {
        *self.reasons.entry(reason).or_default() += 1;
    }

    /// One dispatch: its emitted pair, and its true node (None: eager work).
    pub fn check(&mut self, pair: Option<Key>, node: Option<TrueNode>) {
        if let Some(node) = node {
            self.nodes.insert(node);
        }
        let Some(key) = pair else {
            match node {
                Some(_) => self.withheld += 1,
                None => self.eager += 1,
            }
            return;
        };
        self.carrying += 1;
        let uses = self.keys.entry(key).or_insert(KeyUse {
            first: node,
            occurrences: 0,
            aliased: false,
        });
        uses.occurrences += 1;
        uses.aliased |= uses.first != node || node.is_none();
        let Some(node @ (exec, epoch, index)) = node else {
            self.reason(PAIR_ON_EAGER_WORK);
            self.wrong += 1;
            return;
        };
        self.node_keys.insert((node, key));
        let (graph_id, node_id) = key;
        let mut wrong = false;
        if node_id >> 32 != graph_id & 0xFFFF_FFFF {
            self.reason(NODE_ID_NOT_PACKED);
            wrong = true;
        } else if node_id & 0xFFFF_FFFF != u64::from(index) {
            self.reason(NODE_NOT_CREATION_INDEX);
            wrong = true;
        }
        if self.sdk_has_exec_ids && epoch == 0 && graph_id != exec {
            self.reason(GRAPH_ID_NOT_SDK_EXEC_ID);
            wrong = true;
        }
        if wrong {
            self.wrong += 1;
        }
        bind(&mut self.graph_ids, graph_id, (exec, epoch));
        bind(&mut self.identities, (exec, epoch), graph_id);
        self.deferred.push((graph_id, (exec, epoch), wrong));
    }

    /// Judges the bijection over the whole session.
    pub fn finish(&mut self) {
        for (graph_id, identity, already_wrong) in std::mem::take(&mut self.deferred) {
            let shared = self.graph_ids[&graph_id].conflicted;
            let split = self.identities[&identity].conflicted;
            if shared {
                self.reason(GRAPH_ID_SHARED);
            }
            if split {
                self.reason(EXEC_SPLIT);
            }
            if (shared || split) && !already_wrong {
                self.wrong += 1;
            }
        }
    }

    pub fn distinct_keys(&self) -> usize {
        self.keys.len()
    }

    pub fn distinct_graph_ids(&self) -> usize {
        let ids: HashSet<u64> = self.keys.keys().map(|(g, _)| *g).collect();
        ids.len()
    }

    /// occurrences -> how many keys were seen that many times.
    pub fn occurrences_per_key(&self) -> BTreeMap<usize, usize> {
        let mut out = BTreeMap::new();
        for uses in self.keys.values() {
            *out.entry(uses.occurrences).or_default() += 1;
        }
        out
    }

    /// Keys covering more than one true node, or eager work (the first
    /// round's metric).
    pub fn aliased_keys(&self) -> usize {
        self.keys.values().filter(|u| u.aliased).count()
    }

    pub fn true_nodes(&self) -> usize {
        self.nodes.len()
    }

    /// True nodes carried under more than one key, counted beyond the first.
    pub fn split_nodes(&self) -> usize {
        let carried: HashSet<TrueNode> = self.node_keys.iter().map(|(n, _)| *n).collect();
        self.node_keys.len() - carried.len()
    }
}
