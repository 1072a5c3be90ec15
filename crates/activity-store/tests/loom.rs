//! A Loom model of the store's two cross-thread protocols, run on the real
//! store code with Loom's locks, condvar and atomics swapped in
//! (`src/sync.rs`):
//!
//! - the completeness ledger: `issue`/`retire` on the SDK's thread while the
//!   profiler's thread waits in `wait_until_retired`; the waiter never
//!   misses a retirement (a lost wake-up is a waiter Loom finds asleep with
//!   nobody left to wake it) and says Complete exactly when every id issued
//!   in its window has retired;
//! - a push racing `finalise`: each record is handed out or counted as
//!   dropped, never both, never neither.
//!
//! Time: Loom's `wait_timeout` never times out, so the store's clock stands
//! still under `--cfg loom` and moves only when a model thread calls
//! `pass_model_time`, which also wakes the waiters (a timed wait cannot miss
//! its own timeout). The model threads explore every place that step can
//! fall.
//!
//! Not modelled: the `DashMap` of correlation links is opaque to Loom, so
//! each call on it is one indivisible step between the modelled
//! ones; staging runs with one shard (the shard is picked by a thread-local,
//! which Loom's threads would share); the external id stacks are not used.
//!
//! Run with
//! `RUSTFLAGS="--cfg loom" cargo test -p activity-store --release --test loom`;
//! `LOOM_MAX_PREEMPTIONS` bounds the search (3 unless set).
#![cfg(loom)]

mod common;

use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::time::Duration;

use activity_store::{ActivityStore, Completeness, StoreConfig};
use loom::sync::atomic::AtomicUsize;
use loom::sync::Arc;
use loom::thread;

const FLUSH_INTERVAL: Duration = Duration::from_millis(10);

fn model(test: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(3);
    }
    builder.check(test);
}

fn store() -> Arc<ActivityStore> {
    Arc::new(ActivityStore::new(StoreConfig {
        staging_shards: 1,
        flush_interval: FLUSH_INTERVAL,
        ..StoreConfig::default()
    }))
}

/// No time passes, so only a retirement can wake the waiter: if any wake-up
/// were lost, Loom would find the waiter blocked for ever and fail.
#[test]
fn the_waiter_wakes_on_every_retirement_and_sees_the_window_complete() {
    model(|| {
        let store = store();
        let w = store.open_window(0).unwrap();
        store.issue(1, 10);
        store.issue(3, 30);
        store.close_window(w, 100).unwrap();

        let sdk = {
            let store = store.clone();
            thread::spawn(move || {
                // Launched before the stop, issued after the wait began.
                store.issue(2, 20);
                store.retire(1);
                store.retire(2);
            })
        };

        let mut flushes = 0;
        let completeness = store
            .wait_until_retired(
                w,
                ActivityStore::model_epoch() + Duration::from_secs(1),
                || {
                    flushes += 1;
                    // The flush delivers id 3's retirement on the waiting
                    // thread itself: it must run with no store lock held.
                    if flushes == 1 {
                        store.retire(3);
                    }
                },
            )
            .unwrap();
        assert_eq!(completeness, Completeness::Complete);
        // Nothing more is issued, so what was 0 at the return stays 0.
        assert_eq!(store.outstanding(w), 0);
        // Woken by retirements, not by a flush timer.
        assert_eq!(flushes, 1);
        sdk.join().unwrap();
        assert_eq!(
            store.finalise(w).unwrap().completeness,
            Completeness::Complete
        );
    });
}

/// Retirements race the flush timer and the deadline: the waiter returns
/// Complete only with nothing outstanding, Incomplete only once the
/// deadline has passed, and counts what was outstanding at that moment.
#[test]
fn the_deadline_gives_incomplete_with_what_was_outstanding() {
    static SEEN: [AtomicBool; 3] = [
        AtomicBool::new(false),
        AtomicBool::new(false),
        AtomicBool::new(false),
    ];
    model(|| {
        let store = store();
        let w = store.open_window(0).unwrap();
        store.issue(1, 10);
        store.issue(2, 20);
        store.close_window(w, 100).unwrap();
        // Deadline half way between the first flush tick and the second.
        let deadline = ActivityStore::model_epoch() + FLUSH_INTERVAL + FLUSH_INTERVAL / 2;

        let sdk = {
            let store = store.clone();
            thread::spawn(move || {
                store.retire(1);
                store.retire(2);
            })
        };
        let ticks = Arc::new(AtomicUsize::new(0));
        let timer = {
            let (store, ticks) = (store.clone(), ticks.clone());
            thread::spawn(move || {
                for _ in 0..2 {
                    ticks.fetch_add(1, SeqCst);
                    store.pass_model_time(FLUSH_INTERVAL);
                }
            })
        };

        let mut flushes = 0;
        let completeness = store
            .wait_until_retired(w, deadline, || flushes += 1)
            .unwrap();
        let outstanding_now = store.outstanding(w);
        match completeness {
            Completeness::Complete => assert_eq!(outstanding_now, 0),
            Completeness::Incomplete { outstanding, .. } => {
                // Retirements only shrink the count after the return.
                assert!(outstanding >= 1 && outstanding >= outstanding_now);
                // The clock had passed the deadline: both ticks were taken.
                assert_eq!(ticks.load(SeqCst), 2);
            }
        }
        // None if it could return at once, else a first flush and at most
        // one more per flush tick before the deadline.
        assert!(flushes <= 2, "{flushes} flushes");
        SEEN[completeness.outstanding()].store(true, SeqCst);
        sdk.join().unwrap();
        timer.join().unwrap();
    });
    // The model reached each outcome: complete, and short by one and by two.
    for (outstanding, seen) in SEEN.iter().enumerate() {
        assert!(
            seen.load(SeqCst),
            "no run ended with {outstanding} outstanding"
        );
    }
}

/// A buffer of records for a closed window is pushed while the window is
/// finalised: every record ends up handed out or counted as dropped, once.
#[test]
fn a_push_racing_finalise_hands_out_or_counts_each_record_once() {
    static SEEN_HANDED: AtomicBool = AtomicBool::new(false);
    static SEEN_LATE: AtomicBool = AtomicBool::new(false);
    model(|| {
        let store = store();
        let w = store.open_window(0).unwrap();
        store.issue(7, 10); // a launch whose kernel runs after the stop
        store.close_window(w, 100).unwrap();

        let sdk = {
            let store = store.clone();
            thread::spawn(move || {
                store.push_api_calls(&[common::api_call(1, 40), common::api_call(2, 50)]);
                store.push_kernel(common::kernel(7, 150));
                store.retire(7);
            })
        };
        let out = store.finalise(w).unwrap();
        sdk.join().unwrap();

        let drops = store.drop_counts();
        let api_calls = out.api_calls.correlation_id();
        let kernels = out.kernels.correlation_id();
        // Never both, never neither: three records, each in one place.
        assert_eq!(
            api_calls.len() as u64 + kernels.len() as u64 + drops.total(),
            3
        );
        assert!(api_calls.iter().all(|&id| id == 1 || id == 2));
        assert!(kernels.iter().all(|&id| id == 7));
        // A batch is staged under one table read lock: all or nothing.
        assert!(api_calls.len() == 2 || api_calls.is_empty());
        // Host records started inside the window, and the kernel of a call
        // issued in it (it started after the stop, but the window's range of
        // correlation ids names it): late, not outside every window.
        assert_eq!(
            drops.after_finalise,
            (2 - api_calls.len() as u64) + (1 - kernels.len() as u64)
        );
        assert_eq!(drops.outside_windows, 0);
        // Complete means every launch retired before the window was taken
        // out, so its records were all staged in time.
        if out.completeness.is_complete() {
            assert_eq!(kernels, &[7], "complete, yet the kernel was dropped");
        }
        if api_calls.len() == 2 {
            SEEN_HANDED.store(true, SeqCst);
        } else {
            SEEN_LATE.store(true, SeqCst);
        }
    });
    assert!(SEEN_HANDED.load(SeqCst) && SEEN_LATE.load(SeqCst));
}

/// A link recorded while its window is closed and finalised (the HIP_STREAM
/// callback read the open window just before the close): finalise has
/// forgotten it, or the recorder sees the window gone and takes it back, so
/// nothing of the window stays once it is finalised.
#[test]
fn a_link_recorded_racing_finalise_does_not_outlive_its_window() {
    model(|| {
        let store = store();
        let window = store.open_window(0).unwrap();
        let recorder = {
            let store = store.clone();
            thread::spawn(move || store.record_stream(7, 1))
        };
        store.close_window(window, 100).unwrap();
        store.finalise(window).unwrap();
        recorder.join().unwrap();
        assert_eq!(store.resident_correlations(), 0);
    });
}
