//! The README's attribution figures, re-measured: every table the README
//! marks with `<!-- checked by crates/cli/tests/readme_figures.rs: NAME -->`
//! is parsed and each row is run again through `kineto-rocm validate`.
//!
//! A figure is asserted exactly, except where the README marks it `~`: those
//! are one run's split between attributed and withheld, which moves widely
//! from run to run (the simulator runs real threads, so which packets meet
//! depends on scheduling; on 16 threads of shared kernels five runs gave 8
//! to 1571 attributed). For them the row's total and its 0 wrong are still
//! exact.
//! The launch-stack columns are asserted by sign: wrong claims or none.
mod common;

use common::{n, validate, workload};
use serde_json::Value;

fn readme() -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The body rows of the table the README marks with `name`, as cells.
fn table(name: &str) -> Vec<Vec<String>> {
    let text = readme();
    let marker = format!("<!-- checked by crates/cli/tests/readme_figures.rs: {name} -->");
    let start = text
        .find(&marker)
        .unwrap_or_else(|| panic!("README.md has no table marked {marker}"));
    let rows: Vec<Vec<String>> = text[start + marker.len()..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2) // the header and its rule
        .map(|l| {
            l.trim_matches('|')
                .split('|')
                .map(|c| c.trim().trim_matches('`').to_string())
                .collect()
        })
        .collect();
    assert!(!rows.is_empty(), "the table marked {name} has no rows");
    rows
}

/// One figure of a cell: its value, and whether the README marks it `~`.
#[derive(Debug, Clone, Copy)]
struct Figure {
    value: u64,
    varies: bool,
}

fn figures(cell: &str) -> Vec<Figure> {
    cell.split('/')
        .map(|f| {
            let f = f.trim();
            let varies = f.starts_with('~');
            let value = f
                .trim_start_matches('~')
                .parse()
                .unwrap_or_else(|_| panic!("not a figure: {f:?} in {cell:?}"));
            Figure { value, varies }
        })
        .collect()
}

fn wrong_claims(report: &Value) -> u64 {
    let fields = report.as_object().expect("a report object");
    n(report, "aliased_keys")
        + fields
            .iter()
            .filter(|(k, _)| k.starts_with("wrong_"))
            .map(|(k, _)| n(report, k))
            .sum::<u64>()
}

/// Checks a cell "attributed / withheld / wrong" against a report.
fn check_evidence_cell(what: &str, cell: &str, graph_kernels: u64, report: &Value) -> Vec<String> {
    let f = figures(cell);
    assert_eq!(
        f.len(),
        3,
        "{what}: {cell:?} is not attributed / withheld / wrong"
    );
    let attributed = n(report, "carrying_both_fields");
    let withheld = n(report, "withheld_records");
    let wrong = wrong_claims(report);
    let mut out = Vec::new();
    if attributed + withheld != graph_kernels {
        out.push(format!(
            "{what}: {attributed} + {withheld} graph kernels, README {graph_kernels}"
        ));
    }
    if wrong != f[2].value {
        out.push(format!(
            "{what}: {wrong} wrong claims, README {}",
            f[2].value
        ));
    }
    if !f[0].varies && (attributed != f[0].value || withheld != f[1].value) {
        out.push(format!(
            "{what}: {attributed} / {withheld}, README {} / {}",
            f[0].value, f[1].value
        ));
    }
    out
}

fn run(file: &str, model: &str, method: &str) -> Value {
    validate(
        &workload(file),
        &[
            "--submission-model",
            model,
            "--attribution-method",
            method,
            "--seed",
            "1",
        ],
        &[],
    )
}

fn fail_on(problems: Vec<String>) {
    assert!(
        problems.is_empty(),
        "README.md disagrees with what was measured:\n{}",
        problems.join("\n")
    );
}

/// | workload | graph kernels | rocm: a / w / x | ideal: a / w / x | graph ids | keys |
#[test]
fn shipped_workloads_table() {
    let mut problems = Vec::new();
    for row in table("shipped") {
        let file = &row[0];
        let graph_kernels: u64 = row[1].parse().expect("graph kernels");
        for (col, model) in [(2, "rocm"), (3, "ideal")] {
            let report = run(file, model, "evidence");
            let what = format!("{file} under {model}");
            problems.extend(check_evidence_cell(
                &what,
                &row[col],
                graph_kernels,
                &report,
            ));
            for (col, key) in [(4, "distinct_graph_ids"), (5, "distinct_keys")] {
                let want: u64 = row[col].parse().expect("a count");
                if n(&report, key) != want {
                    problems.push(format!("{what}: {key} {}, README {want}", n(&report, key)));
                }
            }
        }
    }
    fail_on(problems);
}

/// | threads | sizes | graph kernels | rocm: a / w / x | ideal: a / w / x |
/// launch-stack rocm: a / x | launch-stack ideal: a / x |
#[test]
fn concurrency_table() {
    let mut problems = Vec::new();
    for row in table("concurrency") {
        let threads = &row[0];
        let file = match row[1].as_str() {
            "equal" => format!("concurrent-{threads}threads"),
            sizes => format!("concurrent-{sizes}-{threads}threads"),
        };
        let graph_kernels: u64 = row[2].parse().expect("graph kernels");
        for (col, model) in [(3, "rocm"), (4, "ideal")] {
            let report = run(&file, model, "evidence");
            let what = format!("{file} under {model}");
            problems.extend(check_evidence_cell(
                &what,
                &row[col],
                graph_kernels,
                &report,
            ));
        }
        for (col, model) in [(5, "rocm"), (6, "ideal")] {
            let report = run(&file, model, "launch-stack");
            let shown = figures(&row[col]);
            let wrong = wrong_claims(&report);
            let answered = n(&report, "carrying_both_fields");
            if answered != shown[0].value {
                problems.push(format!(
                    "{file} under {model}, launch-stack: {answered} answered, README {}",
                    shown[0].value
                ));
            }
            // `~`: how often its threads overlap depends on scheduling.
            if !shown[1].varies && wrong != shown[1].value {
                problems.push(format!(
                    "{file} under {model}, launch-stack: {wrong} wrong claims, README {}",
                    shown[1].value
                ));
            }
        }
    }
    fail_on(problems);
}
