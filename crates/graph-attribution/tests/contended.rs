//! Rule 6 (crate::contended) on hand-built contended windows: what the
//! queues' packet order proves, and the cases where two explanations fit
//! the evidence and nothing may be concluded.

mod common;

use common::{id, key, Window};
use graph_attribution::{DispatchKind, ExecKnowledge, Verdict};

const A: [u64; 3] = [100, 101, 102];
const B: [u64; 3] = [200, 201, 202];

fn concat(a: &[u64], b: &[u64]) -> Vec<u64> {
    a.iter().chain(b).copied().collect()
}

/// Thread 1's launch of A (10..20) ends before thread 2's launch of B
/// (30..40) begins, so A's packets precede B's on the queue; thread 2
/// wrote both inside B's launch (B credited 6, A nothing). Repeated twice.
fn separated() -> Window {
    Window::new()
        .launch(10, 1, 1, (10, 20), 0, 3)
        .launch(11, 2, 2, (30, 40), 6, 3)
        .written(11, 2, 2, 0, &concat(&A, &B))
        .launch(12, 1, 1, (50, 60), 0, 3)
        .launch(13, 2, 2, (70, 80), 6, 3)
        .written(13, 2, 2, 0, &concat(&A, &B))
}

#[test]
fn launches_the_queue_order_separates_are_learned_repaired_and_relinked() {
    let w = separated();
    let mut knowledge = ExecKnowledge::new();
    let out = w.verify(&mut knowledge);
    assert_eq!(knowledge.sequence(id(1)).unwrap().len(), 3);
    assert_eq!(out.summary.execs_learned, 2, "{}", out.summary);
    for (i, v) in out.verdicts.iter().enumerate() {
        let (exec, corr) = match (i / 6, i % 6 < 3) {
            (0, true) => (1, 10),
            (0, false) => (2, 11),
            (_, true) => (1, 12),
            (_, false) => (2, 13),
        };
        assert_eq!(
            *v,
            Verdict::Repaired {
                key: key(exec, (i % 3) as u32),
                correlation_id: Some(corr)
            },
            "dispatch {i}"
        );
    }
}

#[test]
fn nothing_is_concluded_without_a_complete_window() {
    let mut w = separated();
    w.complete = false;
    let mut knowledge = ExecKnowledge::new();
    let out = w.verify(&mut knowledge);
    assert_eq!(out.summary.attributed, 0);
    assert!(knowledge.is_empty());
}

#[test]
fn a_perfect_exchange_with_overlapping_launches_teaches_nothing() {
    // A (thread 1) and B (thread 2) overlap in time; each thread wrote the
    // other's packets, so each launch looks like a perfect run. The queue
    // order fits "A ran 200.. and B ran 100.." exactly as well as the truth.
    let w = Window::new()
        .launch(10, 1, 1, (10, 40), 3, 3)
        .launch(11, 2, 2, (12, 42), 3, 3)
        .written(10, 1, 1, 0, &B)
        .written(11, 2, 2, 0, &A)
        .launch(12, 1, 1, (50, 80), 3, 3)
        .launch(13, 2, 2, (52, 82), 3, 3)
        .written(12, 1, 1, 0, &B)
        .written(13, 2, 2, 0, &A);
    let mut knowledge = ExecKnowledge::with_confirmations(1);
    let out = w.verify(&mut knowledge);
    assert_eq!(out.summary.attributed, 0, "{}", out.summary);
    assert!(knowledge.is_empty());
}

#[test]
fn enter_order_is_not_taken_for_enqueue_order() {
    // A ENTERs first (10) but B (ENTER 11) appended first: the queue runs
    // B's packets, then A's. Both calls are open when the packets are
    // written, so either launch may be first: nothing may be learned.
    let w = Window::new()
        .launch(10, 1, 1, (10, 30), 0, 3)
        .launch(11, 2, 2, (11, 31), 6, 3)
        .written(11, 2, 2, 0, &concat(&B, &A));
    let mut knowledge = ExecKnowledge::with_confirmations(1);
    let out = w.verify(&mut knowledge);
    assert_eq!(out.summary.attributed, 0, "{}", out.summary);
    assert!(knowledge.is_empty());
}

#[test]
fn the_write_deadline_orders_launches_that_overlap() {
    // A's and B's calls overlap (10..50, 20..60), but the first run was
    // written inside a call that ended at 15, before B entered: it can only
    // be A's. Then B's is the second.
    let w = Window::new()
        .launch(10, 1, 1, (10, 50), 0, 3)
        .launch(11, 2, 2, (20, 60), 3, 3)
        .launch(12, 3, 3, (5, 15), 3, 3)
        .launch(13, 3, 3, (70, 90), 3, 3)
        .written(12, 3, 3, 0, &[300, 301, 302])
        .written(12, 3, 3, 3, &A) // not credited: thread 3 over-counts
        .written(11, 2, 2, 0, &B)
        .written(13, 3, 3, 0, &[300, 301, 302]);
    let mut w = w;
    w.launches[2].credited_dispatches = 6;
    // One launch of A: one sighting must do.
    let mut knowledge = ExecKnowledge::with_confirmations(1);
    let out = w.verify(&mut knowledge);
    assert_eq!(knowledge.sequence(id(1)).map(<[_]>::len), Some(3));
    for i in 3..6 {
        assert_eq!(
            out.verdicts[i],
            Verdict::Repaired {
                key: key(1, i as u32 - 3),
                correlation_id: Some(10)
            }
        );
    }
}

#[test]
fn identical_graphs_are_learned_but_an_ambiguous_run_gets_no_key() {
    // A and B run the same kernels; overlapping launches, B wrote both.
    let w = Window::new()
        .launch(10, 1, 1, (10, 40), 0, 3)
        .launch(11, 2, 2, (12, 42), 6, 3)
        .written(11, 2, 2, 0, &concat(&A, &A))
        .launch(12, 1, 1, (50, 80), 0, 3)
        .launch(13, 2, 2, (52, 82), 6, 3)
        .written(13, 2, 2, 0, &concat(&A, &A));
    let mut knowledge = ExecKnowledge::new();
    let out = w.verify(&mut knowledge);
    // Both execs run A: true, and harmless.
    assert_eq!(knowledge.sequence(id(1)), knowledge.sequence(id(2)));
    assert_eq!(out.summary.attributed, 0, "{}", out.summary);
}

#[test]
fn identical_graphs_separated_in_time_get_their_own_keys() {
    let w = Window::new()
        .launch(10, 1, 1, (10, 20), 0, 3)
        .launch(11, 2, 2, (30, 40), 6, 3)
        .written(11, 2, 2, 0, &concat(&A, &A))
        .launch(12, 1, 1, (50, 60), 0, 3)
        .launch(13, 2, 2, (70, 80), 6, 3)
        .written(13, 2, 2, 0, &concat(&A, &A));
    let mut knowledge = ExecKnowledge::new();
    let out = w.verify(&mut knowledge);
    assert_eq!(out.summary.attributed, 12, "{}", out.summary);
    for (i, v) in out.verdicts.iter().enumerate() {
        let exec = if i % 6 < 3 { 1 } else { 2 };
        assert_eq!(v.emitted_key(), Some(key(exec, (i % 3) as u32)));
    }
}

#[test]
fn an_ungraphed_kernel_on_the_queue_stops_the_queue_rules() {
    let mut w = separated();
    // A plain kernel written inside B's launch: slot claims B, 7 dispatches
    // where the SDK counts 6 for the queue's launches.
    w = w.written(13, 2, 2, 6, &[100]);
    w.launches[3].credited_dispatches = 7;
    let mut knowledge = ExecKnowledge::with_confirmations(1);
    let out = w.verify(&mut knowledge);
    assert!(knowledge.is_empty());
    assert_eq!(out.summary.attributed, 0, "{}", out.summary);
}

#[test]
fn a_copy_in_the_window_stops_the_queue_rules() {
    let mut w = separated();
    let mut copy = w.observations[0];
    copy.kind = DispatchKind::Copy;
    copy.external = 0;
    copy.queue_id = 0;
    w.observations.push(copy);
    let mut knowledge = ExecKnowledge::with_confirmations(1);
    w.verify(&mut knowledge);
    assert!(knowledge.is_empty());
}

#[test]
fn a_window_that_contradicts_trusted_knowledge_proves_nothing() {
    // A was trusted to run B's kernels; the queue order says otherwise, so
    // an assumption failed somewhere and nothing is concluded.
    let mut knowledge = ExecKnowledge::with_confirmations(1);
    let b: Vec<_> = separated().observations[3..6]
        .iter()
        .map(|o| o.node_signature())
        .collect();
    knowledge.record_sighting(id(1), &b, 1);
    let out = separated().verify(&mut knowledge);
    assert!(!knowledge.knows(id(2)));
    assert_eq!(out.summary.attributed, 0, "{}", out.summary);
}

#[test]
fn a_missing_launch_record_stops_the_queue_rules() {
    let mut w = separated();
    w.sdk.remove(2); // the SDK record of A's second launch was lost
    let mut knowledge = ExecKnowledge::with_confirmations(1);
    let out = w.verify(&mut knowledge);
    assert!(knowledge.is_empty());
    assert_eq!(out.summary.attributed, 0);
}

#[test]
fn equal_start_times_stop_the_queue_rules() {
    let mut w = separated();
    w.observations[4].start_ns = w.observations[3].start_ns;
    let mut knowledge = ExecKnowledge::with_confirmations(1);
    w.verify(&mut knowledge);
    assert!(knowledge.is_empty());
}
