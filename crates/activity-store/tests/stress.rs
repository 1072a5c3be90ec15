//! Several producer threads and a closer, many windows: every record is
//! accounted for exactly once, in its window or in one drop counter. The
//! batches come from KINETO_ROCM_STRESS_SEED (decimal or 0x-hex; the
//! default is printed, so is the seed of every run).

mod common;

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;

use activity_store::{ActivityStore, ExternalDomain, StoreConfig};
use common::{copy, kernel};

const PERIOD: u64 = 1_000;
const WINDOW_START: u64 = 100;
const WINDOW_STOP: u64 = 900;

/// Window `k` takes starts in [k*PERIOD + 100, k*PERIOD + 900].
fn in_window(start_ns: u64) -> bool {
    (WINDOW_START..=WINDOW_STOP).contains(&(start_ns % PERIOD))
}

const DEFAULT_SEED: u64 = 0x9E37_79B9;

fn base_seed() -> u64 {
    let seed = std::env::var("KINETO_ROCM_STRESS_SEED").map_or(DEFAULT_SEED, |s| {
        let s = s.trim();
        match s.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16),
            None => s.parse(),
        }
        .unwrap_or_else(|_| panic!("KINETO_ROCM_STRESS_SEED: not a seed: {s}"))
    });
    eprintln!("KINETO_ROCM_STRESS_SEED={seed:#x} (default {DEFAULT_SEED:#x})");
    seed
}

/// A cheap deterministic generator, so a failure can be replayed.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[derive(Default)]
struct Pushed {
    in_window: u64,
    outside: u64,
}

/// Producers push records for window `k` in random batches (kernels and
/// copies, start times across the whole period, so some fall before the
/// start or after the stop); the closer closes the window while they push.
/// With `race_finalise`, the closer finalises without waiting for the
/// producers, so some records arrive late.
fn run(race_finalise: bool, windows: u64, producers: u64) {
    let seed = base_seed();
    let store = Arc::new(ActivityStore::new(StoreConfig {
        staging_shards: 4,
        ..StoreConfig::default()
    }));
    let mut total = Pushed::default();
    let mut finalised_rows = 0u64;
    let mut seen = HashSet::new();
    for k in 0..windows {
        let base = k * PERIOD;
        let id = store.open_window(base + WINDOW_START).unwrap();
        let start_line = Arc::new(Barrier::new(producers as usize + 1));
        let closed = Arc::new(AtomicBool::new(false));
        let handles: Vec<_> = (0..producers)
            .map(|p| {
                let store = Arc::clone(&store);
                let start_line = Arc::clone(&start_line);
                let closed = Arc::clone(&closed);
                thread::spawn(move || {
                    // xorshift never leaves 0.
                    let mut rng = XorShift((seed ^ (k << 8) ^ p ^ 1).max(1));
                    let mut pushed = Pushed::default();
                    let mut serial = 0u64;
                    start_line.wait();
                    for round in 0..40 {
                        let batch = 1 + rng.next() % 64;
                        let records: Vec<_> = (0..batch)
                            .map(|_| {
                                serial += 1;
                                // Unique correlation per record: window, producer, serial.
                                let correlation = (k << 40) | (p << 32) | serial;
                                let start = base + rng.next() % PERIOD;
                                if in_window(start) {
                                    pushed.in_window += 1;
                                } else {
                                    pushed.outside += 1;
                                }
                                (correlation, start)
                            })
                            .collect();
                        store.push_external(ExternalDomain::Default, serial);
                        store.capture_for_api_call(records[0].0);
                        store.pop_external(ExternalDomain::Default);
                        if round % 2 == 0 {
                            let kernels: Vec<_> =
                                records.iter().map(|&(c, s)| kernel(c, s)).collect();
                            store.push_kernels(&kernels);
                        } else {
                            for &(c, s) in &records {
                                store.push_copy(copy(c, s));
                            }
                        }
                        if closed.load(Ordering::Relaxed) && round > 30 {
                            thread::yield_now();
                        }
                    }
                    pushed
                })
            })
            .collect();
        start_line.wait();
        thread::yield_now();
        store.close_window(id, base + WINDOW_STOP).unwrap();
        closed.store(true, Ordering::Relaxed);

        let collect = |handles: Vec<thread::JoinHandle<Pushed>>, total: &mut Pushed| {
            for handle in handles {
                let pushed = handle.join().unwrap();
                total.in_window += pushed.in_window;
                total.outside += pushed.outside;
            }
        };
        let out = if race_finalise {
            let out = store.finalise(id).unwrap();
            collect(handles, &mut total);
            out
        } else {
            let before = total.in_window;
            collect(handles, &mut total);
            let out = store.finalise(id).unwrap();
            // Every producer finished before finalise: the window holds
            // exactly the records whose start it contains.
            assert_eq!(
                (out.kernels.len() + out.copies.len()) as u64,
                total.in_window - before,
                "window {k}"
            );
            out
        };
        for row in out.kernels.rows() {
            assert!(in_window(row.start_ns) && row.start_ns / PERIOD == k);
            assert!(
                seen.insert(row.correlation_id),
                "duplicate {}",
                row.correlation_id
            );
        }
        for row in out.copies.rows() {
            assert!(in_window(row.start_ns) && row.start_ns / PERIOD == k);
            assert!(
                seen.insert(row.correlation_id),
                "duplicate {}",
                row.correlation_id
            );
        }
        finalised_rows += (out.kernels.len() + out.copies.len()) as u64;
        assert_eq!(store.resident_rows(), 0);
    }
    let drops = store.drop_counts();
    eprintln!("race_finalise={race_finalise}: {finalised_rows} rows handed out; {drops}");
    assert_eq!(drops.outside_windows, total.outside);
    assert_eq!(finalised_rows + drops.after_finalise, total.in_window);
    assert_eq!(drops.over_limit + drops.malformed, 0);
    if !race_finalise {
        assert_eq!(drops.after_finalise, 0);
    }
    assert_eq!(store.resident_correlations(), 0);
    assert!(
        finalised_rows > 0 && total.outside > 0,
        "records both in and outside the windows"
    );
}

#[test]
fn producers_and_a_closer_account_for_every_record() {
    run(false, 60, 4);
}

#[test]
fn finalising_while_producers_still_push_loses_nothing_uncounted() {
    run(true, 60, 4);
}
