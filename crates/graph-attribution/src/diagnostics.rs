//! Anomalies seen while tracking, counted and warned about once per cause.
//!
//! A callback that misbehaves (an EXIT without ENTER, an id that cannot be
//! packed) tends to misbehave on every call, so a warning per occurrence
//! would flood the log and cost a write on the hot path each time. Instead
//! each cause is counted with one relaxed atomic add and logged the first
//! time only; the counts travel to the trace metadata through
//! [`AnomalyCounts`].

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

/// Something the tracker had to work around. Each has its own counter and
/// its own one-time warning.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Anomaly {
    /// An SDK exec id of 0 at create or launch: attribution dropped.
    ExecIdZero,
    /// An SDK exec id of 2^32 or more: it cannot be packed, attribution
    /// dropped rather than aliased.
    ExecIdTooWide,
    /// An SDK exec id that reached the ids handed to updated execs from the
    /// top of the field: attribution dropped rather than aliased.
    ExecIdCollidesWithRekeyRange,
    /// No fresh id was left for an updated exec (the re-key range met the
    /// ids growing from 1): that exec's attribution dropped.
    RekeyRangeExhausted,
    /// The tracker's own ids (SDK < 1.3) met the re-key range: attribution
    /// dropped for new execs.
    RuntimeIdsExhausted,
    /// A launch named an exec whose instantiate was never seen (SDK < 1.3):
    /// that launch is not attributed.
    LaunchOfUnseenExec,
    /// A launch in the form of the other SDK version than the tracker was
    /// built for.
    IdentityModeMismatch,
    /// An EXIT on a thread with no launch in progress: ignored.
    ExitWithoutEnter,
    /// An EXIT naming an exec that is not on this thread's stack: ignored.
    ExitOfUnknownExec,
    /// An EXIT naming a launch below the top of the stack: the launches
    /// above it were closed as abandoned.
    ExitOutOfOrder,
    /// Launches nested deeper than the stack holds: the extra ones carry no
    /// attribution.
    StackOverflow,
    /// A launch credited more than 2^32 dispatches: the rest are not
    /// attributed.
    OrdinalCounterExhausted,
    /// The launch log was full when a launch ended: its record was dropped
    /// and the verifier will not vouch for that launch.
    LaunchLogFull,
}

impl Anomaly {
    pub const ALL: [Anomaly; 13] = [
        Anomaly::ExecIdZero,
        Anomaly::ExecIdTooWide,
        Anomaly::ExecIdCollidesWithRekeyRange,
        Anomaly::RekeyRangeExhausted,
        Anomaly::RuntimeIdsExhausted,
        Anomaly::LaunchOfUnseenExec,
        Anomaly::IdentityModeMismatch,
        Anomaly::ExitWithoutEnter,
        Anomaly::ExitOfUnknownExec,
        Anomaly::ExitOutOfOrder,
        Anomaly::StackOverflow,
        Anomaly::OrdinalCounterExhausted,
        Anomaly::LaunchLogFull,
    ];

    const fn index(self) -> usize {
        self as usize
    }

    /// What happened and what the tracker did about it, for the log.
    pub const fn explanation(self) -> &'static str {
        match self {
            Anomaly::ExecIdZero => {
                "a HIP graph exec arrived with id 0; its dispatches are not attributed"
            }
            Anomaly::ExecIdTooWide => {
                "a HIP graph exec id does not fit 32 bits; its dispatches are not attributed \
                 rather than given an aliased id"
            }
            Anomaly::ExecIdCollidesWithRekeyRange => {
                "a HIP graph exec id reached the ids given to updated execs; its dispatches \
                 are not attributed rather than given an aliased id"
            }
            Anomaly::RekeyRangeExhausted => {
                "no fresh graph id is left for an updated exec; its dispatches are not \
                 attributed from now on"
            }
            Anomaly::RuntimeIdsExhausted => {
                "no graph id is left for a new exec; its dispatches are not attributed"
            }
            Anomaly::LaunchOfUnseenExec => {
                "a graph launch named an exec whose instantiate was not seen; that launch \
                 is not attributed"
            }
            Anomaly::IdentityModeMismatch => {
                "a graph launch arrived in the form of another rocprofiler-sdk version than \
                 the tracker expects; it is not attributed"
            }
            Anomaly::ExitWithoutEnter => {
                "a graph launch EXIT arrived on a thread with no launch in progress; ignored"
            }
            Anomaly::ExitOfUnknownExec => {
                "a graph launch EXIT named an exec not being launched on this thread; ignored"
            }
            Anomaly::ExitOutOfOrder => {
                "a graph launch EXIT skipped launches still open above it; those were closed \
                 as abandoned"
            }
            Anomaly::StackOverflow => {
                "graph launches nested deeper than the launch stack holds; the deeper ones \
                 are not attributed"
            }
            Anomaly::OrdinalCounterExhausted => {
                "a graph launch produced more than 2^32 dispatches; the rest are not attributed"
            }
            Anomaly::LaunchLogFull => {
                "the graph launch log was full; a launch record was dropped and its \
                 dispatches will be withheld"
            }
        }
    }
}

impl fmt::Display for Anomaly {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// Per-cause counters; the first occurrence of each cause logs one warning.
#[derive(Debug, Default)]
pub struct Diagnostics {
    counts: [AtomicU64; Anomaly::ALL.len()],
}

impl Diagnostics {
    /// Count one occurrence; warn if it is the first of its cause.
    ///
    /// The warning is the only place the hot path may reach the logger, and
    /// it does so at most once per cause per tracker.
    pub fn note(&self, anomaly: Anomaly) {
        let before = self.counts[anomaly.index()].fetch_add(1, Ordering::Relaxed);
        if before == 0 {
            warn_first(anomaly);
        }
    }

    pub fn count(&self, anomaly: Anomaly) -> u64 {
        self.counts[anomaly.index()].load(Ordering::Relaxed)
    }

    pub fn snapshot(&self) -> AnomalyCounts {
        AnomalyCounts {
            counts: std::array::from_fn(|i| self.counts[i].load(Ordering::Relaxed)),
        }
    }
}

#[cold]
#[inline(never)]
fn warn_first(anomaly: Anomaly) {
    log::warn!(
        "graph attribution: {} (further occurrences of {anomaly} are counted, not logged)",
        anomaly.explanation()
    );
}

/// A copy of the anomaly counters, for the trace metadata and tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct AnomalyCounts {
    counts: [u64; Anomaly::ALL.len()],
}

impl AnomalyCounts {
    pub fn count(&self, anomaly: Anomaly) -> u64 {
        self.counts[anomaly.index()]
    }

    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }
}

impl fmt::Display for AnomalyCounts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut any = false;
        for anomaly in Anomaly::ALL {
            let n = self.count(anomaly);
            if n > 0 {
                write!(f, "{}{anomaly}: {n}", if any { ", " } else { "" })?;
                any = true;
            }
        }
        if !any {
            write!(f, "no anomalies")?;
        }
        Ok(())
    }
}
