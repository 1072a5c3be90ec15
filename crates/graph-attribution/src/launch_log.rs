//! Finished launches of the launch-stack method, handed from the launching
//! threads to the window that reports them.
//!
//! The launch-stack method (the SDK's documented recipe, kept for comparison)
//! credits each dispatch to the processing thread's innermost launch. Its
//! own failure shows in these records: a launch credited more or fewer
//! dispatches than its graph has nodes was contaminated by, or lost packets
//! to, another thread's submission.
//!
//! Launches end on the hot path (the EXIT callback), so the log is a bounded
//! lock-free ring allocated once: pushing neither locks nor allocates, and a
//! full ring drops the record and counts it rather than blocking the
//! application thread or growing without bound when nobody drains.

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
}
