//! The per-node cost table: one row per (graph id, node ordinal).
use crate::trace::GpuEvent;
use std::collections::BTreeMap;

pub struct NodeRow {
    pub graph_id: u64,
    pub ordinal: u32,
    pub kernel: String,
    pub count: usize,
    pub mean_ns: f64,
    pub p50_ns: u64,
    pub p99_ns: u64,
}

pub fn node_rows(events: &[GpuEvent]) -> Vec<NodeRow> {
    let mut groups: BTreeMap<(u64, u32), (String, Vec<u64>)> = BTreeMap::new();
    for event in events {
        if let (Some((graph_id, _)), Some(ordinal)) = (event.graph, event.ordinal()) {
            let entry = groups
                .entry((graph_id, ordinal))
                .or_insert_with(|| (event.name.to_string(), Vec::new()));
            if *entry.0 != *event.name {
                entry.0 = format!("{} (+ {})", entry.0, event.name);
            }
            entry.1.push(event.duration_ns());
        }
    }
    groups
        .into_iter()
        .map(|((graph_id, ordinal), (kernel, mut durations))| {
            durations.sort_unstable();
            let count = durations.len();
            let mean_ns = durations.iter().sum::<u64>() as f64 / count as f64;
            NodeRow {
                graph_id,
                ordinal,
                kernel,
                count,
                mean_ns,
                p50_ns: percentile(&durations, 50),
                p99_ns: percentile(&durations, 99),
            }
        })
        .collect()
}

/// Nearest-rank percentile of sorted values.
fn percentile(sorted: &[u64], p: usize) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (p * sorted.len()).div_ceil(100).max(1);
    sorted[rank - 1]
}

pub fn print(rows: &[NodeRow]) {
    println!(
        "{:>9} {:>5}  {:<28} {:>6} {:>10} {:>10} {:>10}",
        "graph id", "node", "kernel", "count", "mean us", "p50 us", "p99 us"
    );
    for row in rows {
        println!(
            "{:>9} {:>5}  {:<28} {:>6} {:>10.3} {:>10.3} {:>10.3}",
            row.graph_id,
            row.ordinal,
            row.kernel,
            row.count,
            row.mean_ns / 1000.0,
            row.p50_ns as f64 / 1000.0,
            row.p99_ns as f64 / 1000.0
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let values: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&values, 50), 50);
        assert_eq!(percentile(&values, 99), 99);
        assert_eq!(percentile(&[7], 99), 7);
    }
}
