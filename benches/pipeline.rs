//! Records from SDK buffers to finished window frames: decode every raw
//! kernel-dispatch record, push it into a trace window, finalise the window
//! into columns, and verify its graph pairs - against copying the same
//! buffer bytes once, measured side by side. The ratio is what the backend
//! costs per record relative to the cheapest possible handling.
//!
//! Run: cargo bench --bench pipeline
use activity_store::{ActivityStore, StoreConfig};
use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use graph_attribution::{
    ExecHandle, ExecIdentity, LaunchCall, LaunchTracker, LaunchedExec, TrackerConfig,
};
use kineto_rocm::tool::decode::{decode, Decoded};
use kineto_rocm::tool::verification::Verification;
use rocprofiler_sys::*;
use std::mem::size_of;

const NODES: u64 = 32;
const LAUNCHES: u64 = 3125; // 100k dispatches

type Record = rocprofiler_buffer_tracing_kernel_dispatch_record_t;

/// A buffer as the SDK would deliver it after a 32-node graph replayed
/// LAUNCHES times, with the tracker's real answers in the external slots.
fn buffer(tracker: &LaunchTracker) -> Vec<u8> {
    let exec = LaunchedExec::Sdk {
        graph_exec_id: 1,
        handle: ExecHandle(0x1000),
    };
    tracker.exec_created(exec);
    let mut bytes = Vec::with_capacity((NODES * LAUNCHES) as usize * size_of::<Record>());
    let mut t = 1_000;
    for launch in 0..LAUNCHES {
        let correlation = launch + 1;
        tracker.enter_launch(
            exec,
            LaunchCall {
                correlation_id: correlation,
                thread_id: 7,
            },
        );
        for node in 0..NODES {
            let record = Record {
                size: size_of::<Record>() as u64,
                kind: rocprofiler_buffer_tracing_kind_t::KERNEL_DISPATCH,
                operation: rocprofiler_kernel_dispatch_operation_t::COMPLETE,
                correlation_id: rocprofiler_async_correlation_id_t {
                    internal: correlation,
                    external: rocprofiler_user_data_t::from_value(tracker.external_for_dispatch()),
                },
                thread_id: 7,
                start_timestamp: t,
                end_timestamp: t + 900,
                dispatch_info: rocprofiler_kernel_dispatch_info_t {
                    kernel_id: 100 + node,
                    dispatch_id: launch * NODES + node,
                    ..Default::default()
                },
            };
            t += 1_000;
            // SAFETY: Record is a plain #[repr(C)] struct; its bytes are defined.
            bytes.extend_from_slice(unsafe {
                std::slice::from_raw_parts(
                    &record as *const Record as *const u8,
                    size_of::<Record>(),
                )
            });
        }
        tracker.exit_launch(exec);
    }
    bytes
}

fn pipeline(c: &mut Criterion) {
    let tracker = LaunchTracker::new(TrackerConfig::new(ExecIdentity::SdkGraphDomain));
    let bytes = buffer(&tracker);
    let launches = tracker.drain_launches();
    let records = NODES * LAUNCHES;
    let tracing = rocprofiler_buffer_category_t::TRACING.0;
    let kind = rocprofiler_buffer_tracing_kind_t::KERNEL_DISPATCH.0;
    let mut group = c.benchmark_group("100k_kernel_records");
    group.throughput(Throughput::Elements(records));
    group.sample_size(10);
    group.bench_function("copy_buffer_once", |b| b.iter(|| black_box(bytes.clone())));
    group.bench_function("decode_window_finalise_verify", |b| {
        b.iter(|| {
            let store = ActivityStore::new(StoreConfig::default());
            let window = store.open_window(1).unwrap();
            for record in bytes.chunks_exact(size_of::<Record>()) {
                if let Ok(Decoded::Kernel(kernel)) = decode(tracing, kind, record) {
                    store.push_kernel(kernel);
                }
            }
            store.close_window(window, u64::MAX).unwrap();
            let mut finished = store.finalise(window).unwrap();
            let verification = Verification::default();
            let replay = LaunchTracker::new(TrackerConfig::new(ExecIdentity::SdkGraphDomain));
            black_box(verification.verify_with_launches(&replay, &mut finished, launches.clone()));
            black_box(finished.kernels.len())
        })
    });
    group.finish();
}

criterion_group!(benches, pipeline);
criterion_main!(benches);
