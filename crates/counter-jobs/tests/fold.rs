//! The job file's rules, case by case: seed 004's 22 CLI cases (folding,
//! ordering, YAML, run-option merging, every rejection, defaults, legacy
//! files) adapted to kineto-rocm, and its two "found, not fixed" bugs shown
//! absent.
use counter_jobs::*;
use serde_json::json;

const FILE: &str = "jobs.json";

fn file(v: serde_json::Value) -> JobFile {
    parse_str(&v.to_string(), Format::Json, FILE).expect("a well-formed file")
}

fn kernel_file(jobs: serde_json::Value) -> JobFile {
    file(json!({"job_replay_mode": "kernel", "jobs": jobs}))
}

fn beta() -> CommandLine {
    CommandLine {
        kernel_replay_beta_enabled: true,
        ..Default::default()
    }
}

fn kernel_cli() -> CommandLine {
    CommandLine {
        replay_mode: Some(ReplayMode::Kernel),
        kernel_replay_beta_enabled: true,
        ..Default::default()
    }
}

fn runs(f: &JobFile, cli: &CommandLine) -> Vec<Run> {
    fold(Some((f, FILE)), cli).expect("accepted").runs
}

fn rejected(f: &JobFile, cli: &CommandLine) -> JobErrors {
    fold(Some((f, FILE)), cli).expect_err("rejected")
}

fn groups(run: &Run) -> Vec<Vec<String>> {
    match &run.collection {
        RunCollection::Counters(g) => vec![g.clone()],
        RunCollection::ThreadTrace(_) => Vec::new(),
        RunCollection::Replay(r) => r.groups().to_vec(),
    }
}

fn replay(run: &Run) -> &Replay {
    match &run.collection {
        RunCollection::Replay(r) => r,
        other => panic!("not a replay run: {other:?}"),
    }
}

fn names(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

// --- application mode: each job a run of its own -------------------------

#[test]
fn each_job_is_a_run_of_its_own() {
    let f = file(json!({"jobs": [
        {"pmc": ["SQ_WAVES"], "output_directory": "/tmp/a"},
        {"pmc": ["GRBM_COUNT"], "output_directory": "/tmp/b"},
    ]}));
    let r = runs(&f, &CommandLine::default());
    assert_eq!(r.len(), 2);
    assert_eq!(groups(&r[0]), vec![names(&["SQ_WAVES"])]);
    assert_eq!(groups(&r[1]), vec![names(&["GRBM_COUNT"])]);
    assert_eq!(r[0].options.output_directory.as_deref(), Some("/tmp/a"));
    assert_eq!(r[1].options.output_directory.as_deref(), Some("/tmp/b"));
    assert_eq!((r[0].jobs.clone(), r[1].jobs.clone()), (vec![0], vec![1]));
}

#[test]
fn replay_mode_kernel_does_not_change_how_file_jobs_run() {
    let f = file(json!({"jobs": [
        {"pmc": ["SQ_WAVES"], "kernel_include_regex": "gemm.*"},
        {"pmc": ["GRBM_COUNT"], "kernel_include_regex": "conv.*"},
    ]}));
    assert_eq!(runs(&f, &kernel_cli()), runs(&f, &CommandLine::default()));
}

#[test]
fn jobs_that_disagree_are_all_run_in_application_mode() {
    let f = file(json!({"jobs": [
        {"pmc": ["A"], "output_format": ["csv"], "kernel_iteration_range": "1-2"},
        {"pmc": ["B"], "output_format": ["json"], "kernel_iteration_range": "3-4"},
    ]}));
    let r = runs(&f, &kernel_cli());
    assert_eq!(r.len(), 2);
    let range = |n: usize| {
        r[n].options
            .kernel_iteration_range
            .as_ref()
            .unwrap()
            .to_string()
    };
    assert_eq!(
        (range(0), range(1)),
        ("[1-2]".to_string(), "[3-4]".to_string())
    );
    assert_eq!(r[1].options.output_format, names(&["json"]));
}

#[test]
fn many_jobs_all_run() {
    let jobs: Vec<_> = (0..32)
        .map(|i| json!({"pmc": [format!("C_{i}")]}))
        .collect();
    let r = runs(&file(json!({ "jobs": jobs })), &kernel_cli());
    assert_eq!(r.len(), 32);
    assert!(r
        .iter()
        .enumerate()
        .all(|(i, run)| groups(run) == vec![vec![format!("C_{i}")]]));
}

#[test]
fn command_line_groups_are_passes_of_one_replay_run() {
    let cli = CommandLine {
        pmc: vec![names(&["SQ_WAVES"]), names(&["GRBM_COUNT"])],
        ..kernel_cli()
    };
    let plan = fold(None, &cli).unwrap();
    assert_eq!(plan.runs.len(), 1);
    assert_eq!(
        replay(&plan.runs[0]).groups(),
        &[names(&["SQ_WAVES"]), names(&["GRBM_COUNT"])]
    );
    assert!(plan.runs[0].jobs.is_empty());
}

#[test]
fn command_line_groups_are_separate_runs_without_replay() {
    let cli = CommandLine {
        pmc: vec![names(&["SQ_WAVES"]), names(&["GRBM_COUNT"])],
        ..Default::default()
    };
    let plan = fold(None, &cli).unwrap();
    assert_eq!(plan.runs.len(), 2);
    assert!(plan.runs.iter().all(|r| !r.replays()));
}

#[test]
fn command_line_groups_stay_one_run_before_the_file_jobs() {
    let f = file(json!({"jobs": [{"pmc": ["SQ_WAVES"]}, {"pmc": ["GRBM_COUNT"]}]}));
    let cli = CommandLine {
        pmc: vec![names(&["A"]), names(&["B"])],
        ..kernel_cli()
    };
    let r = runs(&f, &cli);
    let shape: Vec<_> = r.iter().map(groups).collect();
    assert_eq!(
        shape,
        vec![
            vec![names(&["A"]), names(&["B"])],
            vec![names(&["SQ_WAVES"])],
            vec![names(&["GRBM_COUNT"])]
        ]
    );
    assert!(r[0].replays() && !r[1].replays());
}

#[test]
fn pmc_groups_under_replay_mode_kernel_are_one_replay_run() {
    let f = file(json!({"jobs": [{"pmc_groups": [["SQ_WAVES"], ["GRBM_COUNT"]]}]}));
    let r = runs(&f, &kernel_cli());
    assert_eq!(r.len(), 1);
    assert_eq!(
        replay(&r[0]).groups(),
        &[names(&["SQ_WAVES"]), names(&["GRBM_COUNT"])]
    );
}

#[test]
fn pmc_groups_in_application_mode_are_one_step_each() {
    let f = file(json!({"jobs": [{"pmc_groups": [["SQ_WAVES"], "GRBM_COUNT GRBM_GUI_ACTIVE"]}]}));
    let r = runs(&f, &CommandLine::default());
    assert_eq!(r.len(), 2);
    assert_eq!(
        groups(&r[1]),
        vec![names(&["GRBM_COUNT", "GRBM_GUI_ACTIVE"])]
    );
    assert_eq!((r[0].jobs.clone(), r[1].jobs.clone()), (vec![0], vec![0]));
}

/// Seed 004's first "found, not fixed" bug: rocprofv3 drops every job
/// without pmc in application mode (two trace-only jobs gave zero runs, and
/// a trace job next to a pmc job never ran). Here each is a step of its own.
#[test]
fn no_job_is_dropped_in_application_mode() {
    let f = file(json!({"jobs": [
        {"advanced_thread_trace": true},
        {"pmc": ["SQ_WAVES"]},
        {"advanced_thread_trace": true, "att_target_cu": 3},
    ]}));
    let r = runs(&f, &CommandLine::default());
    assert_eq!(r.len(), 3);
    assert_eq!(
        r.iter().map(|run| run.jobs.clone()).collect::<Vec<_>>(),
        vec![vec![0], vec![1], vec![2]]
    );
    match (&r[0].collection, &r[1].collection, &r[2].collection) {
        (
            RunCollection::ThreadTrace(first),
            RunCollection::Counters(g),
            RunCollection::ThreadTrace(second),
        ) => {
            assert_eq!(first, &ThreadTrace::default());
            assert_eq!(g, &names(&["SQ_WAVES"]));
            assert_eq!(second.target_cu, 3);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn two_trace_only_jobs_are_two_runs() {
    let f = file(json!({"jobs": [
        {"advanced_thread_trace": true, "att_simd_select": "0x3"},
        {"advanced_thread_trace": true, "att_serialize_all": true},
    ]}));
    let r = runs(&f, &CommandLine::default());
    assert_eq!(r.len(), 2);
    assert!(matches!(&r[0].collection, RunCollection::ThreadTrace(t) if t.simd_select == 3));
    assert!(matches!(&r[1].collection, RunCollection::ThreadTrace(t) if t.serialize_all));
}

/// A job is one pass in either mode: refused, never run halfway.
#[test]
fn application_mode_rejects_a_job_with_both_services_or_neither() {
    let e = rejected(
        &file(json!({"jobs": [
            {"pmc": ["SQ_WAVES"], "advanced_thread_trace": true},
            {"kernel_trace": true},
            {"pmc": ["GRBM_COUNT"]},
        ]})),
        &CommandLine::default(),
    );
    assert_eq!(e.paths(), vec!["jobs[0]", "jobs[1]"]);
    assert!(e.0[0].message.contains("two services"), "{e}");
    assert!(e.0[1].message.contains("no service"), "{e}");
    assert!(e.0.iter().all(|x| x.file == FILE));
}

/// `advanced_thread_trace: false` is the default: it selects nothing, and
/// `att_*` settings next to it are named as misplaced.
#[test]
fn advanced_thread_trace_false_selects_nothing() {
    let r = runs(
        &file(json!({"jobs": [{"pmc": ["SQ_WAVES"], "advanced_thread_trace": false}]})),
        &CommandLine::default(),
    );
    assert_eq!(groups(&r[0]), vec![names(&["SQ_WAVES"])]);
    let e = rejected(
        &file(json!({"jobs": [{"advanced_thread_trace": false, "att_target_cu": 2}]})),
        &CommandLine::default(),
    );
    assert_eq!(e.paths(), vec!["jobs[0]", "jobs[0].att_target_cu"]);
    assert!(e.0[1].message.contains("does not trace"), "{e}");
}

#[test]
fn a_job_gives_pmc_or_pmc_groups_and_never_an_empty_group() {
    let e = rejected(
        &file(json!({"jobs": [
            {"pmc": ["A"], "pmc_groups": [["B"]]},
            {"pmc_groups": []},
            {"pmc_groups": [["C"], " , "]},
            {"pmc": ""},
        ]})),
        &CommandLine::default(),
    );
    assert_eq!(
        e.paths(),
        vec![
            "jobs[0].pmc_groups",
            "jobs[1].pmc_groups",
            "jobs[2].pmc_groups[1]",
            "jobs[3].pmc"
        ]
    );
}

#[test]
fn a_thread_trace_job_cannot_ask_for_kernel_replay() {
    let e = rejected(
        &file(json!({"jobs": [{"advanced_thread_trace": true, "replay_mode": "kernel"}]})),
        &beta(),
    );
    assert_eq!(e.paths(), vec!["jobs[0].replay_mode"]);
    assert!(e.0[0].message.contains("no counters"), "{e}");
}

#[test]
fn a_job_asking_for_kernel_replay_needs_the_acknowledgement() {
    let f = file(json!({"jobs": [
        {"pmc": ["A"]},
        {"pmc_groups": [["B"], ["C"]], "replay_mode": "kernel"},
    ]}));
    let e = rejected(&f, &CommandLine::default());
    assert_eq!(e.paths(), vec!["jobs[1].replay_mode"]);
    assert!(e.0[0].message.contains("kernel_replay_beta_enabled"));
    let r = runs(&f, &beta());
    assert_eq!(r.len(), 2);
    assert!(!r[0].replays());
    assert_eq!(replay(&r[1]).groups(), &[names(&["B"]), names(&["C"])]);
}

#[test]
fn application_mode_refuses_collection_periods() {
    let e = rejected(
        &file(json!({"jobs": [{"pmc": ["A"], "collection_period": "1:1:1"}]})),
        &CommandLine::default(),
    );
    assert_eq!(e.paths(), vec!["jobs[0].collection_period"]);
}

#[test]
fn replay_without_the_beta_acknowledgement_is_rejected() {
    let cli = CommandLine {
        pmc: vec![names(&["SQ_WAVES"]), names(&["GRBM_COUNT"])],
        replay_mode: Some(ReplayMode::Kernel),
        kernel_replay_beta_enabled: false,
    };
    let e = fold(None, &cli).unwrap_err();
    assert_eq!(e.paths(), vec!["--kernel-replay-beta-enabled"]);
    assert_eq!(e.0[0].file, "command line");
}

#[test]
fn replay_without_counters_is_rejected() {
    let e = fold(None, &kernel_cli()).unwrap_err();
    assert_eq!(e.paths(), vec!["--replay-mode"]);
    assert!(e.0[0].message.contains("no counters"));
}

// --- job_replay_mode: kernel --------------------------------------------

#[test]
fn kernel_mode_runs_every_job_as_a_pass_of_one_run() {
    let f = kernel_file(json!([
        {"advanced_thread_trace": true, "att_target_cu": 1, "att_shader_engine_mask": "0xf"},
        {"pmc": ["SQ_WAVES", "GRBM_COUNT"]},
        {"pmc": "SQ_INSTS_VALU"},
    ]));
    let plan = fold(Some((&f, FILE)), &beta()).unwrap();
    assert_eq!(plan.mode, JobReplayMode::Kernel);
    assert_eq!(plan.runs.len(), 1);
    let r = replay(&plan.runs[0]);
    assert_eq!(
        r.groups(),
        &[
            names(&["SQ_WAVES", "GRBM_COUNT"]),
            names(&["SQ_INSTS_VALU"])
        ]
    );
    assert_eq!(r.att_after_groups(), Some(0));
    assert_eq!(r.thread_trace().unwrap().shader_engine_mask, 0xf);
    assert_eq!(r.layout().total_passes(), 3);
    assert_eq!(plan.runs[0].jobs, vec![0, 1, 2]);
}

#[test]
fn job_order_places_the_thread_trace_pass() {
    let att = json!({"advanced_thread_trace": true});
    let (a, b) = (json!({"pmc": ["SQ_WAVES"]}), json!({"pmc": ["GRBM_COUNT"]}));
    for (jobs, after, sequence) in [
        (
            json!([att, a, b]),
            0,
            [
                PassKind::ThreadTrace,
                PassKind::Counters(0),
                PassKind::Counters(1),
            ],
        ),
        (
            json!([a, att, b]),
            1,
            [
                PassKind::Counters(0),
                PassKind::ThreadTrace,
                PassKind::Counters(1),
            ],
        ),
        (
            json!([a, b, att]),
            2,
            [
                PassKind::Counters(0),
                PassKind::Counters(1),
                PassKind::ThreadTrace,
            ],
        ),
    ] {
        let r = runs(&kernel_file(jobs.clone()), &beta());
        let rep = replay(&r[0]);
        assert_eq!(rep.att_after_groups(), Some(after), "{jobs}");
        assert_eq!(
            rep.groups(),
            &[names(&["SQ_WAVES"]), names(&["GRBM_COUNT"])]
        );
        let layout = rep.layout();
        let got: Vec<_> = (0..3).map(|p| layout.pass(p).unwrap()).collect();
        assert_eq!(got, sequence);
    }
}

#[test]
fn counter_only_kernel_mode_has_no_trace_pass() {
    let r = runs(
        &kernel_file(json!([{"pmc": ["SQ_WAVES"]}, {"pmc": ["GRBM_COUNT"]}])),
        &beta(),
    );
    let rep = replay(&r[0]);
    assert_eq!(rep.att_after_groups(), None);
    assert_eq!(rep.layout(), PassLayout::counters(2));
}

#[test]
fn yaml_opts_in_the_same_way() {
    let text = "job_replay_mode: kernel\njobs:\n  - pmc: [SQ_WAVES]\n    kernel_replay_beta_enabled: true\n  - advanced_thread_trace: true\n";
    let f = parse_str(text, Format::Yaml, "jobs.yaml").unwrap();
    let plan = fold(Some((&f, "jobs.yaml")), &CommandLine::default()).unwrap();
    let rep = replay(&plan.runs[0]);
    assert_eq!(rep.groups(), &[names(&["SQ_WAVES"])]);
    assert_eq!(rep.att_after_groups(), Some(1));
}

#[test]
fn run_options_from_any_job_apply_to_the_run() {
    let f = kernel_file(json!([
        {"pmc": ["SQ_WAVES"], "kernel_include_regex": "gemm"},
        {"pmc": ["GRBM_COUNT"], "output_format": ["json"], "kernel_include_regex": "gemm", "pmc_keep_dimensions": true},
    ]));
    let r = runs(&f, &beta());
    assert_eq!(r[0].options.kernel_include_regex.as_deref(), Some("gemm"));
    assert_eq!(r[0].options.output_format, names(&["json"]));
    assert!(r[0].options.keep_dimensions);
}

#[test]
fn the_beta_acknowledgement_may_come_from_a_job() {
    let f = kernel_file(json!([
        {"pmc": ["SQ_WAVES"], "kernel_replay_beta_enabled": true},
        {"pmc": ["GRBM_COUNT"]},
    ]));
    assert_eq!(runs(&f, &CommandLine::default()).len(), 1);
}

#[test]
fn the_decoder_path_may_sit_on_any_job() {
    let f = kernel_file(json!([
        {"pmc": ["SQ_WAVES"], "att_library_path": ["/opt/x"]},
        {"advanced_thread_trace": true},
    ]));
    assert_eq!(
        runs(&f, &beta())[0].options.att_library_path,
        names(&["/opt/x"])
    );
}

/// Seed 004's second "found, not fixed" bug: `att_serialize_all: true`
/// failed because argparse's default `False` counted as set. Here it is a
/// setting of the trace job, and `false` written on a counter job sets
/// nothing.
#[test]
fn booleans_at_their_default_do_not_count_as_set() {
    let f = kernel_file(json!([
        {"pmc": ["SQ_WAVES"], "att_serialize_all": false, "pmc_keep_dimensions": false},
        {"advanced_thread_trace": true, "att_serialize_all": true},
        {"pmc": ["GRBM_COUNT"], "pmc_keep_dimensions": true, "kernel_replay_beta_enabled": false},
    ]));
    let r = runs(&f, &beta());
    assert!(replay(&r[0]).thread_trace().unwrap().serialize_all);
    assert!(r[0].options.keep_dimensions);
}

#[test]
fn kernel_mode_rejects_jobs_that_disagree_on_a_run_option() {
    let e = rejected(
        &kernel_file(json!([
            {"pmc": ["SQ_WAVES"], "output_directory": "/tmp/a"},
            {"pmc": ["GRBM_COUNT"], "output_directory": "/tmp/a"},
            {"pmc": ["TCC_HIT"], "output_directory": "/tmp/b"},
        ])),
        &beta(),
    );
    assert_eq!(e.paths(), vec!["jobs[2].output_directory"]);
    assert!(e.0[0].message.contains("jobs[0]") && e.0[0].message.contains("/tmp/a"));
    assert_eq!(e.0[0].file, FILE);
}

#[test]
fn kernel_mode_rejects_a_job_with_both_services() {
    let e = rejected(
        &kernel_file(json!([{"pmc": ["SQ_WAVES"], "advanced_thread_trace": true}])),
        &beta(),
    );
    assert_eq!(e.paths(), vec!["jobs[0]"]);
    assert!(e.0[0].message.contains("two services"));
}

#[test]
fn kernel_mode_rejects_a_job_that_collects_nothing() {
    let e = rejected(
        &kernel_file(json!([{"pmc": ["SQ_WAVES"]}, {"kernel_trace": true}])),
        &beta(),
    );
    assert_eq!(e.paths(), vec!["jobs[1]"]);
    assert!(e.0[0].message.contains("no service"));
}

#[test]
fn kernel_mode_rejects_two_thread_trace_jobs() {
    let e = rejected(
        &kernel_file(json!([
            {"advanced_thread_trace": true},
            {"pmc": ["SQ_WAVES"]},
            {"advanced_thread_trace": true},
        ])),
        &beta(),
    );
    assert_eq!(e.paths(), vec!["jobs[2].advanced_thread_trace"]);
    assert!(e.0[0].message.contains("jobs[0]"));
}

#[test]
fn kernel_mode_rejects_pmc_groups() {
    let e = rejected(
        &kernel_file(json!([{"pmc_groups": [["SQ_WAVES"], ["GRBM_COUNT"]]}])),
        &beta(),
    );
    assert_eq!(e.paths(), vec!["jobs[0].pmc_groups"]);
}

#[test]
fn kernel_mode_rejects_thread_trace_settings_on_a_counter_job() {
    let e = rejected(
        &kernel_file(json!([
            {"pmc": ["SQ_WAVES"], "att_target_cu": 2},
            {"advanced_thread_trace": true},
        ])),
        &beta(),
    );
    assert_eq!(e.paths(), vec!["jobs[0].att_target_cu"]);
    assert!(e.0[0].message.contains("counter job"));
}

#[test]
fn kernel_mode_needs_a_counter_job() {
    let e = rejected(
        &kernel_file(json!([{"advanced_thread_trace": true}])),
        &beta(),
    );
    assert_eq!(e.paths(), vec!["jobs"]);
}

#[test]
fn kernel_mode_rejects_counter_groups_on_the_command_line() {
    let cli = CommandLine {
        pmc: vec![names(&["SQ_INSTS_VALU"])],
        ..beta()
    };
    let e = rejected(&kernel_file(json!([{"pmc": ["SQ_WAVES"]}])), &cli);
    assert_eq!(e.paths(), vec!["--pmc"]);
    assert_eq!(e.0[0].file, "command line");
}

#[test]
fn kernel_mode_rejects_application_replay() {
    let jobs = json!([{"pmc": ["SQ_WAVES"]}, {"pmc": ["GRBM_COUNT"]}]);
    let cli = CommandLine {
        replay_mode: Some(ReplayMode::Application),
        ..beta()
    };
    assert_eq!(
        rejected(&kernel_file(jobs), &cli).paths(),
        vec!["--replay-mode"]
    );
    let e = rejected(
        &kernel_file(json!([{"pmc": ["SQ_WAVES"], "replay_mode": "application"}])),
        &beta(),
    );
    assert_eq!(e.paths(), vec!["jobs[0].replay_mode"]);
}

#[test]
fn kernel_mode_still_needs_the_beta_acknowledgement() {
    let e = rejected(
        &kernel_file(json!([{"pmc": ["SQ_WAVES"]}, {"pmc": ["GRBM_COUNT"]}])),
        &CommandLine::default(),
    );
    assert_eq!(e.paths(), vec!["job_replay_mode"]);
    assert!(e.0[0].message.contains("kernel_replay_beta_enabled"));
}

#[test]
fn kernel_mode_rejects_collection_periods() {
    let e = rejected(
        &kernel_file(json!([{"pmc": ["SQ_WAVES"], "collection_period": "1:1:1"}])),
        &beta(),
    );
    assert_eq!(e.paths(), vec!["jobs[0].collection_period"]);
}

#[test]
fn an_unknown_job_replay_mode_is_rejected_naming_the_field() {
    let e = parse_str(
        &json!({"job_replay_mode": "dispatch", "jobs": [{"pmc": ["SQ_WAVES"]}]}).to_string(),
        Format::Json,
        FILE,
    )
    .unwrap_err();
    assert_eq!(e.paths(), vec!["job_replay_mode"]);
    assert!(e.0[0].message.contains("application") && e.0[0].message.contains("kernel"));
}

#[test]
fn application_is_the_default() {
    let jobs = json!([{"pmc": ["SQ_WAVES"]}, {"pmc": ["GRBM_COUNT"]}]);
    let explicit = runs(
        &file(json!({"job_replay_mode": "application", "jobs": jobs.clone()})),
        &CommandLine::default(),
    );
    let legacy = runs(&file(json!({ "jobs": jobs })), &CommandLine::default());
    assert_eq!(explicit, legacy);
    assert_eq!(explicit.len(), 2);
}

#[test]
fn a_legacy_file_under_replay_mode_kernel_keeps_its_jobs_as_runs() {
    let f = file(json!({"jobs": [{"pmc": "SQ_WAVES"}, {"pmc": "GRBM_COUNT"}]}));
    let r = runs(&f, &kernel_cli());
    assert_eq!(
        r.iter().map(groups).collect::<Vec<_>>(),
        vec![vec![names(&["SQ_WAVES"])], vec![names(&["GRBM_COUNT"])]]
    );
}

// --- the file itself ------------------------------------------------------

#[test]
fn unknown_fields_and_wrong_types_name_the_field() {
    let e = parse_str(
        r#"{"jobs": [{"pmc": ["A"]}, {"pmcc": ["B"]}]}"#,
        Format::Json,
        FILE,
    )
    .unwrap_err();
    assert_eq!(e.paths(), vec!["jobs[1].pmcc"]);
    assert!(e.0[0].message.contains("unknown field"), "{e}");
    let e = parse_str(
        "jobs:\n  - advanced_thread_trace: maybe\n",
        Format::Yaml,
        "j.yaml",
    )
    .unwrap_err();
    assert_eq!(e.paths(), vec!["jobs[0].advanced_thread_trace"]);
    assert!(!e.0[0].message.starts_with("jobs[0]"), "{e}");
    assert_eq!(e.0[0].file, "j.yaml");
    assert!(e
        .to_string()
        .starts_with("j.yaml: at `jobs[0].advanced_thread_trace`: "));
}

#[test]
fn every_problem_is_reported_at_once_in_file_order() {
    let e = rejected(
        &kernel_file(json!([
            {"pmc": []},
            {"pmc": ["A"], "advanced_thread_trace": true},
            {"att_simd_select": "0xZZ", "advanced_thread_trace": true},
        ])),
        &CommandLine::default(),
    );
    assert_eq!(
        e.paths(),
        vec![
            "jobs[0].pmc",
            "jobs[1]",
            "jobs[2].att_simd_select",
            "job_replay_mode"
        ]
    );
}

#[test]
fn files_are_read_as_json_or_yaml_by_extension_or_content() {
    let dir = std::env::temp_dir().join(format!("counter-jobs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let yaml = dir.join("jobs.yml");
    std::fs::write(&yaml, "jobs:\n  - pmc: SQ_WAVES GRBM_COUNT\n").unwrap();
    let plain = dir.join("jobs");
    std::fs::write(&plain, r#" {"jobs": [{"pmc": ["SQ_WAVES"]}]}"#).unwrap();
    let from_yaml = load_file(&yaml).unwrap();
    assert_eq!(
        from_yaml.jobs[0].pmc.as_ref().unwrap().names(),
        names(&["SQ_WAVES", "GRBM_COUNT"])
    );
    assert_eq!(load_file(&plain).unwrap().jobs.len(), 1);
    let missing = load_file(&dir.join("absent.json")).unwrap_err();
    assert!(missing.to_string().contains("absent.json"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn kernel_replay_beta_enabled_false_acknowledges_nothing() {
    let e = rejected(
        &kernel_file(json!([
            {"pmc": ["SQ_WAVES"], "kernel_replay_beta_enabled": false},
            {"pmc": ["GRBM_COUNT"], "kernel_replay_beta_enabled": false},
        ])),
        &CommandLine::default(),
    );
    assert_eq!(e.paths(), vec!["job_replay_mode"]);
}

#[test]
fn kernel_mode_names_every_disagreeing_job_and_option() {
    let e = rejected(
        &kernel_file(json!([
            {"pmc": ["A"], "kernel_include_regex": "gemm", "output_format": ["csv"]},
            {"pmc": ["B"], "kernel_include_regex": "conv"},
            {"advanced_thread_trace": true, "output_format": ["json"], "att_library_path": "/a"},
            {"pmc": ["C"], "kernel_include_regex": "gemm", "att_library_path": ["/b"]},
        ])),
        &beta(),
    );
    assert_eq!(
        e.paths(),
        vec![
            "jobs[1].kernel_include_regex",
            "jobs[2].output_format",
            "jobs[3].att_library_path"
        ]
    );
    assert!(e.0[0].message.contains("\"conv\"") && e.0[0].message.contains("\"gemm\""));
}

#[test]
fn yaml_rejections_name_the_yaml_file_and_the_job() {
    let text = "job_replay_mode: kernel\njobs:\n  - pmc: [SQ_WAVES]\n    att_buffer_size: 0x1000\n  - advanced_thread_trace: true\n    att_target_cu: 0x2\n";
    let f = parse_str(text, Format::Yaml, "jobs.yaml").unwrap();
    let e = fold(Some((&f, "jobs.yaml")), &beta()).unwrap_err();
    assert_eq!(e.paths(), vec!["jobs[0].att_buffer_size"]);
    assert_eq!(
        e.to_string(),
        "jobs.yaml: at `jobs[0].att_buffer_size`: a thread-trace setting on a counter job: move it to the job with `advanced_thread_trace: true`"
    );
}

#[test]
fn yaml_and_json_fold_to_the_same_plan() {
    let yaml = "job_replay_mode: kernel\njobs:\n  - pmc: SQ_WAVES GRBM_COUNT\n    kernel_include_regex: gemm\n    kernel_replay_beta_enabled: true\n  - advanced_thread_trace: true\n    att_target_cu: 0x2\n    att_shader_engine_mask: \"0xf\"\n  - pmc: [GRBM_GUI_ACTIVE]\n";
    let json = json!({"job_replay_mode": "kernel", "jobs": [
        {"pmc": ["SQ_WAVES", "GRBM_COUNT"], "kernel_include_regex": "gemm", "kernel_replay_beta_enabled": true},
        {"advanced_thread_trace": true, "att_target_cu": 2, "att_shader_engine_mask": 15},
        {"pmc": "GRBM_GUI_ACTIVE"},
    ]});
    let from_yaml = parse_str(yaml, Format::Yaml, "j.yaml").unwrap();
    let a = fold(Some((&from_yaml, "j.yaml")), &CommandLine::default()).unwrap();
    let b = fold(Some((&file(json), FILE)), &CommandLine::default()).unwrap();
    assert_eq!(a, b);
    assert_eq!(replay(&a.runs[0]).thread_trace().unwrap().target_cu, 2);
    assert_eq!(replay(&a.runs[0]).att_after_groups(), Some(1));
}

#[test]
fn a_legacy_yaml_file_runs_each_job() {
    let text = "jobs:\n  - pmc: [SQ_WAVES]\n    kernel_trace: true\n  - pmc: [GRBM_COUNT]\n";
    let f = parse_str(text, Format::Yaml, "legacy.yaml").unwrap();
    assert_eq!(f.job_replay_mode, None);
    let plan = fold(Some((&f, "legacy.yaml")), &CommandLine::default()).unwrap();
    assert_eq!(plan.mode, JobReplayMode::Application);
    assert_eq!(plan.runs.len(), 2);
}

#[test]
fn a_bad_hex_value_names_its_field() {
    let e = rejected(
        &kernel_file(
            json!([{"pmc": ["A"]}, {"advanced_thread_trace": true, "att_buffer_size": "0x10zz"}]),
        ),
        &beta(),
    );
    assert_eq!(e.paths(), vec!["jobs[1].att_buffer_size"]);
    assert!(e.0[0].message.contains("0x10zz"));
}

#[test]
fn the_plan_reads_as_runs_and_passes() {
    let f = kernel_file(json!([
        {"pmc": ["SQ_WAVES", "GRBM_COUNT"], "kernel_include_regex": "gemm"},
        {"advanced_thread_trace": true},
        {"pmc": ["GRBM_GUI_ACTIVE"]},
    ]));
    let plan = fold(Some((&f, FILE)), &beta()).unwrap();
    assert_eq!(
        plan.to_string(),
        "job_replay_mode kernel: the jobs are the passes of one kernel-replay run; 1 run(s)\n\
         run 0 (jobs 0, 1, 2): kernel replay, 3 passes per selected dispatch\n\
         \x20 pass 0: counters SQ_WAVES, GRBM_COUNT\n\
         \x20 pass 1: thread trace (target_cu 1, shader_engine_mask 0x1, simd_select 0xf, buffer_size 0x6000000, serialize_all false, perfcounter_ctrl 0x0)\n\
         \x20 pass 2: counters GRBM_GUI_ACTIVE\n\
         \x20 options: kernel_include_regex \"gemm\"\n"
    );
    let f = file(
        json!({"jobs": [{"pmc": ["SQ_WAVES"]}, {"advanced_thread_trace": true, "att_target_cu": 2}]}),
    );
    let plan = fold(Some((&f, FILE)), &CommandLine::default()).unwrap();
    assert_eq!(
        plan.to_string(),
        "job_replay_mode application: each job is a profiler step of its own; 2 run(s)\n\
         run 0 (job 0): counters SQ_WAVES\n\
         run 1 (job 1): thread trace (target_cu 2, shader_engine_mask 0x1, simd_select 0xf, buffer_size 0x6000000, serialize_all false, perfcounter_ctrl 0x0)\n"
    );
}

/// The example files the README points at fold to what their comments say.
#[test]
fn the_shipped_examples_fold() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/jobs");
    let kernel = load_file(&dir.join("kernel-replay.yaml")).unwrap();
    let plan = fold(
        Some((&kernel, "kernel-replay.yaml")),
        &CommandLine::default(),
    )
    .unwrap();
    let rep = replay(&plan.runs[0]);
    assert_eq!(rep.groups().len(), 2);
    assert_eq!(rep.att_after_groups(), Some(1));
    let steps = load_file(&dir.join("steps.json")).unwrap();
    let plan = fold(Some((&steps, "steps.json")), &CommandLine::default()).unwrap();
    assert_eq!(plan.mode, JobReplayMode::Application);
    assert_eq!(plan.runs.len(), 3);
}

#[test]
fn a_value_of_the_wrong_shape_says_what_was_expected() {
    for (text, path, expected) in [
        (
            r#"{"jobs": [{"pmc": 5}]}"#,
            "jobs[0].pmc",
            "a list of counter names, or one string",
        ),
        (
            r#"{"jobs": [{"advanced_thread_trace": true, "att_target_cu": -1}]}"#,
            "jobs[0].att_target_cu",
            "a non-negative integer",
        ),
        (
            r#"{"jobs": [{"pmc": ["A"], "output_format": 3}]}"#,
            "jobs[0].output_format",
            "a string or a list of strings",
        ),
        (r#"{"jobs": {}}"#, "jobs", "expected a sequence"),
        (
            r#"{"job_replay_mode": "kernel"}"#,
            "",
            "missing field `jobs`",
        ),
    ] {
        let e = parse_str(text, Format::Json, FILE).unwrap_err();
        assert_eq!(e.paths(), vec![path], "{text}");
        assert!(e.0[0].message.contains(expected), "{text}: {e}");
    }
}

// --- kernel_iteration_range ------------------------------------------------

#[test]
fn an_iteration_range_that_does_not_parse_is_refused_in_either_mode() {
    for (f, path, why) in [
        (
            file(json!({"jobs": [{"pmc": ["SQ_WAVES"], "kernel_iteration_range": "[1-x]"}]})),
            "jobs[0].kernel_iteration_range",
            "\"x\" is not an iteration number",
        ),
        (
            kernel_file(json!([
                {"pmc": ["SQ_WAVES"]},
                {"pmc": ["GRBM_COUNT"], "kernel_iteration_range": ["[2]", "[0]"]},
            ])),
            "jobs[1].kernel_iteration_range",
            "iteration 0 never runs",
        ),
    ] {
        let e = rejected(&f, &beta());
        assert_eq!(e.paths(), vec![path]);
        assert!(e.0[0].message.contains(why), "{}", e.0[0].message);
        assert_eq!(e.0[0].file, FILE);
    }
}

#[test]
fn kernel_mode_jobs_agree_on_an_iteration_range_by_its_launches_not_its_spelling() {
    let r = runs(
        &kernel_file(json!([
            {"pmc": ["SQ_WAVES"], "kernel_iteration_range": "[1-3]"},
            {"pmc": ["GRBM_COUNT"], "kernel_iteration_range": ["1", "2, 3"]},
        ])),
        &beta(),
    );
    let range = r[0].options.kernel_iteration_range.as_ref().unwrap();
    assert_eq!(range.to_string(), "[1-3]");
    let e = rejected(
        &kernel_file(json!([
            {"pmc": ["SQ_WAVES"], "kernel_iteration_range": "[1-3]"},
            {"pmc": ["GRBM_COUNT"], "kernel_iteration_range": "[1-4]"},
        ])),
        &beta(),
    );
    assert_eq!(e.paths(), vec!["jobs[1].kernel_iteration_range"]);
}
