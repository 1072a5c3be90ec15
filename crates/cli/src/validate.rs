//! Compares a trace with the simulator's ground truth, the way the seed
//! validated on real hardware: every graph node runs a distinct kernel, so a
//! key that covers more than one true node has aliased. Here the truth is
//! exact (the simulator knows each dispatch's exec and node), so we can also
//! count misattributed and withheld records, not only aliased keys.
use crate::trace::GpuEvent;
use rocprofiler_sim::truth::{OpKind, OpTruth, RunTruth};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};

/// A true node: which exec (the SDK's id), running which graph, which node.
type TrueNode = (u64, String, u32);

#[derive(Debug, Default, Serialize, PartialEq)]
pub struct Validation {
    pub kernel_events: usize,
    pub expected_kernel_dispatches: usize,
    pub carrying_both_fields: usize,
    pub distinct_graph_ids: usize,
    pub distinct_keys: usize,
    /// occurrences -> number of keys seen that many times.
    pub occurrences_per_key: BTreeMap<usize, usize>,
    /// Keys covering more than one true node (or an eager kernel).
    pub aliased_keys: usize,
    /// Records whose pair does not name their true node consistently.
    pub misattributed_records: usize,
    /// Graph-replay records emitted without a pair.
    pub withheld_records: usize,
    /// Eager (non-graph) kernels, which must carry no pair.
    pub eager_kernels: usize,
    /// True graph nodes, and how many keys they were split over beyond one.
    pub true_nodes: usize,
    pub split_nodes: usize,
    /// Trace events whose dispatch id the ground truth does not know.
    pub unmatched_events: usize,
    /// Kernels shown linked to a CPU op (External id) through a correlation
    /// id that is not their true launch's: a wrong CPU link.
    pub wrong_cpu_links: usize,
    /// Kernels carrying an External id at all.
    pub linked_kernels: usize,
    pub agents: usize,
}

impl Validation {
    /// No wrong pair was emitted.
    pub fn is_clean(&self) -> bool {
        self.aliased_keys == 0
            && self.misattributed_records == 0
            && self.unmatched_events == 0
            && self.wrong_cpu_links == 0
    }
}

pub fn validate(events: &[GpuEvent], truth: &RunTruth) -> Validation {
    let by_dispatch: HashMap<u64, &OpTruth> = truth
        .ops
        .iter()
        .filter(|op| op.kind == OpKind::Kernel)
        .map(|op| (op.dispatch_id, op))
        .collect();
    let true_node = |op: &OpTruth| -> Option<TrueNode> {
        op.node_index
            .map(|node| (op.graph_exec_id, op.graph.clone().unwrap_or_default(), node))
    };
    let mut v = Validation {
        expected_kernel_dispatches: by_dispatch.len(),
        agents: truth.agents.len(),
        ..Validation::default()
    };
    let mut key_nodes: HashMap<(u64, u64), HashMap<Option<TrueNode>, usize>> = HashMap::new();
    let mut node_keys: HashMap<TrueNode, HashSet<(u64, u64)>> = HashMap::new();
    let mut graph_execs: HashMap<u64, HashMap<Option<(u64, String)>, usize>> = HashMap::new();
    let mut matched: Vec<(&GpuEvent, &OpTruth)> = Vec::new();
    for event in events.iter().filter(|e| e.category == "kernel") {
        v.kernel_events += 1;
        let Some(op) = event.dispatch_id.and_then(|id| by_dispatch.get(&id)) else {
            v.unmatched_events += 1;
            continue;
        };
        matched.push((event, op));
        if event.external_id.is_some() {
            v.linked_kernels += 1;
            if event.correlation != Some(op.launch_correlation_id) {
                v.wrong_cpu_links += 1;
            }
        }
        let node = true_node(op);
        if node.is_none() {
            v.eager_kernels += 1;
        }
        match (event.graph, &node) {
            (Some(key), _) => {
                v.carrying_both_fields += 1;
                *key_nodes
                    .entry(key)
                    .or_default()
                    .entry(node.clone())
                    .or_default() += 1;
                *graph_execs
                    .entry(key.0)
                    .or_default()
                    .entry(node.as_ref().map(|(exec, graph, _)| (*exec, graph.clone())))
                    .or_default() += 1;
                if let Some(node) = node {
                    node_keys.entry(node).or_default().insert(key);
                }
            }
            (None, Some(node)) => {
                v.withheld_records += 1;
                node_keys.entry(node.clone()).or_default();
            }
            (None, None) => {}
        }
    }
    v.distinct_keys = key_nodes.len();
    v.distinct_graph_ids = graph_execs.len();
    for nodes in key_nodes.values() {
        *v.occurrences_per_key
            .entry(nodes.values().sum())
            .or_default() += 1;
        if nodes.len() > 1 || nodes.contains_key(&None) {
            v.aliased_keys += 1;
        }
    }
    // A record is misattributed when its key's majority node, or its graph
    // id's majority exec, is not its own true node / exec.
    let majority = |counts: &HashMap<Option<TrueNode>, usize>| {
        counts
            .iter()
            .max_by_key(|(_, n)| **n)
            .and_then(|(k, _)| k.clone())
    };
    let key_owner: HashMap<(u64, u64), Option<TrueNode>> =
        key_nodes.iter().map(|(k, c)| (*k, majority(c))).collect();
    let graph_owner: HashMap<u64, Option<(u64, String)>> = graph_execs
        .iter()
        .map(|(g, c)| {
            (
                *g,
                c.iter()
                    .max_by_key(|(_, n)| **n)
                    .and_then(|(k, _)| k.clone()),
            )
        })
        .collect();
    for (event, op) in matched {
        let Some(key) = event.graph else { continue };
        let node = true_node(op);
        let exec = node.as_ref().map(|(exec, graph, _)| (*exec, graph.clone()));
        let wrong_key = node.is_none() || key_owner.get(&key).cloned().flatten() != node;
        let wrong_graph = graph_owner.get(&key.0).cloned().flatten() != exec;
        if wrong_key || wrong_graph {
            v.misattributed_records += 1;
        }
    }
    v.true_nodes = node_keys.len();
    v.split_nodes = node_keys
        .values()
        .map(|keys| keys.len().saturating_sub(1))
        .sum();
    v
}

pub fn print(v: &Validation, summary: &[String]) {
    println!(
        "kernel events            {:>8}  (ground truth: {} dispatches)",
        v.kernel_events, v.expected_kernel_dispatches
    );
    println!("carrying both fields     {:>8}", v.carrying_both_fields);
    println!("distinct graph ids       {:>8}", v.distinct_graph_ids);
    println!(
        "distinct keys            {:>8}  (true graph nodes: {})",
        v.distinct_keys, v.true_nodes
    );
    let occurrences: Vec<String> = v
        .occurrences_per_key
        .iter()
        .map(|(n, keys)| format!("{keys} keys x {n}"))
        .collect();
    println!(
        "occurrences per key      {}",
        if occurrences.is_empty() {
            "-".to_string()
        } else {
            occurrences.join(", ")
        }
    );
    println!("aliased keys             {:>8}", v.aliased_keys);
    println!("misattributed records    {:>8}", v.misattributed_records);
    println!("withheld records         {:>8}", v.withheld_records);
    println!("nodes split over keys    {:>8}", v.split_nodes);
    println!("eager kernels            {:>8}", v.eager_kernels);
    println!(
        "kernels linked to CPU op {:>8}  (wrong links: {})",
        v.linked_kernels, v.wrong_cpu_links
    );
    println!("agents                   {:>8}", v.agents);
    if v.unmatched_events > 0 {
        println!("UNMATCHED trace events   {:>8}", v.unmatched_events);
    }
    for line in summary {
        println!("tool: {line}");
    }
}
