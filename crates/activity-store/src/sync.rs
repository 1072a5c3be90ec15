//! The synchronisation types the store's shared state is built from, so that
//! the Loom model (`tests/loom.rs`, built with `--cfg loom`) can run the
//! real code with Loom's checked primitives in their place. Without
//! `--cfg loom` these are exactly `std`'s, and `Clock` is `Instant::now()`.
//!
//! Not swapped: the correlation-link log's shard locks and the
//! thread-locals (staging shard, external id stacks), which Loom cannot see
//! into; and `static` counters, which Loom's atomics cannot be. The model
//! treats each link-log call as one indivisible step between the checked
//! ones (none holds a shard lock across a lock or atomic of ours).

#[cfg(not(loom))]
pub(crate) use std::sync::{
    atomic::{AtomicU64, AtomicUsize},
    Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard,
};

#[cfg(loom)]
pub(crate) use loom::sync::{
    atomic::{AtomicU64, AtomicUsize},
    Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard,
};

/// Where the completeness ledger reads the time. Kept in the ledger's state,
/// so it is read only under the ledger's lock.
#[cfg(not(loom))]
#[derive(Debug, Default)]
pub(crate) struct Clock;

#[cfg(not(loom))]
impl Clock {
    #[inline]
    pub(crate) fn now(&self) -> std::time::Instant {
        std::time::Instant::now()
    }
}

/// Under Loom, time stands still except when the model moves it (see
/// `Ledger::pass_time`): Loom's `Condvar::wait_timeout` never times out, so
/// a timeout is modelled as the clock passing it and the waiter being
/// woken, both under the ledger's lock, which is what a real timed wait
/// guarantees (it cannot miss its own timeout). Every run of the model sees
/// the same times, as Loom requires.
#[cfg(loom)]
#[derive(Debug, Default)]
pub(crate) struct Clock {
    elapsed: std::time::Duration,
}

#[cfg(loom)]
impl Clock {
    /// The model's time zero: one fixed `Instant` for the whole process.
    pub(crate) fn epoch() -> std::time::Instant {
        static EPOCH: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
        *EPOCH.get_or_init(std::time::Instant::now)
    }

    pub(crate) fn now(&self) -> std::time::Instant {
        Self::epoch() + self.elapsed
    }

    pub(crate) fn advance(&mut self, by: std::time::Duration) {
        self.elapsed += by;
    }
}
