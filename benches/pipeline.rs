//! Records from SDK buffers to finished window frames: decode every raw
//! kernel-dispatch record, push it into a trace window, finalise the window
//! into columns, and attribute its graph keys from evidence - against
//! copying the same buffer bytes once, measured side by side. The ratio is
//! what the backend costs per record relative to the cheapest possible
//! handling; the stages alone (decode; decode, window, finalise) show
//! where the rest goes, and decoding then writing a kernel frame's bytes
//! with nothing else shows the floor its 48-byte rows set.
//!
//! Run: cargo bench --bench pipeline
use activity_store::{
    ActivityStore, FastMap, KernelBatch, KernelDispatch, KernelFrame, StoreConfig,
};
use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use graph_attribution::{
    attribute_window, AttributionId, Call, CallWork, ExecHandle, GraphHandle, GraphStructure,
    HostKernel, NodeHandle, NodeWork, ObservedTable, SessionMemory, WindowEvidence,
};
use kineto_rocm::tool::sdk::decode::{decode_into, Records};
use kineto_rocm::tool::{kernel_observations, KERNELS_PER_PUSH};
use rocprofiler_sys::*;
use std::collections::HashMap;
use std::mem::size_of;

const NODES: u64 = 32;
const LAUNCHES: u64 = 3125; // 100k dispatches
const GRID: rocprofiler_dim3_t = rocprofiler_dim3_t {
    x: 65536,
    y: 1,
    z: 1,
};
const BLOCK: rocprofiler_dim3_t = rocprofiler_dim3_t { x: 256, y: 1, z: 1 };

type Record = rocprofiler_buffer_tracing_kernel_dispatch_record_t;

/// A buffer as the SDK would deliver it after a 32-node chain replayed
/// LAUNCHES times from one thread, each launch a HIP call of its own.
fn buffer() -> Vec<u8> {
    let mut bytes = Vec::with_capacity((NODES * LAUNCHES) as usize * size_of::<Record>());
    let mut t = 1_000;
    for launch in 0..LAUNCHES {
        for node in 0..NODES {
            let record = Record {
                size: size_of::<Record>() as u64,
                kind: rocprofiler_buffer_tracing_kind_t::KERNEL_DISPATCH,
                operation: rocprofiler_kernel_dispatch_operation_t::COMPLETE,
                correlation_id: rocprofiler_async_correlation_id_t {
                    internal: launch + 1,
                    external: rocprofiler_user_data_t::default(),
                },
                thread_id: 7,
                start_timestamp: t,
                end_timestamp: t + 900,
                dispatch_info: rocprofiler_kernel_dispatch_info_t {
                    kernel_id: 100 + node,
                    dispatch_id: launch * NODES + node,
                    grid_size: GRID,
                    workgroup_size: BLOCK,
                    queue_id: rocprofiler_queue_id_t { handle: 1 },
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
    }
    bytes
}

/// Decodes every kernel-dispatch record of an SDK buffer into `sink`,
/// handing `take` each batch of them the tool's buffer callback pushes at
/// once (`KERNELS_PER_PUSH`, decoded into one reused sink).
fn decode_each<S: KernelSink>(bytes: &[u8], sink: &mut S, mut take: impl FnMut(&S)) {
    let tracing = rocprofiler_buffer_category_t::TRACING.0;
    let kind = rocprofiler_buffer_tracing_kind_t::KERNEL_DISPATCH.0;
    for slice in bytes.chunks(KERNELS_PER_PUSH * size_of::<Record>()) {
        sink.clear();
        for record in slice.chunks_exact(size_of::<Record>()) {
            let _ = decode_into(tracing, kind, record, &mut Kernels(sink));
        }
        take(sink);
    }
}

/// Where decoded kernel records go: the tool's batch, or whole records for
/// the floor that writes them out with no interning.
trait KernelSink {
    fn take(&mut self, record: KernelDispatch);
    fn clear(&mut self);
}

impl KernelSink for KernelBatch {
    #[inline(always)]
    fn take(&mut self, record: KernelDispatch) {
        self.push(record);
    }
    fn clear(&mut self) {
        KernelBatch::clear(self);
    }
}

impl KernelSink for Vec<KernelDispatch> {
    #[inline(always)]
    fn take(&mut self, record: KernelDispatch) {
        self.push(record);
    }
    fn clear(&mut self) {
        Vec::clear(self);
    }
}

/// A sink as the decoder's [`Records`]: kernel records only.
struct Kernels<'a, T>(&'a mut T);

impl<T: KernelSink> Records for Kernels<'_, T> {
    #[inline(always)]
    fn kernel(&mut self, record: KernelDispatch) {
        self.0.take(record);
    }
    fn copy(&mut self, _: activity_store::MemoryCopy) {}
    fn api_call(&mut self, _: activity_store::HipApiCall) {}
    fn graph_launch(&mut self, _: activity_store::GraphLaunch) {}
    fn retired(&mut self, _: u64) {}
}

fn pipeline(c: &mut Criterion) {
    let bytes = buffer();
    let structure = GraphStructure::new();
    let graph = GraphHandle(1);
    structure.graph_created(graph);
    for node in 0..NODES {
        let deps: Vec<NodeHandle> = (node > 0)
            .then(|| NodeHandle(node - 1))
            .into_iter()
            .collect();
        structure.node_added(
            graph,
            NodeHandle(node),
            &deps,
            NodeWork::Kernel(HostKernel::from_blocks(
                0x1000 + node,
                [256, 1, 1],
                [256, 1, 1],
            )),
        );
    }
    structure.exec_instantiated(ExecHandle(9), graph);
    let exec = structure.exec_contents(ExecHandle(9));
    let stubs: HashMap<u64, u64> = (0..NODES).map(|n| (0x1000 + n, 100 + n)).collect();
    let calls: Vec<Call> = (0..LAUNCHES)
        .map(|launch| Call {
            correlation_id: launch + 1,
            thread_id: 7,
            enter_ns: launch * NODES * 1_000,
            exit_ns: launch * NODES * 1_000 + 500,
            stream: Some(1),
            work: CallWork::Graph {
                graph_id: AttributionId::new(1),
                exec: exec.clone(),
            },
        })
        .collect();
    let records = NODES * LAUNCHES;
    let mut group = c.benchmark_group("100k_kernel_records");
    group.throughput(Throughput::Elements(records));
    group.sample_size(10);
    // Into a buffer allocated once: the copy itself, whatever the allocator
    // (the tool's maps a fresh 10 MiB block per clone, so a clone would
    // measure page faults, not copying).
    let mut copy = vec![0u8; bytes.len()];
    group.bench_function("copy_buffer_once", |b| {
        b.iter(|| {
            copy.copy_from_slice(black_box(&bytes));
            black_box(copy.as_ptr())
        })
    });
    let mut batch = KernelBatch::default();
    let mut whole = Vec::with_capacity(KERNELS_PER_PUSH);
    // The stages alone, so the full pipeline's time can be split: decoding
    // (into the tool's batch, which interns shapes and places as it goes);
    // decoding and staging in a window; and finalising it into frames. A
    // window's staging starts with room for as many rows as the last
    // window finalised in the process held: decode_window runs before any
    // is, so it stages as a process's first window does, growing its
    // columns; from decode_window_finalise on, each window has a last one
    // alike, as a session's next window does.
    group.bench_function("decode", |b| {
        b.iter(|| {
            let mut n = 0;
            decode_each(&bytes, &mut batch, |kernels| n += black_box(kernels).len());
            n
        })
    });
    group.bench_function("decode_window", |b| {
        b.iter(|| {
            let store = ActivityStore::new(StoreConfig::default());
            let window = store.open_window(1).unwrap();
            decode_each(&bytes, &mut batch, |kernels| {
                store.push_kernel_batch(kernels)
            });
            assert_eq!(store.resident_rows() as u64, records);
            black_box(window)
        })
    });
    group.bench_function("decode_window_finalise", |b| {
        b.iter(|| {
            let store = ActivityStore::new(StoreConfig::default());
            let window = store.open_window(1).unwrap();
            decode_each(&bytes, &mut batch, |kernels| {
                store.push_kernel_batch(kernels)
            });
            store.close_window(window, u64::MAX).unwrap();
            let finished = store.finalise(window).unwrap();
            assert_eq!(finished.kernels.len() as u64, records);
            black_box(finished.kernels.len())
        })
    });
    // The floor under decode_window_finalise: decoding, then writing a
    // kernel frame's eight columns (48 bytes a row, freshly allocated as
    // finalising allocates them), with no staging, sorting, interning or
    // joining.
    group.bench_function("decode_write_frame_bytes", |b| {
        b.iter(|| {
            let n = records as usize;
            let mut words: [Vec<u64>; 4] = std::array::from_fn(|_| Vec::with_capacity(n));
            let mut indices: [Vec<u32>; 4] = std::array::from_fn(|_| Vec::with_capacity(n));
            decode_each(&bytes, &mut whole, |kernels| {
                for r in kernels {
                    words[0].push(r.start_ns);
                    words[1].push(r.end_ns);
                    words[2].push(r.correlation_id);
                    words[3].push(r.dispatch_id);
                    indices[0].push(r.kernel_id as u32);
                    indices[1].push(r.queue as u32);
                    indices[2].push(r.correlation_id as u32);
                    indices[3].push(u32::MAX);
                }
            });
            black_box((&words, &indices));
            black_box(words[0].len())
        })
    });
    // Attribution alone, on one finalised window: the part of the whole
    // pipeline below that the stages above do not time.
    let finished = {
        let store = ActivityStore::new(StoreConfig::default());
        let window = store.open_window(1).unwrap();
        decode_each(&bytes, &mut batch, |kernels| {
            store.push_kernel_batch(kernels)
        });
        store.close_window(window, u64::MAX).unwrap();
        store.finalise(window).unwrap()
    };
    // As the tool reads a window's kernels: no blit kernels here.
    let attribute = |kernels: &KernelFrame| {
        let mut observed = ObservedTable::default();
        let observations = kernel_observations(kernels, &FastMap::default(), &mut observed);
        let evidence =
            WindowEvidence::whole(&observations, observed.values(), &calls, &stubs, u64::MAX);
        let out = attribute_window(&evidence, &mut SessionMemory::new());
        assert_eq!(out.summary.attributed(), records);
        out.keys.len()
    };
    group.bench_function("attribute", |b| {
        b.iter(|| black_box(attribute(black_box(&finished.kernels))))
    });
    group.bench_function("decode_window_finalise_attribute", |b| {
        b.iter(|| {
            let store = ActivityStore::new(StoreConfig::default());
            let window = store.open_window(1).unwrap();
            // As the tool's buffer callback does: one SDK buffer (16 MiB
            // holds them all) decoded and pushed a batch at a time.
            decode_each(&bytes, &mut batch, |kernels| {
                store.push_kernel_batch(kernels)
            });
            store.close_window(window, u64::MAX).unwrap();
            let finished = store.finalise(window).unwrap();
            black_box(attribute(&finished.kernels))
        })
    });
    group.finish();
}

criterion_group!(benches, pipeline);
criterion_main!(benches);
