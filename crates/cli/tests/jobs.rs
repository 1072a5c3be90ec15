//! `kineto-rocm run --jobs FILE` and `KINETO_ROCM_JOB_FILE`: the counter
//! job file is checked before anything runs, a bad one exits with 2 naming
//! the file, the job and the field, and a good one's plan is printed.
use rocprofiler_sim::workload::shipped;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kineto-rocm-jobs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn write(name: &str, text: &str) -> PathBuf {
    let path = scratch(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// `kineto-rocm run` of a small workload; `env_file` sets the environment
/// variable, which is removed otherwise.
fn run(out: &Path, args: &[&str], env_file: Option<&Path>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kineto-rocm"));
    command
        .arg("run")
        .arg("--workload")
        .arg(shipped::path("topology-fanout2.json"))
        .arg("--virtual-time")
        .arg("--out")
        .arg(out)
        .args(args)
        .env_remove("KINETO_ROCM_JOB_FILE");
    if let Some(file) = env_file {
        command.env("KINETO_ROCM_JOB_FILE", file);
    }
    command.output().expect("run kineto-rocm")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

const KERNEL_YAML: &str = "job_replay_mode: kernel
jobs:
  - pmc: [SQ_WAVES, GRBM_COUNT]
    kernel_include_regex: gemm
    kernel_replay_beta_enabled: true
  - advanced_thread_trace: true
    att_target_cu: 2
  - pmc: [GRBM_GUI_ACTIVE]
";

#[test]
fn a_good_job_file_prints_its_passes_and_runs() {
    let file = write("kernel.yaml", KERNEL_YAML);
    let out = scratch("good.json");
    let output = run(&out, &["--jobs", file.to_str().unwrap()], None);
    let stdout = text(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        text(&output.stderr)
    );
    assert!(stdout.starts_with(&format!("counter plan of job file {}:\n", file.display())));
    assert!(stdout.contains(
        "run 0 (jobs 0, 1, 2): kernel replay, 3 passes per selected dispatch\n  pass 0: counters SQ_WAVES, GRBM_COUNT\n  pass 1: thread trace (target_cu 2,"
    ), "{stdout}");
    assert!(
        stdout.contains(
            "  pass 2: counters GRBM_GUI_ACTIVE\n  options: kernel_include_regex \"gemm\"\n"
        ),
        "{stdout}"
    );
    assert!(out.exists(), "the workload ran and wrote its trace");
    assert!(
        text(&output.stderr)
            .contains("kernel replay: each selected eager dispatch runs once per pass"),
        "a kernel-replay plan says what it replays"
    );
}

#[test]
fn a_bad_job_file_exits_2_naming_file_job_and_field_and_runs_nothing() {
    let file = write(
        "bad.json",
        r#"{"job_replay_mode": "kernel", "jobs": [
            {"pmc": ["SQ_WAVES"], "advanced_thread_trace": true},
            {"pmc": ["GRBM_COUNT"], "att_target_cu": 2, "kernel_replay_beta_enabled": true},
            {"advanced_thread_trace": true},
            {"advanced_thread_trace": true}
        ]}"#,
    );
    let out = scratch("bad-trace.json");
    let output = run(&out, &["--jobs", file.to_str().unwrap()], None);
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    let name = file.display().to_string();
    for path in [
        "jobs[0]`: selects two services",
        "jobs[1].att_target_cu`: a thread-trace setting on a counter job",
        "jobs[3].advanced_thread_trace`: a second thread-trace job (jobs[2]",
    ] {
        assert!(
            stderr.contains(&format!("{name}: at `{path}")),
            "{path}\n{stderr}"
        );
    }
    assert!(
        stderr.contains("(3 problem(s)); nothing was run"),
        "{stderr}"
    );
    assert!(text(&output.stdout).is_empty());
    assert!(!out.exists(), "nothing ran");
}

#[test]
fn the_environment_names_the_job_file_and_the_flag_wins() {
    let good = write("env-good.yaml", KERNEL_YAML);
    let bad = write("env-bad.yaml", "jobs:\n  - pmcc: [SQ_WAVES]\n");
    let from_env = run(&scratch("env.json"), &[], Some(&bad));
    assert_eq!(from_env.status.code(), Some(2));
    assert!(text(&from_env.stderr).contains(&format!(
        "{}: at `jobs[0].pmcc`: unknown field",
        bad.display()
    )));
    let flag = run(
        &scratch("flag.json"),
        &["--jobs", good.to_str().unwrap()],
        Some(&bad),
    );
    assert!(flag.status.success(), "{}", text(&flag.stderr));
    assert!(text(&flag.stdout).contains("kernel replay, 3 passes"));
}

#[test]
fn a_legacy_file_is_one_step_per_job() {
    let file = write(
        "legacy.json",
        r#"{"jobs": [{"pmc": "SQ_WAVES"}, {"advanced_thread_trace": true}, {"pmc_groups": [["A"], ["B"]]}]}"#,
    );
    let output = run(
        &scratch("legacy-trace.json"),
        &["--jobs", file.to_str().unwrap()],
        None,
    );
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    assert!(stdout.contains(
        "job_replay_mode application: each job is a profiler step of its own; 4 run(s)\nrun 0 (job 0): counters SQ_WAVES\nrun 1 (job 1): thread trace (target_cu 1,"
    ), "{stdout}");
    assert!(
        stdout.contains("run 2 (job 2): counters A\nrun 3 (job 2): counters B\n"),
        "{stdout}"
    );
}

#[test]
fn command_line_counters_are_checked_with_the_file() {
    let file = write("with-pmc.yaml", KERNEL_YAML);
    let output = run(
        &scratch("pmc.json"),
        &[
            "--jobs",
            file.to_str().unwrap(),
            "--pmc",
            "TCC_HIT",
            "--replay-mode",
            "application",
        ],
        None,
    );
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("command line: at `--pmc`: under job_replay_mode kernel"),
        "{stderr}"
    );
    assert!(
        stderr.contains("command line: at `--replay-mode`: `application` contradicts"),
        "{stderr}"
    );
    let alone = run(
        &scratch("pmc-alone.json"),
        &[
            "--pmc",
            "SQ_WAVES,GRBM_COUNT",
            "--pmc",
            "TCC_HIT",
            "--replay-mode",
            "kernel",
        ],
        None,
    );
    assert_eq!(alone.status.code(), Some(2));
    assert!(text(&alone.stderr)
        .contains("command line: at `--kernel-replay-beta-enabled`: kernel replay is beta"));
    let acknowledged = run(
        &scratch("pmc-beta.json"),
        &[
            "--pmc",
            "SQ_WAVES,GRBM_COUNT",
            "--pmc",
            "TCC_HIT",
            "--replay-mode",
            "kernel",
            "--kernel-replay-beta-enabled",
        ],
        None,
    );
    assert!(
        acknowledged.status.success(),
        "{}",
        text(&acknowledged.stderr)
    );
    assert!(text(&acknowledged.stdout).starts_with(
        "counter plan of the command line:\njob_replay_mode application: each job is a profiler step of its own; 1 run(s)\nrun 0 (command line): kernel replay, 2 passes per selected dispatch\n  pass 0: counters SQ_WAVES, GRBM_COUNT\n  pass 1: counters TCC_HIT\n"
    ));
}

#[test]
fn a_file_that_is_not_json_or_yaml_or_absent_exits_2() {
    let broken = write("broken.json", "{\"jobs\": [");
    let output = run(
        &scratch("broken-trace.json"),
        &["--jobs", broken.to_str().unwrap()],
        None,
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains(&format!("{}: ", broken.display())));
    let absent = scratch("absent.yaml");
    let output = run(
        &scratch("absent-trace.json"),
        &["--jobs", absent.to_str().unwrap()],
        None,
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("cannot read the job file"));
}

/// `kineto-rocm validate --json` of `workload` with `args`, collecting the
/// one group SQ_WAVES,GRBM_COUNT,GPU_UTIL.
fn validate_json(workload: &str, args: &[&str]) -> serde_json::Value {
    let (report, stderr) = validate_report(workload, args);
    assert!(
        stderr.contains("collecting SQ_WAVES,GRBM_COUNT,GPU_UTIL per dispatch"),
        "{stderr}"
    );
    report
}

/// `validate_report` of `workload` under the job file `jobs`, its trace
/// kept at `out`, with `extra` arguments.
fn validate_jobs(
    workload: &str,
    jobs: &Path,
    out: &Path,
    extra: &[&str],
) -> (serde_json::Value, String) {
    let mut args = vec![
        "--jobs",
        jobs.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    validate_report(workload, &args)
}

/// `kineto-rocm validate --json` of `workload` with `args`: the report and
/// what was said on stderr.
fn validate_report(workload: &str, args: &[&str]) -> (serde_json::Value, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_kineto-rocm"))
        .arg("validate")
        .arg("--workload")
        .arg(shipped::path(workload))
        .arg("--json")
        .args(args)
        .env_remove("KINETO_ROCM_JOB_FILE")
        .output()
        .expect("run kineto-rocm");
    assert!(output.status.success(), "{}", text(&output.stderr));
    (
        serde_json::from_slice(&output.stdout).expect("the report is JSON"),
        text(&output.stderr),
    )
}

#[test]
fn one_counter_group_is_collected_on_every_kernel_and_proven() {
    let file = write(
        "one-group.yaml",
        "jobs:\n  - pmc: [SQ_WAVES, GRBM_COUNT, GPU_UTIL]\n",
    );
    let jobs = file.to_str().unwrap();
    for (workload, model) in [
        ("graph-32x200.json", "ideal"),
        ("two-devices.json", "rocm"),
        ("exec-update.json", "rocm"),
    ] {
        let v = validate_json(workload, &["--jobs", jobs, "--submission-model", model]);
        let kernels = v["kernel_events"].as_u64().unwrap();
        assert!(kernels > 0, "{workload}");
        assert_eq!(v["counter_values"], 3 * kernels, "{workload}: {v:#}");
        assert_eq!(v["wrong_counter_values"], 0, "{workload}");
        assert_eq!(v["missing_counter_values"], 0, "{workload}");
        assert_eq!(v["is_clean"], true, "{workload}: {v:#}");
    }
}

/// Step mode: an application-mode plan of several runs collects run k in
/// the k-th profiled window (one step each by default): each window's
/// kernels carry exactly their run's group, every value proven; the thread
/// trace run traces every dispatch of its window (and counts none), each
/// trace's bytes proven (seed 004's "an ATT job next to a pmc job never
/// runs" does not happen here); a schedule of too few windows is refused
/// before anything runs.
#[test]
fn step_mode_collects_one_group_per_window_and_proves_each() {
    let file = write(
        "steps.yaml",
        "jobs:\n  - pmc: [SQ_WAVES, GRBM_COUNT]\n  - pmc: [GRBM_GUI_ACTIVE]\n  - advanced_thread_trace: true\n",
    );
    let jobs = file.to_str().unwrap();
    let (v, _) = validate_report("graph-32x200.json", &["--jobs", jobs]);
    assert_eq!(v["windows"], 3, "{v:#}");
    assert_eq!(v["kernel_events"], 3 * 6400, "{v:#}");
    assert_eq!(v["counter_values"], 2 * 6400 + 6400, "{v:#}");
    assert_eq!(v["wrong_counter_values"], 0);
    assert_eq!(v["missing_counter_values"], 0);
    assert_eq!(v["thread_trace_events"], 6400, "{v:#}");
    assert_eq!(v["wrong_thread_traces"], 0);
    assert_eq!(v["missing_thread_traces"], 0);
    assert_eq!(v["is_clean"], true, "{v:#}");

    let out = scratch("steps-run.json");
    let output = run(&out, &["--jobs", jobs], None);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("step mode: window 0 collects SQ_WAVES,GRBM_COUNT"),
        "{stderr}"
    );
    assert!(
        stderr.contains("step mode: window 1 collects GRBM_GUI_ACTIVE"),
        "{stderr}"
    );
    assert!(
        stderr.contains("step mode: window 2 runs the thread trace on every selected dispatch"),
        "{stderr}"
    );
    let trace: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let mut groups = std::collections::BTreeMap::<String, usize>::new();
    for e in trace["traceEvents"].as_array().unwrap() {
        if e["cat"] == "kernel" {
            let a = e["args"].as_object().unwrap();
            let mut names: Vec<&str> =
                ["SQ_WAVES", "GRBM_COUNT", "GRBM_GUI_ACTIVE", "thread trace"]
                    .into_iter()
                    .filter(|n| a.contains_key(*n))
                    .collect();
            names.sort_unstable();
            *groups.entry(names.join(",")).or_default() += 1;
        }
    }
    let per_window = groups["GRBM_GUI_ACTIVE"];
    assert!(per_window > 0);
    assert_eq!(
        groups,
        [
            ("GRBM_COUNT,SQ_WAVES".to_string(), per_window),
            ("GRBM_GUI_ACTIVE".to_string(), per_window),
            ("thread trace".to_string(), per_window)
        ]
        .into(),
        "each window's kernels carry exactly their run's group or trace"
    );

    let output = run(
        &scratch("steps-too-few.json"),
        &["--jobs", jobs, "--steps", "2", "--profile-steps", "0-1"],
        None,
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("step mode: the counter plan has 3 runs"),
        "{}",
        text(&output.stderr)
    );
}

/// The Perfetto writer shares the JSON writer's events (src/output/sink.rs),
/// so its kernels carry the same counters; blit kernels shown as memsets or
/// copies carry theirs too.
#[test]
fn perfetto_traces_carry_the_counters_and_they_are_proven() {
    let file = write(
        "one-group-pftrace.yaml",
        "jobs:\n  - pmc: [SQ_WAVES, GRBM_COUNT, GPU_UTIL]\n",
    );
    for workload in ["graph-32x200.json", "timeline.json"] {
        let out = scratch(&format!("counters-{workload}.pftrace"));
        let v = validate_json(
            workload,
            &[
                "--jobs",
                file.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ],
        );
        let kernels = v["kernel_events"].as_u64().unwrap();
        assert!(kernels > 0, "{workload}");
        assert!(
            v["counter_values"].as_u64().unwrap() >= 3 * kernels,
            "{workload}: {v:#}"
        );
        assert_eq!(v["wrong_counter_values"], 0, "{workload}");
        assert_eq!(v["missing_counter_values"], 0, "{workload}");
        assert_eq!(v["is_clean"], true, "{workload}: {v:#}");
    }
}

#[test]
fn run_prints_each_graph_nodes_counter_means() {
    let out = scratch("per-node.json");
    let output = Command::new(env!("CARGO_BIN_EXE_kineto-rocm"))
        .arg("run")
        .arg("--workload")
        .arg(shipped::path("graph-32x200.json"))
        .arg("--out")
        .arg(&out)
        .arg("--jobs")
        .arg(shipped::dir().join("../jobs/one-group.yaml"))
        .env_remove("KINETO_ROCM_JOB_FILE")
        .output()
        .expect("run kineto-rocm");
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let table = stdout
        .split_once("counter means per graph node:\n")
        .unwrap_or_else(|| panic!("no per-node table: {stdout}"))
        .1;
    let mut lines = table.lines();
    let header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(
        header,
        [
            "graph",
            "id",
            "node",
            "kernel",
            "count",
            "mean",
            "SQ_WAVES",
            "mean",
            "GRBM_COUNT",
            "mean",
            "GPU_UTIL"
        ]
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(rows.len(), 32, "one row per node");
    for (node, row) in rows.iter().enumerate() {
        assert_eq!(row[1], node.to_string());
        assert_eq!(row[3], "200", "every replay carried counters");
        assert_eq!(row[4], "1024.0", "65536 work-items in 64-wide waves");
        assert_eq!(row[6], "100.0");
    }
}

/// The shipped kernel-replay job file: SQ_WAVES,GRBM_COUNT; the thread
/// trace; GRBM_GUI_ACTIVE; kernels matching `gemm`.
fn kernel_replay_jobs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/jobs/kernel-replay.yaml")
}

/// Kernel events by dispatch id: (kernel name, replay pass, counter names).
type Passes = std::collections::BTreeMap<u64, Vec<(String, Option<u64>, Vec<String>)>>;

fn passes_in(trace: &Path) -> Passes {
    let trace: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(trace).unwrap()).unwrap();
    let mut out = Passes::new();
    for e in trace["traceEvents"].as_array().unwrap() {
        if e["cat"] != "kernel" {
            continue;
        }
        let args = e["args"].as_object().unwrap();
        let mut counters: Vec<String> = args
            .keys()
            .filter(|k| k.starts_with(|c: char| c.is_ascii_uppercase()) && *k != "External id")
            .cloned()
            .collect();
        counters.sort();
        out.entry(args["dispatch id"].as_u64().unwrap())
            .or_default()
            .push((
                e["name"].as_str().unwrap().to_string(),
                args.get("replay pass").and_then(|p| p.as_u64()),
                counters,
            ));
    }
    out
}

/// Kernel mode (issue 12): every selected eager dispatch shows exactly one
/// kernel event per pass, `replay pass` 0..N-1 under its one dispatch id,
/// each counter pass with its group's counters and the thread-trace pass
/// with none; kernels the filter leaves out run once; `validate` matches
/// every pass and value to the simulator's truth. Both submission models.
#[test]
fn kernel_mode_shows_each_selected_dispatch_once_per_pass_and_proves_each() {
    let jobs = kernel_replay_jobs();
    let jobs = jobs.to_str().unwrap();
    for model in ["rocm", "ideal"] {
        let out = scratch(&format!("kernel-replay-{model}.json"));
        let (v, stderr) = validate_jobs(
            "kernel-replay.json",
            Path::new(jobs),
            &out,
            &["--submission-model", model],
        );
        assert!(stderr.contains("kernel replay: each selected eager dispatch runs once per pass"));
        assert_eq!(v["is_clean"], true, "{model}: {v:#}");
        // 40 eager gemm dispatches (12 + 12 + 16) x 3 passes.
        assert_eq!(v["replay_pass_events"], 120, "{model}: {v:#}");
        assert_eq!(v["counter_values"], 40 * 3, "{model}");
        assert_eq!(v["wrong_counter_values"], 0);
        assert_eq!(v["missing_counter_values"], 0);
        let passes = passes_in(&out);
        let group_of = |pass: u64| match pass {
            0 => vec!["GRBM_COUNT".to_string(), "SQ_WAVES".to_string()],
            1 => vec![],
            _ => vec!["GRBM_GUI_ACTIVE".to_string()],
        };
        let mut replayed = 0;
        for (dispatch, events) in &passes {
            let name = &events[0].0;
            let eager_gemm = name.starts_with("gemm_") && name != "gemm_in_graph";
            if !eager_gemm {
                assert_eq!(
                    events.len(),
                    1,
                    "{model}: {name} (dispatch {dispatch}) runs once"
                );
                assert_eq!(events[0].1, None);
                continue;
            }
            replayed += 1;
            let mut got: Vec<(Option<u64>, Vec<String>)> =
                events.iter().map(|(_, p, c)| (*p, c.clone())).collect();
            got.sort();
            let want: Vec<(Option<u64>, Vec<String>)> =
                (0..3).map(|p| (Some(p), group_of(p))).collect();
            assert_eq!(got, want, "{model}: dispatch {dispatch} ({name})");
        }
        assert_eq!(replayed, 40, "{model}");

        // The thread-trace pass's raw data sits next to the trace, named on
        // that pass's event and on no other.
        assert_eq!(v["thread_trace_events"], 40, "{model}: {v:#}");
        assert_eq!(v["wrong_thread_traces"], 0);
        assert_eq!(v["missing_thread_traces"], 0);
        let trace: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        let dir = format!("{}.att", out.display());
        for e in trace["traceEvents"].as_array().unwrap() {
            let files = e["args"]["thread trace"].as_str();
            if e["args"]["replay pass"] == 1 {
                for file in files.expect("the trace pass names its files").split(',') {
                    assert!(file.starts_with(&dir), "{file}");
                    assert!(std::fs::metadata(file).unwrap().len() > 0, "{file}");
                }
            } else {
                assert_eq!(files, None, "{e}");
            }
        }
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// An agent that cannot collect a configured group skips that pass and
/// says so; the other groups keep their order (seed 004's rule).
#[test]
fn kernel_mode_skips_a_group_the_agent_cannot_collect_and_says_so() {
    let file = write(
        "skip.yaml",
        "job_replay_mode: kernel\njobs:\n  - pmc: [SQ_WAVES]\n    kernel_replay_beta_enabled: true\n    kernel_include_regex: gemm\n  - pmc: [NOT_A_COUNTER]\n  - pmc: [GRBM_COUNT]\n",
    );
    let out = scratch("kernel-replay-skip.json");
    let (v, stderr) = validate_jobs("kernel-replay.json", &file, &out, &[]);
    assert_eq!(
        stderr
            .matches("skips configured pass 1 (NOT_A_COUNTER): it cannot collect those counters")
            .count(),
        1,
        "said once per agent: {stderr}"
    );
    assert_eq!(v["is_clean"], true, "{v:#}");
    assert_eq!(v["replay_pass_events"], 40 * 2);
    for (dispatch, events) in passes_in(&out) {
        if events.len() == 1 {
            continue;
        }
        let mut got: Vec<(Option<u64>, Vec<String>)> =
            events.iter().map(|(_, p, c)| (*p, c.clone())).collect();
        got.sort();
        assert_eq!(
            got,
            vec![
                (Some(0), vec!["SQ_WAVES".to_string()]),
                (Some(1), vec!["GRBM_COUNT".to_string()]),
            ],
            "dispatch {dispatch}"
        );
    }
}

/// An SDK without the kernel-replay domain (the simulator's 1.0): the tool
/// says so and still traces everything once, nothing wrong.
#[test]
fn kernel_mode_on_an_sdk_without_replay_says_so_and_traces_the_rest() {
    let jobs = kernel_replay_jobs();
    let (v, stderr) = validate_report(
        "kernel-replay.json",
        &["--jobs", jobs.to_str().unwrap(), "--sdk-version", "1.0.0"],
    );
    assert!(
        stderr.contains("this rocprofiler-sdk has no kernel-replay domain"),
        "{stderr}"
    );
    assert_eq!(v["is_clean"], true, "{v:#}");
    assert_eq!(v["replay_pass_events"], 0);
    assert_eq!(v["counter_values"], 0);
    assert!(v["kernel_events"].as_u64().unwrap() > 0);
}

/// Kernel events by kernel name, in dispatch order: (dispatch id, replay
/// pass, counter names).
fn launches_by_kernel(passes: &Passes) -> std::collections::BTreeMap<String, Vec<(u64, usize)>> {
    let mut out: std::collections::BTreeMap<String, Vec<(u64, usize)>> = Default::default();
    for (dispatch, events) in passes {
        out.entry(events[0].0.clone())
            .or_default()
            .push((*dispatch, events.len()));
    }
    out
}

/// `kernel_iteration_range` in kernel mode (rocprofv3's rule): only those
/// launches of each selected kernel are replayed, counted from 1 per
/// kernel, once per logical dispatch (not once per pass), on both models.
#[test]
fn kernel_mode_replays_only_the_iteration_range_of_each_selected_kernel() {
    let file = write(
        "iterations-kernel.yaml",
        "job_replay_mode: kernel
jobs:
  - pmc: [SQ_WAVES, GRBM_COUNT]
    kernel_include_regex: gemm
    kernel_iteration_range: \"[2-3]\"
    kernel_replay_beta_enabled: true
  - pmc: [GRBM_GUI_ACTIVE]
    kernel_iteration_range: [\"2\", \"3\"]
",
    );
    for model in ["rocm", "ideal"] {
        let out = scratch(&format!("iterations-kernel-{model}.json"));
        let (v, stderr) = validate_jobs(
            "kernel-replay.json",
            &file,
            &out,
            &["--submission-model", model],
        );
        assert!(stderr.contains("kernel_iteration_range [2-3]"), "{stderr}");
        assert_eq!(v["is_clean"], true, "{model}: {v:#}");
        // 3 eager gemm kernels x launches 2 and 3 x 2 passes.
        assert_eq!(v["replay_pass_events"], 12, "{model}: {v:#}");
        assert_eq!(v["counter_values"], 6 * 3, "{model}");
        for (kernel, launches) in launches_by_kernel(&passes_in(&out)) {
            let replayed: Vec<usize> = launches
                .iter()
                .enumerate()
                .filter(|(_, (_, events))| *events > 1)
                .map(|(i, (_, events))| {
                    assert_eq!(*events, 2, "{model}: {kernel}: one event per pass");
                    i + 1
                })
                .collect();
            let eager_gemm = kernel.starts_with("gemm_") && kernel != "gemm_in_graph";
            let want = if eager_gemm { vec![2, 3] } else { vec![] };
            assert_eq!(replayed, want, "{model}: {kernel}'s replayed launches");
        }
    }
}

/// Application mode honours a job's kernel filters too: only the selected
/// launches of kernels matching the regex carry counters, and `validate`
/// proves each value.
#[test]
fn application_mode_counts_only_the_filtered_launches() {
    let file = write(
        "iterations-application.yaml",
        "jobs:
  - pmc: [SQ_WAVES]
    kernel_include_regex: gemm_n
    kernel_iteration_range: \"[1, 10-11]\"
",
    );
    let out = scratch("iterations-application.json");
    let (v, stderr) = validate_jobs("kernel-replay.json", &file, &out, &[]);
    assert!(
        stderr.contains("collecting SQ_WAVES per dispatch"),
        "{stderr}"
    );
    assert_eq!(v["is_clean"], true, "{v:#}");
    assert_eq!(v["counter_values"], 6, "{v:#}");
    assert_eq!(v["missing_counter_values"], 0);
    let trace: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let mut counted: std::collections::BTreeMap<String, Vec<usize>> = Default::default();
    let mut seen: std::collections::BTreeMap<String, Vec<(u64, bool)>> = Default::default();
    for e in trace["traceEvents"].as_array().unwrap() {
        if e["cat"] == "kernel" {
            seen.entry(e["name"].as_str().unwrap().to_string())
                .or_default()
                .push((
                    e["args"]["dispatch id"].as_u64().unwrap(),
                    e["args"].get("SQ_WAVES").is_some(),
                ));
        }
    }
    for (kernel, mut launches) in seen {
        launches.sort();
        counted.insert(
            kernel,
            launches
                .iter()
                .enumerate()
                .filter(|(_, (_, has))| *has)
                .map(|(i, _)| i + 1)
                .collect(),
        );
    }
    for (kernel, launches) in counted {
        let want = if kernel == "gemm_nt" || kernel == "gemm_nn" {
            vec![1, 10, 11]
        } else {
            vec![]
        };
        assert_eq!(launches, want, "{kernel}'s counted launches");
    }
}

/// Step mode applies one filter to every window, so jobs that filter
/// differently are refused before anything runs, naming both.
#[test]
fn step_mode_refuses_jobs_that_filter_kernels_differently() {
    let file = write(
        "iterations-steps.yaml",
        "jobs:
  - pmc: [SQ_WAVES]
    kernel_iteration_range: \"[1-2]\"
  - pmc: [GRBM_COUNT]
",
    );
    let out = scratch("iterations-steps.json");
    let output = run(&out, &["--jobs", file.to_str().unwrap()], None);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("jobs[0] and jobs[1] filter kernels differently")
            && stderr.contains(file.to_str().unwrap()),
        "{stderr}"
    );
    assert!(!out.exists(), "nothing ran");
}

/// rocprofv3's replay validator's sanity check (seed 004): a counter that
/// depends only on the dispatch (SQ_WAVES: the waves of its grid) has one
/// value in every pass that counts it, and SQ_INSTS_VALU beside it too.
#[test]
fn sanity_counters_are_constant_across_a_dispatchs_passes() {
    let file = write(
        "sanity.yaml",
        "job_replay_mode: kernel
jobs:
  - pmc: [SQ_WAVES, GRBM_COUNT]
    kernel_include_regex: gemm
    kernel_replay_beta_enabled: true
  - pmc: [SQ_WAVES, SQ_INSTS_VALU]
  - pmc: [SQ_INSTS_VALU, SQ_WAVES, GRBM_GUI_ACTIVE]
",
    );
    let out = scratch("sanity.json");
    let (v, _) = validate_jobs("kernel-replay.json", &file, &out, &[]);
    assert_eq!(v["is_clean"], true, "{v:#}");
    let trace: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let mut by_dispatch: std::collections::BTreeMap<u64, Vec<&serde_json::Value>> =
        Default::default();
    for e in trace["traceEvents"].as_array().unwrap() {
        if e["cat"] == "kernel" && e["args"].get("replay pass").is_some() {
            by_dispatch
                .entry(e["args"]["dispatch id"].as_u64().unwrap())
                .or_default()
                .push(&e["args"]);
        }
    }
    assert_eq!(by_dispatch.len(), 40, "every eager gemm dispatch replayed");
    for (dispatch, passes) in &by_dispatch {
        assert_eq!(passes.len(), 3, "dispatch {dispatch}");
        let values =
            |name: &str| -> Vec<f64> { passes.iter().filter_map(|a| a[name].as_f64()).collect() };
        let waves = values("SQ_WAVES");
        assert_eq!(waves.len(), 3, "dispatch {dispatch}");
        assert!(
            waves.iter().all(|w| *w == waves[0] && *w > 0.0),
            "dispatch {dispatch}: {waves:?}"
        );
        let valu = values("SQ_INSTS_VALU");
        assert_eq!(valu.len(), 2, "dispatch {dispatch}");
        assert_eq!(valu[0], valu[1], "dispatch {dispatch}");
    }
}

/// Application mode with a thread-trace job alone: every dispatch the
/// kernel filters select is traced once (pass 0), named on its kernel
/// event, each file set holding the bytes the SDK handed over; nothing is
/// counted, and nothing else is traced.
#[test]
fn application_mode_traces_the_selected_dispatches() {
    let file = write(
        "trace-only.yaml",
        "jobs:
  - advanced_thread_trace: true
    att_target_cu: 2
    att_shader_engine_mask: \"0x3\"
    kernel_include_regex: gemm_n
    kernel_iteration_range: \"[1-2]\"
",
    );
    for model in ["rocm", "ideal"] {
        let out = scratch(&format!("trace-only-{model}.json"));
        let (v, stderr) = validate_jobs(
            "kernel-replay.json",
            &file,
            &out,
            &["--submission-model", model],
        );
        assert!(
            stderr.contains("thread trace: every selected dispatch is traced"),
            "{stderr}"
        );
        assert_eq!(v["is_clean"], true, "{model}: {v:#}");
        assert_eq!(
            v["thread_trace_events"], 4,
            "{model}: gemm_nt and gemm_nn, launches 1-2: {v:#}"
        );
        assert_eq!(v["wrong_thread_traces"], 0);
        assert_eq!(v["missing_thread_traces"], 0);
        assert_eq!(v["counter_values"], 0);
        let trace: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        let mut traced = Vec::new();
        for e in trace["traceEvents"].as_array().unwrap() {
            if let Some(files) = e["args"]["thread trace"].as_str() {
                assert_eq!(files.split(',').count(), 2, "two shader engines: {files}");
                traced.push(e["name"].as_str().unwrap().to_string());
            }
        }
        traced.sort();
        assert_eq!(
            traced,
            ["gemm_nn", "gemm_nn", "gemm_nt", "gemm_nt"],
            "{model}"
        );
        let _ = std::fs::remove_dir_all(format!("{}.att", out.display()));
    }
}

/// Thread-trace jobs with different settings cannot share one run's
/// service: refused before anything runs, naming both.
#[test]
fn application_mode_refuses_thread_trace_jobs_that_disagree() {
    let file = write(
        "trace-disagree.yaml",
        "jobs:
  - advanced_thread_trace: true
    att_target_cu: 1
  - advanced_thread_trace: true
    att_target_cu: 3
",
    );
    let out = scratch("trace-disagree.json");
    let output = run(&out, &["--jobs", file.to_str().unwrap()], None);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
    assert!(
        text(&output.stderr).contains("jobs[0] and jobs[1] set the thread trace differently"),
        "{}",
        text(&output.stderr)
    );
    assert!(!out.exists(), "nothing ran");
}

/// Each kernel event of a JSON trace, by (dispatch id, replay pass): its
/// numeric args keyed by an upper-case word (counters and instances, not
/// `External id`).
fn kernel_counter_args(trace: &Path) -> Vec<(u64, serde_json::Map<String, serde_json::Value>)> {
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(trace).unwrap()).expect("the trace is JSON");
    v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "kernel")
        .map(|e| {
            let args = e["args"].as_object().unwrap();
            let counters = args
                .iter()
                .filter(|(k, v)| {
                    k.starts_with(|c: char| c.is_ascii_uppercase())
                        && !k.contains(' ')
                        && v.is_number()
                })
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            (args["dispatch id"].as_u64().unwrap(), counters)
        })
        .collect()
}

/// SQ is per XCC and shader engine (8 x 4 on the simulated MI300X), GRBM
/// per XCC, TCC 16 per XCC, GPU_UTIL one reduced instance.
const INSTANCES_PER_KERNEL: u64 = 32 + 8 + 128 + 1;

#[test]
fn counter_dimensions_on_request_show_every_instance_with_the_truths_value() {
    let group = "SQ_WAVES,GRBM_COUNT,TCC_HIT,GPU_UTIL";
    for (workload, ext) in [
        ("two-devices.json", "json"),
        ("graph-32x200.json", "pftrace"),
    ] {
        let out = scratch(&format!("dimensions-{workload}.{ext}"));
        let truth_out = scratch(&format!("dimensions-{workload}.truth.json"));
        let (v, _) = validate_report(
            workload,
            &[
                "--pmc",
                group,
                "--counter-dimensions",
                "--out",
                out.to_str().unwrap(),
                "--truth-out",
                truth_out.to_str().unwrap(),
            ],
        );
        let kernels = v["kernel_events"].as_u64().unwrap();
        assert!(kernels > 0, "{workload}");
        assert_eq!(
            v["counter_values"],
            4 * kernels,
            "{workload}: sums as before"
        );
        assert_eq!(
            v["counter_instance_values"],
            INSTANCES_PER_KERNEL * kernels,
            "{workload}: {v:#}"
        );
        assert_eq!(v["wrong_counter_instance_values"], 0, "{workload}");
        assert_eq!(v["missing_counter_instance_values"], 0, "{workload}");
        assert_eq!(v["is_clean"], true, "{workload}: {v:#}");
        if ext != "json" {
            continue;
        }
        // Independently of validate: each truth instance is an arg of its
        // kernel, spelled as documented, and the plain name is the sum.
        let truth: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&truth_out).unwrap()).unwrap();
        let ops: std::collections::HashMap<u64, &serde_json::Value> = truth["runs"][0]["ops"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|o| o["kind"] == "kernel")
            .map(|o| (o["dispatch_id"].as_u64().unwrap(), o))
            .collect();
        let events = kernel_counter_args(&out);
        assert_eq!(events.len() as u64, kernels);
        for (dispatch, args) in &events {
            let op = ops[dispatch];
            let instances = op["counter_instances"].as_array().unwrap();
            assert_eq!(instances.len() as u64, INSTANCES_PER_KERNEL);
            let mut sums: std::collections::HashMap<&str, f64> = Default::default();
            for i in instances {
                let dims: Vec<String> = i["dimensions"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|d| {
                        let name = d[0].as_str().unwrap().trim_start_matches("DIMENSION_");
                        format!("{name}={}", d[1])
                    })
                    .collect();
                let counter = i["counter"].as_str().unwrap();
                let key = format!("{counter}[{}]", dims.join(","));
                assert_eq!(
                    args.get(&key),
                    Some(&i["value"]),
                    "dispatch {dispatch}: {key}"
                );
                *sums.entry(counter).or_default() += i["value"].as_f64().unwrap();
            }
            for (counter, sum) in sums {
                assert_eq!(args[counter].as_f64(), Some(sum), "{counter}: the sum");
                assert_eq!(op["counters"][counter].as_f64(), Some(sum));
            }
            assert_eq!(
                args.len() as u64,
                4 + INSTANCES_PER_KERNEL,
                "nothing else upper case"
            );
            assert!(args.contains_key("SQ_WAVES[XCC=7,SHADER_ENGINE=3,INSTANCE=0]"));
        }
    }
}

#[test]
fn without_the_flag_counters_stay_summed_and_no_instance_key_is_written() {
    let out = scratch("no-dimensions.json");
    let (v, _) = validate_report(
        "two-devices.json",
        &[
            "--pmc",
            "SQ_WAVES,GRBM_COUNT,TCC_HIT,GPU_UTIL",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let kernels = v["kernel_events"].as_u64().unwrap();
    assert!(kernels > 0);
    assert_eq!(v["counter_values"], 4 * kernels);
    assert_eq!(v["counter_instance_values"], 0);
    assert_eq!(v["missing_counter_instance_values"], 0, "none expected");
    assert_eq!(v["is_clean"], true, "{v:#}");
    let events = kernel_counter_args(&out);
    assert_eq!(events.len() as u64, kernels);
    for (dispatch, args) in &events {
        let keys: Vec<&String> = args.keys().collect();
        assert_eq!(keys.len(), 4, "dispatch {dispatch}: {keys:?}");
        assert!(keys.iter().all(|k| !k.contains('[')), "{keys:?}");
    }
}

/// A job file's `pmc_keep_dimensions: true` asks for the instances as the
/// flag does, and `validate` then expects every one.
#[test]
fn a_jobs_pmc_keep_dimensions_asks_for_every_instance() {
    let file = write(
        "keep-dimensions.yaml",
        "jobs:\n  - pmc: [SQ_WAVES, GRBM_COUNT]\n    pmc_keep_dimensions: true\n",
    );
    let out = scratch("keep-dimensions.json");
    let (v, stderr) = validate_jobs("two-devices.json", &file, &out, &[]);
    assert!(
        stderr.contains("pmc_keep_dimensions"),
        "the plan says so: {stderr}"
    );
    let kernels = v["kernel_events"].as_u64().unwrap();
    assert!(kernels > 0);
    assert_eq!(v["counter_instance_values"], (32 + 8) * kernels, "{v:#}");
    assert_eq!(v["wrong_counter_instance_values"], 0);
    assert_eq!(v["missing_counter_instance_values"], 0);
    assert_eq!(v["is_clean"], true, "{v:#}");
    for (dispatch, args) in kernel_counter_args(&out) {
        assert_eq!(args.len(), 2 + 32 + 8, "dispatch {dispatch}");
    }
}
