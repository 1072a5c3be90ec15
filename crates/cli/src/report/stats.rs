//! The figures of one node on one rank, from its durations in replay order.
use serde::Serialize;

#[derive(Clone, Debug, Serialize)]
pub struct NodeStats {
    pub count: usize,
    pub mean_ns: f64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    /// Its time over the time of the replays it ran in (a replay's time is
    /// from its first start to its last end), in percent. Nodes on parallel
    /// branches overlap, so a graph's shares can add up past 100.
    pub share_pct: f64,
    /// How much its duration changed from the first replay to the last,
    /// along a least-squares line, in percent of its mean.
    pub drift_pct: f64,
    /// Durations in replay order (for the plots).
    #[serde(skip)]
    pub durations: Vec<u64>,
}

impl NodeStats {
    /// `durations` in replay order; `replay_time_ns` summed over the
    /// replays the node ran in.
    pub fn new(durations: Vec<u64>, replay_time_ns: u64) -> NodeStats {
        let count = durations.len();
        let total: u64 = durations.iter().sum();
        let mean_ns = total as f64 / count.max(1) as f64;
        let mut sorted = durations.clone();
        sorted.sort_unstable();
        NodeStats {
            count,
            mean_ns,
            p50_ns: percentile(&sorted, 50),
            p99_ns: percentile(&sorted, 99),
            share_pct: if replay_time_ns == 0 {
                0.0
            } else {
                100.0 * total as f64 / replay_time_ns as f64
            },
            drift_pct: drift_pct(&durations, mean_ns),
            durations,
        }
    }

    /// The value at `p` percent of the sorted durations (nearest rank).
    pub fn percentile(&self, p: usize) -> u64 {
        let mut sorted = self.durations.clone();
        sorted.sort_unstable();
        percentile(&sorted, p)
    }
}

/// Nearest-rank percentile of sorted values.
pub fn percentile(sorted: &[u64], p: usize) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (p * sorted.len()).div_ceil(100).max(1);
    sorted[rank - 1]
}

/// The least-squares line through (replay, duration), first to last
/// replay, as a percentage of the mean.
fn drift_pct(durations: &[u64], mean: f64) -> f64 {
    let n = durations.len();
    if n < 2 || mean == 0.0 {
        return 0.0;
    }
    let mean_x = (n - 1) as f64 / 2.0;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (x, &y) in durations.iter().enumerate() {
        let dx = x as f64 - mean_x;
        sxy += dx * (y as f64 - mean);
        sxx += dx * dx;
    }
    let slope = sxy / sxx;
    100.0 * slope * (n - 1) as f64 / mean
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

    #[test]
    fn a_steady_node_has_no_drift_and_a_growing_one_shows_how_much() {
        let steady = NodeStats::new(vec![4000; 50], 50 * 8000);
        assert_eq!(steady.drift_pct, 0.0);
        assert_eq!(steady.share_pct, 50.0);
        // 1000 ns growing by 10 ns a replay over 101 replays: mean 1500,
        // first-to-last change 1000 ns = 66.7% of the mean.
        let growing: Vec<u64> = (0..=100).map(|i| 1000 + 10 * i).collect();
        let stats = NodeStats::new(growing, 0);
        assert!(
            (stats.drift_pct - 100.0 * 1000.0 / 1500.0).abs() < 1e-9,
            "{}",
            stats.drift_pct
        );
        assert_eq!((stats.p50_ns, stats.p99_ns), (1500, 1990));
        let shrinking: Vec<u64> = (0..=100).map(|i| 2000 - 10 * i).collect();
        assert!(NodeStats::new(shrinking, 0).drift_pct < -60.0);
    }
}
