//! Kernel replay as the SDK's kernel-replay branch documents it
//! (experimental/kernel_replay.h): one configuring context; CONFIG then one
//! PASS per pass under one dispatch id; a pass count of 1 (or 0 without a
//! continue callback) runs the dispatch once; `replay_continue` ends a loop
//! early; a context switched off at PASS ENTER stays off for the rest of
//! that loop only, and the switch is refused outside PASS ENTER; graph
//! launches are not replayed. The test tool varies its answers by dispatch
//! id (examples/rocsim_test_tool.rs `replay_pass_count`).
mod common;
use common::*;
use rocprofiler_sim::options::{RunOptions, SubmissionModel};
use rocprofiler_sim::truth::OpKind;
use rocprofiler_sys as sys;
use std::collections::HashMap;

const PASSES: u64 = 3;

fn replay_env() -> &'static Env {
    env_with(&[
        ("ROCSIM_TOOL_REPLAY_PASSES", "3"),
        ("ROCSIM_TOOL_COUNTER_IDS", "0"),
    ])
}

/// How many passes the tool's answers make dispatch `d` run: one when it
/// is not replayed, or when `replay_continue` stops it after pass 0.
fn passes_run(d: u64) -> u64 {
    if !replayed(d) || d.is_multiple_of(3) {
        1
    } else {
        PASSES
    }
}

/// Whether `d` is replayed at all (a PASS callback happens).
fn replayed(d: u64) -> bool {
    !d.is_multiple_of(5) && !d.is_multiple_of(7)
}

/// How many of its passes leave records: odd ids switch the tool's context
/// off at pass 1.
fn passes_recorded(d: u64) -> u64 {
    if replayed(d) && d % 2 == 1 {
        passes_run(d).min(1)
    } else {
        passes_run(d)
    }
}

#[test]
fn eager_dispatches_run_once_per_pass_under_one_dispatch_id() {
    let _s = serial();
    let e = replay_env();
    for model in [SubmissionModel::Ideal, SubmissionModel::Rocm] {
        let (truth, v) = e.run(
            "kernel-replay-1thread.json",
            RunOptions {
                submission_model: Some(model),
                ..Default::default()
            },
        );
        let p = probes(&v);
        let configured = sys::rocprofiler_status_t::ERROR_SERVICE_ALREADY_CONFIGURED.0 as u64;
        assert_eq!(p["kernel replay"], 0);
        assert_eq!(p["kernel replay again"], configured);
        assert_eq!(
            p["kernel replay second context"], configured,
            "one context only"
        );
        assert_eq!(
            p["replay stop in pass enter"], 0,
            "a started context can be switched off at PASS ENTER"
        );
        assert_eq!(
            p["replay stop in pass exit"],
            sys::rocprofiler_status_t::ERROR_CONTEXT_ERROR.0 as u64,
            "and nowhere else"
        );

        let mut truth_passes: HashMap<u64, Vec<Option<u32>>> = HashMap::new();
        let mut graph_ids = Vec::new();
        for op in truth.ops.iter().filter(|o| o.kind == OpKind::Kernel) {
            if op.node_index.is_some() {
                graph_ids.push(op.dispatch_id);
                assert_eq!(op.replay_pass, None, "graph kernels are not replayed");
            } else {
                truth_passes
                    .entry(op.dispatch_id)
                    .or_default()
                    .push(op.replay_pass);
            }
        }
        assert_eq!(truth_passes.len(), 42, "every eager dispatch has one id");
        assert_eq!(graph_ids.len(), 8);

        let mut records: HashMap<u64, Vec<Vec<u64>>> = HashMap::new();
        for r in rows(&v, "dispatches") {
            records.entry(r[0]).or_default().push(r);
        }
        let mut counted: HashMap<u64, usize> = HashMap::new();
        // SQ_WAVES reports one record per XCC and shader engine: count a
        // pass's first instance (all dimension bits 0).
        for r in rows(&v, "counter_records") {
            if r[8] & ((1 << 48) - 1) == 0 {
                *counted.entry(r[0]).or_default() += 1;
            }
        }
        let mut callbacks: HashMap<u64, Vec<(u64, u64, u64, u64)>> = HashMap::new();
        for r in rows(&v, "replay") {
            callbacks
                .entry(r[2])
                .or_default()
                .push((r[0], r[1], r[3], r[4]));
        }
        for g in &graph_ids {
            assert_eq!(records[g].len(), 1, "graph kernel {g}: one record");
            assert!(!callbacks.contains_key(g), "graph kernel {g}: no CONFIG");
        }
        let (config, pass) = (1, 2);
        let (enter, exit) = (1, 2);
        for (&d, passes) in &truth_passes {
            let run = passes_run(d);
            let expected: Vec<Option<u32>> = if replayed(d) {
                (0..run as u32).map(Some).collect()
            } else {
                vec![None]
            };
            let mut passes = passes.clone();
            passes.sort();
            assert_eq!(passes, expected, "dispatch {d}: the truth's passes");
            let recs = &records[&d];
            assert_eq!(
                recs.len() as u64,
                passes_recorded(d),
                "dispatch {d}: records"
            );
            assert!(
                recs.windows(2).all(|w| w[0][1] == w[1][1]),
                "one correlation id"
            );
            let mut starts: Vec<u64> = recs.iter().map(|r| r[4]).collect();
            starts.dedup();
            assert_eq!(starts.len(), recs.len(), "each pass has its own times");
            assert_eq!(
                counted.get(&d).copied().unwrap_or(0) as u64,
                passes_recorded(d)
            );
            let mut want = vec![(config, enter, 0, 0)];
            if replayed(d) {
                for k in 0..run {
                    want.push((pass, enter, k, PASSES));
                    want.push((pass, exit, k, PASSES));
                }
            }
            want.push((config, exit, 0, 0));
            assert_eq!(callbacks[&d], want, "dispatch {d}: callbacks in order");
        }
    }
}
