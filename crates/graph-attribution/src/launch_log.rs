//! Finished launches, handed from the launching threads to the verifier.
//!
//! The verifier needs every launch instance, including those that were
//! credited no dispatches at all: when another thread wrote a launch's
//! packets, that launch's instance is the one left short, and it is the only
//! evidence of which launch the stray dispatches belonged to.
//!
//! Launches end on the hot path (the EXIT callback), so the log is a bounded
//! lock-free ring allocated once: pushing neither locks nor allocates, and a
//! full ring drops the record and counts it rather than blocking the
//! application thread or growing without bound when nobody drains.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use crossbeam_queue::ArrayQueue;

use crate::ids::{AttributionId, LaunchedExec};

/// How a launch instance's frame left the launch stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LaunchEnding {
    /// Its own EXIT popped it.
    Exited,
    /// An EXIT of a launch below it on the stack closed it; its count may be
    /// incomplete, so the verifier never vouches for it.
    Abandoned,
}

/// One finished launch instance, as the tracker saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchRecord {
    /// The correlation id of the launch API call (the SDK's internal id).
    pub correlation_id: u64,
    /// The id its dispatches were attributed to; `None` when the exec had
    /// none (unpackable id, unseen exec, nested too deep).
    pub attribution: Option<AttributionId>,
    /// The exec as the launch callback named it.
    pub exec: LaunchedExec,
    /// The launching thread, in the id space the caller also uses for
    /// dispatch records (the SDK's thread id).
    pub thread_id: u64,
    /// How many dispatches this thread credited to the launch while it was
    /// on top of the stack (saturating).
    pub credited_dispatches: u32,
    pub ending: LaunchEnding,
}

/// The bounded ring of finished launches.
pub struct LaunchLog {
    ring: ArrayQueue<LaunchRecord>,
    dropped: AtomicU64,
}

impl LaunchLog {
    /// A log holding at most `capacity` undrained records (at least 1).
    pub fn with_capacity(capacity: usize) -> LaunchLog {
        LaunchLog {
            ring: ArrayQueue::new(capacity.max(1)),
            dropped: AtomicU64::new(0),
        }
    }

    /// Append a record; `false` (and counted) when the ring was full.
    /// Hot path: lock-free, no allocation.
    #[inline]
    pub fn push(&self, record: LaunchRecord) -> bool {
        match self.ring.push(record) {
            Ok(()) => true,
            Err(_) => {
                self.dropped.fetch_add(1, Ordering::Relaxed);
                false
            }
        }
    }

    /// Move every record logged so far into `into`, oldest first.
    pub fn drain_into(&self, into: &mut Vec<LaunchRecord>) {
        into.reserve(self.ring.len());
        while let Some(record) = self.ring.pop() {
            into.push(record);
        }
    }

    /// Every record logged so far, oldest first.
    pub fn drain(&self) -> Vec<LaunchRecord> {
        let mut records = Vec::new();
        self.drain_into(&mut records);
        records
    }

    /// Records lost to a full ring since the log was made.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    pub fn capacity(&self) -> usize {
        self.ring.capacity()
    }

    pub fn len(&self) -> usize {
        self.ring.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ring.is_empty()
    }
}

/// Drained launch records waiting for the window their dispatches land in.
///
/// A launch ends (and is drained) before its dispatches complete, so the
/// record pipeline keeps records here and takes those of a window's launches
/// when it verifies that window. Bounded: past `capacity` the oldest
/// (lowest correlation id) are evicted and counted.
#[derive(Debug)]
pub struct LaunchLedger {
    records: HashMap<u64, LaunchRecord>,
    capacity: usize,
    evicted: u64,
}

impl LaunchLedger {
    pub fn with_capacity(capacity: usize) -> LaunchLedger {
        LaunchLedger {
            records: HashMap::new(),
            capacity: capacity.max(1),
            evicted: 0,
        }
    }

    /// Keep `records` (e.g. from [`LaunchLog::drain`]).
    pub fn absorb(&mut self, records: impl IntoIterator<Item = LaunchRecord>) {
        for record in records {
            self.records.insert(record.correlation_id, record);
        }
        if self.records.len() > self.capacity {
            let mut ids: Vec<u64> = self.records.keys().copied().collect();
            ids.sort_unstable();
            let excess = self.records.len() - self.capacity;
            for id in &ids[..excess] {
                self.records.remove(id);
            }
            self.evicted += excess as u64;
        }
    }

    /// Remove and return the records whose correlation id `belongs` to the
    /// window being verified, in correlation id order.
    pub fn take_where(&mut self, mut belongs: impl FnMut(u64) -> bool) -> Vec<LaunchRecord> {
        let mut taken: Vec<LaunchRecord> = Vec::new();
        self.records.retain(|&id, record| {
            if belongs(id) {
                taken.push(*record);
                false
            } else {
                true
            }
        });
        taken.sort_unstable_by_key(|record| record.correlation_id);
        taken
    }

    /// Records evicted unverified because the ledger was full.
    pub fn evicted(&self) -> u64 {
        self.evicted
    }

    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::ExecHandle;

    fn record(correlation_id: u64) -> LaunchRecord {
        LaunchRecord {
            correlation_id,
            attribution: AttributionId::new(1),
            exec: LaunchedExec::Runtime {
                handle: ExecHandle(1),
            },
            thread_id: 7,
            credited_dispatches: 3,
            ending: LaunchEnding::Exited,
        }
    }

    #[test]
    fn a_full_log_drops_and_counts_instead_of_blocking() {
        let log = LaunchLog::with_capacity(2);
        assert!(log.push(record(1)));
        assert!(log.push(record(2)));
        assert!(!log.push(record(3)));
        assert_eq!(log.dropped(), 1);
        let drained: Vec<u64> = log.drain().iter().map(|r| r.correlation_id).collect();
        assert_eq!(drained, vec![1, 2]);
        assert!(log.push(record(4)));
    }

    #[test]
    fn the_ledger_hands_out_a_windows_launches_and_evicts_the_oldest() {
        let mut ledger = LaunchLedger::with_capacity(3);
        ledger.absorb((1..=5).map(record));
        assert_eq!(ledger.evicted(), 2);
        let taken: Vec<u64> = ledger
            .take_where(|id| id <= 4)
            .iter()
            .map(|r| r.correlation_id)
            .collect();
        assert_eq!(taken, vec![3, 4]);
        assert_eq!(ledger.len(), 1);
    }
}
