//! A kernel-replay run on agents that cannot collect every configured
//! group: each skips those groups and says which counters it lacks, and its
//! thread-trace pass follows the groups configured ahead of the trace job.
use counter_jobs::*;
use serde_json::json;

fn replay_of(jobs: serde_json::Value) -> Replay {
    let text = json!({"job_replay_mode": "kernel", "jobs": jobs}).to_string();
    let f = parse_str(&text, Format::Json, "jobs.json").unwrap();
    let cli = CommandLine {
        kernel_replay_beta_enabled: true,
        ..Default::default()
    };
    match fold(Some((&f, "jobs.json")), &cli)
        .unwrap()
        .runs
        .remove(0)
        .collection
    {
        RunCollection::Replay(r) => r,
        other => panic!("{other:?}"),
    }
}

fn three_groups_trace_after_two() -> Replay {
    replay_of(json!([
        {"pmc": ["SQ_WAVES"]},
        {"pmc": ["TCC_HIT", "GRBM_COUNT"]},
        {"advanced_thread_trace": true},
        {"pmc": ["GRBM_GUI_ACTIVE"]},
    ]))
}

fn passes(plan: &AgentPlan) -> Vec<Option<u64>> {
    (0..plan.layout.total_passes())
        .map(|p| plan.group_of_pass(p))
        .collect()
}

#[test]
fn an_agent_with_every_counter_runs_the_configured_layout() {
    let r = three_groups_trace_after_two();
    let plan = r.for_agent(|_| true);
    assert_eq!(plan.sources, vec![0, 1, 2]);
    assert!(plan.skipped.is_empty());
    assert_eq!(plan.layout, r.layout());
    assert_eq!(passes(&plan), vec![Some(0), Some(1), None, Some(2)]);
}

#[test]
fn an_agent_skips_a_group_it_cannot_collect_and_names_the_counters() {
    let plan = three_groups_trace_after_two().for_agent(|c| c != "TCC_HIT");
    assert_eq!(plan.sources, vec![0, 2]);
    assert_eq!(passes(&plan), vec![Some(0), None, Some(2)]);
    assert_eq!(
        plan.skipped,
        vec![SkippedGroup {
            group: 1,
            missing: vec!["TCC_HIT".into()]
        }]
    );
    assert_eq!(
        plan.skipped[0].to_string(),
        "counter group 1 skipped: not supported here: TCC_HIT"
    );
}

#[test]
fn the_trace_stays_after_the_groups_configured_ahead_of_it() {
    let plan = three_groups_trace_after_two().for_agent(|c| c != "SQ_WAVES");
    assert_eq!(passes(&plan), vec![Some(1), None, Some(2)]);
    let plan = three_groups_trace_after_two().for_agent(|c| c != "GRBM_GUI_ACTIVE");
    assert_eq!(passes(&plan), vec![Some(0), Some(1), None]);
}

#[test]
fn an_agent_without_any_group_only_traces_or_runs_once() {
    let plan = three_groups_trace_after_two().for_agent(|_| false);
    assert_eq!(plan.layout.total_passes(), 1);
    assert_eq!(plan.layout.thread_trace_pass(), Some(0));
    assert_eq!(plan.skipped.len(), 3);
    let counters_only = replay_of(json!([{"pmc": ["SQ_WAVES"]}, {"pmc": ["TCC_HIT"]}]));
    let plan = counters_only.for_agent(|_| false);
    assert_eq!(plan.layout.total_passes(), 0);
    assert_eq!(plan.group_of_pass(0), None);
}
