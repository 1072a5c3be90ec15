//! The per-node report: for every graph node (graph id, node) of one or
//! more traces, its kernel, count, mean, p50 and p99 duration, its share of
//! its replays' time and its drift over replays, slowest first; with several
//! traces (the ranks of a distributed job) the same per rank, and which rank
//! is slowest per node; and where kernels carry hardware counters, each
//! node's counter means. `demo` prints the same tables.
//!
//! A replay is one launch of a graph: its kernels share the launch's
//! `correlation`. A trace without correlations (or a graph with some
//! missing) is cut into replays by occurrence: a node's k-th kernel is in
//! replay k.
mod plot;
mod print;
mod stats;

pub use plot::{html, svg, PlotChoice};
pub use print::print;
pub use stats::NodeStats;

use crate::counter_table::{node_rows, NodeCounters};
use crate::trace::{GpuEvent, Trace};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// A trace in the report: what to call it and which rank it is.
#[derive(Clone, Debug, Serialize)]
pub struct Rank {
    pub label: String,
    /// `distributedInfo.rank`, when the trace says.
    pub rank: Option<u64>,
}

/// One graph node across the ranks.
#[derive(Clone, Debug, Serialize)]
pub struct NodeReport {
    pub graph_id: u64,
    pub node: u32,
    pub kernel: String,
    /// Per rank, in the order the traces were given; None: not in that trace.
    pub ranks: Vec<Option<NodeStats>>,
    /// The rank with the highest mean, when more than one has the node.
    pub slowest_rank: Option<usize>,
}

impl NodeReport {
    /// The highest mean over the ranks: the sort key.
    pub fn worst_mean_ns(&self) -> f64 {
        self.ranks
            .iter()
            .flatten()
            .map(|s| s.mean_ns)
            .fold(0.0, f64::max)
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub ranks: Vec<Rank>,
    /// Slowest first.
    pub nodes: Vec<NodeReport>,
    /// Per rank whose kernels carry hardware counters: each graph node's
    /// counter means over its replays (empty when no trace has counters).
    pub counters: Vec<RankCounters>,
}

/// One rank's per-node counter means.
#[derive(Clone, Debug, Serialize)]
pub struct RankCounters {
    /// Index into `ranks`.
    pub rank: usize,
    pub nodes: Vec<NodeCounters>,
}

/// Per node of one trace: kernel name(s) and stats.
fn nodes_of(trace: &Trace) -> BTreeMap<(u64, u32), (String, NodeStats)> {
    // Graph id 0 is no graph: kineto's CUPTI backend gives every kernel a
    // `graph id` (CuptiActivity.h addGraphNodeTypedMetadata, CUDA 12+), 0
    // for one not launched by a graph, as ours never names a graph 0.
    let graphed: Vec<&GpuEvent> = trace
        .events
        .iter()
        .filter(|e| e.graph.is_some_and(|(graph_id, _)| graph_id != 0))
        .collect();
    let mut by_graph: BTreeMap<u64, Vec<&GpuEvent>> = BTreeMap::new();
    for event in graphed {
        let (graph_id, _) = event.graph.expect("filtered");
        by_graph.entry(graph_id).or_default().push(event);
    }
    let mut out = BTreeMap::new();
    for (graph_id, mut events) in by_graph {
        events.sort_by_key(|e| (e.start_ns, e.end_ns));
        // Replay of each event, by launch correlation or by occurrence.
        let by_correlation = events.iter().all(|e| e.correlation.is_some());
        let mut occurrence: HashMap<u32, usize> = HashMap::new();
        let replay_of: Vec<u64> = events
            .iter()
            .map(|e| {
                if by_correlation {
                    e.correlation.expect("checked")
                } else {
                    let n = occurrence.entry(e.ordinal().expect("graphed")).or_default();
                    *n += 1;
                    (*n - 1) as u64
                }
            })
            .collect();
        // Each replay's span and its order by first start.
        let mut spans: HashMap<u64, (u64, u64)> = HashMap::new();
        for (event, replay) in events.iter().zip(&replay_of) {
            let span = spans.entry(*replay).or_insert((u64::MAX, 0));
            span.0 = span.0.min(event.start_ns);
            span.1 = span.1.max(event.end_ns);
        }
        let mut order: Vec<(u64, u64)> = spans.iter().map(|(r, s)| (s.0, *r)).collect();
        order.sort_unstable();
        let index: HashMap<u64, usize> = order
            .iter()
            .enumerate()
            .map(|(i, (_, r))| (*r, i))
            .collect();
        // Per node: its kernel name(s), and (replay, duration) pairs.
        let mut per_node: BTreeMap<u32, (String, Vec<(usize, u64)>)> = BTreeMap::new();
        for (event, replay) in events.iter().zip(&replay_of) {
            let node = event.ordinal().expect("graphed");
            let entry = per_node
                .entry(node)
                .or_insert_with(|| (event.name.to_string(), Vec::new()));
            if !entry.0.split(" + ").any(|k| k == &*event.name) {
                entry.0 = format!("{} + {}", entry.0, event.name);
            }
            entry.1.push((index[replay], event.duration_ns()));
        }
        for (node, (kernel, mut durations)) in per_node {
            durations.sort_by_key(|(replay, _)| *replay);
            let mut replays: Vec<usize> = durations.iter().map(|(r, _)| *r).collect();
            replays.dedup();
            let replay_time: u64 = replays
                .iter()
                .map(|r| {
                    let (_, replay) = order[*r];
                    let (start, end) = spans[&replay];
                    end - start
                })
                .sum();
            let durations = durations.into_iter().map(|(_, d)| d).collect();
            out.insert(
                (graph_id, node),
                (kernel, NodeStats::new(durations, replay_time)),
            );
        }
    }
    out
}

/// The report of `traces`, one per rank.
pub fn build(traces: &[(String, Trace)]) -> Report {
    let per_rank: Vec<_> = traces.iter().map(|(_, trace)| nodes_of(trace)).collect();
    let mut keys: Vec<(u64, u32)> = per_rank.iter().flat_map(|n| n.keys().copied()).collect();
    keys.sort_unstable();
    keys.dedup();
    let mut nodes: Vec<NodeReport> = keys
        .into_iter()
        .map(|key| {
            let ranks: Vec<Option<NodeStats>> = per_rank
                .iter()
                .map(|nodes| nodes.get(&key).map(|(_, s)| s.clone()))
                .collect();
            let mut kernels: Vec<&str> = per_rank
                .iter()
                .filter_map(|nodes| nodes.get(&key).map(|(k, _)| k.as_str()))
                .collect();
            kernels.dedup();
            let means: Vec<(usize, f64)> = ranks
                .iter()
                .enumerate()
                .filter_map(|(i, s)| s.as_ref().map(|s| (i, s.mean_ns)))
                .collect();
            let fastest = means.iter().map(|m| m.1).fold(f64::INFINITY, f64::min);
            let slowest_rank = means
                .iter()
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .filter(|m| means.len() > 1 && m.1 > fastest)
                .map(|m| m.0);
            NodeReport {
                graph_id: key.0,
                node: key.1,
                kernel: kernels.join(" | "),
                ranks,
                slowest_rank,
            }
        })
        .collect();
    nodes.sort_by(|a, b| {
        b.worst_mean_ns()
            .total_cmp(&a.worst_mean_ns())
            .then((a.graph_id, a.node).cmp(&(b.graph_id, b.node)))
    });
    Report {
        ranks: traces
            .iter()
            .map(|(label, trace)| Rank {
                label: label.clone(),
                rank: trace.rank,
            })
            .collect(),
        nodes,
        counters: traces
            .iter()
            .enumerate()
            .map(|(rank, (_, trace))| RankCounters {
                rank,
                nodes: node_rows(&trace.events),
            })
            .filter(|r| !r.nodes.is_empty())
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::GpuCategory;
    use std::sync::Arc;

    fn kernel(node: u32, correlation: Option<u64>, start: u64, dur: u64) -> GpuEvent {
        GpuEvent {
            name: Arc::from(format!("k{node}")),
            category: GpuCategory::Kernel,
            pid: 0,
            tid: 1,
            start_ns: start,
            end_ns: start + dur,
            device: Some(0),
            stream: Some(1),
            dispatch_id: None,
            correlation,
            external_id: None,
            graph: Some((1, (1 << 32) | u64::from(node))),
            bytes: None,
            direction: None,
            counters: Vec::new(),
            value: None,
            mangled_name: None,
            src_device: None,
            dst_device: None,
            replay_pass: None,
            thread_trace: None,
            counter_instances: Vec::new(),
        }
    }

    /// A chain of two nodes, 100 ns and 300 ns, replayed `n` times, node 1
    /// growing by `growth` ns a replay.
    fn trace(n: u64, growth: u64, correlations: bool) -> Trace {
        let mut events = Vec::new();
        let mut t = 0;
        for replay in 0..n {
            let correlation = correlations.then_some(100 + replay);
            events.push(kernel(0, correlation, t, 100));
            let d1 = 300 + growth * replay;
            events.push(kernel(1, correlation, t + 100, d1));
            t += 100 + d1 + 50;
        }
        // Out of order, as records arrive.
        events.reverse();
        Trace {
            events,
            ..Trace::default()
        }
    }

    #[test]
    fn a_kernel_of_graph_0_is_no_node() {
        // As kineto's CUPTI backend writes a kernel launched outside a graph.
        let mut t = trace(3, 0, true);
        let mut eager = kernel(0, Some(7), 10_000, 50);
        eager.graph = Some((0, 0));
        t.events.push(eager);
        let report = build(&[("t".into(), t)]);
        assert_eq!(report.nodes.len(), 2);
        assert!(report.nodes.iter().all(|n| n.graph_id == 1));
        assert!(report
            .nodes
            .iter()
            .all(|n| n.ranks[0].as_ref().unwrap().count == 3));
    }

    #[test]
    fn figures_per_node_slowest_first_with_shares_of_the_replay() {
        for correlations in [true, false] {
            let report = build(&[("t".into(), trace(10, 0, correlations))]);
            let nodes: Vec<(u32, &NodeStats)> = report
                .nodes
                .iter()
                .map(|n| (n.node, n.ranks[0].as_ref().unwrap()))
                .collect();
            assert_eq!(nodes[0].0, 1, "slowest first");
            assert_eq!((nodes[0].1.count, nodes[0].1.mean_ns), (10, 300.0));
            assert_eq!((nodes[1].1.p50_ns, nodes[1].1.p99_ns), (100, 100));
            assert!((nodes[0].1.share_pct - 75.0).abs() < 1e-9);
            assert!((nodes[1].1.share_pct - 25.0).abs() < 1e-9);
            assert_eq!(report.nodes[0].slowest_rank, None);
        }
    }

    #[test]
    fn drift_shows_a_node_slowing_down_over_replays() {
        let report = build(&[("t".into(), trace(11, 30, true))]);
        let slow = report.nodes[0].ranks[0].as_ref().unwrap();
        // 300 -> 600 ns over 11 replays, mean 450: +66.7%.
        assert!(
            (slow.drift_pct - 100.0 * 300.0 / 450.0).abs() < 1e-6,
            "{}",
            slow.drift_pct
        );
        assert_eq!(slow.durations.first(), Some(&300));
        assert_eq!(slow.durations.last(), Some(&600));
        let steady = report.nodes[1].ranks[0].as_ref().unwrap();
        assert_eq!(steady.drift_pct, 0.0);
    }

    #[test]
    fn several_ranks_name_the_slowest_per_node() {
        let fast = trace(10, 0, true);
        let mut slow = trace(10, 0, true);
        for event in slow.events.iter_mut().filter(|e| e.ordinal() == Some(0)) {
            event.end_ns += 50;
        }
        let report = build(&[("a".into(), fast), ("b".into(), slow)]);
        let node0 = report.nodes.iter().find(|n| n.node == 0).unwrap();
        assert_eq!(node0.slowest_rank, Some(1));
        assert_eq!(node0.ranks[1].as_ref().unwrap().mean_ns, 150.0);
        let node1 = report.nodes.iter().find(|n| n.node == 1).unwrap();
        assert_eq!(node1.ranks[0].as_ref().unwrap().mean_ns, 300.0);
        assert_eq!(node1.slowest_rank, None, "equal on every rank");
        assert_eq!(report.ranks.len(), 2);
    }
}
