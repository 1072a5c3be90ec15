//! The verifier on hand-built windows: what it vouches for, repairs and
//! withholds, including the seed's cross-thread contamination.

use std::collections::HashMap;

use graph_attribution::{
    verify_window, AttributionId, DispatchKind, DispatchObservation, ExecHandle, ExecKnowledge,
    GraphKey, LaunchEnding, LaunchRecord, LaunchedExec, Ordinal, Verdict, WindowEvidence,
    WithholdReason,
};

fn id(n: u32) -> AttributionId {
    AttributionId::new(n).unwrap()
}

fn key(exec: u32, ordinal: u32) -> GraphKey {
    GraphKey::new(id(exec), Ordinal(ordinal))
}

fn obs(
    correlation_id: u64,
    external: u64,
    signature: u64,
    queue: u64,
    thread: u64,
) -> DispatchObservation {
    DispatchObservation {
        correlation_id,
        external,
        signature,
        kind: DispatchKind::Kernel,
        queue_id: queue,
        thread_id: thread,
        start_ns: correlation_id * 1000,
    }
}

fn launch(correlation_id: u64, exec: u32, thread: u64, credited: u32) -> LaunchRecord {
    LaunchRecord {
        correlation_id,
        attribution: Some(id(exec)),
        exec: LaunchedExec::Sdk {
            graph_exec_id: exec as u64,
            handle: ExecHandle(0x1000 + exec as u64),
        },
        thread_id: thread,
        credited_dispatches: credited,
        ending: LaunchEnding::Exited,
    }
}

/// A window builder: launches and the dispatches the tracker credited them.
#[derive(Default)]
struct Window {
    observations: Vec<DispatchObservation>,
    launches: Vec<LaunchRecord>,
}

impl Window {
    /// `replays` clean, uncontended launches of `exec` running `sigs`.
    fn replays(
        mut self,
        exec: u32,
        sigs: &[u64],
        thread: u64,
        queue: u64,
        first_corr: u64,
        replays: u64,
    ) -> Self {
        for r in 0..replays {
            let corr = first_corr + r;
            self.launches
                .push(launch(corr, exec, thread, sigs.len() as u32));
            for (ordinal, &sig) in sigs.iter().enumerate() {
                self.observations.push(obs(
                    corr,
                    key(exec, ordinal as u32).pack(),
                    sig,
                    queue,
                    thread,
                ));
            }
        }
        self
    }

    fn verify(&self, knowledge: &mut ExecKnowledge) -> graph_attribution::VerifiedWindow {
        verify_window(
            &WindowEvidence::new(&self.observations, &self.launches),
            knowledge,
        )
    }
}

const A_SIGS: [u64; 6] = [100, 101, 102, 103, 104, 105];
const B_SIGS: [u64; 6] = [200, 201, 202, 203, 204, 205];

fn learned(execs: &[(u32, &[u64], u64)]) -> ExecKnowledge {
    let mut knowledge = ExecKnowledge::new();
    let mut w = Window::default();
    for (n, &(exec, sigs, thread)) in execs.iter().enumerate() {
        w = w.replays(exec, sigs, thread, thread, 1 + 10 * n as u64, 3);
    }
    let out = w.verify(&mut knowledge);
    assert_eq!(
        out.summary.execs_learned,
        execs.len() as u64,
        "{}",
        out.summary
    );
    knowledge
}

/// Window 2 of the seed's failure: thread 2 (inside B's launch, corr 51)
/// writes A's six packets; they carry B's id at ordinals 6..11 and B's
/// correlation id, and A's launch (corr 50) is credited nothing.
fn contaminated(b_sigs: &[u64], a_first: bool) -> Window {
    let mut w = Window::default();
    w.launches.push(launch(50, 1, 1, 0));
    w.launches.push(launch(51, 2, 2, 12));
    let a = A_SIGS.iter().copied();
    let b = b_sigs.iter().copied();
    let order: Vec<u64> = if a_first {
        a.chain(b).collect()
    } else {
        b.chain(a).collect()
    };
    for (ordinal, sig) in order.into_iter().enumerate() {
        w.observations
            .push(obs(51, key(2, ordinal as u32).pack(), sig, 7, 2));
    }
    w
}

#[test]
fn clean_single_thread_replays_are_all_vouched() {
    let mut knowledge = ExecKnowledge::new();
    let w = Window::default().replays(1, &A_SIGS, 1, 1, 1, 5);
    let out = w.verify(&mut knowledge);
    for (o, v) in w.observations.iter().zip(&out.verdicts) {
        assert_eq!(*v, Verdict::Vouched(GraphKey::unpack(o.external).unwrap()));
    }
    assert_eq!(out.summary.vouched, 30);
    assert_eq!(out.summary.withheld(), 0);
    assert_eq!(out.summary.execs_learned, 1);
    assert!(knowledge.knows(id(1)));
}

#[test]
fn one_replay_is_not_trusted_until_a_second_agrees() {
    let mut knowledge = ExecKnowledge::new();
    let out = Window::default()
        .replays(1, &A_SIGS, 1, 1, 1, 1)
        .verify(&mut knowledge);
    assert_eq!(out.summary.attributed, 0);
    assert_eq!(out.summary.withheld_for(WithholdReason::UnknownExec), 6);
    let out = Window::default()
        .replays(1, &A_SIGS, 1, 1, 2, 1)
        .verify(&mut knowledge);
    assert_eq!(out.summary.vouched, 6);
}

#[test]
fn cross_thread_contamination_is_repaired_to_the_true_launch() {
    for a_first in [false, true] {
        let mut knowledge = learned(&[(1, &A_SIGS, 1), (2, &B_SIGS, 2)]);
        let w = contaminated(&B_SIGS, a_first);
        let out = w.verify(&mut knowledge);
        for (o, v) in w.observations.iter().zip(&out.verdicts) {
            let expected = match A_SIGS.iter().position(|&s| s == o.signature) {
                Some(node) => Verdict::Repaired {
                    key: key(1, node as u32),
                    correlation_id: Some(50),
                },
                None => Verdict::Repaired {
                    key: key(
                        2,
                        B_SIGS.iter().position(|&s| s == o.signature).unwrap() as u32,
                    ),
                    correlation_id: Some(51),
                },
            };
            assert_eq!(*v, expected, "signature {}", o.signature);
        }
        assert_eq!(out.summary.repaired, 12);
        assert_eq!(out.summary.relinked, 12);
        assert_eq!(out.summary.windows_not_learned_from, 1);
    }
}

#[test]
fn contamination_between_identical_graphs_is_withheld() {
    let mut knowledge = learned(&[(1, &A_SIGS, 1), (2, &A_SIGS, 2)]);
    let out = contaminated(&A_SIGS, false).verify(&mut knowledge);
    assert_eq!(out.summary.attributed, 0);
    assert_eq!(
        out.summary.withheld_for(WithholdReason::AmbiguousSignature),
        12
    );
}

#[test]
fn contamination_before_anything_was_learned_emits_nothing_and_teaches_nothing() {
    let mut knowledge = ExecKnowledge::with_confirmations(1);
    let out = contaminated(&B_SIGS, false).verify(&mut knowledge);
    assert_eq!(out.summary.attributed, 0);
    assert_eq!(out.summary.windows_not_learned_from, 1);
    assert!(knowledge.is_empty());
}

#[test]
fn a_key_seen_with_two_signatures_is_withheld() {
    // The tracker claims graph 1 node 0 for two different kernels.
    let mut knowledge = ExecKnowledge::with_confirmations(1);
    let mut w = Window::default();
    w.launches.push(launch(1, 1, 1, 1));
    w.launches.push(launch(2, 1, 1, 1));
    w.observations.push(obs(1, key(1, 0).pack(), 100, 1, 1));
    w.observations.push(obs(2, key(1, 0).pack(), 999, 1, 1));
    let out = w.verify(&mut knowledge);
    assert!(
        out.verdicts.iter().all(|v| v.emitted_key().is_none()),
        "{:?}",
        out.verdicts
    );
    // And once a sequence is trusted, a later look-alike key is not vouched.
    let mut knowledge = learned(&[(1, &A_SIGS, 1)]);
    let mut w = Window::default().replays(1, &A_SIGS, 1, 1, 100, 1);
    w.observations[0].signature = 999;
    let out = w.verify(&mut knowledge);
    assert_eq!(
        out.verdicts[0],
        Verdict::Withheld(WithholdReason::NoEvidence)
    );
    assert!(out
        .verdicts
        .iter()
        .all(|v| !matches!(v, Verdict::Vouched(_))));
}

#[test]
fn a_kernel_that_also_runs_ungraphed_is_not_repaired() {
    let mut knowledge = learned(&[(1, &A_SIGS, 1), (2, &B_SIGS, 2)]);
    let mut w = contaminated(&B_SIGS, false);
    w.observations.push(obs(90, 0, 100, 3, 3));
    let out = w.verify(&mut knowledge);
    let a0 = w
        .observations
        .iter()
        .position(|o| o.signature == 100)
        .unwrap();
    assert_eq!(
        out.verdicts[a0],
        Verdict::Withheld(WithholdReason::SignatureAlsoRunsUngraphed)
    );
    assert_eq!(*out.verdicts.last().unwrap(), Verdict::NotGraphed);
    assert_eq!(out.summary.repaired, 11);
}

#[test]
fn more_strays_than_short_launches_is_a_count_mismatch() {
    let mut knowledge = learned(&[(1, &A_SIGS, 1), (2, &B_SIGS, 2)]);
    let mut w = contaminated(&B_SIGS, false);
    // A thirteenth dispatch, A's node 0 again, with only one A launch short.
    w.launches[1].credited_dispatches = 13;
    w.observations.push(obs(51, key(2, 12).pack(), 100, 7, 2));
    let out = w.verify(&mut knowledge);
    for (o, v) in w.observations.iter().zip(&out.verdicts) {
        if o.signature == 100 {
            assert_eq!(*v, Verdict::Withheld(WithholdReason::CountMismatch));
        }
    }
    assert_eq!(out.summary.withheld(), 2);
}

#[test]
fn several_short_launches_repair_the_key_but_not_the_link() {
    let mut knowledge = learned(&[(1, &A_SIGS, 1), (2, &B_SIGS, 2)]);
    let mut w = contaminated(&B_SIGS, false);
    w.launches.push(launch(52, 1, 1, 0)); // a second A launch, also empty
    let out = w.verify(&mut knowledge);
    for (o, v) in w.observations.iter().zip(&out.verdicts) {
        if let Some(node) = A_SIGS.iter().position(|&s| s == o.signature) {
            assert_eq!(
                *v,
                Verdict::Repaired {
                    key: key(1, node as u32),
                    correlation_id: None
                }
            );
        }
    }
}

#[test]
fn a_perfect_launch_is_not_vouched_when_another_thread_ran_its_kernels_on_its_queue() {
    let mut knowledge = learned(&[(1, &A_SIGS, 1)]);
    let mut w = Window::default().replays(1, &A_SIGS, 1, 1, 100, 1);
    // Thread 3 wrote one of A's kernels to the same queue: A's real node 2
    // may be that one, and the one credited to A a look-alike.
    w.observations.push(obs(200, 0, 102, 1, 3));
    let out = w.verify(&mut knowledge);
    assert!(out
        .verdicts
        .iter()
        .all(|v| !matches!(v, Verdict::Vouched(_))));
    assert_eq!(
        out.verdicts[2],
        Verdict::Withheld(WithholdReason::SignatureAlsoRunsUngraphed)
    );
    assert_eq!(
        out.verdicts[0],
        Verdict::Repaired {
            key: key(1, 0),
            correlation_id: Some(100)
        }
    );
}

#[test]
fn other_threads_on_other_queues_do_not_stop_vouching() {
    let mut knowledge = learned(&[(1, &A_SIGS, 1)]);
    let mut w = Window::default().replays(1, &A_SIGS, 1, 1, 100, 2);
    w.observations.push(obs(200, 0, 102, 2, 3));
    w.observations.push(obs(201, 0, 555, 1, 3));
    let out = w.verify(&mut knowledge);
    assert_eq!(out.summary.vouched, 12);
}

#[test]
fn an_sdk_count_that_disagrees_stops_vouching() {
    let mut knowledge = learned(&[(1, &A_SIGS, 1)]);
    let w = Window::default().replays(1, &A_SIGS, 1, 1, 100, 2);
    let counts: HashMap<u64, u32> = [(100, 6), (101, 7)].into_iter().collect();
    let evidence = WindowEvidence {
        sdk_kernel_counts: Some(&counts),
        ..WindowEvidence::new(&w.observations, &w.launches)
    };
    let out = verify_window(&evidence, &mut knowledge);
    assert_eq!(out.summary.vouched, 6);
    assert!(out.verdicts[6..]
        .iter()
        .all(|v| !matches!(v, Verdict::Vouched(_))));
}

#[test]
fn a_missing_launch_record_stops_vouching_and_learning() {
    let mut knowledge = ExecKnowledge::new();
    let mut w = Window::default().replays(1, &A_SIGS, 1, 1, 1, 3);
    w.launches.remove(1);
    let out = w.verify(&mut knowledge);
    assert_eq!(out.summary.attributed, 0);
    assert!(!knowledge.knows(id(1)));
    // Lost launch records reported by the caller block learning too.
    let w = Window::default().replays(1, &A_SIGS, 1, 1, 1, 3);
    let evidence = WindowEvidence {
        launches_lost: 1,
        ..WindowEvidence::new(&w.observations, &w.launches)
    };
    let out = verify_window(&evidence, &mut knowledge);
    assert_eq!(out.summary.attributed, 0);
}

#[test]
fn ungraphed_and_malformed_slots_get_no_pair() {
    let mut knowledge = learned(&[(1, &A_SIGS, 1)]);
    let observations = [obs(1, 0, 100, 1, 1), obs(2, 5, 100, 1, 1)];
    let out = verify_window(&WindowEvidence::new(&observations, &[]), &mut knowledge);
    assert_eq!(out.verdicts[0], Verdict::NotGraphed);
    assert_eq!(
        out.verdicts[1],
        Verdict::Withheld(WithholdReason::MalformedKey)
    );
    assert_eq!(out.summary.not_graphed, 1);
}

#[test]
fn an_ordinal_past_the_node_count_is_withheld() {
    let mut knowledge = learned(&[(1, &A_SIGS, 1)]);
    let mut w = Window::default().replays(1, &A_SIGS, 1, 1, 100, 1);
    w.launches[0].credited_dispatches = 7;
    w.observations.push(obs(100, key(1, 6).pack(), 777, 1, 1));
    let out = w.verify(&mut knowledge);
    assert_eq!(
        out.verdicts[6],
        Verdict::Withheld(WithholdReason::OrdinalOutOfRange)
    );
    assert_eq!(out.summary.repaired, 6);
}

#[test]
fn forgetting_an_exec_drops_what_was_learned() {
    let mut knowledge = learned(&[(1, &A_SIGS, 1)]);
    knowledge.forget(id(1));
    let out = Window::default()
        .replays(1, &A_SIGS, 1, 1, 100, 1)
        .verify(&mut knowledge);
    assert_eq!(out.summary.attributed, 0);
}

#[test]
fn a_perfect_exchange_between_threads_on_one_queue_teaches_nothing() {
    // Threads 1 and 2 share queue 7 and each wrote the other's packets: A's
    // launches look like perfect runs of B's kernels and vice versa.
    let mut knowledge = ExecKnowledge::with_confirmations(1);
    let mut w = Window::default();
    for r in 0..2 {
        let (corr_a, corr_b) = (10 + 2 * r, 11 + 2 * r);
        w.launches.push(launch(corr_a, 1, 1, 6));
        w.launches.push(launch(corr_b, 2, 2, 6));
        for n in 0..6 {
            w.observations
                .push(obs(corr_a, key(1, n).pack(), B_SIGS[n as usize], 7, 1));
            w.observations
                .push(obs(corr_b, key(2, n).pack(), A_SIGS[n as usize], 7, 2));
        }
    }
    let out = w.verify(&mut knowledge);
    assert_eq!(out.summary.attributed, 0, "{}", out.summary);
    assert!(knowledge.is_empty());
}
