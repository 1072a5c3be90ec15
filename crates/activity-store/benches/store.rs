//! What staging and finalising a million records costs, next to the floor:
//! plainly copying the same records into a `Vec`.
//!
//! Run: `cargo bench -p activity-store --bench store`
//! (set `CARGO_TARGET_DIR` as usual). Criterion reports each case; the
//! closing lines time the store and the plain copy alternately in the same
//! process and print their ratio.

use std::hint::black_box;
use std::time::{Duration, Instant};

use activity_store::{
    ActivityStore, AgentId, ExternalDomain, KernelDispatch, StoreConfig, WindowId,
};
use criterion::{criterion_group, BatchSize, Criterion, Throughput};

const RECORDS: usize = 1_000_000;
/// Records per push: about what one SDK buffer callback delivers.
const BATCH: usize = 1_024;

fn records() -> Vec<KernelDispatch> {
    (0..RECORDS as u64)
        .map(|i| {
            // Mostly increasing starts with jitter, as several queues
            // interleave in one buffer.
            let jitter = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58;
            KernelDispatch {
                agent: AgentId(1 + i % 2),
                queue: i % 4,
                correlation_id: 1 + i / 4,
                external_slot: 0,
                thread_id: 7,
                kernel_id: i % 64,
                dispatch_id: i,
                grid: [1024, 1, 1],
                workgroup: [256, 1, 1],
                lds_bytes: 0,
                scratch_bytes: 0,
                start_ns: 1_000 + i * 10 + jitter,
                end_ns: 1_000 + i * 10 + jitter + 5,
            }
        })
        .collect()
}

fn store_with_open_window() -> ActivityStore {
    store_and_window().0
}

fn store_with_shards(staging_shards: usize) -> ActivityStore {
    let store = ActivityStore::new(StoreConfig {
        max_records_per_window: usize::MAX,
        staging_shards,
        ..StoreConfig::default()
    });
    store.open_window(0).expect("first window");
    store
}

/// `threads` producers each push their share of `records` in batches, as
/// the SDK's buffer thread and application threads do together.
fn push_threaded(store: &ActivityStore, records: &[KernelDispatch], threads: usize) {
    let share = records.len().div_ceil(threads);
    std::thread::scope(|scope| {
        for part in records.chunks(share) {
            scope.spawn(move || push_batched(store, part));
        }
    });
}

fn store_and_window() -> (ActivityStore, WindowId) {
    let store = ActivityStore::new(StoreConfig {
        max_records_per_window: usize::MAX,
        ..StoreConfig::default()
    });
    let id = store.open_window(0).expect("first window");
    (store, id)
}

fn push_batched(store: &ActivityStore, records: &[KernelDispatch]) {
    for batch in records.chunks(BATCH) {
        store.push_kernels(batch);
    }
}

fn copy_batched(records: &[KernelDispatch]) -> Vec<KernelDispatch> {
    let mut out = Vec::new();
    for batch in records.chunks(BATCH) {
        out.extend_from_slice(batch);
    }
    out
}

/// A store holding a closed window of `records`, with a stream and an
/// external id recorded for every correlation id, ready to finalise.
fn closed_window(records: &[KernelDispatch], linked: bool) -> (ActivityStore, WindowId) {
    let (store, id) = store_and_window();
    if linked {
        store.push_external(ExternalDomain::Default, 99);
        for correlation in 1..=(RECORDS as u64 / 4) {
            store.capture_for_api_call(correlation);
            store.record_stream(correlation, correlation % 8);
        }
        store.pop_external(ExternalDomain::Default);
    }
    push_batched(&store, records);
    store.close_window(id, u64::MAX).expect("open window");
    (store, id)
}

fn push_throughput(c: &mut Criterion) {
    let records = records();
    let mut group = c.benchmark_group("push_1M_kernels");
    group.throughput(Throughput::Elements(RECORDS as u64));
    group.sample_size(20);
    group.bench_function("vec_copy_batched_baseline", |b| {
        b.iter(|| black_box(copy_batched(black_box(&records))))
    });
    group.bench_function("store_push_batched", |b| {
        b.iter_batched(
            store_with_open_window,
            |store| {
                push_batched(&store, black_box(&records));
                store
            },
            BatchSize::PerIteration,
        )
    });
    for (threads, shards) in [(4, 8), (4, 1)] {
        group.bench_function(
            format!("store_push_batched_{threads}_threads_{shards}_shards"),
            |b| {
                b.iter_batched(
                    || store_with_shards(shards),
                    |store| {
                        push_threaded(&store, black_box(&records), threads);
                        store
                    },
                    BatchSize::PerIteration,
                )
            },
        );
    }
    group.bench_function("vec_push_single_baseline", |b| {
        b.iter(|| {
            let mut out = Vec::new();
            for record in black_box(&records) {
                out.push(*record);
            }
            black_box(out)
        })
    });
    group.bench_function("store_push_single", |b| {
        b.iter_batched(
            store_with_open_window,
            |store| {
                for record in black_box(&records) {
                    store.push_kernel(*record);
                }
                store
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

fn finalise_cost(c: &mut Criterion) {
    let records = records();
    let mut group = c.benchmark_group("finalise_1M_kernels");
    group.throughput(Throughput::Elements(RECORDS as u64));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    for linked in [false, true] {
        let name = if linked {
            "with_stream_and_external_links"
        } else {
            "no_links"
        };
        group.bench_function(name, |b| {
            b.iter_batched(
                || closed_window(&records, linked),
                |(store, id)| {
                    let out = store.finalise(id).expect("closed window");
                    assert_eq!(out.kernels.len(), RECORDS);
                    (store, out)
                },
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();
}

/// Times the batched store push and the plain copy alternately and prints
/// the median of each and their ratio.
fn side_by_side_ratio() {
    let records = records();
    let rounds = 15;
    let mut store_times = Vec::with_capacity(rounds);
    let mut copy_times = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let store = store_with_open_window();
        let started = Instant::now();
        push_batched(&store, black_box(&records));
        store_times.push(started.elapsed());
        drop(black_box(store));

        let started = Instant::now();
        let copied = copy_batched(black_box(&records));
        copy_times.push(started.elapsed());
        drop(black_box(copied));
    }
    store_times.sort();
    copy_times.sort();
    let store_median = store_times[rounds / 2];
    let copy_median = copy_times[rounds / 2];
    let rate = |d: Duration| RECORDS as f64 / d.as_secs_f64() / 1e6;
    println!(
        "side by side, 1M kernel records in batches of {BATCH}: store push {:?} ({:.0} M records/s), \
         plain Vec copy {:?} ({:.0} M records/s), store/copy time ratio {:.2}",
        store_median,
        rate(store_median),
        copy_median,
        rate(copy_median),
        store_median.as_secs_f64() / copy_median.as_secs_f64()
    );
}

criterion_group!(benches, push_throughput, finalise_cost);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    side_by_side_ratio();
}
