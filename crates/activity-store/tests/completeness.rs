//! Waiting for retirement instead of hoping, and saying how short it fell.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use activity_store::{ActivityStore, Completeness, StoreConfig, WindowError};
use common::kernel;

fn slow_flush_store() -> ActivityStore {
    // A flush interval far longer than any test: a waiter that returns
    // quickly was woken by a retirement, not by re-flushing.
    ActivityStore::new(StoreConfig {
        flush_interval: Duration::from_secs(60),
        ..StoreConfig::default()
    })
}

#[test]
fn a_window_whose_ids_all_retired_is_complete_without_flushing() {
    let store = ActivityStore::default();
    let w = store.open_window(0).unwrap();
    store.issue(1, 10);
    store.issue(2, 20);
    store.retire(1);
    store.retire(2);
    store.close_window(w, 100).unwrap();
    let mut flushes = 0;
    let completeness = store
        .wait_until_retired(w, Instant::now() + Duration::from_secs(5), || flushes += 1)
        .unwrap();
    assert_eq!(completeness, Completeness::Complete);
    assert_eq!(flushes, 0);
    assert_eq!(
        store.finalise(w).unwrap().completeness,
        Completeness::Complete
    );
}

#[test]
fn the_deadline_returns_incomplete_with_the_exact_outstanding_count() {
    let store = ActivityStore::new(StoreConfig {
        flush_interval: Duration::from_millis(5),
        ..StoreConfig::default()
    });
    let w = store.open_window(0).unwrap();
    for id in 1..=5 {
        store.issue(id, id * 10);
    }
    store.retire(2);
    store.retire(4);
    store.issue(99, 5_000); // after the stop: not this window's
    store.close_window(w, 100).unwrap();
    let started = Instant::now();
    let mut flushes = 0;
    let completeness = store
        .wait_until_retired(w, started + Duration::from_millis(60), || flushes += 1)
        .unwrap();
    assert_eq!(
        completeness,
        Completeness::Incomplete {
            outstanding: 3,
            unplaced: 0
        }
    );
    assert!(started.elapsed() >= Duration::from_millis(60));
    // Flushed again while waiting, not just once.
    assert!(flushes >= 2, "flushed {flushes} times");
    let out = store.finalise(w).unwrap();
    assert_eq!(out.completeness.outstanding(), 3);
    assert_eq!(out.stats.completeness, out.completeness);
    assert!(out
        .stats
        .to_string()
        .contains("3 correlation ids outstanding"));
    // The abandoned ids are forgotten; a late retirement is harmless.
    store.retire(1);
    assert_eq!(store.resident_correlations(), 0);
}

#[test]
fn a_retirement_from_another_thread_wakes_the_waiter() {
    let store = Arc::new(slow_flush_store());
    let w = store.open_window(0).unwrap();
    store.issue(1, 10);
    store.issue(2, 20);
    store.close_window(w, 100).unwrap();
    let retirer = {
        let store = Arc::clone(&store);
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(30));
            store.retire(1);
            thread::sleep(Duration::from_millis(30));
            store.retire(2);
        })
    };
    let started = Instant::now();
    let completeness = store
        .wait_until_retired(w, started + Duration::from_secs(30), || {})
        .unwrap();
    let waited = started.elapsed();
    retirer.join().unwrap();
    assert_eq!(completeness, Completeness::Complete);
    assert!(waited >= Duration::from_millis(60), "waited {waited:?}");
    assert!(waited < Duration::from_secs(10), "waited {waited:?}");
}

#[test]
fn retirements_delivered_by_the_flush_itself_complete_the_window() {
    // The SDK may run the buffer callback on the flushing thread: the
    // callback must be able to call retire without deadlocking.
    let store = slow_flush_store();
    let w = store.open_window(0).unwrap();
    store.issue(1, 10);
    store.close_window(w, 100).unwrap();
    store.push_kernel(kernel(1, 50));
    let completeness = store
        .wait_until_retired(w, Instant::now() + Duration::from_secs(30), || {
            store.retire(1)
        })
        .unwrap();
    assert_eq!(completeness, Completeness::Complete);
}

#[test]
fn ids_issued_outside_every_window_are_not_waited_for() {
    let store = ActivityStore::default();
    store.issue(1, 5);
    let w = store.open_window(10).unwrap();
    store.issue(2, 9); // before the start
    store.close_window(w, 20).unwrap();
    store.issue(3, 21); // after the stop
    assert_eq!(store.outstanding(w), 0);
    assert_eq!(store.resident_correlations(), 0);
    let completeness = store.wait_until_retired(w, Instant::now(), || {}).unwrap();
    assert!(completeness.is_complete());
}

#[test]
fn waiting_needs_a_closed_pending_window() {
    let store = ActivityStore::default();
    let w = store.open_window(0).unwrap();
    let deadline = Instant::now();
    assert_eq!(
        store.wait_until_retired(w, deadline, || {}),
        Err(WindowError::NotClosed(w))
    );
    store.close_window(w, 1).unwrap();
    store.finalise(w).unwrap();
    assert_eq!(
        store.wait_until_retired(w, deadline, || {}),
        Err(WindowError::AlreadyFinalised(w))
    );
}

#[test]
fn many_retirers_and_a_waiter_agree_on_completion() {
    let store = Arc::new(ActivityStore::new(StoreConfig {
        flush_interval: Duration::from_millis(1),
        ..StoreConfig::default()
    }));
    let w = store.open_window(0).unwrap();
    let ids = 20_000u64;
    for id in 1..=ids {
        store.issue(id, id);
    }
    store.close_window(w, ids).unwrap();
    let flushes = Arc::new(AtomicUsize::new(0));
    let retirers: Vec<_> = (0..4u64)
        .map(|t| {
            let store = Arc::clone(&store);
            thread::spawn(move || {
                for id in (1..=ids).filter(|id| id % 4 == t) {
                    store.retire(id);
                }
            })
        })
        .collect();
    let completeness = store
        .wait_until_retired(w, Instant::now() + Duration::from_secs(60), || {
            flushes.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
    for retirer in retirers {
        retirer.join().unwrap();
    }
    assert_eq!(completeness, Completeness::Complete);
    assert_eq!(store.outstanding(w), 0);
}
