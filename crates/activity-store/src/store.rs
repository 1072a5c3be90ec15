//! The store itself: one per profiling session, shared by every thread.
//!
//! Locking, in one place (each piece is described in its own module):
//!
//! | state | guard | taken by |
//! |---|---|---|
//! | window table (pending windows, finalised ranges) | `RwLock` | read: every push, `issue` and link recorded; write: open, close, finalise |
//! | a window's staged records | one `Mutex` per shard | a push, for one batch |
//! | limit reservation, drop counters | atomics | pushes |
//! | open window id | atomic | `capture_for_api_call`, `record_stream` |
//! | correlation -> stream / external ids | one `Mutex` per shard of the link log | API-call callbacks, on the calling thread's shard; finalise |
//! | in-flight correlation ids and their windows | `Mutex` + `Condvar` | `issue`, `retire`, waiters; a push (its records' routes) |
//! | external id stacks | thread-local | `push_external` / `pop_external` |
//!
//! Locks are never nested except shard-inside-table-read (a push holds the
//! table's read lock while it appends, which is what makes finalisation
//! exact: once finalise holds the write lock and has taken the window out,
//! no append to it is in progress and every later record for its range is
//! counted as late), a link-log shard inside table-read (a link is recorded
//! only while its window is pending, so none outlives its window), and
//! the ledger inside table-read or table-write (a push looks its records'
//! routes up in it; finalise counts the window's outstanding ids at the
//! instant it takes the window out). The ledger is otherwise taken with no
//! other lock held, and no link-log shard is held while taking another
//! lock. Every lock recovers from poisoning: the guarded data is updated by
//! single calls that leave it consistent, and a profiler must not turn one
//! panic into a crash of the application's threads.

use std::sync::atomic::Ordering;
use std::sync::PoisonError;
use std::time::{Duration, Instant};

use crate::completeness::{Completeness, Ledger};
use crate::drops::{DropCounters, DropCounts, DropReason};
use crate::finalise::{self, FinalisedWindow};
use crate::kernel_batch::KernelBatch;
use crate::linkage::{self, CorrelationLinks, ExternalDomain};
use crate::records::{GraphLaunch, HipApiCall, KernelDispatch, MemoryCopy};
use crate::staging::Staged;
use crate::stats::WindowStats;
use crate::sync::{AtomicU64, AtomicUsize, RwLock, RwLockReadGuard, RwLockWriteGuard};
use crate::windows::{self, WindowError, WindowId, WindowTable};

/// Limits and tuning for one store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoreConfig {
    /// Records one window may hold, all kinds together; beyond it records
    /// are dropped and counted (kineto's ROCTRACER_MAX_EVENTS semantics).
    pub max_records_per_window: usize,
    /// How many independently locked staging shards a window has; threads
    /// are spread over them round-robin.
    pub staging_shards: usize,
    /// While waiting for retirements, how long to sleep before asking the
    /// tool to flush SDK buffers again (retirements below a buffer's
    /// watermark arrive only on a flush).
    pub flush_interval: Duration,
}

impl Default for StoreConfig {
    fn default() -> Self {
        Self {
            // About 0.5 GB of staged kernel rows at the limit.
            max_records_per_window: 5_000_000,
            staging_shards: 8,
            flush_interval: Duration::from_millis(20),
        }
    }
}

/// A `std` atomic even under Loom, whose atomics cannot be statics.
static NEXT_STORE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// Decoded GPU activity of one profiling session, bucketed into windows.
///
/// `Sync`: share it by reference or `Arc` between the SDK's buffer thread,
/// application threads and the thread that closes windows.
#[derive(Debug)]
pub struct ActivityStore {
    /// Distinguishes this store's thread-local external id stacks.
    store: u64,
    config: StoreConfig,
    /// `config.max_records_per_window`, changeable while collecting (kineto
    /// calls setMaxEvents whenever its configuration says so).
    max_records: AtomicUsize,
    windows: RwLock<WindowTable>,
    /// The open window's id, 0 when none: lets the API-call callbacks skip
    /// all work outside windows without touching the table's lock.
    open_window: AtomicU64,
    links: CorrelationLinks,
    /// Correlation ids in flight, each with the window its API call was
    /// issued in (from `issue` until `retire`): what completeness waits
    /// for, and where device work is staged (its launch's window).
    ledger: Ledger,
    drops: DropCounters,
}

impl Default for ActivityStore {
    fn default() -> Self {
        Self::new(StoreConfig::default())
    }
}

impl ActivityStore {
    pub fn new(config: StoreConfig) -> Self {
        Self {
            store: NEXT_STORE.fetch_add(1, Ordering::Relaxed),
            config,
            max_records: AtomicUsize::new(config.max_records_per_window),
            windows: RwLock::new(WindowTable::new(config.staging_shards)),
            open_window: AtomicU64::new(0),
            links: CorrelationLinks::default(),
            ledger: Ledger::default(),
            drops: DropCounters::default(),
        }
    }

    pub fn config(&self) -> StoreConfig {
        StoreConfig {
            max_records_per_window: self.max_records.load(Ordering::Relaxed),
            ..self.config
        }
    }

    /// Changes the per-window record limit for records pushed from now on.
    pub fn set_max_records_per_window(&self, max_records: usize) {
        self.max_records.store(max_records, Ordering::Relaxed);
    }

    fn table(&self) -> RwLockReadGuard<'_, WindowTable> {
        self.windows.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn table_mut(&self) -> RwLockWriteGuard<'_, WindowTable> {
        self.windows.write().unwrap_or_else(PoisonError::into_inner)
    }

    // ---- windows -------------------------------------------------------

    /// Opens a window taking every record that starts at or after
    /// `start_ns` until it is closed. Refused while another is open or if it
    /// would overlap the previous window.
    pub fn open_window(&self, start_ns: u64) -> Result<WindowId, WindowError> {
        let mut table = self.table_mut();
        let id = table.open(start_ns)?;
        self.open_window.store(id.0, Ordering::Relaxed);
        Ok(id)
    }

    /// Fixes the window's range to `[start, stop_ns]`. Records that start in
    /// it may still arrive, and are still taken, until it is finalised.
    pub fn close_window(&self, id: WindowId, stop_ns: u64) -> Result<(), WindowError> {
        let mut table = self.table_mut();
        table.close(id, stop_ns)?;
        let _ = self
            .open_window
            .compare_exchange(id.0, 0, Ordering::Relaxed, Ordering::Relaxed);
        Ok(())
    }

    /// Blocks until every correlation id issued within the closed window
    /// has retired, or until `deadline`. `between_waits` is called (with no
    /// store lock held) before the first wait and then every
    /// [`StoreConfig::flush_interval`] while ids remain: the tool flushes
    /// the SDK's buffers there.
    pub fn wait_until_retired(
        &self,
        id: WindowId,
        deadline: Instant,
        between_waits: impl FnMut(),
    ) -> Result<Completeness, WindowError> {
        let (_, stop_ns) = self.table().closed_range(id)?;
        Ok(self.ledger.wait_until_retired(
            id,
            stop_ns,
            deadline,
            self.config.flush_interval,
            between_waits,
        ))
    }

    /// Hands out the closed window's records as columnar frames and forgets
    /// them. Its completeness is what is known now: correlation ids still in
    /// flight are counted as outstanding and forgotten, and records for its
    /// range that arrive later are dropped and counted as late.
    pub fn finalise(&self, id: WindowId) -> Result<FinalisedWindow, WindowError> {
        let (window, stop_ns, pending, outstanding) = {
            let mut table = self.table_mut();
            let (window, stop_ns) = table.take_closed(id)?;
            let pending: Vec<WindowId> = table.pending_ids().collect();
            // Counted while no push can run: an id that retires after this
            // may have had its records dropped as late, so it is counted
            // as outstanding.
            let outstanding = self.ledger.abandon(id, stop_ns);
            (window, stop_ns, pending, outstanding)
        };
        let over_limit = window.over_limit.load(Ordering::Relaxed);
        let unplaced = window.unplaced.load(Ordering::Relaxed) as usize;
        let built = finalise::build(window.staging.into_shards(), stop_ns, &self.links.table());
        let completeness =
            Completeness::of(outstanding, unplaced + built.started_after_stop as usize);
        self.drops
            .add(DropReason::OutsideWindows, built.started_after_stop);
        self.links.forget_finished(&pending);

        let stats = WindowStats {
            window: id,
            kernels: built.kernels.len(),
            copies: built.copies.len(),
            api_calls: built.api_calls.len(),
            graph_launches: built.graph_launches.len(),
            over_limit,
            completeness,
            session_drops: self.drops.snapshot(),
        };
        if completeness.is_complete() {
            log::debug!("finalised {stats}");
        } else {
            log::warn!("finalised {stats}");
        }
        Ok(FinalisedWindow {
            id,
            start_ns: window.start_ns,
            stop_ns,
            kernels: built.kernels,
            copies: built.copies,
            api_calls: built.api_calls,
            graph_launches: built.graph_launches,
            completeness,
            stats,
        })
    }

    // ---- records -------------------------------------------------------

    fn push<R: Staged>(&self, records: &[R], tables: &R::Tables) {
        let table = self.table();
        windows::stage_batch(
            &table,
            records,
            tables,
            self.max_records.load(Ordering::Relaxed),
            |correlation_id| self.ledger.window_of(correlation_id),
            |reason, count| self.drops.add(reason, count),
        );
    }

    pub fn push_kernel(&self, record: KernelDispatch) {
        self.push_kernels(std::slice::from_ref(&record));
    }

    /// [`Self::push_kernel_batch`] for records in hand, batched first.
    pub fn push_kernels(&self, records: &[KernelDispatch]) {
        self.push_kernel_batch(&records.iter().copied().collect());
    }

    /// A batch costs one table read lock and one shard lock per run of
    /// records that fall in the same window: push a decoded SDK buffer in
    /// a few batches, not record by record.
    pub fn push_kernel_batch(&self, batch: &KernelBatch) {
        self.push(batch.rows(), batch.tables());
    }

    pub fn push_copy(&self, record: MemoryCopy) {
        self.push(std::slice::from_ref(&record), &());
    }

    pub fn push_copies(&self, records: &[MemoryCopy]) {
        self.push(records, &());
    }

    pub fn push_api_call(&self, record: HipApiCall) {
        self.push(std::slice::from_ref(&record), &());
    }

    pub fn push_api_calls(&self, records: &[HipApiCall]) {
        self.push(records, &());
    }

    pub fn push_graph_launch(&self, record: GraphLaunch) {
        self.push(std::slice::from_ref(&record), &());
    }

    pub fn push_graph_launches(&self, records: &[GraphLaunch]) {
        self.push(records, &());
    }

    /// Counts records the tool could not decode, so they show in the same
    /// tally as everything else the store refused.
    pub fn count_malformed(&self, count: u64) {
        self.drops.add(DropReason::Malformed, count);
    }

    /// Everything refused so far, all windows together.
    pub fn drop_counts(&self) -> DropCounts {
        self.drops.snapshot()
    }

    // ---- linkage -------------------------------------------------------

    fn open_window_id(&self) -> Option<WindowId> {
        match self.open_window.load(Ordering::Relaxed) {
            0 => None,
            id => Some(WindowId(id)),
        }
    }

    /// Pushes a CPU op's external correlation id on this thread's stack.
    pub fn push_external(&self, domain: ExternalDomain, id: u64) {
        linkage::push_external(self.store, domain, id);
    }

    /// Pops this thread's innermost external id of `domain`.
    pub fn pop_external(&self, domain: ExternalDomain) -> Option<u64> {
        linkage::pop_external(self.store, domain)
    }

    /// Called by the tool at a HIP API call's ENTER, on the calling thread:
    /// remembers this thread's current external ids for `correlation_id`.
    /// Does nothing when nothing is pushed or no window is open.
    pub fn capture_for_api_call(&self, correlation_id: u64) {
        let Some(window) = self.open_window_id() else {
            return;
        };
        let tops = linkage::current_external(self.store);
        if tops != (None, None) {
            self.record_link(window, |links| {
                links.record_external(correlation_id, window, tops)
            });
        }
    }

    /// Records the HIP stream an API call, dispatch or copy ran on (from the
    /// HIP_STREAM SET callback), joined into the `stream` column.
    pub fn record_stream(&self, correlation_id: u64, stream_id: u64) {
        if let Some(window) = self.open_window_id() {
            self.record_link(window, |links| {
                links.record_stream(correlation_id, window, stream_id)
            });
        }
    }

    /// Records a link for `window` if it is still pending, under the window
    /// table's read lock. The open window was read without the lock, so it
    /// may have been closed and finalised since; finalise takes a window out
    /// under the write lock and forgets its links after, so a link is either
    /// recorded while its window is pending (and forgotten with it) or not at
    /// all, never left behind for the rest of the session.
    fn record_link(&self, window: WindowId, record: impl FnOnce(&CorrelationLinks)) {
        let table = self.table();
        if table.is_pending(window) {
            record(&self.links);
        }
    }

    // ---- completeness ----------------------------------------------------

    /// Called by the tool when an API call that may produce asynchronous
    /// work enters at `at_ns`: the window containing `at_ns` is not complete
    /// until this id retires. Ignored outside every pending window.
    pub fn issue(&self, correlation_id: u64, at_ns: u64) {
        let table = self.table();
        let window = table.pending_containing(at_ns);
        if let Some(window) = window {
            table.note_issued(window, correlation_id);
            drop(table);
            self.ledger.issue(correlation_id, window, at_ns);
        }
    }

    /// Called on each CORRELATION_ID_RETIREMENT record, after the records of
    /// the same buffer have been pushed: all of the id's work is delivered.
    pub fn retire(&self, correlation_id: u64) {
        self.ledger.retire(correlation_id);
    }

    /// The Loom model's time zero: under `--cfg loom` the store's waits read
    /// a clock that starts here and moves only by
    /// [`ActivityStore::pass_model_time`].
    #[cfg(loom)]
    #[doc(hidden)]
    pub fn model_epoch() -> Instant {
        crate::sync::Clock::epoch()
    }

    /// The Loom model's stand-in for time passing (and so for timed waits
    /// timing out): advances the clock and wakes every waiter.
    #[cfg(loom)]
    #[doc(hidden)]
    pub fn pass_model_time(&self, by: Duration) {
        self.ledger.pass_time(by);
    }

    /// Correlation ids issued in the window (up to its stop, if closed)
    /// and not yet retired; 0 for a window no longer pending.
    pub fn outstanding(&self, id: WindowId) -> usize {
        let stop_ns = match self.table().closed_range(id) {
            Ok((_, stop_ns)) => stop_ns,
            Err(WindowError::NotClosed(_)) => u64::MAX,
            Err(_) => return 0,
        };
        self.ledger.outstanding_in(id, stop_ns)
    }

    // ---- introspection -----------------------------------------------------

    /// Records staged in windows not yet finalised.
    pub fn resident_rows(&self) -> usize {
        self.table().staged_rows()
    }

    /// Correlation ids the store holds anything for (links and in-flight
    /// ids); bounded by the pending windows' launches, zero once every
    /// window is finalised.
    pub fn resident_correlations(&self) -> usize {
        self.links.len() + self.ledger.len()
    }
}
