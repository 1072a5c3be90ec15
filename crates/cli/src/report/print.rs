//! The report as a table on stdout.
use super::{NodeStats, Report};

const HEADER: [&str; 9] = [
    "graph id", "node", "kernel", "count", "mean us", "p50 us", "p99 us", "% replay", "drift",
];

fn figures(stats: &NodeStats) -> String {
    format!(
        "{:>6} {:>10.3} {:>10.3} {:>10.3} {:>8.1}% {:>+7.1}%",
        stats.count,
        stats.mean_ns / 1000.0,
        stats.p50_ns as f64 / 1000.0,
        stats.p99_ns as f64 / 1000.0,
        stats.share_pct,
        stats.drift_pct
    )
}

pub fn print(report: &Report) {
    let kernel_width = report
        .nodes
        .iter()
        .map(|n| n.kernel.len())
        .max()
        .unwrap_or(0)
        .clamp(6, 48);
    let several = report.ranks.len() > 1;
    if several {
        for (i, rank) in report.ranks.iter().enumerate() {
            let said = rank
                .rank
                .map(|r| format!(" (distributedInfo rank {r})"))
                .unwrap_or_default();
            println!("rank {i}: {}{said}", rank.label);
        }
        println!("* the slowest rank of the node\n");
    }
    let rank_column = if several { "  rank" } else { "" };
    println!(
        "{:>9} {:>5}  {:<kernel_width$}{rank_column} {:>6} {:>10} {:>10} {:>10} {:>9} {:>8}",
        HEADER[0],
        HEADER[1],
        HEADER[2],
        HEADER[3],
        HEADER[4],
        HEADER[5],
        HEADER[6],
        HEADER[7],
        HEADER[8]
    );
    for node in &report.nodes {
        let mut first = true;
        for (i, stats) in node.ranks.iter().enumerate() {
            let Some(stats) = stats else { continue };
            let lead = if first {
                format!(
                    "{:>9} {:>5}  {:<kernel_width$}",
                    node.graph_id, node.node, node.kernel
                )
            } else {
                format!("{:>9} {:>5}  {:<kernel_width$}", "", "", "")
            };
            first = false;
            let rank = if several {
                let mark = if node.slowest_rank == Some(i) {
                    "*"
                } else {
                    " "
                };
                format!(" {i:>4}{mark}")
            } else {
                String::new()
            };
            println!("{lead}{rank} {}", figures(stats));
        }
    }
    for counters in &report.counters {
        let of = if several {
            format!(" (rank {})", counters.rank)
        } else {
            String::new()
        };
        println!("\ncounter means per graph node{of}:");
        crate::counter_table::print(&counters.nodes);
    }
}
