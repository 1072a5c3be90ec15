//! Process-wide handles and ids the HIP runtime hands out. They persist
//! across runs, as in one process.
//!
//! - Exec and graph handles come from LIFO free lists: the allocator hands
//!   the most recently freed address to the next instantiate / create, as
//!   the first round saw ("HIP hands the same address straight back out").
//! - Graph node handles are fresh addresses, distinct from graph handles.
//! - SDK stream ids are handed out in first-seen order (stream.cpp), 0
//!   being the null stream; the exec's internal parallel streams are never
//!   seen by the SDK and are numbered from 1 << 32 in the ground truth only.
use crate::sdk::os::lock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

/// Addresses from a base and a stride, freed addresses reused first.
struct LifoAddresses {
    base: u64,
    stride: u64,
    state: Mutex<(Vec<u64>, u64)>,
}

impl LifoAddresses {
    const fn new(base: u64, stride: u64) -> LifoAddresses {
        LifoAddresses {
            base,
            stride,
            state: Mutex::new((Vec::new(), 0)),
        }
    }
    fn alloc(&self) -> u64 {
        let mut a = lock(&self.state);
        if let Some(h) = a.0.pop() {
            return h;
        }
        a.1 += 1;
        self.base + a.1 * self.stride
    }
    fn free(&self, h: u64) {
        lock(&self.state).0.push(h);
    }
}

struct Handles {
    execs: LifoAddresses,
    graphs: LifoAddresses,
    nodes: AtomicU64,
    exec_ids: AtomicU64,
    stream_ids: AtomicU64,
    stream_values: AtomicU64,
    internal_stream_ids: AtomicU64,
    copy_ids: AtomicU64,
}

fn handles() -> &'static Handles {
    static H: OnceLock<Handles> = OnceLock::new();
    H.get_or_init(|| Handles {
        execs: LifoAddresses::new(0x7e00_0000_0000, 0x1000),
        graphs: LifoAddresses::new(0x6700_0000_0000, 0x1000),
        nodes: AtomicU64::new(0),
        exec_ids: AtomicU64::new(1),
        stream_ids: AtomicU64::new(1),
        stream_values: AtomicU64::new(0),
        internal_stream_ids: AtomicU64::new(1 << 32),
        copy_ids: AtomicU64::new(1),
    })
}

pub(crate) fn alloc_exec_handle() -> u64 {
    handles().execs.alloc()
}

pub(crate) fn free_exec_handle(h: u64) {
    handles().execs.free(h)
}

pub(crate) fn alloc_graph_handle() -> u64 {
    handles().graphs.alloc()
}

pub(crate) fn free_graph_handle(h: u64) {
    handles().graphs.free(h)
}

pub(crate) fn new_node_handle() -> u64 {
    0x6a00_0000_0000 + (handles().nodes.fetch_add(1, Ordering::Relaxed) + 1) * 0x100
}

/// The SDK's graph_exec_id of the next exec (graph.cpp: from 1).
pub(crate) fn new_exec_id() -> u64 {
    handles().exec_ids.fetch_add(1, Ordering::Relaxed)
}

/// A user stream's (SDK id, hipStream_t value).
pub(crate) fn new_user_stream() -> (u64, u64) {
    let h = handles();
    let n = h.stream_values.fetch_add(1, Ordering::Relaxed) + 1;
    (
        h.stream_ids.fetch_add(1, Ordering::Relaxed),
        0x5700_0000 + n * 0x100,
    )
}

/// The ground-truth id of an exec's internal parallel stream.
pub(crate) fn new_internal_stream_id() -> u64 {
    handles()
        .internal_stream_ids
        .fetch_add(1, Ordering::Relaxed)
}

pub(crate) fn new_copy_id() -> u64 {
    handles().copy_ids.fetch_add(1, Ordering::Relaxed)
}
