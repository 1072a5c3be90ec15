//! Graph nodes whose pair no evidence can prove: nodes that did the same
//! work as another node of their graph that the dependencies do not order
//! (two identical memsets on parallel branches, say). What ran and when it
//! ran cannot tell their records apart, so withholding them is by design;
//! `validate` counts them apart from other withheld records, and an
//! uncontended run must withhold nothing else.
//!
//! "The same work" is what the records show, taken from the truth: a
//! kernel with its launch shape, a fill or copy blit, or an engine copy of
//! one direction and size.
use rocprofiler_sim::truth::{OpKind, RunTruth};
use rocprofiler_sim::workload::{Direction, Graph};
use std::collections::{HashMap, HashSet};

/// What a record shows of the work that produced it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Work {
    Kernel(String, [u32; 3], [u32; 3]),
    Blit(bool),
    Copy(Option<Direction>, u64),
}

/// (graph name, creation index) of every node that repeats another node's
/// work at an unordered node of its graph.
pub fn repeated_nodes(graphs: &[Graph], runs: &[RunTruth]) -> HashSet<(String, u32)> {
    let mut work: HashMap<(String, u32), HashSet<Work>> = HashMap::new();
    for op in runs.iter().flat_map(|r| &r.ops) {
        let (Some(graph), Some(node)) = (&op.graph, op.node_index) else {
            continue;
        };
        let name = op.kernel_name.clone().unwrap_or_default();
        let shown = match op.kind {
            OpKind::Kernel if op.blit => Work::Blit(name.contains("fill")),
            OpKind::Kernel => Work::Kernel(name, op.grid, op.block),
            OpKind::Memcpy => Work::Copy(op.direction, op.bytes),
        };
        work.entry((graph.clone(), node)).or_default().insert(shown);
    }
    let mut repeated = HashSet::new();
    for graph in graphs {
        let reaches = reachability(graph);
        let n = graph.nodes.len();
        for a in 0..n {
            for (b, reaches_b) in reaches.iter().enumerate().skip(a + 1) {
                let key = |i: usize| (graph.name.clone(), i as u32);
                let (Some(wa), Some(wb)) = (work.get(&key(a)), work.get(&key(b))) else {
                    continue;
                };
                if !reaches_b.contains(&a) && wa.intersection(wb).next().is_some() {
                    repeated.insert(key(a));
                    repeated.insert(key(b));
                }
            }
        }
    }
    repeated
}

/// Per node, the nodes it waits for, directly or not.
fn reachability(graph: &Graph) -> Vec<HashSet<usize>> {
    let mut ancestors: Vec<HashSet<usize>> = Vec::with_capacity(graph.nodes.len());
    for node in &graph.nodes {
        let mut mine = HashSet::new();
        for &d in &node.deps {
            mine.insert(d);
            mine.extend(ancestors[d].iter().copied());
        }
        ancestors.push(mine);
    }
    ancestors
}
