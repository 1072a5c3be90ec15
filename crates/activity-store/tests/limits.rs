//! The per-window record limit: beyond it, drop and count, never crash.

mod common;

use std::sync::Arc;
use std::thread;

use activity_store::{ActivityStore, StoreConfig};
use common::{api_call, copy, kernel};

fn store_with_limit(max_records_per_window: usize) -> ActivityStore {
    ActivityStore::new(StoreConfig {
        max_records_per_window,
        ..StoreConfig::default()
    })
}

#[test]
fn records_past_the_limit_are_dropped_and_counted_across_kinds() {
    let store = store_with_limit(5);
    let w = store.open_window(0).unwrap();
    store.push_kernels(&[kernel(1, 1), kernel(2, 2), kernel(3, 3)]);
    // A batch that only partly fits: the first record is taken.
    store.push_copies(&[copy(4, 4), copy(5, 5), copy(6, 6)]);
    store.push_api_call(api_call(7, 7));
    store.close_window(w, 100).unwrap();
    let out = store.finalise(w).unwrap();
    assert_eq!(out.kernels.len(), 3);
    assert_eq!(out.copies.len(), 2);
    assert_eq!(out.api_calls.len(), 0);
    assert_eq!(out.stats.over_limit, 2);
    assert_eq!(store.drop_counts().over_limit, 2);
}

#[test]
fn the_limit_is_per_window() {
    let store = store_with_limit(2);
    let a = store.open_window(0).unwrap();
    store.push_kernels(&[kernel(1, 1), kernel(2, 2), kernel(3, 3)]);
    store.close_window(a, 10).unwrap();
    let b = store.open_window(20).unwrap();
    store.push_kernels(&[kernel(4, 21), kernel(5, 22)]);
    store.close_window(b, 30).unwrap();
    assert_eq!(store.finalise(a).unwrap().kernels.len(), 2);
    let out_b = store.finalise(b).unwrap();
    assert_eq!(out_b.kernels.len(), 2);
    assert_eq!(out_b.stats.over_limit, 0);
    assert_eq!(store.drop_counts().over_limit, 1);
}

#[test]
fn concurrent_pushers_never_take_more_than_the_limit() {
    let limit = 10_000;
    let store = Arc::new(store_with_limit(limit));
    let w = store.open_window(0).unwrap();
    let threads = 4;
    let per_thread = 7_000u64;
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let store = Arc::clone(&store);
            thread::spawn(move || {
                for chunk in 0..per_thread / 100 {
                    let batch: Vec<_> = (0..100)
                        .map(|i| kernel(t * 1_000_000 + chunk * 100 + i, 1 + i))
                        .collect();
                    store.push_kernels(&batch);
                }
            })
        })
        .collect();
    for handle in handles {
        handle.join().unwrap();
    }
    store.close_window(w, 1_000).unwrap();
    let out = store.finalise(w).unwrap();
    assert_eq!(out.kernels.len(), limit);
    assert_eq!(
        store.drop_counts().over_limit,
        threads * per_thread - limit as u64
    );
}

#[test]
fn the_limit_can_change_while_collecting() {
    let store = ActivityStore::new(StoreConfig {
        max_records_per_window: 10,
        ..StoreConfig::default()
    });
    let window = store.open_window(0).unwrap();
    store.set_max_records_per_window(2);
    assert_eq!(store.config().max_records_per_window, 2);
    for start in 1..=5 {
        store.push_kernel(kernel(start, start));
    }
    store.close_window(window, 100).unwrap();
    let window = store.finalise(window).unwrap();
    assert_eq!(window.kernels.len(), 2);
    assert_eq!(store.drop_counts().over_limit, 3);
}
