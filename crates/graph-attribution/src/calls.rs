//! The window's calls, indexed for the candidate rule: what each call
//! produces (resolved against the kernel table and the exec's contents),
//! which calls may write packets, and who produces records of each kind.

use std::cell::OnceCell;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::evidence::{Call, CallWork, ObservedId, WindowEvidence};
use crate::ids::{AttributionId, NodeId};
use crate::intervals::Intervals;
use crate::structure::{ExecContents, NodeWork};
use crate::work::{BlitKind, FillParts, KernelLookup, MatchKey, Observed, Output};

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
    /// Each output (by index) under every key a record it may be has.
    by_key: FxHashMap<MatchKey, Box<[u32]>>,
    /// Per output: a kernel no other output of the exec runs with its shape
    /// (its key names it alone).
    sole_kernel: Vec<bool>,
    /// Every output is such a kernel: records matching the outputs in
    /// order are each the output at their place.
    pub all_sole_kernels: bool,
    /// What each output shows, by the window's ids, when every output is
    /// one thing a record shows (a kernel of its shape, or a blit of its
    /// kind) and the window saw each: a launch's records are its outputs
    /// in order exactly when their ids are these. `None` when an output is
    /// a copy (a blit or an engine transfer) or nothing the window saw.
    pub shown_in_order: Option<Box<[ObservedId]>>,
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

    /// The outputs (by index, ascending) a record of `key` may be.
    fn outputs_under(&self, key: &MatchKey) -> &[u32] {
        self.by_key.get(key).map_or(&[], |k| k)
    }

    /// `Some(&[k])` when output `k` is the only one a record `observed` may
    /// be: a kernel the exec runs once with that shape. Lets a launch's
    /// records, which mostly arrive in node order, skip the key lookup.
    #[inline]
    pub(crate) fn only_output(&self, k: u32, observed: &Observed) -> Option<u32> {
        let p = self.outputs.get(k as usize)?;
        (self.sole_kernel[k as usize] && p.output.matches(observed)).then_some(k)
    }

    /// For each output (by its index in `outputs`), the outputs it waits
    /// for nearest: its dependencies that produce a record, and, through a
    /// dependency that produces none (an empty or event node), that one's.
    /// Outputs are in creation order, a topological order.
    pub(crate) fn nearest_producing_ancestors(&self) -> Vec<Vec<u32>> {
        // A memset node has one output per fill part.
        let mut output_of: Vec<Vec<u32>> = vec![Vec::new(); self.deps.len()];
        for (k, p) in self.outputs.iter().enumerate() {
            if let Some(node) = p.node {
                output_of[node.index()].push(k as u32);
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
                    match output_of[d as usize].as_slice() {
                        [] => stack.extend_from_slice(&self.deps[d as usize]),
                        ks => found.extend_from_slice(ks),
                    }
                }
                found.sort_unstable();
                found
            })
            .collect()
    }
}

/// The outputs of an eager memset of up to three fill parts.
const EAGER_FILLS: [Produced; 3] = [Produced {
    output: Output::Blit(BlitKind::Fill),
    node: None,
}; 3];

/// What a call produces, as far as the evidence says.
#[derive(Clone, Debug)]
pub(crate) enum Produces {
    Nothing,
    Eager(Produced),
    /// An eager memset: its fill blits.
    Fill(FillParts),
    Graph {
        graph_id: Option<AttributionId>,
        exec: Arc<ResolvedExec>,
    },
    /// May produce anything.
    Unknown,
}

impl Produces {
    pub(crate) fn outputs(&self) -> &[Produced] {
        match self {
            Produces::Eager(produced) => std::slice::from_ref(produced),
            Produces::Fill(fills) => &EAGER_FILLS[..fills.count()],
            Produces::Graph { exec, .. } => &exec.outputs,
            Produces::Nothing | Produces::Unknown => &[],
        }
    }
}

/// Resolves an exec's contents once per window (launches share them).
fn resolve_exec(
    contents: &ExecContents,
    kernels: &dyn KernelLookup,
    seen: &FxHashMap<Observed, ObservedId>,
) -> Option<ResolvedExec> {
    if !contents.complete {
        return None;
    }
    let mut outputs = Vec::new();
    for (index, node) in contents.nodes.iter().enumerate() {
        let (output, count) = match node.work {
            NodeWork::Kernel(kernel) => (kernel.resolve(kernels)?, 1),
            NodeWork::Memset(fills) => (Output::Blit(BlitKind::Fill), fills.count()),
            NodeWork::Memcpy { direction, bytes } => (Output::BlitOrCopy { direction, bytes }, 1),
            NodeWork::NoDispatch => continue,
            NodeWork::Unknown => return None,
        };
        let produced = Produced {
            output,
            node: Some(NodeId(index as u32)),
        };
        outputs.extend(std::iter::repeat_n(produced, count));
    }
    let mut by_key: FxHashMap<MatchKey, Vec<u32>> = FxHashMap::default();
    for (k, p) in outputs.iter().enumerate() {
        for key in p.output.keys() {
            by_key.entry(key).or_default().push(k as u32);
        }
    }
    let sole_kernel: Vec<bool> = outputs
        .iter()
        .map(|p| match p.output {
            Output::Kernel(shape) => by_key[&MatchKey::Kernel(shape)].len() == 1,
            _ => false,
        })
        .collect();
    let shown_in_order = outputs
        .iter()
        .map(|p| match p.output {
            Output::Kernel(shape) => seen.get(&Observed::Kernel(shape)).copied(),
            Output::Blit(kind) => seen.get(&Observed::Blit(kind)).copied(),
            Output::BlitOrCopy { .. } => None,
        })
        .collect();
    Some(ResolvedExec {
        shown_in_order,
        outputs,
        deps: contents.nodes.iter().map(|n| n.deps.clone()).collect(),
        all_sole_kernels: sole_kernel.iter().all(|&sole| sole),
        sole_kernel,
        by_key: by_key
            .into_iter()
            .map(|(key, outputs)| (key, outputs.into_boxed_slice()))
            .collect(),
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

/// Every producing call's outputs, by the keys a record they make may have,
/// over the calls' spans.
fn producers_by_key(calls: &[Call], produces: &[Produces]) -> FxHashMap<MatchKey, Producers> {
    let span = |i: usize| (calls[i].enter_ns, calls[i].exit_ns.max(calls[i].enter_ns));
    // Keys are numbered once per window, and each exec's outputs once
    // per exec, so a launch adds its entries without hashing a key.
    let mut key_ids: FxHashMap<MatchKey, u32> = FxHashMap::default();
    let mut by_key: Vec<(MatchKey, Vec<SpannedEntry>)> = Vec::new();
    let mut id_of = |key: MatchKey, by_key: &mut Vec<(MatchKey, Vec<SpannedEntry>)>| {
        *key_ids.entry(key).or_insert_with(|| {
            by_key.push((key, Vec::new()));
            (by_key.len() - 1) as u32
        })
    };
    let mut exec_keys: FxHashMap<*const ResolvedExec, Vec<(u32, u32)>> = FxHashMap::default();
    for (call, produced) in produces.iter().enumerate() {
        let (a, b) = span(call);
        match produced {
            Produces::Eager(_) | Produces::Fill(_) => {
                for (k, p) in produced.outputs().iter().enumerate() {
                    for key in p.output.keys() {
                        let id = id_of(key, &mut by_key);
                        by_key[id as usize].1.push((a, b, (call as u32, k as u32)));
                    }
                }
            }
            Produces::Graph { exec, .. } => {
                let keyed = exec_keys.entry(Arc::as_ptr(exec)).or_insert_with(|| {
                    exec.outputs
                        .iter()
                        .enumerate()
                        .flat_map(|(k, p)| p.output.keys().map(move |key| (key, k as u32)))
                        .map(|(key, k)| (id_of(key, &mut by_key), k))
                        .collect()
                });
                for &(id, k) in keyed.iter() {
                    by_key[id as usize].1.push((a, b, (call as u32, k)));
                }
            }
            Produces::Nothing | Produces::Unknown => {}
        }
    }
    by_key
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
        .collect()
}

/// Which calls that produce records overlap a hull.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HullProducers {
    None,
    /// Exactly this call: its outputs are every candidate.
    One(u32),
    Several,
}

/// How a window edge may hide calls from a call's neighbourhood.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Hull {
    pub start: u64,
    pub end: u64,
    /// A call of the neighbourhood was in flight when the window opened or
    /// closed: calls the tool never saw may have written what was processed.
    pub at_edge: bool,
    /// A call whose work is unknown overlaps the hull.
    pub unknown: bool,
    pub producers: HullProducers,
    /// No other thread's packet-writing call overlapped the call itself.
    pub alone: bool,
}

/// No call: the record was processed outside every recorded call.
const NO_CALL: u32 = u32::MAX;

/// No record: rule 7 did not find the call's records in output order.
const NO_RECORD: u32 = u32::MAX;

pub(crate) struct CallIndex<'a> {
    pub evidence: &'a WindowEvidence<'a>,
    by_correlation: FxHashMap<u64, u32>,
    /// Per observation, the call that processed it (`NO_CALL`: none known).
    processed_by: Vec<u32>,
    /// Where each maximal run of observations processed by one call (or by
    /// none known) starts, and that call: the rules that work per launch
    /// walk these instead of every record.
    processed_runs: Vec<(u32, u32)>,
    /// Per call, the first of its records when rule 7 found them to be
    /// exactly its outputs, one run in output order (`NO_RECORD`: not
    /// found).
    in_order_from: Vec<u32>,
    pub produces: Vec<Produces>,
    writers: Intervals,
    unknown: Intervals,
    edge: Intervals,
    /// Calls that produce records; ids are call indices.
    producing: Intervals,
    producers: OnceCell<FxHashMap<MatchKey, Producers>>,
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
        let by_correlation: FxHashMap<u64, u32> = calls
            .iter()
            .enumerate()
            .map(|(i, c)| (c.correlation_id, i as u32))
            .collect();
        // A window's records of one launch sit together: look each run of
        // equal correlation ids up once, and fill its records' calls at once.
        let correlation_ids = evidence.observations.correlation_ids();
        let mut processed_runs = Vec::new();
        let mut processed_by: Vec<u32> = Vec::with_capacity(correlation_ids.len());
        let mut r = 0;
        while let Some(&correlation_id) = correlation_ids.get(r) {
            let run = correlation_ids[r..]
                .iter()
                .take_while(|&&c| c == correlation_id)
                .count();
            let call = by_correlation
                .get(&correlation_id)
                .copied()
                .unwrap_or(NO_CALL);
            if processed_runs.last().is_none_or(|&(_, c)| c != call) {
                processed_runs.push((r as u32, call));
            }
            processed_by.extend(std::iter::repeat_n(call, run));
            r += run;
        }
        // A call that processed a record rang a doorbell, so it wrote a
        // packet, whatever its operation was thought to do: it is then a
        // writer of unknown work.
        let mut processed = vec![false; calls.len()];
        for &(_, call) in &processed_runs {
            if call != NO_CALL {
                processed[call as usize] = true;
            }
        }
        let surprising = |i: usize| matches!(calls[i].work, CallWork::NoDevice) && processed[i];
        let seen = evidence.observed_ids();
        let mut resolved: FxHashMap<*const ExecContents, Option<Arc<ResolvedExec>>> =
            FxHashMap::default();
        let produces: Vec<Produces> = calls
            .iter()
            .enumerate()
            .map(|(i, call)| match &call.work {
                _ if surprising(i) => Produces::Unknown,
                CallWork::NoDevice | CallWork::Barrier => Produces::Nothing,
                CallWork::Kernel(kernel) => match kernel.resolve(evidence.kernels) {
                    Some(output) => Produces::Eager(Produced { output, node: None }),
                    None => Produces::Unknown,
                },
                CallWork::Output(output) => Produces::Eager(Produced {
                    output: *output,
                    node: None,
                }),
                CallWork::Fill(fills) => Produces::Fill(*fills),
                CallWork::Graph { graph_id, exec } => {
                    if graph_id.is_some_and(distrusted) {
                        return Produces::Unknown;
                    }
                    let exec = resolved
                        .entry(Arc::as_ptr(exec))
                        .or_insert_with(|| {
                            resolve_exec(exec, evidence.kernels, &seen).map(Arc::new)
                        })
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
        let producing = Intervals::new(
            (0..calls.len())
                .filter(|&i| !produces[i].outputs().is_empty())
                .map(|i| (span(i).0, span(i).1, i as u32))
                .collect(),
        );
        CallIndex {
            evidence,
            by_correlation,
            processed_by,
            processed_runs,
            in_order_from: vec![NO_RECORD; calls.len()],
            produces,
            writers,
            unknown,
            edge,
            producing,
            producers: OnceCell::new(),
            hulls: vec![None; calls.len()],
        }
    }

    /// Everything that produces records, by key. Only a hull with several
    /// producing calls (or the queue-order rule) needs it, so it is built
    /// the first time one asks: a window of one launch at a time never
    /// pays for it.
    pub(crate) fn producers(&self) -> &FxHashMap<MatchKey, Producers> {
        self.producers
            .get_or_init(|| producers_by_key(self.evidence.calls, &self.produces))
    }

    pub(crate) fn call_of(&self, correlation_id: u64) -> Option<u32> {
        self.by_correlation.get(&correlation_id).copied()
    }

    /// The call that processed observation `r`, if the window recorded it.
    pub(crate) fn processed_by(&self, r: usize) -> Option<u32> {
        Some(self.processed_by[r]).filter(|&c| c != NO_CALL)
    }

    /// Maximal runs of consecutive observations processed by one call:
    /// their range, and the call (`None`: processed outside every recorded
    /// call).
    pub(crate) fn processed_runs(
        &self,
    ) -> impl Iterator<Item = (std::ops::Range<usize>, Option<u32>)> + '_ {
        let n = self.processed_by.len();
        self.processed_runs
            .iter()
            .enumerate()
            .map(move |(i, &(start, call))| {
                let end = self
                    .processed_runs
                    .get(i + 1)
                    .map_or(n, |&(s, _)| s as usize);
                (start as usize..end, Some(call).filter(|&c| c != NO_CALL))
            })
    }

    /// Rule 7 found call `call`'s records to be exactly its outputs, in
    /// output order, from observation `first` on.
    pub(crate) fn found_in_order(&mut self, call: u32, first: u32) {
        self.in_order_from[call as usize] = first;
    }

    /// The first of call `call`'s records, when rule 7 found them to be
    /// exactly its outputs in output order.
    pub(crate) fn in_order_from(&self, call: u32) -> Option<u32> {
        Some(self.in_order_from[call as usize]).filter(|&r| r != NO_RECORD)
    }

    pub(crate) fn call(&self, index: u32) -> &crate::evidence::Call {
        &self.evidence.calls[index as usize]
    }

    /// The attribution id and resolved exec of call `call`, when it is a
    /// graph launch whose exec has an id: the launches whose records can
    /// carry keys.
    pub(crate) fn keyed_launch(&self, call: u32) -> Option<(AttributionId, &Arc<ResolvedExec>)> {
        match &self.produces[call as usize] {
            Produces::Graph {
                graph_id: Some(graph_id),
                exec,
            } => Some((*graph_id, exec)),
            _ => None,
        }
    }

    /// What call `call` produces, by output index.
    pub(crate) fn outputs(&self, call: u32) -> &[Produced] {
        self.produces[call as usize].outputs()
    }

    pub(crate) fn output(&self, call: u32, k: u32) -> Produced {
        self.outputs(call)[k as usize]
    }

    /// The outputs (ascending) of call `call` a record of `key` may be.
    pub(crate) fn outputs_under(&self, call: u32, key: &MatchKey) -> &[u32] {
        const FIRST: &[u32] = &[0, 1, 2];
        match &self.produces[call as usize] {
            Produces::Eager(p) if p.output.keys().any(|k| k == *key) => &FIRST[..1],
            Produces::Fill(fills) if *key == MatchKey::Blit(BlitKind::Fill) => {
                &FIRST[..fills.count()]
            }
            Produces::Graph { exec, .. } => exec.outputs_under(key),
            _ => &[],
        }
    }

    /// Output `k` of call `call`, if it is the only output of the call a
    /// record `observed` may be (`ResolvedExec::only_output`; an eager
    /// kernel launch's one output).
    #[inline]
    pub(crate) fn only_output(&self, call: u32, k: u32, observed: &Observed) -> Option<u32> {
        match &self.produces[call as usize] {
            Produces::Graph { exec, .. } => exec.only_output(k, observed),
            Produces::Eager(
                p @ Produced {
                    output: Output::Kernel(_),
                    ..
                },
            ) => (k == 0 && p.output.matches(observed)).then_some(0),
            _ => None,
        }
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
            unknown: false,
            producers: HullProducers::None,
            alone: true,
        };
        for n in self.overlapping_writers(p) {
            hull.alone = false;
            let c = self.call(n);
            hull.start = hull.start.min(c.enter_ns);
            hull.end = hull.end.max(c.exit_ns.max(c.enter_ns));
            hull.at_edge |= c.exit_ns > close;
        }
        hull.unknown = self.unknown.any_overlapping(hull.start, hull.end);
        let mut producing = self.producing.overlapping(hull.start, hull.end);
        hull.producers = match (producing.next(), producing.next()) {
            (None, _) => HullProducers::None,
            (Some(c), None) => HullProducers::One(c),
            (Some(_), Some(_)) => HullProducers::Several,
        };
        self.hulls[p as usize] = Some(hull);
        hull
    }

    /// Was call `p` alone: no other thread wrote packets during it, and no
    /// window edge or unknown call touches it?
    pub(crate) fn isolated(&mut self, p: u32) -> bool {
        let call = self.call(p);
        let (enter, exit) = (call.enter_ns, call.exit_ns.max(call.enter_ns));
        let hull = self.hull(p);
        !hull.at_edge && hull.start == enter && hull.end == exit && hull.alone
    }

    pub(crate) fn has_edges(&self) -> bool {
        self.edge.len() > 0
    }
}
