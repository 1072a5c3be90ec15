//! Compares traces with the simulator's ground truth, claim by claim.
//!
//! Every GPU event is matched to the truth op it shows (kernels, blit
//! kernels included, by `dispatch id` and, for a kernel-replay pass, its
//! `replay pass`; copies, which carry none, by their
//! exact start, end, bytes and direction), and every truth op of a profiled
//! window to an event. Then each field the backend emitted is checked
//! against that op: the graph key ([`keys`]), `correlation`, `External id`,
//! the stream arg and lane, the ac2g flow arrows ([`links`]) and the device.
//! Absent fields are not wrong (the backend removes what it cannot prove)
//! but are counted. A session of several windows is judged as one: each
//! window's trace against the truth of the steps it covered, and graph ids
//! against exec instances across all of them.
//!
//! One pass per trace over hash maps: fit for traces of millions of events.
mod counter_instances;
mod counter_tracks;
mod keys;
mod links;
mod repeats;
#[cfg(test)]
mod tests;
mod timeline;
#[cfg(test)]
mod timeline_tests;

use crate::markers::MarkerIds;
use crate::trace::{GpuCategory, GpuEvent, Trace};
use rocprofiler_sim::truth::{CallTruth, OpKind, OpTruth, RunTruth};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};

pub use keys::KeyBook;

/// What `graph node id` must hold; printed with every report.
pub const NODE_ID_RULE: &str = "(graph id << 32) | the node's creation index \
(CUPTI-like node ids in creation order, not the dispatch ordinal)";

/// The report. Every key of a wrong kind starts with `wrong_`.
#[derive(Debug, Default, Serialize, PartialEq)]
pub struct Validation {
    pub is_clean: bool,
    /// The model the runs used, from the truth.
    pub submission_model: String,
    pub sdk_version: String,
    pub windows: usize,
    pub graph_node_id_rule: &'static str,
    /// Truth ops of the profiled steps (kernels, blit kernels, copies).
    pub expected_ops: usize,
    pub gpu_events: usize,
    pub kernel_events: usize,
    pub copy_events: usize,
    pub memset_events: usize,
    /// Events matched to a truth op of their own window.
    pub matched_events: usize,
    /// Truth ops of a window the trace calls complete with no event.
    pub missing_events: usize,
    /// Truth ops with no event in windows the trace says ended incomplete
    /// (records still in flight at the flush deadline, counted by the tool).
    pub missing_in_incomplete_windows: usize,
    pub incomplete_windows: usize,
    /// Events that are no truth op of their window: unknown to the truth,
    /// of another window's or an unprofiled step, or shown twice.
    pub extra_events: usize,
    pub unknown_events: usize,
    pub events_outside_their_window: usize,
    pub duplicate_events: usize,
    /// Copies whose start, end, bytes and direction fit several truth copies.
    pub ambiguous_copy_matches: usize,
    /// Devices drawn in the trace, and used by the truth.
    pub devices: usize,
    pub truth_devices: usize,
    pub wrong_devices: usize,
    // Graph keys.
    pub carrying_both_fields: usize,
    /// Of those, dispatches whose true dispatch ordinal is not their node's
    /// creation index: a node id in dispatch order would be wrong there.
    pub carrying_out_of_creation_order: usize,
    /// Graph work shown without a pair.
    pub withheld_records: usize,
    /// Of those, records of nodes that repeat another node's work at a node
    /// their graph's dependencies do not order: no evidence can tell them
    /// apart, so withholding them is by design.
    pub withheld_repeated_work: usize,
    /// Eager (non-graph) work shown without a pair, as it must be.
    pub eager_events: usize,
    pub distinct_graph_ids: usize,
    pub distinct_keys: usize,
    /// occurrences -> number of keys seen that many times.
    pub occurrences_per_key: BTreeMap<usize, usize>,
    /// Keys covering more than one true node, or eager work.
    pub aliased_keys: usize,
    pub true_nodes: usize,
    pub split_nodes: usize,
    /// Dispatches whose pair is wrong, each counted once.
    pub wrong_keys: usize,
    /// Why, per dispatch (one dispatch may have several reasons).
    pub key_errors: BTreeMap<&'static str, usize>,
    // CPU linkage.
    pub wrong_correlations: usize,
    /// Events without a `correlation`.
    pub unlinked_events: usize,
    pub wrong_external_ids: usize,
    /// Events with an External id.
    pub linked_events: usize,
    /// Events with no External id although their launch ran inside a marker.
    pub events_without_external_id: usize,
    /// External ids the truth cannot confirm (no record of the launching
    /// call's marker).
    pub unverified_external_ids: usize,
    /// Where the expected External ids come from: "truth calls", or, for a
    /// simulator that predates them, "trace runtime events".
    pub external_id_reference: &'static str,
    pub wrong_lanes: usize,
    pub events_without_stream: usize,
    pub flow_arrows: usize,
    pub flows_without_start: usize,
    pub wrong_flows: usize,
    pub runtime_events: usize,
    /// Runtime calls whose correlation, thread, name or External id is not
    /// the truth's (checked when the truth lists calls).
    pub wrong_runtime_events: usize,
    /// Kernel events naming thread-trace files.
    pub thread_trace_events: usize,
    /// Of those, events whose files are missing or do not hold the bytes
    /// the truth says the pass's trace had, or that were not traced.
    pub wrong_thread_traces: usize,
    /// Traced passes whose event names no files.
    pub missing_thread_traces: usize,
    /// Kernel events naming a kernel-replay pass (matched to the truth's
    /// record of that pass: a wrong pass number is an unknown event).
    pub replay_pass_events: usize,
    // Hardware counters.
    /// Counter values shown on kernel events.
    pub counter_values: usize,
    /// Of those, values the truth does not have for the dispatch, or has
    /// with another value.
    pub wrong_counter_values: usize,
    /// Values the truth says a shown dispatch counted that its event lacks.
    pub missing_counter_values: usize,
    /// Per-instance counter values shown (`--counter-dimensions`).
    pub counter_instance_values: usize,
    /// Of those, keys that name no instance the truth has for the dispatch
    /// (or cannot be read, or repeat one), or values other than the truth's.
    pub wrong_counter_instance_values: usize,
    /// With dimensions asked for: instances the truth says a shown
    /// dispatch recorded that its event lacks.
    pub missing_counter_instance_values: usize,
    /// Counter track samples ("ph": "C") shown.
    pub counter_samples: usize,
    /// Samples no kernel event of the trace explains (validate/counter_tracks.rs).
    pub wrong_counter_samples: usize,
    /// Samples the trace's kernel events call for that the track lacks.
    pub missing_counter_samples: usize,
    // The timeline beyond kernels and copies (validate/timeline.rs).
    /// Memsets checked (bytes and value against the truth's fill).
    pub memset_checks: usize,
    /// Copies run as blit kernels shown as copies.
    pub blit_copies_shown: usize,
    /// Memsets or blit copies whose bytes, value or direction are wrong.
    pub wrong_memsets: usize,
    /// Blit kernels still shown as kernels (their call not proven).
    pub blits_shown_as_kernels: usize,
    pub peer_copies: usize,
    pub wrong_copy_devices: usize,
    pub demangled_kernels: usize,
    /// Kernels whose name or `mangled name` is not the truth's symbol
    /// (demangled) and the symbol itself.
    pub wrong_names: usize,
    pub expected_syncs: usize,
    pub sync_events: usize,
    pub missing_syncs: usize,
    pub wrong_syncs: usize,
    /// Syncs drawn on their CPU thread (the device unknown).
    pub syncs_on_cpu_lane: usize,
    /// Waits shown without the record they waited for.
    pub waits_without_record: usize,
    pub expected_event_records: usize,
    pub missing_event_records: usize,
    pub wrong_event_records: usize,
    /// Records of graph event-record nodes, one per replay.
    pub expected_graph_event_records: usize,
    /// Graph records left out: a predecessor's work was not shown, so the
    /// record's time was unknown.
    pub graph_event_records_not_shown: usize,
    pub expected_host_functions: usize,
    pub host_function_events: usize,
    /// Host functions no proven neighbour bounded (left out, counted).
    pub host_functions_not_shown: usize,
    pub wrong_host_functions: usize,
    pub expected_annotations: usize,
    pub missing_annotations: usize,
    pub wrong_annotations: usize,
    pub gpu_annotations: usize,
    /// GPU spans of a range that are not the envelope of the device work
    /// launched inside it on their lane, or on a lane with none.
    pub wrong_gpu_annotations: usize,
    /// Lanes with device work launched inside a range but no span of it.
    pub missing_gpu_annotations: usize,
    pub dependency_arrows: usize,
    /// Arrows that are no collapsed graph edge between shown nodes of one
    /// replay.
    pub wrong_dependency_arrows: usize,
    /// Collapsed edges between shown nodes with no arrow (arrows on).
    pub missing_dependency_arrows: usize,
    pub overhead_events: usize,
    /// Event records and host functions shown under a submission model
    /// that keeps no truth of them (`ideal`): neither right nor wrong.
    pub unverified_timeline_events: usize,
    /// Overhead events not named as the backend's, or off its lane.
    pub wrong_overheads: usize,
    /// The tool's own summary lines, per window.
    pub tool_summary: Vec<String>,
}

impl Validation {
    fn wrong_total(&self) -> usize {
        self.wrong_devices
            + self.wrong_keys
            + self.wrong_correlations
            + self.wrong_external_ids
            + self.wrong_lanes
            + self.wrong_flows
            + self.wrong_runtime_events
            + self.wrong_counter_values
            + self.wrong_counter_instance_values
            + self.wrong_thread_traces
            + self.wrong_counter_samples
            + self.wrong_memsets
            + self.wrong_copy_devices
            + self.wrong_names
            + self.wrong_syncs
            + self.wrong_event_records
            + self.wrong_host_functions
            + self.wrong_annotations
            + self.wrong_gpu_annotations
            + self.wrong_dependency_arrows
            + self.wrong_overheads
    }

    /// No wrong claim of any kind, nothing missing or extra, and something
    /// shown when the truth has ops: an empty trace is not clean.
    fn judge(&self) -> bool {
        self.wrong_total() == 0
            && self.aliased_keys == 0
            && self.missing_events == 0
            && self.missing_counter_values == 0
            && self.missing_counter_instance_values == 0
            && self.missing_thread_traces == 0
            && self.missing_counter_samples == 0
            && self.extra_events == 0
            && self.missing_syncs == 0
            && self.missing_event_records == 0
            && self.missing_annotations == 0
            && self.missing_gpu_annotations == 0
            && self.missing_dependency_arrows == 0
            && (self.expected_ops == 0
                || self.matched_events > 0
                || self.missing_in_incomplete_windows == self.expected_ops)
    }
}

/// A truth op: which run (step), which op of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct OpRef {
    run: u32,
    op: u32,
}

/// Successful updates of each exec, by correlation id: the exec epoch of a
/// launch, for a truth that predates `exec_epoch`.
fn derived_epochs(runs: &[RunTruth]) -> HashMap<u64, Vec<u64>> {
    let mut updates: HashMap<u64, Vec<u64>> = HashMap::new();
    for event in runs.iter().flat_map(|r| &r.exec_events) {
        if event.event == "update" {
            updates
                .entry(event.graph_exec_id)
                .or_default()
                .push(event.correlation_id);
        }
    }
    for list in updates.values_mut() {
        list.sort_unstable();
    }
    updates
}

/// The session's truth, indexed; fed one trace at a time.
pub struct Validator<'t> {
    runs: &'t [RunTruth],
    markers: &'t MarkerIds,
    /// The truth predates the rocm-model fields (no exec_epoch, no calls).
    legacy: bool,
    legacy_updates: HashMap<u64, Vec<u64>>,
    /// By dispatch id and kernel-replay pass (`None`: not replayed).
    kernels: HashMap<(u64, Option<u32>), OpRef>,
    copies: HashMap<(u64, u64, u64), Vec<OpRef>>,
    calls: HashMap<u64, &'t CallTruth>,
    used: Vec<Vec<bool>>,
    /// Profiled runs: (trace, window within it).
    window_of_run: HashMap<usize, (usize, usize)>,
    incomplete: HashSet<(usize, usize)>,
    traces: usize,
    pids: HashSet<u64>,
    keys: KeyBook,
    /// Nodes no evidence can tell apart (`repeats`), by (graph, index).
    repeated: HashSet<(String, u32)>,
    graphs: Vec<rocprofiler_sim::workload::Graph>,
    /// Counter dimensions were asked for: every instance must be shown.
    counter_dimensions: bool,
    report: Validation,
}

impl<'t> Validator<'t> {
    /// `sdk_version` encoded as the truth has it (10300 = 1.3.0).
    pub fn new(runs: &'t [RunTruth], sdk_version: u32, markers: &'t MarkerIds) -> Validator<'t> {
        let mut kernels = HashMap::new();
        let mut copies: HashMap<(u64, u64, u64), Vec<OpRef>> = HashMap::new();
        for (r, run) in runs.iter().enumerate() {
            for (o, op) in run.ops.iter().enumerate() {
                let at = OpRef {
                    run: r as u32,
                    op: o as u32,
                };
                match op.kind {
                    OpKind::Kernel => {
                        kernels.insert((op.dispatch_id, op.replay_pass), at);
                    }
                    OpKind::Memcpy => copies
                        .entry((op.start_ns, op.end_ns, op.bytes))
                        .or_default()
                        .push(at),
                }
            }
        }
        let calls: HashMap<u64, &CallTruth> = runs
            .iter()
            .flat_map(|r| &r.calls)
            .map(|c| (c.correlation_id, c))
            .collect();
        let legacy = runs.iter().all(|r| r.submission_model.is_empty());
        let mut models: Vec<&str> = runs
            .iter()
            .map(|r| match r.submission_model.as_str() {
                "" => "ideal (the simulator predates the rocm model)",
                other => other,
            })
            .collect();
        models.dedup();
        let version = rocprofiler_sim::workload::SdkVersion::from_encoded(sdk_version);
        Validator {
            runs,
            markers,
            legacy,
            legacy_updates: if legacy {
                derived_epochs(runs)
            } else {
                HashMap::new()
            },
            kernels,
            copies,
            used: runs.iter().map(|r| vec![false; r.ops.len()]).collect(),
            window_of_run: HashMap::new(),
            incomplete: HashSet::new(),
            traces: 0,
            pids: HashSet::new(),
            keys: KeyBook::new(version.has_hip_graph()),
            repeated: HashSet::new(),
            graphs: Vec::new(),
            counter_dimensions: false,
            report: Validation {
                submission_model: models.join(", "),
                sdk_version: version.to_string(),
                graph_node_id_rule: NODE_ID_RULE,
                external_id_reference: if calls.is_empty() {
                    "trace runtime events (the truth lists no calls)"
                } else {
                    "truth calls"
                },
                truth_devices: runs.iter().map(|r| r.devices as usize).max().unwrap_or(0),
                ..Validation::default()
            },
            calls,
        }
    }

    /// Counter dimensions were asked for (`--counter-dimensions`): each
    /// counted dispatch must show every instance the truth has.
    pub fn with_counter_dimensions(mut self, on: bool) -> Self {
        self.counter_dimensions = on;
        self
    }

    fn op(&self, at: OpRef) -> &'t OpTruth {
        &self.runs[at.run as usize].ops[at.op as usize]
    }

    fn epoch(&self, op: &OpTruth) -> u32 {
        if !self.legacy {
            return op.exec_epoch;
        }
        self.legacy_updates
            .get(&op.graph_exec_id)
            .map_or(0, |updates| {
                updates.partition_point(|&c| c < op.launch_correlation_id) as u32
            })
    }

    fn true_node(&self, op: &OpTruth) -> Option<keys::TrueNode> {
        op.node_index
            .map(|node| (op.graph_exec_id, self.epoch(op), node))
    }

    /// Adds one trace file. `windows[i]` lists the runs (steps) its i-th
    /// window covered, in the order of its summary's `window i:` lines.
    pub fn add_trace(&mut self, trace: &Trace, windows: &[Vec<usize>]) {
        let unit = self.traces;
        self.traces += 1;
        let first_window = self.report.windows;
        self.report.windows += windows.len();
        let mut in_unit: HashSet<usize> = HashSet::new();
        for (w, runs) in windows.iter().enumerate() {
            for &r in runs {
                self.window_of_run.insert(r, (unit, w));
                in_unit.insert(r);
                self.report.expected_ops += self.runs[r].ops.len();
            }
        }
        for line in &trace.summary {
            let numbered = line
                .strip_prefix("window ")
                .and_then(|rest| rest.split_once(": "))
                .and_then(|(n, rest)| Some((n.parse::<usize>().ok()?, rest)));
            match numbered {
                Some((w, rest)) => {
                    if rest.starts_with("completeness=incomplete") && w < windows.len() {
                        self.incomplete.insert((unit, w));
                    }
                    self.report
                        .tool_summary
                        .push(format!("window {}: {rest}", first_window + w));
                }
                None => self.report.tool_summary.push(line.clone()),
            }
        }
        // For a truth that predates calls: the External id the trace's own
        // runtime event of the launching call shows.
        let runtime_external: HashMap<u64, Option<u64>> = if self.calls.is_empty() {
            trace
                .runtime
                .iter()
                .filter_map(|c| Some((c.correlation?, c.external_id)))
                .collect()
        } else {
            HashMap::new()
        };
        let mut matched: Vec<Option<OpRef>> = Vec::with_capacity(trace.events.len());
        for event in &trace.events {
            self.report.gpu_events += 1;
            match event.category {
                GpuCategory::Kernel => self.report.kernel_events += 1,
                GpuCategory::Memcpy => self.report.copy_events += 1,
                GpuCategory::Memset => self.report.memset_events += 1,
            }
            self.pids.insert(event.pid);
            let at = self.match_event(event, &in_unit);
            if let Some(at) = at {
                let expected = self.expected_external(self.op(at), &runtime_external);
                self.check_event(trace, event, at, expected);
            }
            matched.push(at);
        }
        let runs = self.runs;
        links::check_flows(&mut self.report, trace, &matched, move |at| {
            &runs[at.run as usize].ops[at.op as usize]
        });
        links::check_runtime(&mut self.report, trace, &self.calls, self.markers);
        let mut unit_runs: Vec<usize> = in_unit.into_iter().collect();
        unit_runs.sort_unstable();
        let truth = timeline::Truth {
            runs: unit_runs.iter().map(|&r| &runs[r]).collect(),
            calls: &self.calls,
            graphs: &self.graphs,
            markers: self.markers,
        };
        timeline::check(&mut self.report, trace, &truth, &matched, move |at| {
            &runs[at.run as usize].ops[at.op as usize]
        });
        counter_tracks::check(&mut self.report, trace);
    }

    /// The truth op an event shows, counting it as matched or extra.
    fn match_event(&mut self, event: &GpuEvent, in_unit: &HashSet<usize>) -> Option<OpRef> {
        // Kernels, memsets and copies run as blit kernels carry their
        // dispatch id; SDMA copies carry none.
        let found = match (event.category, event.dispatch_id) {
            (_, Some(d)) => {
                let pass = event.replay_pass.map(|p| p as u32);
                if pass.is_some() {
                    self.report.replay_pass_events += 1;
                }
                self.kernels.get(&(d, pass)).copied()
            }
            (GpuCategory::Memcpy, None) => self.match_copy(event, in_unit),
            (_, None) => None,
        };
        let r = &mut self.report;
        let Some(at) = found else {
            r.unknown_events += 1;
            r.extra_events += 1;
            return None;
        };
        let used = &mut self.used[at.run as usize][at.op as usize];
        if !in_unit.contains(&(at.run as usize)) {
            r.events_outside_their_window += 1;
            r.extra_events += 1;
        } else if *used {
            r.duplicate_events += 1;
            r.extra_events += 1;
        } else {
            *used = true;
            r.matched_events += 1;
        }
        Some(at)
    }

    /// Copies carry no dispatch id: the truth copy with the same start, end,
    /// bytes and direction. Where several fit, one not yet shown in this
    /// window, preferring the one whose launch the event names, then one on
    /// the device the event shows. Without that second preference, two
    /// devices replaying one graph at one instant (identical copies, their
    /// links withheld) were paired by order and, swapped, both counted as
    /// shown on the wrong device; a tool that put both on one device still
    /// leaves the other's copy matched to an event on the wrong device.
    fn match_copy(&mut self, event: &GpuEvent, in_unit: &HashSet<usize>) -> Option<OpRef> {
        let candidates = self
            .copies
            .get(&(event.start_ns, event.end_ns, event.bytes?))?;
        let fitting: Vec<OpRef> = candidates
            .iter()
            .copied()
            .filter(|&at| {
                self.op(at)
                    .direction
                    .is_none_or(|d| Some(d) == event.direction)
            })
            .collect();
        let open: Vec<OpRef> = fitting
            .iter()
            .copied()
            .filter(|&at| {
                in_unit.contains(&(at.run as usize)) && !self.used[at.run as usize][at.op as usize]
            })
            .collect();
        if open.len() > 1 {
            self.report.ambiguous_copy_matches += 1;
        }
        open.iter()
            .copied()
            .find(|&at| Some(self.op(at).launch_correlation_id) == event.correlation)
            .or_else(|| {
                open.iter()
                    .copied()
                    .find(|&at| u64::from(self.op(at).device) == event.pid)
            })
            .or(open.first().copied())
            .or(fitting.first().copied())
    }

    fn expected_external(
        &self,
        op: &OpTruth,
        runtime_external: &HashMap<u64, Option<u64>>,
    ) -> links::ExpectedLink {
        use links::ExpectedLink::{Known, Unknown};
        if self.calls.is_empty() {
            return runtime_external
                .get(&op.launch_correlation_id)
                .map_or(Unknown, |id| Known(*id));
        }
        match self.calls.get(&op.launch_correlation_id) {
            None => Unknown,
            Some(call) => match &call.marker {
                None => Known(None),
                Some(name) => self.markers.id(name).map_or(Unknown, |id| Known(Some(id))),
            },
        }
    }

    /// The workload's graphs, so records of nodes that no evidence can
    /// tell apart are counted apart (`withheld_repeated_work`).
    pub fn with_graphs(mut self, graphs: &[rocprofiler_sim::workload::Graph]) -> Validator<'t> {
        self.repeated = repeats::repeated_nodes(graphs, self.runs);
        self.graphs = graphs.to_vec();
        self
    }

    fn check_event(
        &mut self,
        trace: &Trace,
        event: &GpuEvent,
        at: OpRef,
        expected: links::ExpectedLink,
    ) {
        let op = self.op(at);
        let device = u64::from(op.device);
        if event.pid != device || event.device.is_some_and(|d| d != device) {
            self.report.wrong_devices += 1;
        }
        let node = self.true_node(op);
        if event.graph.is_some() && op.node_index.is_some_and(|n| n != op.submission_ordinal) {
            self.report.carrying_out_of_creation_order += 1;
        }
        if event.graph.is_none() {
            if let (Some(graph), Some(index)) = (&op.graph, op.node_index) {
                if self.repeated.contains(&(graph.clone(), index)) {
                    self.report.withheld_repeated_work += 1;
                }
            }
        }
        self.keys.check(event.graph, node);
        for (name, value) in &event.counters {
            self.report.counter_values += 1;
            if op.counters.get(name) != Some(value) {
                self.report.wrong_counter_values += 1;
            }
        }
        self.report.missing_counter_values += op
            .counters
            .keys()
            .filter(|name| !event.counters.iter().any(|(shown, _)| shown == *name))
            .count();
        counter_instances::check(
            &mut self.report,
            &event.counter_instances,
            &op.counter_instances,
            self.counter_dimensions,
        );
        self.check_thread_trace(event, op.thread_trace_bytes);
        let lane = trace.lane_stream(event.pid, event.tid);
        links::check_event(&mut self.report, event, op, lane, expected);
    }

    /// A traced pass names files holding exactly the bytes the SDK handed
    /// the tool; an untraced one names none.
    fn check_thread_trace(&mut self, event: &GpuEvent, truth_bytes: u64) {
        let Some(files) = &event.thread_trace else {
            if truth_bytes > 0 {
                self.report.missing_thread_traces += 1;
            }
            return;
        };
        self.report.thread_trace_events += 1;
        let written: Option<u64> = files
            .split(',')
            .map(|f| std::fs::metadata(f).ok().map(|m| m.len()))
            .sum();
        if written != Some(truth_bytes) || truth_bytes == 0 {
            self.report.wrong_thread_traces += 1;
        }
    }

    /// Judges what is missing and the graph-id bijection, once every trace
    /// of the session was added.
    pub fn finish(mut self) -> Validation {
        for (&run, &window) in &self.window_of_run {
            let missing = self.used[run].iter().filter(|shown| !**shown).count();
            if self.incomplete.contains(&window) {
                self.report.missing_in_incomplete_windows += missing;
            } else {
                self.report.missing_events += missing;
            }
        }
        self.keys.finish();
        let k = &self.keys;
        let r = &mut self.report;
        r.incomplete_windows = self.incomplete.len();
        r.devices = self.pids.len();
        r.carrying_both_fields = k.carrying;
        r.withheld_records = k.withheld;
        r.eager_events = k.eager;
        r.distinct_graph_ids = k.distinct_graph_ids();
        r.distinct_keys = k.distinct_keys();
        r.occurrences_per_key = k.occurrences_per_key();
        r.aliased_keys = k.aliased_keys();
        r.true_nodes = k.true_nodes();
        r.split_nodes = k.split_nodes();
        r.wrong_keys = k.wrong;
        r.key_errors = k.reasons.clone();
        r.is_clean = r.judge();
        self.report
    }
}

#[cfg(test)]
/// Validates one session: `traces` are its trace files, each with the runs
/// (steps) of each window it holds.
pub fn validate(
    runs: &[RunTruth],
    sdk_version: u32,
    markers: &MarkerIds,
    traces: &[(&Trace, Vec<Vec<usize>>)],
) -> Validation {
    let mut validator = Validator::new(runs, sdk_version, markers);
    for (trace, windows) in traces {
        validator.add_trace(trace, windows);
    }
    validator.finish()
}

pub fn print(v: &Validation) {
    let line = |label: &str, value: String| println!("{label:<34} {value}");
    let n = |label: &str, value: usize| line(label, format!("{value:>8}"));
    line(
        "result",
        if v.is_clean { "clean" } else { "NOT CLEAN" }.to_string(),
    );
    line("submission model", v.submission_model.clone());
    line("sdk version", v.sdk_version.clone());
    n("windows", v.windows);
    line("graph node id rule", v.graph_node_id_rule.to_string());
    line(
        "gpu events",
        format!(
            "{:>8}  ({} kernels, {} copies, {} memsets; truth: {} ops)",
            v.gpu_events, v.kernel_events, v.copy_events, v.memset_events, v.expected_ops
        ),
    );
    n("matched events", v.matched_events);
    n("missing events", v.missing_events);
    line(
        "missing in incomplete windows",
        format!(
            "{:>8}  ({} windows incomplete)",
            v.missing_in_incomplete_windows, v.incomplete_windows
        ),
    );
    line(
        "extra events",
        format!(
            "{:>8}  ({} unknown, {} outside their window, {} duplicate)",
            v.extra_events, v.unknown_events, v.events_outside_their_window, v.duplicate_events
        ),
    );
    n("ambiguous copy matches", v.ambiguous_copy_matches);
    line(
        "devices",
        format!("{:>8}  (truth: {})", v.devices, v.truth_devices),
    );
    n("wrong devices", v.wrong_devices);
    line(
        "carrying both fields",
        format!(
            "{:>8}  ({} dispatched out of creation order)",
            v.carrying_both_fields, v.carrying_out_of_creation_order
        ),
    );
    n("withheld records", v.withheld_records);
    n("  of nodes repeating work", v.withheld_repeated_work);
    n("eager events (no pair)", v.eager_events);
    n("distinct graph ids", v.distinct_graph_ids);
    line(
        "distinct keys",
        format!(
            "{:>8}  (true graph nodes: {})",
            v.distinct_keys, v.true_nodes
        ),
    );
    let occurrences: Vec<String> = v
        .occurrences_per_key
        .iter()
        .map(|(n, keys)| format!("{keys} keys x {n}"))
        .collect();
    line(
        "occurrences per key",
        if occurrences.is_empty() {
            "-".to_string()
        } else {
            occurrences.join(", ")
        },
    );
    n("aliased keys", v.aliased_keys);
    n("nodes split over keys", v.split_nodes);
    n("wrong keys", v.wrong_keys);
    for (reason, count) in &v.key_errors {
        line(&format!("  {reason}"), format!("{count:>8}"));
    }
    n("wrong correlations", v.wrong_correlations);
    n("unlinked events", v.unlinked_events);
    line(
        "events with an External id",
        format!(
            "{:>8}  ({} without one inside a marker, {} unverified; reference: {})",
            v.linked_events,
            v.events_without_external_id,
            v.unverified_external_ids,
            v.external_id_reference
        ),
    );
    n("wrong External ids", v.wrong_external_ids);
    n("wrong lanes", v.wrong_lanes);
    n("events without stream", v.events_without_stream);
    line(
        "flow arrows",
        format!(
            "{:>8}  ({} without a start)",
            v.flow_arrows, v.flows_without_start
        ),
    );
    n("wrong flows", v.wrong_flows);
    n("runtime events", v.runtime_events);
    n("wrong runtime events", v.wrong_runtime_events);
    if v.replay_pass_events > 0 {
        n("kernel-replay pass events", v.replay_pass_events);
    }
    if v.thread_trace_events + v.missing_thread_traces > 0 {
        n("thread-trace events", v.thread_trace_events);
        n("wrong thread traces", v.wrong_thread_traces);
        n("missing thread traces", v.missing_thread_traces);
    }
    if v.counter_values + v.missing_counter_values > 0 {
        n("counter values", v.counter_values);
        n("wrong counter values", v.wrong_counter_values);
        n("missing counter values", v.missing_counter_values);
        if v.counter_instance_values + v.missing_counter_instance_values > 0 {
            n("counter instance values", v.counter_instance_values);
            n(
                "wrong counter instance values",
                v.wrong_counter_instance_values,
            );
            n(
                "missing counter instance values",
                v.missing_counter_instance_values,
            );
        }
        n("counter track samples", v.counter_samples);
        n("wrong counter track samples", v.wrong_counter_samples);
        n("missing counter track samples", v.missing_counter_samples);
    }
    line(
        "memsets / blit copies",
        format!(
            "{:>8}  ({} blit copies; {} blits still kernels)",
            v.memset_checks, v.blit_copies_shown, v.blits_shown_as_kernels
        ),
    );
    n("wrong memsets and blit copies", v.wrong_memsets);
    line("peer copies", format!("{:>8}", v.peer_copies));
    n("wrong copy devices", v.wrong_copy_devices);
    n("demangled kernels", v.demangled_kernels);
    n("wrong names", v.wrong_names);
    line(
        "syncs",
        format!(
            "{:>8}  (truth: {}; {} on a CPU lane, {} waits without record)",
            v.sync_events, v.expected_syncs, v.syncs_on_cpu_lane, v.waits_without_record
        ),
    );
    n("missing syncs", v.missing_syncs);
    n("wrong syncs", v.wrong_syncs);
    line(
        "event records",
        format!(
            "{:>8}  missing, of {}",
            v.missing_event_records, v.expected_event_records
        ),
    );
    line(
        "graph event records",
        format!(
            "{:>8}  not shown (predecessors not shown), of {}",
            v.graph_event_records_not_shown, v.expected_graph_event_records
        ),
    );
    n("wrong event records", v.wrong_event_records);
    line(
        "host functions",
        format!(
            "{:>8}  (truth: {}; {} not bounded, not shown)",
            v.host_function_events, v.expected_host_functions, v.host_functions_not_shown
        ),
    );
    n("wrong host functions", v.wrong_host_functions);
    line(
        "roctx ranges",
        format!(
            "{:>8}  missing, of {}; {} GPU annotation spans",
            v.missing_annotations, v.expected_annotations, v.gpu_annotations
        ),
    );
    n("wrong roctx ranges", v.wrong_annotations);
    n("wrong GPU annotation spans", v.wrong_gpu_annotations);
    n("missing GPU annotation spans", v.missing_gpu_annotations);
    n("dependency arrows", v.dependency_arrows);
    n("wrong dependency arrows", v.wrong_dependency_arrows);
    n("missing dependency arrows", v.missing_dependency_arrows);
    n("overhead events", v.overhead_events);
    n("unverified timeline events", v.unverified_timeline_events);
    n("wrong overhead events", v.wrong_overheads);
    for summary in &v.tool_summary {
        println!("tool: {summary}");
    }
}
