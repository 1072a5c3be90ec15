//! The window's calls, indexed for the candidate rule: what each call
//! produces (resolved against the kernel table and the exec's contents),
//! which calls may write packets, and who produces records of each kind.

use std::collections::HashMap;
use std::sync::Arc;

use crate::evidence::{CallWork, WindowEvidence};
use crate::ids::{AttributionId, NodeId};
use crate::intervals::Intervals;
use crate::structure::{ExecContents, NodeWork};
use crate::work::{BlitKind, KernelLookup, MatchKey, Output};

/// One record a call will produce, and which node of its exec it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Produced {
    pub output: Output,
    /// `None` for eager work.
    pub node: Option<NodeId>,
}

/// What a graph launch's exec produces, with its dependency structure.
#[derive(Debug)]
pub(crate) struct ResolvedExec {
    pub outputs: Vec<Produced>,
    /// Creation index -> the creation indices it waits for.
    deps: Vec<Box<[u32]>>,
}

impl ResolvedExec {
    /// Does node `later` wait, directly or not, for node `earlier`?
    /// Creation order is a topological order (a dependency exists when a
    /// node is added), so the search never needs indices below `earlier`.
    pub(crate) fn depends_on(&self, later: u32, earlier: u32) -> bool {
        let mut stack = vec![later];
        let mut seen = vec![false; self.deps.len()];
        while let Some(n) = stack.pop() {
            for &d in self.deps.get(n as usize).map(|d| d.as_ref()).unwrap_or(&[]) {
                if d == earlier {
                    return true;
                }
                if d > earlier && !std::mem::replace(&mut seen[d as usize], true) {
                    stack.push(d);
                }
            }
        }
        false
    }

    /// Are these nodes totally ordered by dependency (so every launch runs
    /// them in creation order, and each starts after the previous ended)?
    pub(crate) fn is_chain(&self, mut nodes: Vec<u32>) -> bool {
        nodes.sort_unstable();
        nodes.windows(2).all(|w| self.depends_on(w[1], w[0]))
    }

    /// For each output (by its index in `outputs`), the outputs it waits
    /// for nearest: its dependencies that produce a record, and, through a
    /// dependency that produces none (an empty or event node), that one's.
    /// Outputs are in creation order, a topological order.
    pub(crate) fn nearest_producing_ancestors(&self) -> Vec<Vec<u32>> {
        let mut output_of = vec![None; self.deps.len()];
        for (k, p) in self.outputs.iter().enumerate() {
            if let Some(node) = p.node {
                output_of[node.index()] = Some(k as u32);
            }
        }
        self.outputs
            .iter()
            .map(|p| {
                let mut found = Vec::new();
                let Some(node) = p.node else {
                    return found;
                };
                let mut seen = vec![false; self.deps.len()];
                let mut stack: Vec<u32> = self.deps[node.index()].to_vec();
                while let Some(d) = stack.pop() {
                    if std::mem::replace(&mut seen[d as usize], true) {
                        continue;
                    }
                    match output_of[d as usize] {
                        Some(k) => found.push(k),
                        None => stack.extend_from_slice(&self.deps[d as usize]),
                    }
                }
                found.sort_unstable();
                found
            })
            .collect()
    }
}

/// What a call produces, as far as the evidence says.
#[derive(Clone, Debug)]
pub(crate) enum Produces {
    Nothing,
    Eager(Output),
    Graph {
        graph_id: Option<AttributionId>,
        exec: Arc<ResolvedExec>,
    },
    /// May produce anything.
    Unknown,
}

impl Produces {
    pub(crate) fn outputs(&self) -> Vec<Produced> {
        match self {
            Produces::Eager(output) => vec![Produced {
                output: *output,
                node: None,
            }],
            Produces::Graph { exec, .. } => exec.outputs.clone(),
            Produces::Nothing | Produces::Unknown => Vec::new(),
        }
    }
}

/// Resolves an exec's contents once per window (launches share them).
fn resolve_exec(contents: &ExecContents, kernels: &dyn KernelLookup) -> Option<ResolvedExec> {
    if !contents.complete {
        return None;
    }
    let mut outputs = Vec::new();
    for (index, node) in contents.nodes.iter().enumerate() {
        let output = match node.work {
            NodeWork::Kernel(kernel) => kernel.resolve(kernels)?,
            NodeWork::Memset => Output::Blit(BlitKind::Fill),
            NodeWork::Memcpy { direction, bytes } => Output::BlitOrCopy { direction, bytes },
            NodeWork::NoDispatch => continue,
            NodeWork::Unknown => return None,
        };
        outputs.push(Produced {
            output,
            node: Some(NodeId(index as u32)),
        });
    }
    Some(ResolvedExec {
        outputs,
        deps: contents.nodes.iter().map(|n| n.deps.clone()).collect(),
    })
}

/// One producing entry before indexing: its call's span (start, end) and
/// (call index, output index).
type SpannedEntry = (u64, u64, (u32, u32));

/// Everything that produces records matching one key.
#[derive(Debug, Default)]
pub(crate) struct Producers {
    /// Over the producing calls' spans; ids index `entries`.
    pub intervals: Intervals,
    /// (call index, output index within the call's outputs).
    pub entries: Vec<(u32, u32)>,
}

/// How a window edge may hide calls from a call's neighbourhood.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Hull {
    pub start: u64,
    pub end: u64,
    /// A call of the neighbourhood was in flight when the window opened or
    /// closed: calls the tool never saw may have written what was processed.
    pub at_edge: bool,
}

pub(crate) struct CallIndex<'a> {
    pub evidence: &'a WindowEvidence<'a>,
    by_correlation: HashMap<u64, u32>,
    pub produces: Vec<Produces>,
    pub outputs: Vec<Vec<Produced>>,
    writers: Intervals,
    unknown: Intervals,
    edge: Intervals,
    pub producers: HashMap<MatchKey, Producers>,
    hulls: Vec<Option<Hull>>,
}

impl<'a> CallIndex<'a> {
    /// `distrusted`: execs whose contents contradicted what ran; their
    /// launches may produce anything.
    pub(crate) fn new(
        evidence: &'a WindowEvidence<'a>,
        distrusted: &dyn Fn(AttributionId) -> bool,
    ) -> CallIndex<'a> {
        let calls = evidence.calls;
        // A call that processed a record rang a doorbell, so it wrote a
        // packet, whatever its operation was thought to do: it is then a
        // writer of unknown work.
        let processing: std::collections::HashSet<u64> = evidence
            .observations
            .iter()
            .map(|o| o.correlation_id)
            .collect();
        let surprising = |i: usize| {
            matches!(calls[i].work, CallWork::NoDevice)
                && processing.contains(&calls[i].correlation_id)
        };
        let mut resolved: HashMap<*const ExecContents, Option<Arc<ResolvedExec>>> = HashMap::new();
        let produces: Vec<Produces> = calls
            .iter()
            .enumerate()
            .map(|(i, call)| match &call.work {
                _ if surprising(i) => Produces::Unknown,
                CallWork::NoDevice | CallWork::Barrier => Produces::Nothing,
                CallWork::Kernel(kernel) => match kernel.resolve(evidence.kernels) {
                    Some(output) => Produces::Eager(output),
                    None => Produces::Unknown,
                },
                CallWork::Output(output) => Produces::Eager(*output),
                CallWork::Graph { graph_id, exec } => {
                    if graph_id.is_some_and(distrusted) {
                        return Produces::Unknown;
                    }
                    let exec = resolved
                        .entry(Arc::as_ptr(exec))
                        .or_insert_with(|| resolve_exec(exec, evidence.kernels).map(Arc::new))
                        .clone();
                    match exec {
                        Some(exec) => Produces::Graph {
                            graph_id: *graph_id,
                            exec,
                        },
                        None => Produces::Unknown,
                    }
                }
                CallWork::Unknown => Produces::Unknown,
            })
            .collect();
        let outputs: Vec<Vec<Produced>> = produces.iter().map(Produces::outputs).collect();

        let span = |i: usize| (calls[i].enter_ns, calls[i].exit_ns.max(calls[i].enter_ns));
        let writes = |i: usize| calls[i].work.writes_packets() || surprising(i);
        let writers = Intervals::new(
            (0..calls.len())
                .filter(|&i| writes(i))
                .map(|i| (span(i).0, span(i).1, i as u32))
                .collect(),
        );
        let open_edge = |s: &crate::evidence::Span| (s.enter_ns, s.exit_ns.unwrap_or(u64::MAX));
        let unknown = Intervals::new(
            (0..calls.len())
                .filter(|&i| matches!(produces[i], Produces::Unknown))
                .map(|i| (span(i).0, span(i).1, 0))
                .chain(
                    evidence
                        .open_edge
                        .iter()
                        .map(|s| (open_edge(s).0, open_edge(s).1, 0)),
                )
                .collect(),
        );
        let edge = Intervals::new(
            evidence
                .open_edge
                .iter()
                .map(|s| (open_edge(s).0, open_edge(s).1, 0))
                .chain(
                    (0..calls.len())
                        .filter(|&i| {
                            calls[i].work.writes_packets() && calls[i].exit_ns > evidence.close_ns
                        })
                        .map(|i| (span(i).0, span(i).1, 0)),
                )
                .collect(),
        );
        let mut by_key: HashMap<MatchKey, Vec<SpannedEntry>> = HashMap::new();
        for (call, produced) in outputs.iter().enumerate() {
            for (k, p) in produced.iter().enumerate() {
                for key in p.output.keys() {
                    let (a, b) = span(call);
                    by_key
                        .entry(key)
                        .or_default()
                        .push((a, b, (call as u32, k as u32)));
                }
            }
        }
        let producers = by_key
            .into_iter()
            .map(|(key, items)| {
                let entries: Vec<(u32, u32)> = items.iter().map(|&(_, _, e)| e).collect();
                let intervals = Intervals::new(
                    items
                        .iter()
                        .enumerate()
                        .map(|(i, &(a, b, _))| (a, b, i as u32))
                        .collect(),
                );
                (key, Producers { intervals, entries })
            })
            .collect();
        CallIndex {
            evidence,
            by_correlation: calls
                .iter()
                .enumerate()
                .map(|(i, c)| (c.correlation_id, i as u32))
                .collect(),
            produces,
            outputs,
            writers,
            unknown,
            edge,
            producers,
            hulls: vec![None; calls.len()],
        }
    }

    pub(crate) fn call_of(&self, correlation_id: u64) -> Option<u32> {
        self.by_correlation.get(&correlation_id).copied()
    }

    pub(crate) fn call(&self, index: u32) -> &crate::evidence::Call {
        &self.evidence.calls[index as usize]
    }

    /// Other threads' packet-writing calls that overlap call `p`.
    pub(crate) fn overlapping_writers(&self, p: u32) -> impl Iterator<Item = u32> + '_ {
        let call = self.call(p);
        let thread = call.thread_id;
        self.writers
            .overlapping(call.enter_ns, call.exit_ns.max(call.enter_ns))
            .filter(move |&i| self.call(i).thread_id != thread)
    }

    /// The time range every possible writer of a packet processed during
    /// call `p` overlaps (module docs of `rules::candidates`), cached.
    pub(crate) fn hull(&mut self, p: u32) -> Hull {
        if let Some(h) = self.hulls[p as usize] {
            return h;
        }
        let call = self.call(p);
        let (enter, exit) = (call.enter_ns, call.exit_ns.max(call.enter_ns));
        let close = self.evidence.close_ns;
        let mut hull = Hull {
            start: enter,
            end: exit,
            at_edge: exit > close || self.edge.any_overlapping(enter, exit),
        };
        let neighbours: Vec<u32> = self.overlapping_writers(p).collect();
        for n in neighbours {
            let c = self.call(n);
            hull.start = hull.start.min(c.enter_ns);
            hull.end = hull.end.max(c.exit_ns.max(c.enter_ns));
            hull.at_edge |= c.exit_ns > close;
        }
        self.hulls[p as usize] = Some(hull);
        hull
    }

    /// A call whose work is unknown overlaps the hull.
    pub(crate) fn unknown_within(&self, hull: Hull) -> bool {
        self.unknown.any_overlapping(hull.start, hull.end)
    }

    /// Was call `p` alone: no other thread wrote packets during it, and no
    /// window edge or unknown call touches it?
    pub(crate) fn isolated(&mut self, p: u32) -> bool {
        let call = self.call(p);
        let (enter, exit) = (call.enter_ns, call.exit_ns.max(call.enter_ns));
        let hull = self.hull(p);
        !hull.at_edge
            && hull.start == enter
            && hull.end == exit
            && self.overlapping_writers(p).next().is_none()
    }

    pub(crate) fn has_edges(&self) -> bool {
        self.edge.len() > 0
    }
}
