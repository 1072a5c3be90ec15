//! What the HIP graph API says each graph and exec contains.
//!
//! Why: under ROCm's submission, the thread that processes a packet is not
//! always the one that launched it, so a dispatch record's correlation id
//! and the launching thread's state cannot say which node produced it. What
//! a graph contains can: the graph-building calls (hipGraphCreate,
//! hipGraphAdd*Node with their dependencies) name every node's kernel and
//! launch shape, and hipGraphInstantiate / hipGraphExecUpdate say which
//! graph an exec runs. A node's id is its creation index: the position of
//! the call that added it to its graph.
//!
//! Anything the tool cannot follow (a graph built before tracking began, a
//! mutation through an API this module does not model) marks the graph or
//! exec *incomplete*: its launches may then produce anything, and the
//! attribution rules treat them as such rather than trusting a stale list.
//!
//! Rare path: every method locks one mutex.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::ids::ExecHandle;
use crate::work::{Direction, FillParts, HostKernel};

/// A `hipGraph_t` as an opaque value (HIP may reuse the address after
/// hipGraphDestroy).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GraphHandle(pub u64);

/// A `hipGraphNode_t` as an opaque value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeHandle(pub u64);

/// What one node does on the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeWork {
    /// A kernel node (hipGraphAddKernelNode).
    Kernel(HostKernel),
    /// A memset node: fill blit kernels.
    Memset(FillParts),
    /// A 1-D memcpy node. `None` direction: hipMemcpyDefault.
    Memcpy {
        direction: Option<Direction>,
        bytes: u64,
    },
    /// Empty, event and wait nodes: no dispatch record.
    NoDispatch,
    /// A node whose work the tool cannot name.
    Unknown,
}

/// What a node does beyond what attribution matches, for the timeline
/// (attribution never reads it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NodeDetail {
    #[default]
    None,
    /// A memset node: `bytes` set to the byte `value`.
    Memset { bytes: u64, value: u32 },
    /// A host node (hipGraphAddHostNode): the function it runs.
    Host { function: u64 },
    /// An event-record node (hipGraphAddEventRecordNode): the hipEvent_t
    /// each replay records.
    EventRecord { event: u64 },
}

/// One node: its work and the creation indices of the nodes it waits for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeSpec {
    pub work: NodeWork,
    pub deps: Box<[u32]>,
    pub detail: NodeDetail,
}

/// What an exec runs: a snapshot of its graph's nodes at instantiate (or
/// at its last successful update), by creation index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecContents {
    pub nodes: Box<[NodeSpec]>,
    /// False when the graph was built or changed in ways the tool did not
    /// follow: its nodes may not be all it runs.
    pub complete: bool,
}

#[derive(Clone, Debug, Default)]
struct GraphState {
    nodes: Vec<NodeSpec>,
    complete: bool,
}

#[derive(Default)]
struct Registry {
    graphs: HashMap<GraphHandle, GraphState>,
    /// node handle -> (its graph, its creation index)
    nodes: HashMap<NodeHandle, (GraphHandle, u32)>,
    execs: HashMap<ExecHandle, Arc<ExecContents>>,
}

impl Registry {
    /// The graph at `handle`; one never seen being created is incomplete.
    fn graph(&mut self, handle: GraphHandle) -> &mut GraphState {
        self.graphs.entry(handle).or_default()
    }

    fn snapshot(&mut self, graph: GraphHandle) -> Arc<ExecContents> {
        let state = self.graph(graph);
        Arc::new(ExecContents {
            nodes: state.nodes.clone().into_boxed_slice(),
            complete: state.complete,
        })
    }
}

/// The graphs and execs of one process, fed by the HIP API callbacks.
#[derive(Default)]
pub struct GraphStructure {
    registry: Mutex<Registry>,
}

impl GraphStructure {
    pub fn new() -> GraphStructure {
        GraphStructure::default()
    }

    fn lock(&self) -> MutexGuard<'_, Registry> {
        self.registry.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// hipGraphCreate returned `graph`: an empty graph, fully known.
    pub fn graph_created(&self, graph: GraphHandle) {
        let mut r = self.lock();
        r.nodes.retain(|_, (g, _)| *g != graph);
        r.graphs.insert(
            graph,
            GraphState {
                nodes: Vec::new(),
                complete: true,
            },
        );
    }

    /// A hipGraphAdd*Node call returned `node`, added to `graph` after
    /// `deps`. A dependency the registry does not know as a node of `graph`
    /// makes the graph incomplete.
    pub fn node_added(
        &self,
        graph: GraphHandle,
        node: NodeHandle,
        deps: &[NodeHandle],
        work: NodeWork,
    ) {
        self.node_added_with(graph, node, deps, work, NodeDetail::None)
    }

    /// As `node_added`, with what the node does beyond its work.
    pub fn node_added_with(
        &self,
        graph: GraphHandle,
        node: NodeHandle,
        deps: &[NodeHandle],
        work: NodeWork,
        detail: NodeDetail,
    ) {
        let mut r = self.lock();
        let mut indices = Vec::with_capacity(deps.len());
        let mut known = true;
        for dep in deps {
            match r.nodes.get(dep) {
                Some(&(g, index)) if g == graph => indices.push(index),
                _ => known = false,
            }
        }
        let state = r.graph(graph);
        let index = state.nodes.len() as u32;
        state.nodes.push(NodeSpec {
            work,
            deps: indices.into_boxed_slice(),
            detail,
        });
        state.complete &= known;
        r.nodes.insert(node, (graph, index));
    }

    /// hipGraphClone returned `clone`, a copy of `original` (same nodes, same
    /// creation indices). The clone's node handles are not reported, so a
    /// later node added to it with a dependency makes it incomplete.
    pub fn graph_cloned(&self, original: GraphHandle, clone: GraphHandle) {
        let mut r = self.lock();
        let copy = r.graph(original).clone();
        r.nodes.retain(|_, (g, _)| *g != clone);
        r.graphs.insert(clone, copy);
    }

    /// hipGraphDestroy: the handle may be reused for another graph.
    pub fn graph_destroyed(&self, graph: GraphHandle) {
        let mut r = self.lock();
        r.graphs.remove(&graph);
        r.nodes.retain(|_, (g, _)| *g != graph);
    }

    /// A call changed `graph` in a way this module does not model.
    pub fn graph_changed_untracked(&self, graph: GraphHandle) {
        self.lock().graph(graph).complete = false;
    }

    /// A call changed `node` in a way this module does not model.
    pub fn node_changed_untracked(&self, node: NodeHandle) {
        let mut r = self.lock();
        if let Some(&(graph, _)) = r.nodes.get(&node) {
            r.graph(graph).complete = false;
        }
    }

    /// hipGraphInstantiate* returned `exec` for `graph`.
    pub fn exec_instantiated(&self, exec: ExecHandle, graph: GraphHandle) {
        let mut r = self.lock();
        let contents = r.snapshot(graph);
        r.execs.insert(exec, contents);
    }

    /// hipGraphExecUpdate succeeded: `exec` now runs `graph`'s nodes.
    pub fn exec_updated(&self, exec: ExecHandle, graph: GraphHandle) {
        self.exec_instantiated(exec, graph);
    }

    /// A call changed `exec` in a way this module does not model (e.g.
    /// hipGraphExecKernelNodeSetParams).
    pub fn exec_changed_untracked(&self, exec: ExecHandle) {
        let mut r = self.lock();
        let nodes = r
            .execs
            .get(&exec)
            .map(|c| c.nodes.clone())
            .unwrap_or_default();
        r.execs.insert(
            exec,
            Arc::new(ExecContents {
                nodes,
                complete: false,
            }),
        );
    }

    /// hipGraphExecDestroy: the handle may be reused.
    pub fn exec_destroyed(&self, exec: ExecHandle) {
        self.lock().execs.remove(&exec);
    }

    /// What a launch of `exec` runs now; an exec never seen instantiated is
    /// incomplete and empty.
    pub fn exec_contents(&self, exec: ExecHandle) -> Arc<ExecContents> {
        let mut r = self.lock();
        r.execs
            .entry(exec)
            .or_insert_with(|| {
                Arc::new(ExecContents {
                    nodes: Box::default(),
                    complete: false,
                })
            })
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(f: u64) -> NodeWork {
        NodeWork::Kernel(HostKernel::from_blocks(f, [1, 1, 1], [1, 1, 1]))
    }

    #[test]
    fn nodes_get_creation_indices_and_dependencies_by_index() {
        let s = GraphStructure::new();
        let g = GraphHandle(0x10);
        s.graph_created(g);
        s.node_added(g, NodeHandle(1), &[], kernel(100));
        s.node_added(g, NodeHandle(2), &[NodeHandle(1)], kernel(101));
        s.node_added(
            g,
            NodeHandle(3),
            &[NodeHandle(1), NodeHandle(2)],
            NodeWork::Memset(FillParts::two_d(64)),
        );
        s.exec_instantiated(ExecHandle(7), g);
        let c = s.exec_contents(ExecHandle(7));
        assert!(c.complete);
        assert_eq!(c.nodes.len(), 3);
        assert_eq!(c.nodes[2].deps.as_ref(), &[0, 1]);
        assert_eq!(c.nodes[1].work, kernel(101));
    }

    #[test]
    fn an_exec_keeps_its_snapshot_until_updated() {
        let s = GraphStructure::new();
        let (g, h) = (GraphHandle(1), GraphHandle(2));
        s.graph_created(g);
        s.node_added(g, NodeHandle(1), &[], kernel(1));
        s.exec_instantiated(ExecHandle(9), g);
        s.node_added(g, NodeHandle(2), &[], kernel(2));
        assert_eq!(
            s.exec_contents(ExecHandle(9)).nodes.len(),
            1,
            "added after instantiate"
        );
        s.graph_created(h);
        s.node_added(h, NodeHandle(3), &[], kernel(3));
        s.exec_updated(ExecHandle(9), h);
        assert_eq!(s.exec_contents(ExecHandle(9)).nodes[0].work, kernel(3));
    }

    #[test]
    fn what_the_tool_did_not_follow_makes_graphs_and_execs_incomplete() {
        let s = GraphStructure::new();
        // Never seen created.
        s.exec_instantiated(ExecHandle(1), GraphHandle(5));
        assert!(!s.exec_contents(ExecHandle(1)).complete);
        // Never seen instantiated.
        assert!(!s.exec_contents(ExecHandle(2)).complete);
        // A dependency that is not a node of this graph.
        let g = GraphHandle(6);
        s.graph_created(g);
        s.node_added(g, NodeHandle(10), &[NodeHandle(99)], kernel(1));
        s.exec_instantiated(ExecHandle(3), g);
        assert!(!s.exec_contents(ExecHandle(3)).complete);
        // An untracked change to a node, and to an exec.
        let h = GraphHandle(7);
        s.graph_created(h);
        s.node_added(h, NodeHandle(20), &[], kernel(1));
        s.node_changed_untracked(NodeHandle(20));
        s.exec_instantiated(ExecHandle(4), h);
        assert!(!s.exec_contents(ExecHandle(4)).complete);
        let k = GraphHandle(8);
        s.graph_created(k);
        s.exec_instantiated(ExecHandle(5), k);
        assert!(s.exec_contents(ExecHandle(5)).complete);
        s.exec_changed_untracked(ExecHandle(5));
        assert!(!s.exec_contents(ExecHandle(5)).complete);
    }

    #[test]
    fn a_reused_graph_handle_starts_afresh() {
        let s = GraphStructure::new();
        let g = GraphHandle(1);
        s.graph_created(g);
        s.node_added(g, NodeHandle(1), &[], kernel(1));
        s.graph_destroyed(g);
        s.graph_created(g);
        s.node_added(g, NodeHandle(2), &[NodeHandle(1)], kernel(2));
        s.exec_instantiated(ExecHandle(1), g);
        let c = s.exec_contents(ExecHandle(1));
        assert_eq!(c.nodes.len(), 1);
        assert!(!c.complete, "the old node is not a node of the new graph");
    }

    #[test]
    fn a_clone_has_the_same_nodes() {
        let s = GraphStructure::new();
        let g = GraphHandle(1);
        s.graph_created(g);
        s.node_added(g, NodeHandle(1), &[], kernel(1));
        s.graph_cloned(g, GraphHandle(2));
        s.exec_instantiated(ExecHandle(1), GraphHandle(2));
        let c = s.exec_contents(ExecHandle(1));
        assert!(c.complete);
        assert_eq!(c.nodes[0].work, kernel(1));
    }
}
