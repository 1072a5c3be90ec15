//! Where accepted records wait until their window is finalised.
//!
//! Records are staged as they arrive, as contiguous arrays of the plain
//! input structs (no heap object per record), and turned into columns once,
//! at finalisation, where they are also sorted and joined. Appending a `Copy`
//! struct to a `Vec` is the cheapest push there is; the benchmark compares it
//! with a plain `Vec` copy.
//!
//! Locking: a window's staging is split into shards, each behind its own
//! `Mutex`; a thread always appends to the same shard (picked round-robin
//! when the thread first pushes), so the SDK's buffer thread and application
//! threads rarely meet on one lock. A batch is appended under a single lock
//! acquisition.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::PoisonError;

use crate::records::{GraphLaunch, HipApiCall, KernelDispatch, MemoryCopy, Timed};
use crate::sync::Mutex;

/// The records of one window (or one shard of it), per kind.
#[derive(Debug, Default)]
pub(crate) struct Staging {
    pub(crate) kernels: Vec<KernelDispatch>,
    pub(crate) copies: Vec<MemoryCopy>,
    pub(crate) api_calls: Vec<HipApiCall>,
    pub(crate) graph_launches: Vec<GraphLaunch>,
    /// Kernels and copies placed by the window their launching API call was
    /// issued in (not by start time): kept whatever their start.
    pub(crate) routed_kernels: Vec<KernelDispatch>,
    pub(crate) routed_copies: Vec<MemoryCopy>,
}

impl Staging {
    pub(crate) fn rows(&self) -> usize {
        self.kernels.len()
            + self.copies.len()
            + self.api_calls.len()
            + self.graph_launches.len()
            + self.routed_kernels.len()
            + self.routed_copies.len()
    }

    /// One staging holding all of `parts`, each array allocated once at its
    /// final size.
    fn concat(parts: Vec<Staging>) -> Staging {
        let mut merged = Staging {
            kernels: Vec::with_capacity(parts.iter().map(|p| p.kernels.len()).sum()),
            copies: Vec::with_capacity(parts.iter().map(|p| p.copies.len()).sum()),
            api_calls: Vec::with_capacity(parts.iter().map(|p| p.api_calls.len()).sum()),
            graph_launches: Vec::with_capacity(parts.iter().map(|p| p.graph_launches.len()).sum()),
            routed_kernels: Vec::with_capacity(parts.iter().map(|p| p.routed_kernels.len()).sum()),
            routed_copies: Vec::with_capacity(parts.iter().map(|p| p.routed_copies.len()).sum()),
        };
        for part in parts {
            merged.kernels.extend_from_slice(&part.kernels);
            merged.copies.extend_from_slice(&part.copies);
            merged.api_calls.extend_from_slice(&part.api_calls);
            merged
                .graph_launches
                .extend_from_slice(&part.graph_launches);
            merged
                .routed_kernels
                .extend_from_slice(&part.routed_kernels);
            merged.routed_copies.extend_from_slice(&part.routed_copies);
        }
        merged
    }
}

/// A record kind that knows which staging column it goes to.
pub(crate) trait Staged: Timed {
    fn column(staging: &mut Staging) -> &mut Vec<Self>;

    /// Device work belongs to the window its launching API call was issued
    /// in: its correlation id, and where such records are staged. `None`
    /// for host records, which are placed by their own start time.
    fn launch_correlation(&self) -> Option<u64> {
        None
    }

    fn routed_column(staging: &mut Staging) -> &mut Vec<Self> {
        Self::column(staging)
    }
}

impl Staged for KernelDispatch {
    fn column(staging: &mut Staging) -> &mut Vec<Self> {
        &mut staging.kernels
    }

    fn launch_correlation(&self) -> Option<u64> {
        Some(self.correlation_id)
    }

    fn routed_column(staging: &mut Staging) -> &mut Vec<Self> {
        &mut staging.routed_kernels
    }
}

impl Staged for MemoryCopy {
    fn column(staging: &mut Staging) -> &mut Vec<Self> {
        &mut staging.copies
    }

    fn launch_correlation(&self) -> Option<u64> {
        Some(self.correlation_id)
    }

    fn routed_column(staging: &mut Staging) -> &mut Vec<Self> {
        &mut staging.routed_copies
    }
}

impl Staged for HipApiCall {
    fn column(staging: &mut Staging) -> &mut Vec<Self> {
        &mut staging.api_calls
    }
}

impl Staged for GraphLaunch {
    fn column(staging: &mut Staging) -> &mut Vec<Self> {
        &mut staging.graph_launches
    }
}

static NEXT_THREAD_SHARD: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// This thread's shard, fixed for the thread's life so its appends stay
    /// on one lock and one cache line set.
    static THREAD_SHARD: usize = NEXT_THREAD_SHARD.fetch_add(1, Ordering::Relaxed);
}

/// A window's staging, split into independently locked shards.
#[derive(Debug)]
pub(crate) struct ShardedStaging {
    shards: Box<[Mutex<Staging>]>,
}

impl ShardedStaging {
    pub(crate) fn new(shards: usize) -> Self {
        Self {
            shards: (0..shards.max(1)).map(|_| Mutex::default()).collect(),
        }
    }

    /// Appends a batch to the calling thread's shard under one lock.
    pub(crate) fn append<R: Staged>(&self, records: &[R]) {
        let shard = THREAD_SHARD.with(|shard| *shard) % self.shards.len();
        // A panic while a shard was held cannot leave a half-pushed record
        // (`extend_from_slice` of `Copy` data either completes or unwinds
        // before changing the length), so a poisoned shard is still sound.
        let mut staging = self.shards[shard]
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        R::column(&mut staging).extend_from_slice(records);
    }

    /// Appends records placed by their launch's window (see [`Staged::routed_column`]).
    pub(crate) fn append_routed<R: Staged>(&self, records: &[R]) {
        let shard = THREAD_SHARD.with(|shard| *shard) % self.shards.len();
        let mut staging = self.shards[shard]
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        R::routed_column(&mut staging).extend_from_slice(records);
    }

    /// Rows currently staged, for introspection.
    pub(crate) fn rows(&self) -> usize {
        self.shards
            .iter()
            .map(|shard| shard.lock().unwrap_or_else(PoisonError::into_inner).rows())
            .sum()
    }

    /// All shards merged into one staging; consumes the window's staging,
    /// so nothing can append to it afterwards.
    pub(crate) fn into_merged(self) -> Staging {
        let mut shards: Vec<Staging> = self
            .shards
            .into_vec()
            .into_iter()
            .map(|shard| shard.into_inner().unwrap_or_else(PoisonError::into_inner))
            .filter(|shard| shard.rows() > 0)
            .collect();
        if shards.len() <= 1 {
            // One thread pushed everything: hand its arrays over uncopied.
            return shards.pop().unwrap_or_default();
        }
        Staging::concat(shards)
    }
}
