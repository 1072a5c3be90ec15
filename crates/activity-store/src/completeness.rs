//! Knowing when a window has all its records, instead of hoping.
//!
//! `rocprofiler_stop_context` does not wait for work in flight: records keep
//! arriving from the SDK's completion thread after stop, and tearing down on
//! a guess truncated or crashed 18 of 20 runs (kineto PR #1564). The SDK says
//! exactly when a correlation id's asynchronous work has all been delivered
//! (a CORRELATION_ID_RETIREMENT record), so the store keeps a ledger of the
//! ids issued in each pending window and waits, on a condition variable
//! signalled by each retirement, until the window's share is empty or a
//! deadline passes.
//!
//! Locking: one `Mutex` guards the ledger (id -> window) and the count of
//! waiters; `retire` removes under it and signals the `Condvar` only when
//! someone waits, so no wake-up can be lost between a waiter's check and its
//! sleep. The ledger holds only ids still in flight in pending windows, so
//! it stays small and a waiter's recount is cheap.

use std::collections::HashMap;
use std::fmt;
use std::sync::PoisonError;
use std::time::{Duration, Instant};

use crate::hash::BuildCorrelationHasher;
use crate::sync::{Clock, Condvar, Mutex, MutexGuard};
use crate::windows::WindowId;

/// Whether every record of a window was handed out with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Completeness {
    Complete,
    /// Records of the window are missing: `outstanding` correlation ids were
    /// still in flight at the deadline (their records, if they come, are
    /// counted as late and not shown), and `unplaced` records of no known
    /// call (processed on the runtime's async thread, under a correlation
    /// id the SDK made) started after the window stopped, so no window
    /// could be named as theirs.
    Incomplete {
        outstanding: usize,
        unplaced: usize,
    },
}

impl Completeness {
    pub fn is_complete(self) -> bool {
        self == Self::Complete
    }

    pub fn outstanding(self) -> usize {
        match self {
            Self::Complete => 0,
            Self::Incomplete { outstanding, .. } => outstanding,
        }
    }

    /// `Complete` unless something is missing.
    pub fn of(outstanding: usize, unplaced: usize) -> Completeness {
        if outstanding == 0 && unplaced == 0 {
            Self::Complete
        } else {
            Self::Incomplete {
                outstanding,
                unplaced,
            }
        }
    }
}

impl fmt::Display for Completeness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Complete => f.write_str("complete"),
            Self::Incomplete {
                outstanding,
                unplaced: 0,
            } => write!(f, "incomplete ({outstanding} correlation ids outstanding)"),
            Self::Incomplete {
                outstanding,
                unplaced,
            } => write!(
                f,
                "incomplete ({outstanding} correlation ids outstanding, {unplaced} records of no known call started after the stop)"
            ),
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Issued {
    window: WindowId,
    at_ns: u64,
}

#[derive(Debug, Default)]
struct LedgerState {
    /// Issued, not yet retired: correlation id -> the window it was issued
    /// in and when.
    in_flight: HashMap<u64, Issued, BuildCorrelationHasher>,
    waiters: usize,
    /// `Instant::now()`, except in the Loom model.
    clock: Clock,
}

impl LedgerState {
    /// Ids issued in the window up to its stop. An id can be issued while
    /// the window is open-ended and later fall after the stop it is closed
    /// with; it is not the window's.
    fn outstanding_in(&self, window: WindowId, stop_ns: u64) -> usize {
        self.in_flight
            .values()
            .filter(|issued| issued.window == window && issued.at_ns <= stop_ns)
            .count()
    }
}

/// The in-flight correlation ids of every pending window.
#[derive(Debug, Default)]
pub(crate) struct Ledger {
    state: Mutex<LedgerState>,
    retired: Condvar,
}

impl Ledger {
    fn lock(&self) -> MutexGuard<'_, LedgerState> {
        // The state is a map and a counter, each update a single call, so a
        // panic elsewhere while holding the lock leaves it consistent.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn issue(&self, correlation_id: u64, window: WindowId, at_ns: u64) {
        self.lock()
            .in_flight
            .insert(correlation_id, Issued { window, at_ns });
    }

    /// Returns whether the id was in flight. Ids never issued (API calls
    /// outside windows, or that were not expected to produce work) are
    /// ignored.
    pub(crate) fn retire(&self, correlation_id: u64) -> bool {
        let mut state = self.lock();
        let was_in_flight = state.in_flight.remove(&correlation_id).is_some();
        if was_in_flight && state.waiters > 0 {
            // Waiters for different windows share the condvar; each
            // rechecks its own window.
            self.retired.notify_all();
        }
        was_in_flight
    }

    pub(crate) fn outstanding_in(&self, window: WindowId, stop_ns: u64) -> usize {
        self.lock().outstanding_in(window, stop_ns)
    }

    /// The window `correlation_id` was issued in, while it is in flight.
    pub(crate) fn window_of(&self, correlation_id: u64) -> Option<WindowId> {
        self.lock()
            .in_flight
            .get(&correlation_id)
            .map(|issued| issued.window)
    }

    /// Forgets the window's in-flight ids once it is handed out; returns how
    /// many of them were issued by its stop. Their late retirements are then
    /// ignored.
    pub(crate) fn abandon(&self, window: WindowId, stop_ns: u64) -> usize {
        let mut state = self.lock();
        let outstanding = state.outstanding_in(window, stop_ns);
        state.in_flight.retain(|_, issued| issued.window != window);
        // A window whose buffers were flushed late had every id in flight
        // at once: give that room back rather than keep it for the session.
        state.in_flight.shrink_to_fit();
        outstanding
    }

    pub(crate) fn len(&self) -> usize {
        self.lock().in_flight.len()
    }

    /// The Loom model's stand-in for time passing: moves the model clock
    /// and wakes the waiters, as their timed waits would wake by themselves.
    #[cfg(loom)]
    pub(crate) fn pass_time(&self, by: Duration) {
        let mut state = self.lock();
        state.clock.advance(by);
        self.retired.notify_all();
    }

    /// Blocks until `window` has nothing in flight or `deadline` passes.
    ///
    /// `between_waits` runs without the lock held (the tool flushes SDK
    /// buffers there, which may deliver retirements on this very thread):
    /// once before the first wait and again every `flush_interval` while ids
    /// remain, because retirements sitting in a buffer below its watermark
    /// arrive only when flushed. Between flushes the waiter sleeps on the
    /// condvar and wakes on each retirement, not on a timer.
    pub(crate) fn wait_until_retired(
        &self,
        window: WindowId,
        stop_ns: u64,
        deadline: Instant,
        flush_interval: Duration,
        mut between_waits: impl FnMut(),
    ) -> Completeness {
        let mut state = self.lock();
        loop {
            let outstanding = state.outstanding_in(window, stop_ns);
            if outstanding == 0 {
                return Completeness::Complete;
            }
            if state.clock.now() >= deadline {
                return Completeness::Incomplete {
                    outstanding,
                    unplaced: 0,
                };
            }
            drop(state);
            between_waits();
            state = self.lock();
            let flush_again_at = deadline.min(state.clock.now() + flush_interval);
            loop {
                if state.outstanding_in(window, stop_ns) == 0 {
                    break;
                }
                let now = state.clock.now();
                if now >= flush_again_at {
                    break;
                }
                state.waiters += 1;
                let (woken, _) = self
                    .retired
                    .wait_timeout(state, flush_again_at - now)
                    .unwrap_or_else(PoisonError::into_inner);
                state = woken;
                state.waiters -= 1;
            }
        }
    }
}
