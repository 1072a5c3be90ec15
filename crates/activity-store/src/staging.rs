//! Where accepted records wait until their window is finalised.
//!
//! Records are staged as they arrive, as contiguous arrays (no heap object
//! per record), and turned into columns once, at finalisation, where they
//! are also sorted and joined. Kernel dispatches, nearly all of a window,
//! are kept compact (`kernel_rows`); the other kinds as their plain input
//! structs, since appending a `Copy` struct to a `Vec` is the cheapest push
//! there is.
//!
//! Locking: a window's staging is split into shards, each behind its own
//! `Mutex`; a thread always appends to the same shard (picked round-robin
//! when the thread first pushes), so the SDK's buffer thread and application
//! threads rarely meet on one lock. A batch is appended under a single lock
//! acquisition.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::PoisonError;

use crate::kernel_batch::{BatchRow, BatchTables};
use crate::kernel_rows::{KernelRows, Part};
use crate::records::{GraphLaunch, HipApiCall, MemoryCopy, Timed};
use crate::sync::Mutex;

/// The records of one window (or one shard of it), per kind.
#[derive(Debug, Default)]
pub(crate) struct Staging {
    pub(crate) kernels: KernelRows,
    pub(crate) copies: Vec<MemoryCopy>,
    pub(crate) api_calls: Vec<HipApiCall>,
    pub(crate) graph_launches: Vec<GraphLaunch>,
    /// Kernels and copies placed by the window their launching API call was
    /// issued in (not by start time): kept whatever their start.
    pub(crate) routed_kernels: KernelRows,
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
}

/// A record kind that knows where a shard stages it.
pub(crate) trait Staged: Timed {
    /// What the records name by index, if anything: a kernel batch's
    /// launch shapes and places.
    type Tables: ?Sized;

    fn stage(staging: &mut Staging, records: &[Self], tables: &Self::Tables);

    /// Device work belongs to the window its launching API call was issued
    /// in: its correlation id, and where such records are staged. `None`
    /// for host records, which are placed by their own start time.
    fn launch_correlation(&self) -> Option<u64> {
        None
    }

    fn stage_routed(staging: &mut Staging, records: &[Self], tables: &Self::Tables) {
        Self::stage(staging, records, tables)
    }
}

impl Staged for BatchRow {
    type Tables = BatchTables;

    fn stage(staging: &mut Staging, records: &[Self], tables: &BatchTables) {
        staging
            .kernels
            .extend_from_batch(records, tables, Part::ByStart);
    }

    fn launch_correlation(&self) -> Option<u64> {
        Some(self.row.correlation_id)
    }

    fn stage_routed(staging: &mut Staging, records: &[Self], tables: &BatchTables) {
        staging
            .routed_kernels
            .extend_from_batch(records, tables, Part::Routed);
    }
}

impl Staged for MemoryCopy {
    type Tables = ();

    fn stage(staging: &mut Staging, records: &[Self], _: &()) {
        staging.copies.extend_from_slice(records);
    }

    fn launch_correlation(&self) -> Option<u64> {
        Some(self.correlation_id)
    }

    fn stage_routed(staging: &mut Staging, records: &[Self], _: &()) {
        staging.routed_copies.extend_from_slice(records);
    }
}

impl Staged for HipApiCall {
    type Tables = ();

    fn stage(staging: &mut Staging, records: &[Self], _: &()) {
        staging.api_calls.extend_from_slice(records);
    }
}

impl Staged for GraphLaunch {
    type Tables = ();

    fn stage(staging: &mut Staging, records: &[Self], _: &()) {
        staging.graph_launches.extend_from_slice(records);
    }
}

static NEXT_THREAD_SHARD: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// This thread's shard, fixed for the thread's life so its appends stay
    /// on one lock and one cache line set.
    static THREAD_SHARD: usize = NEXT_THREAD_SHARD.fetch_add(1, Ordering::Relaxed);
}

/// This thread's shard among `shards`: staging's, and the link log's.
pub(crate) fn thread_shard(shards: usize) -> usize {
    THREAD_SHARD.with(|shard| *shard) % shards
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
    pub(crate) fn append<R: Staged>(&self, records: &[R], tables: &R::Tables) {
        // A panic while a shard was held cannot leave a half-pushed record
        // (a row is pushed whole or not at all), so a poisoned shard is
        // still sound.
        R::stage(&mut self.shard(), records, tables);
    }

    /// Appends records placed by their launch's window (see [`Staged::stage_routed`]).
    pub(crate) fn append_routed<R: Staged>(&self, records: &[R], tables: &R::Tables) {
        R::stage_routed(&mut self.shard(), records, tables);
    }

    fn shard(&self) -> crate::sync::MutexGuard<'_, Staging> {
        let shard = thread_shard(self.shards.len());
        self.shards[shard]
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Rows currently staged, for introspection.
    pub(crate) fn rows(&self) -> usize {
        self.shards
            .iter()
            .map(|shard| shard.lock().unwrap_or_else(PoisonError::into_inner).rows())
            .sum()
    }

    /// The shards that hold anything, in shard order; consumes the window's
    /// staging, so nothing can append to it afterwards.
    pub(crate) fn into_shards(self) -> Vec<Staging> {
        self.shards
            .into_vec()
            .into_iter()
            .map(|shard| shard.into_inner().unwrap_or_else(PoisonError::into_inner))
            .filter(|shard| shard.rows() > 0)
            .collect()
    }
}
