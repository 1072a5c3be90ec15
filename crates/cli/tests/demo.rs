//! `kineto-rocm demo` prints its per-node table with the report's code: the
//! table is exactly what `kineto-rocm report` prints for the demo's trace,
//! and it holds every node of the 32-node graph, replayed 200 times.
use std::process::Command;

fn kineto_rocm(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_kineto-rocm"))
        .args(args)
        .env_remove("KINETO_ROCM_DISABLE_GRAPH_ATTRIBUTION")
        .output()
        .expect("run kineto-rocm");
    assert!(
        output.status.success(),
        "kineto-rocm {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn the_demo_table_is_the_reports() {
    let dir = std::env::temp_dir().join(format!("kineto-rocm-demo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("demo.json");
    let trace = trace.to_str().unwrap();
    let demo = kineto_rocm(&["demo", "--out", trace]);
    let report = kineto_rocm(&["report", trace]);
    assert!(
        demo.starts_with(&report),
        "demo printed:\n{demo}\nreport printed:\n{report}"
    );
    let rows: Vec<&str> = report
        .lines()
        .filter(|l| l.split_whitespace().nth(3) == Some("200"))
        .collect();
    assert_eq!(
        rows.len(),
        32,
        "a row per node, 200 replays each:\n{report}"
    );
}
