//! Threads that take turns on a hardware queue (a training loop whose steps
//! run on fresh threads, each instantiating and launching the same graph)
//! are not contention: with the submission model vouched for
//! (`WindowEvidence::holder_writes_pending`), another thread's work on the
//! queue counts only if its call overlapped the launch's. Overlapping calls
//! are still refused.

mod common;

use common::{id, key, Window, QUEUE};
use graph_attribution::{
    DispatchKind, DispatchObservation, ExecHandle, ExecKnowledge, Ordinal, Verdict, VerifiedWindow,
};

/// The one graph both steps run.
const G: [u64; 4] = [100, 101, 102, 103];

/// A window with the submission model vouched for, as the tool builds it.
fn window() -> Window {
    Window {
        holder_writes_pending: true,
        ..Window::new()
    }
}

trait Steps {
    /// A hipGraphLaunch of `exec` by `thread` over `span` that wrote its
    /// own packets (`G`), the first starting at `first_start`, 10 ns apart;
    /// every step's exec sits at the same (reused) handle.
    fn own(self, corr: u64, exec: u32, thread: u64, span: (u64, u64), first_start: u64) -> Self;
}

impl Steps for Window {
    fn own(self, corr: u64, exec: u32, thread: u64, span: (u64, u64), first_start: u64) -> Self {
        let n = G.len() as u32;
        self.launch_at(ExecHandle(0x7e00_0000_1000), corr, exec, thread, span, n, n)
            .written_from(corr, thread, exec, 0, &G, first_start, 10)
    }
}

/// Step 0: thread 1 launches exec 1 three times; step 1: thread 2 launches
/// exec 2 (same graph, same handle) three times, after step 0's last call
/// returned. `restart_clock`: step 1's kernels start before step 0's last
/// ones, as when a simulator restarts the queue's clock for a new run
/// (the queue order is then not the append order; rule 6 refuses it).
fn two_steps(restart_clock: bool) -> Window {
    let mut w = window();
    for r in 0..3u64 {
        let enter = 10 + 20 * r;
        w = w.own(10 + r, 1, 1, (enter, enter + 10), 1_000 + 100 * r);
    }
    for r in 0..3u64 {
        let enter = 100 + 20 * r;
        let start = if restart_clock { 1_105 } else { 1_300 } + 100 * r;
        w = w.own(20 + r, 2, 2, (enter, enter + 10), start);
    }
    w
}

fn assert_each_step_has_its_own_keys(w: &Window, out: &VerifiedWindow) {
    for (o, v) in w.observations.iter().zip(&out.verdicts) {
        let exec = o.thread_id as u32;
        let ordinal = G.iter().position(|&s| s == o.signature).unwrap() as u32;
        assert_eq!(*v, Verdict::Vouched(key(exec, ordinal)), "{o:?}");
    }
}

#[test]
fn sequential_turns_by_two_threads_on_one_queue_are_learned_and_vouched() {
    for restart_clock in [false, true] {
        let w = two_steps(restart_clock);
        let mut knowledge = ExecKnowledge::new();
        let out = w.verify(&mut knowledge);
        assert_eq!(out.summary.execs_learned, 2, "{}", out.summary);
        assert_eq!(knowledge.sequence(id(1)).map(<[_]>::len), Some(4));
        assert_eq!(knowledge.sequence(id(2)).map(<[_]>::len), Some(4));
        assert_eq!(out.summary.vouched, 24, "{}", out.summary);
        assert_each_step_has_its_own_keys(&w, &out);
        // A later window of the same turns is vouched from what was learned.
        let out = w.verify(&mut knowledge);
        assert_each_step_has_its_own_keys(&w, &out);
    }
}

#[test]
fn turns_count_as_contention_without_the_submission_model() {
    let mut w = two_steps(true);
    w.holder_writes_pending = false;
    let mut knowledge = ExecKnowledge::new();
    let out = w.verify(&mut knowledge);
    assert!(knowledge.is_empty());
    assert_eq!(out.summary.attributed, 0, "{}", out.summary);
}

/// The same two threads and graphs, but their launch calls overlap pairwise
/// (each thread still wrote exactly its own packets, as far as the records
/// show).
fn overlapping() -> Window {
    let mut w = window();
    for r in 0..3u64 {
        let enter = 10 + 40 * r;
        w = w
            .own(10 + r, 1, 1, (enter, enter + 20), 1_000 + 100 * r)
            .own(20 + r, 2, 2, (enter + 10, enter + 30), 1_050 + 100 * r);
    }
    w
}

#[test]
fn overlapping_turns_are_still_refused() {
    let w = overlapping();
    let mut knowledge = ExecKnowledge::new();
    let out = w.verify(&mut knowledge);
    assert_eq!(out.summary.execs_learned, 0, "{}", out.summary);
    assert_eq!(out.summary.vouched, 0, "{}", out.summary);
    // Known from calmer windows, the overlap still stops vouching: each
    // instance may be the other thread's look-alike packets.
    let mut knowledge = ExecKnowledge::new();
    two_steps(false).verify(&mut knowledge);
    let out = w.verify(&mut knowledge);
    assert_eq!(out.summary.vouched, 0, "{}", out.summary);
    for (o, v) in w.observations.iter().zip(&out.verdicts) {
        if let Some(k) = v.emitted_key() {
            // Whatever is emitted names a node that runs this kernel.
            let ordinal = G.iter().position(|&s| s == o.signature).unwrap() as u32;
            assert_eq!(k.ordinal, Ordinal(ordinal), "{o:?}");
        }
    }
}

#[test]
fn touching_spans_count_as_overlapping() {
    // Thread 2's call enters exactly when thread 1's exits.
    let w = window()
        .own(10, 1, 1, (10, 20), 1_000)
        .own(11, 2, 2, (20, 30), 1_100)
        .own(12, 1, 1, (40, 50), 1_200)
        .own(13, 2, 2, (50, 60), 1_300);
    let mut knowledge = ExecKnowledge::new();
    let out = w.verify(&mut knowledge);
    assert_eq!(out.summary.execs_learned, 0, "{}", out.summary);
    assert_eq!(out.summary.vouched, 0, "{}", out.summary);
}

#[test]
fn a_perfect_exchange_between_overlapping_calls_teaches_nothing() {
    // Each thread wrote the other's packets inside its own call; the calls
    // overlap, as the submission model requires for such an exchange.
    const B: [u64; 4] = [200, 201, 202, 203];
    let mut w = window();
    for r in 0..2u64 {
        let enter = 10 + 40 * r;
        w = w
            .own(10 + r, 1, 1, (enter, enter + 20), 1_000 + 100 * r)
            .own(20 + r, 2, 2, (enter + 10, enter + 30), 1_050 + 100 * r);
    }
    // Thread 1 (exec A) wrote B's kernels, thread 2 (exec B) wrote A's.
    for o in &mut w.observations {
        if o.thread_id == 1 {
            o.signature = B[G.iter().position(|&s| s == o.signature).unwrap()];
        }
    }
    let mut knowledge = ExecKnowledge::with_confirmations(1);
    let out = w.verify(&mut knowledge);
    assert_eq!(out.summary.attributed, 0, "{}", out.summary);
    assert!(knowledge.is_empty());
}

#[test]
fn a_dispatch_whose_call_has_no_span_counts_whenever_it_ran() {
    let mut knowledge = ExecKnowledge::new();
    two_steps(false).verify(&mut knowledge);
    let mut w = two_steps(false);
    // Thread 2 wrote one of G's kernels, ungraphed, in a call with no span.
    w.observations.push(DispatchObservation {
        correlation_id: 99,
        external: 0,
        signature: G[1],
        kind: DispatchKind::Kernel,
        queue_id: QUEUE,
        thread_id: 2,
        start_ns: 5_000,
    });
    let out = w.verify(&mut knowledge);
    // Step 0's launches (thread 1) are exposed to it; step 1's are not
    // (same thread).
    for (o, v) in w.observations.iter().zip(&out.verdicts) {
        if o.thread_id == 1 {
            assert!(!matches!(v, Verdict::Vouched(_)), "{o:?}: {v:?}");
        }
    }
    assert_eq!(out.summary.vouched, 12, "{}", out.summary);
}

#[test]
fn a_launch_without_a_span_is_judged_as_before() {
    let mut w = two_steps(false);
    w.spans.retain(|s| s.correlation_id != 10);
    let mut knowledge = ExecKnowledge::new();
    let out = w.verify(&mut knowledge);
    // Launch 10 counts thread 2 as contention, and thread 2's launches
    // count launch 10's dispatches (written in a call with no span) as
    // contention. Exec 1's two other launches still agree: it alone is
    // learned.
    assert_eq!(out.summary.execs_learned, 1, "{}", out.summary);
    assert!(knowledge.knows(id(1)) && !knowledge.knows(id(2)));
    for (o, v) in w.observations.iter().zip(&out.verdicts) {
        if o.correlation_id == 10 || o.thread_id == 2 {
            assert!(!matches!(v, Verdict::Vouched(_)), "{o:?}: {v:?}");
        }
    }
}
