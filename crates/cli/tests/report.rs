//! `kineto-rocm report` on traces of real runs: the figures are the
//! workload's known durations, several traces are ranks and the slower one
//! is named per node, and a trace reads the same as JSON, gzipped JSON and
//! pftrace. Each run is a process of its own.
use flate2::{write::GzEncoder, Compression};
use rocprofiler_sim::workload::shipped;
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The workload's chain: kernel name -> duration, in node order.
const CHAIN: [(&str, u64); 4] = [
    ("report_a", 2000),
    ("report_b", 16000),
    ("report_c", 4000),
    ("report_d", 8000),
];
const REPLAYS: u64 = 50;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kineto-rocm-report-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn kineto_rocm(args: &[&std::ffi::OsStr]) -> (String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_kineto-rocm"))
        .args(args)
        .env_remove("KINETO_ROCM_DISABLE_GRAPH_ATTRIBUTION")
        .output()
        .expect("run kineto-rocm");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    );
    assert!(
        output.status.success(),
        "kineto-rocm {args:?} failed:\n{stderr}"
    );
    (stdout, stderr)
}

/// Runs the chain workload, with `slow_b` as report_b's duration when
/// given, and writes its trace to `out`.
fn run(out: &Path, slow_b: Option<u64>) {
    run_with(out, slow_b, &[]);
}

/// `run` with `extra` arguments (e.g. `--pmc`).
fn run_with(out: &Path, slow_b: Option<u64>, extra: &[&str]) {
    let mut workload: Value = serde_json::from_str(
        &std::fs::read_to_string(shipped::path("report-durations.json")).unwrap(),
    )
    .unwrap();
    if let Some(ns) = slow_b {
        workload["durations"]["kernel_ns"]["report_b"] = ns.into();
    }
    let file = out.with_extension("workload.json");
    std::fs::write(&file, workload.to_string()).unwrap();
    kineto_rocm(
        &[
            "run".as_ref(),
            "--virtual-time".as_ref(),
            "--workload".as_ref(),
            file.as_os_str(),
            "--out".as_ref(),
            out.as_os_str(),
        ]
        .into_iter()
        .chain(extra.iter().map(|a| a.as_ref()))
        .collect::<Vec<&std::ffi::OsStr>>(),
    );
}

fn report(traces: &[&Path]) -> Value {
    let mut args: Vec<&std::ffi::OsStr> = vec!["report".as_ref(), "--json".as_ref()];
    args.extend(traces.iter().map(|t| t.as_os_str()));
    serde_json::from_str(&kineto_rocm(&args).0).expect("report JSON")
}

fn stats(node: &Value, rank: usize) -> &Value {
    &node["ranks"][rank]
}

#[test]
fn figures_are_the_workloads_durations_slowest_first() {
    let trace = scratch("chain.json");
    run(&trace, None);
    let report = report(&[&trace]);
    let nodes = report["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), CHAIN.len());
    let mut by_duration = CHAIN.iter().enumerate().collect::<Vec<_>>();
    by_duration.sort_by_key(|(_, (_, ns))| std::cmp::Reverse(*ns));
    let mut shares = 0.0;
    for (node, (index, (kernel, ns))) in nodes.iter().zip(by_duration) {
        assert_eq!(node["node"], index as u64, "slowest first: {node}");
        assert_eq!(node["kernel"], *kernel);
        let s = stats(node, 0);
        assert_eq!(s["count"], REPLAYS);
        assert_eq!(s["mean_ns"].as_f64(), Some(*ns as f64), "{node}");
        assert_eq!(
            (s["p50_ns"].as_u64(), s["p99_ns"].as_u64()),
            (Some(*ns), Some(*ns))
        );
        assert_eq!(s["drift_pct"].as_f64(), Some(0.0));
        // Every node runs in every replay, so its share is its duration
        // over the replay's: proportional to its duration.
        let share = s["share_pct"].as_f64().unwrap();
        let expected_ratio = *ns as f64 / 2000.0;
        let smallest = stats(&nodes[3], 0)["share_pct"].as_f64().unwrap();
        assert!((share / smallest - expected_ratio).abs() < 1e-9, "{node}");
        shares += share;
    }
    // The chain's time over the replays' time, each replay spanning its
    // launch's kernels (one correlation) from first start to last end: the
    // gaps between kernels (launch latency, barrier packets, a launching
    // thread slowed by a busy machine) count in the replay, not in a node.
    let chain_ns: u64 = CHAIN.iter().map(|(_, ns)| ns).sum();
    let replays_ns = replay_spans_ns(&read_json(&trace));
    let expected = 100.0 * (chain_ns * REPLAYS) as f64 / replays_ns as f64;
    assert!(
        (shares - expected).abs() < 0.01 && shares <= 100.0,
        "shares add up to {shares}, the trace says {expected}"
    );
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The sum over replays (kernels of one correlation) of last end minus
/// first start, in ns (to within a ns a replay: f64 microseconds).
fn replay_spans_ns(trace: &Value) -> u64 {
    let mut spans: std::collections::HashMap<u64, (f64, f64)> = Default::default();
    for e in trace["traceEvents"].as_array().unwrap() {
        if e["cat"] != "kernel" {
            continue;
        }
        let (ts, dur) = (e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap());
        let span = spans
            .entry(e["args"]["correlation"].as_u64().unwrap())
            .or_insert((f64::MAX, f64::MIN));
        span.0 = span.0.min(ts);
        span.1 = span.1.max(ts + dur);
    }
    assert_eq!(spans.len() as u64, REPLAYS, "a correlation per replay");
    spans
        .values()
        .map(|(start, end)| ((end - start) * 1000.0).round() as u64)
        .sum()
}

#[test]
fn several_traces_are_ranks_and_the_slower_one_is_named_per_node() {
    let (fast, slow) = (scratch("rank0.json"), scratch("rank1.json"));
    run(&fast, None);
    run(&slow, Some(24000));
    let report = report(&[&fast, &slow]);
    assert_eq!(report["ranks"].as_array().unwrap().len(), 2);
    let nodes = report["nodes"].as_array().unwrap();
    let b = &nodes[0];
    assert_eq!(
        b["kernel"], "report_b",
        "the slowest node over the ranks comes first"
    );
    assert_eq!(b["slowest_rank"], 1);
    assert_eq!(stats(b, 0)["mean_ns"].as_f64(), Some(16000.0));
    assert_eq!(stats(b, 1)["mean_ns"].as_f64(), Some(24000.0));
    for node in &nodes[1..] {
        assert!(
            node["slowest_rank"].is_null(),
            "equal on both ranks: {node}"
        );
    }
    let (table, _) = kineto_rocm(&["report".as_ref(), fast.as_os_str(), slow.as_os_str()]);
    assert!(table.contains("rank 1: "), "{table}");
    assert!(
        table
            .lines()
            .any(|l| l.trim_start().starts_with("1*") || l.contains("    1*")),
        "the slower rank is marked:\n{table}"
    );
}

#[test]
fn json_gzipped_json_and_pftrace_read_the_same() {
    let (json, pftrace) = (scratch("same.json"), scratch("same.pftrace"));
    let file = shipped::path("report-durations.json");
    kineto_rocm(&[
        "run".as_ref(),
        "--workload".as_ref(),
        file.as_os_str(),
        "--out".as_ref(),
        json.as_os_str(),
        "--out".as_ref(),
        pftrace.as_os_str(),
    ]);
    let gz = scratch("same.json.gz");
    let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
    encoder.write_all(&std::fs::read(&json).unwrap()).unwrap();
    std::fs::write(&gz, encoder.finish().unwrap()).unwrap();
    let strip = |mut r: Value| {
        r["ranks"] = Value::Null;
        r
    };
    let plain = strip(report(&[&json]));
    assert_eq!(plain, strip(report(&[&gz])));
    assert_eq!(plain, strip(report(&[&pftrace])));
}

#[test]
fn plots_render_as_svg_and_html() {
    let (fast, slow) = (scratch("plot0.json"), scratch("plot1.json"));
    run(&fast, None);
    run(&slow, Some(24000));
    let (svg, html) = (scratch("plots.svg"), scratch("plots.html"));
    kineto_rocm(&[
        "report".as_ref(),
        fast.as_os_str(),
        slow.as_os_str(),
        "--svg".as_ref(),
        svg.as_os_str(),
        "--html".as_ref(),
        html.as_os_str(),
        "--node".as_ref(),
        "1:1".as_ref(),
    ]);
    let svg_path = svg;
    let svg = std::fs::read_to_string(&svg_path).unwrap();
    assert!(
        svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"),
        "not an SVG"
    );
    assert!(
        svg.contains("Graph 1 node 1 (report_b) across replays"),
        "the chosen node"
    );
    assert!(svg.contains("rank 1: "), "a legend names the ranks");
    render(&svg_path);
    let html = std::fs::read_to_string(html).unwrap();
    assert!(html.contains("<table>") && html.contains("<svg"));
    assert!(
        html.contains("class=\"slow\""),
        "the slowest rank is marked"
    );
}

/// Draws the SVG with librsvg (`rsvg-convert`), when installed, as an image
/// viewer would: a file it cannot parse or draw fails.
fn render(svg: &Path) {
    let png = svg.with_extension("png");
    match Command::new("rsvg-convert")
        .arg(svg)
        .arg("-o")
        .arg(&png)
        .output()
    {
        Ok(out) => {
            assert!(
                out.status.success(),
                "rsvg-convert cannot draw {}: {}",
                svg.display(),
                String::from_utf8_lossy(&out.stderr)
            );
            let bytes = std::fs::read(&png).unwrap();
            assert!(bytes.starts_with(b"\x89PNG") && bytes.len() > 10_000);
        }
        Err(e) => eprintln!("rsvg-convert not run ({e}): the SVG's drawing is not checked"),
    }
}

#[test]
fn errors_name_the_file_and_what_is_wrong() {
    let output = Command::new(env!("CARGO_BIN_EXE_kineto-rocm"))
        .args(["report", "/nonexistent/trace.json"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("/nonexistent/trace.json: cannot read"),
        "{stderr}"
    );
    let bad = scratch("bad.pftrace");
    std::fs::write(&bad, [0x0a, 0x50, 0x01]).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_kineto-rocm"))
        .arg("report")
        .arg(&bad)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("not a valid Perfetto trace"), "{stderr}");
}

/// Where kernels carry hardware counters, the report gives each graph
/// node's counter means over its replays (text and JSON); GRBM_COUNT is the
/// simulator's clocks over the dispatch, 2.1 per ns of the node's known
/// duration. A trace without counters has no such table.
#[test]
fn counters_are_reported_per_graph_node() {
    let trace = scratch("chain-counters.json");
    run_with(&trace, None, &["--pmc", "GRBM_COUNT,SQ_WAVES"]);
    let json = report(&[&trace]);
    let counters = json["counters"].as_array().unwrap();
    assert_eq!(counters.len(), 1, "{json}");
    let nodes = counters[0]["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), CHAIN.len());
    for (node, (kernel, ns)) in nodes.iter().zip(CHAIN) {
        assert_eq!(node["kernel"], kernel);
        assert_eq!(node["count"], REPLAYS, "{node}");
        let means = node["means"].as_array().unwrap();
        assert_eq!(means[0][0], "GRBM_COUNT");
        assert_eq!(means[0][1].as_f64(), Some((ns * 21 / 10) as f64), "{node}");
        assert_eq!(means[1][0], "SQ_WAVES");
    }
    let (text, _) = kineto_rocm(&["report".as_ref(), trace.as_os_str()]);
    let table = text
        .split_once("counter means per graph node:\n")
        .unwrap_or_else(|| panic!("no counter table: {text}"))
        .1;
    let rows: Vec<Vec<&str>> = table
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), CHAIN.len(), "{table}");
    assert_eq!(rows[1][2], "report_b");
    assert_eq!(rows[1][4], "33600.0", "16000 ns at 2.1 clocks per ns");

    let plain = scratch("chain-plain.json");
    run(&plain, None);
    assert_eq!(report(&[&plain])["counters"].as_array().unwrap().len(), 0);
    let (text, _) = kineto_rocm(&["report".as_ref(), plain.as_os_str()]);
    assert!(!text.contains("counter means"), "{text}");
}
