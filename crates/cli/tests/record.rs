//! `kineto-rocm record` on a simulated application (`rocsim-app`, which runs
//! a workload file through the simulated runtime and knows nothing of
//! kineto-rocm): the trace is written when the program exits, also when it
//! calls exit() mid-window with work in flight, and when a signal stops it;
//! nothing launched in the window is lost, and the trace says whether the
//! window was whole.
use rocprofiler_sim::workload::shipped;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Kernels one step of graph-32x200 launches.
const STEP: usize = 6400;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kineto-rocm-record-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// `kineto-rocm record OPTIONS -- rocsim-app --workload graph-32x200 APP_ARGS`.
fn record(options: &[&str], app: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kineto-rocm"));
    command
        .arg("record")
        .args(options)
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_rocsim-app"))
        .arg("--workload")
        .arg(shipped::path("graph-32x200.json"))
        .args(app)
        .env_remove("KINETO_ROCM_DISABLE_GRAPH_ATTRIBUTION")
        .env_remove("ROCP_TOOL_LIBRARIES");
    command
}

/// Runs to the end: (exit code, stdout).
fn finish(mut command: Command) -> (i32, String) {
    let output = command.output().expect("run kineto-rocm record");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let code = output
        .status
        .code()
        .unwrap_or_else(|| panic!("record was killed:\n{stderr}"));
    (code, format!("{stdout}\n{stderr}"))
}

/// Starts it, waits for the program's `steps`-th step, sends `signal` to
/// `record` (which passes it on), and waits: (exit code, output).
fn stop_after(mut command: Command, steps: usize, signal: i32) -> (i32, String) {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start kineto-rocm record");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen = String::new();
    let mut done = 0;
    while done < steps {
        let line = lines.next().expect("the program ended early").unwrap();
        done += line.contains(" done") as usize;
        seen.push_str(&line);
        seen.push('\n');
    }
    let sent = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(child.id().to_string())
        .status()
        .expect("run kill");
    assert!(sent.success(), "kill -{signal} {}", child.id());
    for line in lines {
        seen.push_str(&line.unwrap());
        seen.push('\n');
    }
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    let code = status
        .code()
        .unwrap_or_else(|| panic!("record was killed:\n{seen}\n{stderr}"));
    (code, format!("{seen}\n{stderr}"))
}

fn read(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not whole JSON ({e})", path.display()))
}

fn kernels(trace: &Value) -> usize {
    trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "kernel")
        .count()
}

fn summary(trace: &Value) -> String {
    let lines: Vec<&str> = trace["kineto_rocm"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    lines.join("\n")
}

#[test]
fn a_whole_run_is_recorded_when_the_program_exits() {
    let out = scratch("whole-%p.json");
    let (code, output) = finish(record(&["-o", out.to_str().unwrap()], &["--steps", "2"]));
    assert_eq!(code, 0, "{output}");
    let written = output
        .split_whitespace()
        .find(|w| w.contains("whole-") && w.ends_with(".json:"))
        .unwrap_or_else(|| panic!("no trace named:\n{output}"))
        .trim_end_matches(':');
    assert!(
        !written.contains("%p"),
        "%p becomes the process id: {written}"
    );
    let trace = read(Path::new(written));
    assert_eq!(kernels(&trace), 2 * STEP);
    let summary = summary(&trace);
    assert!(
        summary.contains("recording=complete: the window ran until the program exited"),
        "{summary}"
    );
    assert!(summary.contains("attributed=12800"), "{summary}");
    assert!(
        output.contains("12800 kernels (12800 with graph fields)"),
        "{output}"
    );
}

#[test]
fn an_abrupt_exit_mid_window_loses_nothing_and_says_partial() {
    let out = scratch("exit.json");
    let (code, output) = finish(record(
        &["-o", out.to_str().unwrap(), "--duration-ms", "60000"],
        &["--steps", "5", "--exit-after-step", "1", "--exit-code", "3"],
    ));
    assert_eq!(code, 3, "record exits with the program's status:\n{output}");
    let trace = read(&out);
    assert_eq!(
        kernels(&trace),
        2 * STEP,
        "every kernel launched before exit()"
    );
    let summary = summary(&trace);
    assert!(
        summary.contains("recording=partial: the program exited"),
        "{summary}"
    );
    assert!(summary.contains("completeness=complete"), "{summary}");
}

#[test]
fn sigterm_writes_the_trace_then_ends_the_program() {
    let out = scratch("term.json");
    let (code, output) = stop_after(
        record(&["-o", out.to_str().unwrap()], &["--steps", "0"]),
        3,
        libc::SIGTERM,
    );
    assert_eq!(code, 128 + libc::SIGTERM, "{output}");
    let trace = read(&out);
    assert!(
        kernels(&trace) >= 3 * STEP,
        "{} kernels after 3 steps",
        kernels(&trace)
    );
    let summary = summary(&trace);
    assert!(
        summary.contains("recording=partial: stopped by SIGTERM"),
        "{summary}"
    );
    assert!(
        summary.contains("completeness=complete"),
        "every launch waited for: {summary}"
    );
}

#[test]
fn sigint_writes_a_pftrace_too() {
    let out = scratch("int.pftrace");
    let (code, output) = stop_after(
        record(&["-o", out.to_str().unwrap()], &["--steps", "0"]),
        2,
        libc::SIGINT,
    );
    assert_eq!(code, 128 + libc::SIGINT, "{output}");
    assert!(output.contains("partial: stopped by SIGINT"), "{output}");
    let back = scratch("int.back.json");
    let converted = Command::new(env!("CARGO_BIN_EXE_kineto-rocm"))
        .arg("convert")
        .arg(&out)
        .arg(&back)
        .output()
        .unwrap();
    assert!(converted.status.success());
    let trace = read(&back);
    assert!(kernels(&trace) >= 2 * STEP);
    assert!(summary(&trace).contains("recording=partial: stopped by SIGINT"));
}

#[test]
fn a_delayed_window_of_a_set_duration_holds_only_part_of_the_run() {
    let out = scratch("window.json");
    // 60 steps of 6400 kernels of 4 us each: at least 1.5 s of device time.
    let (code, output) = finish(record(
        &[
            "-o",
            out.to_str().unwrap(),
            "--delay-ms",
            "300",
            "--duration-ms",
            "300",
        ],
        &["--steps", "60"],
    ));
    assert_eq!(code, 0, "{output}");
    let trace = read(&out);
    let n = kernels(&trace);
    assert!(n > 0 && n < 60 * STEP, "{n} kernels in a 300 ms window");
    let summary = summary(&trace);
    assert!(
        summary.contains("recording=complete: the 0.30 s window ended before the program did"),
        "{summary}"
    );
}

/// The dispatch ids of a trace's kernels: a step of graph-32x200 is 6400
/// dispatches, numbered process-wide from 1 in launch order.
fn steps_of(trace: &Value) -> Vec<u64> {
    let mut steps: Vec<u64> = trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "kernel")
        .map(|e| (e["args"]["dispatch id"].as_u64().unwrap() - 1) / STEP as u64)
        .collect();
    steps.dedup();
    steps
}

#[test]
fn each_roctx_range_of_the_name_is_a_window_holding_its_work_only() {
    let out = scratch("ranges.json");
    let (code, output) = finish(record(
        &["-o", out.to_str().unwrap(), "--roctx-range", "step"],
        &[
            "--steps",
            "6",
            "--roctx-range",
            "step",
            "--roctx-steps",
            "1,2,4",
        ],
    ));
    assert_eq!(code, 0, "{output}");
    let trace = read(&out);
    assert_eq!(kernels(&trace), 3 * STEP, "{output}");
    let steps = steps_of(&trace);
    assert_eq!(
        steps,
        [1, 2, 4],
        "the kernels of the ranged steps, all of them"
    );
    let summary = summary(&trace);
    assert!(
        summary.contains("recording=complete: 3 windows, each a ROCTX range \"step\""),
        "{summary}"
    );
}

#[test]
fn an_exit_inside_a_range_keeps_its_work_and_says_partial() {
    let out = scratch("range-exit.json");
    let (code, output) = finish(record(
        &["-o", out.to_str().unwrap(), "--roctx-range", "step"],
        &[
            "--steps",
            "6",
            "--roctx-range",
            "step",
            "--roctx-steps",
            "1,2",
            "--exit-after-step",
            "2",
        ],
    ));
    assert_eq!(code, 1, "{output}");
    let trace = read(&out);
    assert_eq!(steps_of(&trace), [1, 2]);
    assert_eq!(kernels(&trace), 2 * STEP);
    let summary = summary(&trace);
    assert!(
        summary.contains("recording=partial: the program exited")
            && summary.contains("into ROCTX range \"step\" (2 windows)"),
        "{summary}"
    );
}

#[test]
fn a_range_never_pushed_records_nothing_and_says_so() {
    let out = scratch("range-none.json");
    let (code, output) = finish(record(
        &["-o", out.to_str().unwrap(), "--roctx-range", "absent"],
        &["--steps", "1", "--roctx-range", "step"],
    ));
    assert_eq!(code, 0, "{output}");
    let trace = read(&out);
    assert_eq!(kernels(&trace), 0);
    assert!(
        summary(&trace)
            .contains("recording=empty: the program exited before any ROCTX range \"absent\""),
        "{}",
        summary(&trace)
    );
    let refused = Command::new(env!("CARGO_BIN_EXE_kineto-rocm"))
        .args([
            "record",
            "--roctx-range",
            "s",
            "--delay-ms",
            "5",
            "--",
            "true",
        ])
        .output()
        .unwrap();
    assert_eq!(
        refused.status.code(),
        Some(2),
        "a range and a delay conflict"
    );
}

#[test]
fn the_kineto_faces_switches_reach_the_program() {
    let out = scratch("plain.json");
    let (code, output) = finish(record(
        &[
            "-o",
            out.to_str().unwrap(),
            "--no-graph-attribution",
            "--flush-deadline-ms",
            "20000",
            "--buffer-bytes",
            "65536",
        ],
        &["--steps", "1"],
    ));
    assert_eq!(code, 0, "{output}");
    let trace = read(&out);
    assert_eq!(kernels(&trace), STEP, "every kernel, without graph fields");
    let graphed = trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "kernel" && !e["args"]["graph node id"].is_null())
        .count();
    assert_eq!(graphed, 0, "attribution off: no graph fields");
    assert!(
        output.contains("6400 kernels (0 with graph fields)"),
        "{output}"
    );
}

#[test]
fn a_program_that_never_uses_hip_gets_a_clear_error() {
    let out = scratch("none.json");
    let output = Command::new(env!("CARGO_BIN_EXE_kineto-rocm"))
        .args(["record", "-o", out.to_str().unwrap(), "--", "true"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("wrote no trace") && stderr.contains("never initialised the HIP runtime"),
        "{stderr}"
    );
    let output = Command::new(env!("CARGO_BIN_EXE_kineto-rocm"))
        .args(["record", "--", "/nonexistent/app"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("/nonexistent/app: cannot start"),
        "{stderr}"
    );
}
