//! The orders in which hipGraphInstantiate lays a graph out for submission.
//!
//! - `flatten`: the `ideal` model's one fixed order: topological, ties to
//!   the node created first.
//! - `kahn_fifo`: `Graph::TopologicalOrder` (ROCm/clr hip_graph_internal.cpp,
//!   CLR-SEG 004f1770): Kahn's algorithm with a FIFO queue, roots in node
//!   creation order, children in edge insertion order.
//! - `segments`: `ScheduleNodesIntoBatches` (CLR-SEG): paths found by a DFS
//!   from each root (`FindExecutionPathsHierarchical`) are cut at a fork
//!   (the fork node ends its path) and at a join (the join node starts the
//!   next path); segment id = path discovery order
//!   (`CreateSegmentsFromPaths`); a segment depends on the segments holding
//!   its first node's dependencies (`ResolveSegmentDependencies`); levels
//!   come from a Kahn BFS over segments, level = 1 + the highest level of
//!   its dependencies, each level listing segments in the order they became
//!   ready (`CalculateSegmentTopoDependencyLevels`); `max_streams_` = the
//!   most segments at any level, at least 1.
use crate::workload::Graph;
use std::collections::VecDeque;

fn edges(graph: &Graph) -> (Vec<usize>, Vec<Vec<usize>>) {
    let n = graph.nodes.len();
    let mut indegree = vec![0usize; n];
    let mut children = vec![Vec::new(); n];
    for (i, node) in graph.nodes.iter().enumerate() {
        for &d in &node.deps {
            indegree[i] += 1;
            children[d].push(i);
        }
    }
    (indegree, children)
}

/// The `ideal` model's submission order: topological, ties to the node
/// created first. Node indices in submission order.
pub(crate) fn flatten(graph: &Graph) -> Vec<usize> {
    let (mut indegree, children) = edges(graph);
    let mut ready: std::collections::BinaryHeap<std::cmp::Reverse<usize>> = (0..indegree.len())
        .filter(|&i| indegree[i] == 0)
        .map(std::cmp::Reverse)
        .collect();
    let mut order = Vec::with_capacity(indegree.len());
    while let Some(std::cmp::Reverse(i)) = ready.pop() {
        order.push(i);
        for &c in &children[i] {
            indegree[c] -= 1;
            if indegree[c] == 0 {
                ready.push(std::cmp::Reverse(c));
            }
        }
    }
    order
}

/// Kahn's algorithm with a FIFO queue (clr `Graph::TopologicalOrder`).
pub(crate) fn kahn_fifo(graph: &Graph) -> Vec<usize> {
    let (mut indegree, children) = edges(graph);
    let mut ready: VecDeque<usize> = (0..indegree.len()).filter(|&i| indegree[i] == 0).collect();
    let mut order = Vec::with_capacity(indegree.len());
    while let Some(i) = ready.pop_front() {
        order.push(i);
        for &c in &children[i] {
            indegree[c] -= 1;
            if indegree[c] == 0 {
                ready.push_back(c);
            }
        }
    }
    order
}

/// A graph cut into segments and levels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SegmentPlan {
    /// Node indices of each segment, in path order.
    pub segments: Vec<Vec<usize>>,
    /// The segments each segment waits for.
    pub deps: Vec<Vec<usize>>,
    /// Segment ids per level, in the order they became ready.
    pub levels: Vec<Vec<usize>>,
    /// The most segments at any level, at least 1.
    pub max_streams: usize,
}

impl SegmentPlan {
    /// Everything as one segment in `order` (segment scheduling off: the
    /// classic order on the launch stream only).
    pub fn single(order: Vec<usize>) -> SegmentPlan {
        SegmentPlan {
            segments: vec![order],
            deps: vec![Vec::new()],
            levels: vec![vec![0]],
            max_streams: 1,
        }
    }
}

struct PathFinder<'a> {
    indegree: &'a [usize],
    children: &'a [Vec<usize>],
    visited: Vec<bool>,
    paths: Vec<Vec<usize>>,
}

impl PathFinder<'_> {
    fn walk(&mut self, start: usize) {
        let mut path = Vec::new();
        let mut node = start;
        loop {
            self.visited[node] = true;
            path.push(node);
            let children = &self.children[node];
            if let [only] = children[..] {
                if self.indegree[only] <= 1 && !self.visited[only] {
                    node = only;
                    continue;
                }
                // A join: the path ends before it; it starts the next one.
                self.paths.push(path);
                if !self.visited[only] {
                    self.walk(only);
                }
                return;
            }
            // A leaf or a fork: the path ends with this node.
            self.paths.push(path);
            for &c in self.children[node].clone().iter() {
                if !self.visited[c] {
                    self.walk(c);
                }
            }
            return;
        }
    }
}

/// clr `ScheduleNodesIntoBatches`.
pub(crate) fn segments(graph: &Graph) -> SegmentPlan {
    let (indegree, children) = edges(graph);
    let n = indegree.len();
    let mut finder = PathFinder {
        indegree: &indegree,
        children: &children,
        visited: vec![false; n],
        paths: Vec::new(),
    };
    for (root, &d) in indegree.iter().enumerate() {
        if d == 0 && !finder.visited[root] {
            finder.walk(root);
        }
    }
    let segments = finder.paths;
    let mut segment_of = vec![0usize; n];
    for (s, path) in segments.iter().enumerate() {
        for &node in path {
            segment_of[node] = s;
        }
    }
    let deps: Vec<Vec<usize>> = segments
        .iter()
        .map(|path| {
            let mut d: Vec<usize> = Vec::new();
            for &dep in &graph.nodes[path[0]].deps {
                if !d.contains(&segment_of[dep]) {
                    d.push(segment_of[dep]);
                }
            }
            d
        })
        .collect();
    // Kahn BFS over segments; out-edges in the order they were added
    // (dependent segments by id).
    let mut out = vec![Vec::new(); segments.len()];
    let mut pending: Vec<usize> = deps.iter().map(Vec::len).collect();
    for (s, d) in deps.iter().enumerate() {
        for &u in d {
            out[u].push(s);
        }
    }
    let mut level = vec![0usize; segments.len()];
    let mut levels: Vec<Vec<usize>> = Vec::new();
    let mut ready: VecDeque<usize> = (0..segments.len()).filter(|&s| pending[s] == 0).collect();
    for &s in &ready {
        if levels.is_empty() {
            levels.push(Vec::new());
        }
        levels[0].push(s);
    }
    while let Some(u) = ready.pop_front() {
        for &s in &out[u] {
            pending[s] -= 1;
            if pending[s] == 0 {
                level[s] = deps[s].iter().map(|&d| level[d] + 1).max().unwrap_or(0);
                if levels.len() <= level[s] {
                    levels.resize(level[s] + 1, Vec::new());
                }
                levels[level[s]].push(s);
                ready.push_back(s);
            }
        }
    }
    let max_streams = levels.iter().map(Vec::len).max().unwrap_or(1).max(1);
    SegmentPlan {
        segments,
        deps,
        levels,
        max_streams,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Node;

    fn node(deps: &[usize]) -> Node {
        Node {
            kernel: Some("k".into()),
            grid: None,
            block: None,
            memcpy: None,
            memset: None,
            host: None,
            empty: false,
            deps: deps.to_vec(),
        }
    }

    fn graph(deps: &[&[usize]]) -> Graph {
        Graph {
            name: "g".into(),
            nodes: deps.iter().map(|d| node(d)).collect(),
        }
    }

    #[test]
    fn flatten_is_topological_with_creation_order_ties() {
        let g = graph(&[&[], &[0], &[0], &[0], &[0], &[1, 2, 3, 4]]);
        assert_eq!(flatten(&g), vec![0, 1, 2, 3, 4, 5]);
        let g = graph(&[&[], &[0], &[]]);
        assert_eq!(flatten(&g), vec![0, 1, 2]);
        let g = graph(&[&[], &[], &[1], &[0]]);
        assert_eq!(flatten(&g), vec![0, 1, 2, 3]);
    }

    #[test]
    fn kahn_fifo_breaks_ties_first_in_first_out() {
        // r0, r1 roots; x after r1, y after r0: FIFO gives r0 r1 y x.
        let g = graph(&[&[], &[], &[1], &[0]]);
        assert_eq!(kahn_fifo(&g), vec![0, 1, 3, 2]);
    }

    #[test]
    fn a_fan_out_cuts_at_the_fork_and_the_join() {
        // r -> a b c d -> j
        let p = segments(&graph(&[&[], &[0], &[0], &[0], &[0], &[1, 2, 3, 4]]));
        assert_eq!(
            p.segments,
            vec![vec![0], vec![1], vec![5], vec![2], vec![3], vec![4]]
        );
        assert_eq!(p.levels, vec![vec![0], vec![1, 3, 4, 5], vec![2]]);
        assert_eq!(p.deps[2], vec![1, 3, 4, 5]);
        assert_eq!(p.max_streams, 4);
    }

    #[test]
    fn a_chain_is_one_segment() {
        let p = segments(&graph(&[&[], &[0], &[1], &[2]]));
        assert_eq!(p.segments, vec![vec![0, 1, 2, 3]]);
        assert_eq!(p.levels, vec![vec![0]]);
        assert_eq!(p.max_streams, 1);
    }

    #[test]
    fn branches_keep_their_chains_and_levels_are_longest_paths() {
        // 0 -> (1 -> 2) and (3); 4 joins 2 and 3; 5 is a second root feeding 4.
        let p = segments(&graph(&[&[], &[0], &[1], &[0], &[2, 3, 5], &[]]));
        assert_eq!(
            p.segments,
            vec![vec![0], vec![1, 2], vec![4], vec![3], vec![5]]
        );
        assert_eq!(p.levels, vec![vec![0, 4], vec![1, 3], vec![2]]);
        assert_eq!(p.max_streams, 2);
    }
}
