//! The report's plots, so a regression is seen rather than read: each
//! node's duration distribution per rank (slowest nodes first), and one
//! node's duration across replays per rank. SVG, or an HTML page with the
//! table and the plots.
use super::{NodeReport, NodeStats, Report};
use plotters::prelude::*;
use std::fmt::Write as _;

/// Most nodes drawn in the distribution plot.
const MOST_NODES: usize = 24;
const WIDTH: u32 = 1200;
const HEIGHT: u32 = 960;

/// Which node the across-replays plot shows: the slowest, or one asked for.
#[derive(Clone, Copy, Debug, Default)]
pub struct PlotChoice {
    pub node: Option<(u64, u32)>,
}

impl PlotChoice {
    fn pick<'a>(&self, report: &'a Report) -> Result<&'a NodeReport, String> {
        match self.node {
            None => report
                .nodes
                .first()
                .ok_or_else(|| "no graph node in the traces".to_string()),
            Some((graph, node)) => report
                .nodes
                .iter()
                .find(|n| (n.graph_id, n.node) == (graph, node))
                .ok_or_else(|| format!("--node {graph}:{node}: no such graph node in the traces")),
        }
    }
}

fn label(node: &NodeReport, one_graph: bool) -> String {
    if one_graph {
        format!("{}", node.node)
    } else {
        format!("{}:{}", node.graph_id, node.node)
    }
}

fn color(rank: usize) -> RGBColor {
    let c = Palette99::pick(rank).to_rgba();
    RGBColor(c.0, c.1, c.2)
}

fn us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

/// Both plots as one SVG document.
pub fn svg(report: &Report, choice: PlotChoice) -> Result<String, String> {
    let chosen = choice.pick(report)?;
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let (top, bottom) = root.split_vertically(HEIGHT / 2);
        distributions(&top, report).map_err(|e| e.to_string())?;
        across_replays(&bottom, report, chosen).map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(out)
}

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;
type DrawResult = Result<(), DrawingAreaErrorKind<std::io::Error>>;

/// Per node (slowest first) and rank: a box from p25 to p75, whiskers from
/// p1 to p99, a tick at the median.
fn distributions(area: &Area, report: &Report) -> DrawResult {
    let nodes: Vec<&NodeReport> = report.nodes.iter().take(MOST_NODES).collect();
    let one_graph = nodes.iter().all(|n| n.graph_id == nodes[0].graph_id);
    let top = nodes
        .iter()
        .flat_map(|n| n.ranks.iter().flatten())
        .map(|s| s.percentile(99))
        .max()
        .unwrap_or(1);
    let ranks = report.ranks.len().max(1);
    let title = format!(
        "Kernel duration per graph node{}, slowest first (box p25-p75, whiskers p1-p99)",
        if ranks > 1 { " and rank" } else { "" }
    );
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(-0.5f64..nodes.len() as f64 - 0.5, 0f64..us(top) * 1.1)?;
    chart
        .configure_mesh()
        .x_labels(nodes.len().max(1))
        .x_label_formatter(&|x| {
            let i = x.round();
            if (x - i).abs() > 1e-6 || i < 0.0 {
                return String::new();
            }
            nodes
                .get(i as usize)
                .map(|n| label(n, one_graph))
                .unwrap_or_default()
        })
        .x_desc(if one_graph {
            format!("node of graph {}", nodes.first().map_or(0, |n| n.graph_id))
        } else {
            "graph:node".to_string()
        })
        .y_desc("duration (us)")
        .disable_x_mesh()
        .draw()?;
    let width = 0.8 / ranks as f64;
    for (i, node) in nodes.iter().enumerate() {
        for (rank, stats) in node.ranks.iter().enumerate() {
            let Some(stats) = stats else { continue };
            let left = i as f64 - 0.4 + rank as f64 * width + width * 0.1;
            let right = left + width * 0.8;
            let middle = (left + right) / 2.0;
            let [p1, p25, p50, p75, p99] = [1, 25, 50, 75, 99].map(|p| us(stats.percentile(p)));
            let c = color(rank);
            chart.draw_series([Rectangle::new(
                [(left, p25), (right, p75)],
                c.mix(0.35).filled(),
            )])?;
            chart.draw_series([Rectangle::new(
                [(left, p25), (right, p75)],
                c.stroke_width(1),
            )])?;
            chart.draw_series([
                PathElement::new(vec![(middle, p1), (middle, p25)], c.stroke_width(1)),
                PathElement::new(vec![(middle, p75), (middle, p99)], c.stroke_width(1)),
                PathElement::new(vec![(left, p50), (right, p50)], c.stroke_width(2)),
            ])?;
        }
    }
    legend(&mut chart, report)?;
    Ok(())
}

/// The chosen node's duration in every replay, one line per rank.
fn across_replays(area: &Area, report: &Report, node: &NodeReport) -> DrawResult {
    let series: Vec<(usize, &NodeStats)> = node
        .ranks
        .iter()
        .enumerate()
        .filter_map(|(i, s)| s.as_ref().map(|s| (i, s)))
        .collect();
    let replays = series
        .iter()
        .map(|(_, s)| s.durations.len())
        .max()
        .unwrap_or(1);
    let top = series
        .iter()
        .flat_map(|(_, s)| s.durations.iter().copied())
        .max()
        .unwrap_or(1);
    let drift: Vec<String> = series
        .iter()
        .map(|(rank, s)| {
            if series.len() > 1 {
                format!("rank {rank} {:+.1}%", s.drift_pct)
            } else {
                format!("{:+.1}%", s.drift_pct)
            }
        })
        .collect();
    let title = format!(
        "Graph {} node {} ({}) across replays: drift {}",
        node.graph_id,
        node.node,
        node.kernel,
        drift.join(", ")
    );
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..replays.max(2) as f64 - 1.0, 0f64..us(top) * 1.1)?;
    chart
        .configure_mesh()
        .x_desc("replay")
        .y_desc("duration (us)")
        .draw()?;
    for (rank, stats) in series {
        let points = stats
            .durations
            .iter()
            .enumerate()
            .map(|(i, &d)| (i as f64, us(d)));
        chart.draw_series(LineSeries::new(points, color(rank).stroke_width(2)))?;
    }
    legend(&mut chart, report)?;
    Ok(())
}

/// Names the ranks' colours when there are several.
fn legend<'a>(
    chart: &mut ChartContext<
        'a,
        SVGBackend<'a>,
        Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
    >,
    report: &Report,
) -> DrawResult {
    if report.ranks.len() < 2 {
        return Ok(());
    }
    for (i, rank) in report.ranks.iter().enumerate() {
        let c = color(i);
        chart
            .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())?
            .label(format!("rank {i}: {}", rank.label))
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], c.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The table and the plots as one HTML page.
pub fn html(report: &Report, choice: PlotChoice) -> Result<String, String> {
    let plots = svg(report, choice)?;
    let several = report.ranks.len() > 1;
    let mut page = String::from(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>kineto-rocm report</title>\n\
         <style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}\
         td,th{padding:2px 10px;text-align:right;border-bottom:1px solid #ddd}\
         td.k{text-align:left;font-family:monospace}tr.slow td{font-weight:bold}</style>\n\
         </head><body>\n<h1>kineto-rocm: per graph node</h1>\n",
    );
    if several {
        page.push_str("<ul>\n");
        for (i, rank) in report.ranks.iter().enumerate() {
            let _ = writeln!(page, "<li>rank {i}: {}</li>", escape(&rank.label));
        }
        page.push_str("</ul>\n<p>Bold: the slowest rank of the node.</p>\n");
    }
    page.push_str("<table>\n<tr><th>graph id</th><th>node</th><th>kernel</th>");
    if several {
        page.push_str("<th>rank</th>");
    }
    page.push_str("<th>count</th><th>mean us</th><th>p50 us</th><th>p99 us</th><th>% replay</th><th>drift</th></tr>\n");
    for node in &report.nodes {
        for (i, stats) in node.ranks.iter().enumerate() {
            let Some(s) = stats else { continue };
            let class = if node.slowest_rank == Some(i) {
                " class=\"slow\""
            } else {
                ""
            };
            let _ = write!(
                page,
                "<tr{class}><td>{}</td><td>{}</td><td class=\"k\">{}</td>",
                node.graph_id,
                node.node,
                escape(&node.kernel)
            );
            if several {
                let _ = write!(page, "<td>{i}</td>");
            }
            let _ = writeln!(
                page,
                "<td>{}</td><td>{:.3}</td><td>{:.3}</td><td>{:.3}</td><td>{:.1}%</td><td>{:+.1}%</td></tr>",
                s.count,
                s.mean_ns / 1000.0,
                s.p50_ns as f64 / 1000.0,
                s.p99_ns as f64 / 1000.0,
                s.share_pct,
                s.drift_pct
            );
        }
    }
    page.push_str("</table>\n");
    page.push_str(&plots);
    page.push_str("\n</body></html>\n");
    Ok(page)
}
