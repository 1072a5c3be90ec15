//! Counts of records the store refused, by reason.
//!
//! Dropping is always allowed (a bounded profiler must shed load rather than
//! crash, as kineto's ROCTRACER_MAX_EVENTS does) but never silent: every
//! refused record lands in exactly one of these counters, so the trace
//! metadata and the log can say what is missing and why.

use std::fmt;
use std::sync::atomic::Ordering;

use crate::sync::AtomicU64;

/// Records refused, by reason. A plain snapshot; see `DropCounters` for
/// the live counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DropCounts {
    /// Started outside every window the session ever had (before the first,
    /// in a gap between windows, or after the last).
    pub outside_windows: u64,
    /// Started inside a window that had already been finalised: the record
    /// arrived too late to be handed out (teardown raced delivery).
    pub after_finalise: u64,
    /// The window already held its configured maximum number of records.
    pub over_limit: u64,
    /// Could not be used: ended before it started, or the tool could not
    /// decode it (see [`crate::ActivityStore::count_malformed`]).
    pub malformed: u64,
}

impl DropCounts {
    pub fn total(&self) -> u64 {
        self.outside_windows + self.after_finalise + self.over_limit + self.malformed
    }
}

impl fmt::Display for DropCounts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} dropped ({} outside windows, {} after finalise, {} over limit, {} malformed)",
            self.total(),
            self.outside_windows,
            self.after_finalise,
            self.over_limit,
            self.malformed
        )
    }
}

/// Why one record was refused; picks the counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DropReason {
    OutsideWindows,
    AfterFinalise,
    OverLimit,
    Malformed,
}

/// Live counters, bumped from any thread without a lock.
///
/// Relaxed ordering is enough: each counter is an independent tally and a
/// snapshot only needs to see every increment that happened-before it,
/// which the store's locks around finalisation already provide.
#[derive(Debug, Default)]
pub(crate) struct DropCounters {
    outside_windows: AtomicU64,
    after_finalise: AtomicU64,
    over_limit: AtomicU64,
    malformed: AtomicU64,
}

impl DropCounters {
    pub(crate) fn add(&self, reason: DropReason, count: u64) {
        if count == 0 {
            return;
        }
        let counter = match reason {
            DropReason::OutsideWindows => &self.outside_windows,
            DropReason::AfterFinalise => &self.after_finalise,
            DropReason::OverLimit => &self.over_limit,
            DropReason::Malformed => &self.malformed,
        };
        counter.fetch_add(count, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self) -> DropCounts {
        DropCounts {
            outside_windows: self.outside_windows.load(Ordering::Relaxed),
            after_finalise: self.after_finalise.load(Ordering::Relaxed),
            over_limit: self.over_limit.load(Ordering::Relaxed),
            malformed: self.malformed.load(Ordering::Relaxed),
        }
    }
}
