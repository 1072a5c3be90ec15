//! Running `kineto-rocm validate --json` in its own process (one simulated
//! SDK per process), with the environment pinned, and reading its report.
#![allow(dead_code)]
use rocprofiler_sim::workload::shipped;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

pub fn workloads_dir() -> PathBuf {
    shipped::dir()
}

pub fn workload(name: &str) -> PathBuf {
    shipped::path(&format!("{name}.json"))
}

/// Settings a developer's shell may hold that would change what a run
/// tests; each case sets what it needs explicitly.
const PINNED: &[&str] = &[
    "KINETO_ROCM_DISABLE_GRAPH_ATTRIBUTION",
    "KINETO_ROCM_FLUSH_DEADLINE_MS",
    "KINETO_ROCM_ATTRIBUTION_METHOD",
    "KINETO_ROCM_ATTRIBUTION_DISTRUST",
    "KINETO_ROCM_TOOL_LIBRARY",
    "KINETO_ROCM_GRAPH_DEPENDENCY_ARROWS",
    "GPU_MAX_HW_QUEUES",
    "DEBUG_HIP_GRAPH_BATCH_SIZE",
    "DEBUG_HIP_FORCE_GRAPH_QUEUES",
    "DEBUG_HIP_GRAPH_SEGMENT_SCHEDULING",
    "DEBUG_HIP_DYNAMIC_QUEUES",
    "ROC_AQL_QUEUE_SIZE",
    "ROCSIM_DELIVERY_LAG_NS",
    "ROCSIM_DEVICES",
];

/// The report of `kineto-rocm validate --workload FILE --json ARGS`, or why
/// there is none. A report comes with exit 0 (clean) or 2 (not clean).
pub fn try_validate(file: &Path, args: &[&str], env: &[(&str, &str)]) -> Result<Value, String> {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kineto-rocm"));
    command
        .arg("validate")
        .arg("--workload")
        .arg(file)
        .arg("--json")
        .args(args);
    for key in PINNED {
        command.env_remove(key);
    }
    for (key, value) in env {
        command.env(key, value);
    }
    let output = command.output().expect("run kineto-rocm");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let report: Value = serde_json::from_str(&stdout).map_err(|_| {
        format!(
            "no report ({}): {}",
            output.status,
            stderr.lines().last().unwrap_or_default()
        )
    })?;
    let clean = report["is_clean"] == true;
    match output.status.code() {
        Some(0) if clean => Ok(report),
        Some(2) if !clean => Ok(report),
        _ => Err(format!(
            "exit status {} does not match is_clean = {clean}",
            output.status
        )),
    }
}

/// The report of a run that must succeed.
pub fn validate(file: &Path, args: &[&str], env: &[(&str, &str)]) -> Value {
    try_validate(file, args, env).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

pub fn n(report: &Value, key: &str) -> u64 {
    report[key]
        .as_u64()
        .unwrap_or_else(|| panic!("no {key} in {report}"))
}

/// Everything that makes a report fail: every `wrong_` counter above 0,
/// aliased keys, missing or extra events, nothing shown.
pub fn problems(report: &Value) -> Vec<String> {
    let fields = report.as_object().expect("a report object");
    let mut out: Vec<String> = fields
        .iter()
        .filter(|(k, v)| {
            (k.starts_with("wrong_")
                || ["aliased_keys", "missing_events", "extra_events"].contains(&k.as_str()))
                && v.as_u64() != Some(0)
        })
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    if fields.keys().filter(|k| k.starts_with("wrong_")).count() < 7 {
        out.push("the report lost its wrong_ counters".into());
    }
    // Nothing shown is a failure unless every window said it ended
    // incomplete and everything missing was in them.
    let expected = n(report, "expected_ops");
    if expected > 0
        && n(report, "matched_events") == 0
        && n(report, "missing_in_incomplete_windows") != expected
    {
        out.push("nothing shown".into());
    }
    if out.is_empty() && report["is_clean"] != true {
        out.push("is_clean is false".into());
    }
    out
}

/// Nothing wrong of any kind, nothing missing or extra, something shown.
pub fn assert_clean(report: &Value) {
    let problems = problems(report);
    assert!(problems.is_empty(), "{problems:?}: {report:#}");
}
