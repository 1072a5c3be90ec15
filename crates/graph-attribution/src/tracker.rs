//! The launch tracker: what the tool library's SDK callbacks call.
//!
//! Why it exists: rocprofiler-sdk puts no graph identity on a dispatch
//! record, so the identity has to be captured when the dispatch is
//! requested. The tracker answers the SDK's external-correlation request
//! with a packed (attribution id, ordinal) taken from the requesting
//! thread's innermost graph launch, and logs every finished launch for the
//! verifier, which later checks those answers against what actually ran.
//!
//! Two kinds of entry point:
//! - rare path (exec created, updated, destroyed): may lock and allocate;
//! - hot path ([`LaunchTracker::enter_launch`],
//!   [`LaunchTracker::external_for_dispatch`], [`LaunchTracker::exit_launch`]):
//!   thread-local state and atomics only, no allocation, lock or syscall.
//!   The single exception is the first occurrence of an anomaly, which logs
//!   one warning per cause per tracker.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::diagnostics::{Anomaly, AnomalyCounts, Diagnostics};
use crate::exec_table::ExecTable;
use crate::ids::{AttributionId, ExecHandle, ExecIdentity, LaunchedExec};
use crate::launch_log::{LaunchLog, LaunchRecord};
use crate::launch_stack::{self, Frame};

/// Default number of finished launches the log holds between drains.
pub const DEFAULT_LAUNCH_LOG_CAPACITY: usize = 1 << 16;

/// How a tracker is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrackerConfig {
    /// Where exec ids come from (depends on the SDK version).
    pub identity: ExecIdentity,
    /// Finished launches held between drains before new ones are dropped.
    pub launch_log_capacity: usize,
}

impl TrackerConfig {
    pub fn new(identity: ExecIdentity) -> TrackerConfig {
        TrackerConfig {
            identity,
            launch_log_capacity: DEFAULT_LAUNCH_LOG_CAPACITY,
        }
    }
}

/// The launch API call a launch callback belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchCall {
    /// The SDK's internal correlation id of the launch call.
    pub correlation_id: u64,
    /// The calling thread, in the id space of the dispatch records'
    /// `thread_id` (the SDK's thread id).
    pub thread_id: u64,
}

static NEXT_SERIAL: AtomicU64 = AtomicU64::new(1);

/// Tracks graph launches per thread and answers external-correlation
/// requests. One per profiling session; `Sync`, shared by all callbacks.
pub struct LaunchTracker {
    /// Distinguishes this tracker's thread-local stacks from a previous one's.
    serial: u64,
    execs: ExecTable,
    log: LaunchLog,
    diagnostics: Diagnostics,
    #[cfg(feature = "naive-launch-stack")]
    naive: NaiveLaunchStack,
}

/// The first round's first version, with one of its two exec-lifecycle handlings
/// left out, so tests can show the aliasing each one prevents. Built only
/// with the `naive-launch-stack` feature (the crate's own tests); never used
/// to collect.
#[cfg(feature = "naive-launch-stack")]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NaiveLaunchStack {
    /// hipGraphExecUpdate keeps the exec's id.
    pub ignore_updates: bool,
    /// Create and destroy forget nothing: a new exec at a reused address
    /// inherits whatever id the address had.
    pub ignore_create_and_destroy: bool,
}

impl LaunchTracker {
    pub fn new(config: TrackerConfig) -> LaunchTracker {
        LaunchTracker {
            serial: NEXT_SERIAL.fetch_add(1, Ordering::Relaxed),
            execs: ExecTable::new(config.identity),
            log: LaunchLog::with_capacity(config.launch_log_capacity),
            diagnostics: Diagnostics::default(),
            #[cfg(feature = "naive-launch-stack")]
            naive: NaiveLaunchStack::default(),
        }
    }

    /// A tracker with some of the exec-lifecycle handling left out (tests only).
    #[cfg(feature = "naive-launch-stack")]
    pub fn naive(config: TrackerConfig, naive: NaiveLaunchStack) -> LaunchTracker {
        LaunchTracker {
            naive,
            ..LaunchTracker::new(config)
        }
    }

    pub fn identity(&self) -> ExecIdentity {
        self.execs.identity()
    }

    // ---- rare path -------------------------------------------------------

    /// An exec was created: SDK 1.3 EXEC_CREATE (id and handle), or a
    /// hipGraphInstantiate* that returned hipSuccess (handle). Forgets any
    /// previous exec at that handle. Returns the exec's attribution id, or
    /// `None` when its dispatches will not be attributed (warned once).
    pub fn exec_created(&self, exec: LaunchedExec) -> Option<AttributionId> {
        #[cfg(feature = "naive-launch-stack")]
        if self.naive.ignore_create_and_destroy {
            if let Some(inherited) = self.execs.current_attribution(exec.handle()) {
                return Some(inherited);
            }
        }
        self.execs.exec_created(exec, &self.diagnostics).ok()
    }

    /// An exec was destroyed (SDK 1.3 EXEC_DESTROY or hipGraphExecDestroy).
    /// Its handle will be reused by a later instantiate, which must start
    /// afresh.
    pub fn exec_destroyed(&self, handle: ExecHandle) {
        #[cfg(feature = "naive-launch-stack")]
        if self.naive.ignore_create_and_destroy {
            return;
        }
        self.execs.exec_destroyed(handle);
    }

    /// hipGraphExecUpdate returned hipSuccess for `handle`: the exec gets a
    /// fresh id from the top of the 32-bit field downward, so ordinals from
    /// before and after the update never share a key. Returns the new id, or
    /// `None` if none is left (warned once).
    pub fn exec_updated(&self, handle: ExecHandle) -> Option<AttributionId> {
        #[cfg(feature = "naive-launch-stack")]
        if self.naive.ignore_updates {
            return self.execs.current_attribution(handle);
        }
        self.execs.exec_updated(handle, &self.diagnostics).ok()
    }

    /// The id a launch of the exec at `handle` is attributed to now, without
    /// entering a launch (the evidence method reads it at each launch).
    pub fn attribution_of(&self, handle: ExecHandle) -> Option<AttributionId> {
        self.execs.current_attribution(handle)
    }

    /// Give ids to execs launched before their instantiate was seen (SDK <
    /// 1.3 only; also done on every create and update).
    pub fn adopt_unseen_execs(&self) {
        self.execs.adopt_unseen_execs(&self.diagnostics);
    }

    /// Attribution ids that no future launch will carry, for
    /// [`crate::SessionMemory::forget`] once their last window is verified.
    pub fn take_retired_attributions(&self) -> Vec<AttributionId> {
        self.execs.take_retired()
    }

    // ---- hot path --------------------------------------------------------

    /// A graph launch began on this thread (SDK 1.3 EXEC_LAUNCH ENTER, or
    /// hipGraphLaunch ENTER). Returns the id its dispatches will carry.
    #[inline]
    pub fn enter_launch(&self, exec: LaunchedExec, call: LaunchCall) -> Option<AttributionId> {
        let attribution = match self.execs.attribution_for_launch(exec) {
            Ok(id) => Some(id),
            Err(cause) => {
                self.diagnostics.note(cause);
                None
            }
        };
        let frame = Frame::new(exec, attribution, call.correlation_id, call.thread_id);
        match launch_stack::push(self.serial, frame) {
            Ok(()) => attribution,
            Err(cause) => {
                self.diagnostics.note(cause);
                None
            }
        }
    }

    /// The value for the external-correlation slot of a kernel dispatch or
    /// memory copy requested now on this thread: the packed key of the
    /// innermost attributed launch's next ordinal, or 0 (not graphed).
    #[inline]
    pub fn external_for_dispatch(&self) -> u64 {
        match launch_stack::credit_dispatch(self.serial) {
            Ok(packed) => packed,
            Err(cause) => {
                self.diagnostics.note(cause);
                0
            }
        }
    }

    /// A graph launch ended on this thread (EXEC_LAUNCH EXIT or
    /// hipGraphLaunch EXIT). Its frame becomes a [`LaunchRecord`] in the
    /// launch log. A mismatched EXIT never corrupts later attribution: if
    /// `exec` is below the top of the stack, the launches above it lost
    /// their EXIT and are logged as [`crate::LaunchEnding::Abandoned`]; if it
    /// is not on the stack, or the stack is empty, the EXIT is ignored. Each
    /// cause is warned about once.
    #[inline]
    pub fn exit_launch(&self, exec: LaunchedExec) {
        let log = &self.log;
        let diagnostics = &self.diagnostics;
        let outcome = launch_stack::pop(self.serial, exec, |frame, ending| {
            let record = LaunchRecord {
                correlation_id: frame.correlation_id,
                attribution: frame.attribution,
                exec: frame.exec,
                thread_id: frame.thread_id,
                credited_dispatches: frame.credited(),
                ending,
            };
            if !log.push(record) {
                diagnostics.note(Anomaly::LaunchLogFull);
            }
        });
        if let Err(cause) = outcome {
            self.diagnostics.note(cause);
        }
    }

    /// Launches in progress on the calling thread (including any nested
    /// beyond the stack's capacity).
    pub fn depth_on_this_thread(&self) -> usize {
        launch_stack::depth(self.serial)
    }

    // ---- consumer side ---------------------------------------------------

    /// Every launch finished since the last drain, oldest first.
    pub fn drain_launches(&self) -> Vec<LaunchRecord> {
        self.log.drain()
    }

    /// As [`LaunchTracker::drain_launches`], reusing `into`'s allocation.
    pub fn drain_launches_into(&self, into: &mut Vec<LaunchRecord>) {
        self.log.drain_into(into)
    }

    /// Launch records lost to a full log.
    pub fn dropped_launches(&self) -> u64 {
        self.log.dropped()
    }

    /// How often each anomaly occurred.
    pub fn anomalies(&self) -> AnomalyCounts {
        self.diagnostics.snapshot()
    }

    #[cfg(test)]
    pub(crate) fn serial(&self) -> u64 {
        self.serial
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{GraphKey, NodeId};
    use crate::launch_log::LaunchEnding;

    fn sdk(id: u64) -> LaunchedExec {
        LaunchedExec::Sdk {
            graph_exec_id: id,
            handle: ExecHandle(0x1000 * id),
        }
    }

    fn call(correlation_id: u64) -> LaunchCall {
        LaunchCall {
            correlation_id,
            thread_id: 1,
        }
    }

    fn key(id: u32, ordinal: u32) -> u64 {
        GraphKey::new(AttributionId::new(id).unwrap(), NodeId(ordinal)).pack()
    }

    fn tracker() -> LaunchTracker {
        LaunchTracker::new(TrackerConfig::new(ExecIdentity::SdkGraphDomain))
    }

    #[test]
    fn a_launch_credits_ordinals_from_zero_and_logs_its_count() {
        let t = tracker();
        assert_eq!(t.external_for_dispatch(), 0, "outside a launch");
        t.enter_launch(sdk(3), call(100));
        for n in 0..6 {
            assert_eq!(t.external_for_dispatch(), key(3, n));
        }
        t.exit_launch(sdk(3));
        assert_eq!(t.external_for_dispatch(), 0);
        let records = t.drain_launches();
        assert_eq!(records.len(), 1);
        assert_eq!(records[0].correlation_id, 100);
        assert_eq!(records[0].credited_dispatches, 6);
        assert_eq!(records[0].attribution, AttributionId::new(3));
        assert_eq!(records[0].ending, LaunchEnding::Exited);
        assert_eq!(t.anomalies().total(), 0);
    }

    #[test]
    fn nested_launches_keep_their_own_counters() {
        let t = tracker();
        t.enter_launch(sdk(1), call(1));
        assert_eq!(t.external_for_dispatch(), key(1, 0));
        t.enter_launch(sdk(2), call(2));
        assert_eq!(t.external_for_dispatch(), key(2, 0));
        assert_eq!(t.external_for_dispatch(), key(2, 1));
        t.exit_launch(sdk(2));
        assert_eq!(t.external_for_dispatch(), key(1, 1), "outer resumes");
        t.exit_launch(sdk(1));
        let counts: Vec<(u64, u32)> = t
            .drain_launches()
            .iter()
            .map(|r| (r.correlation_id, r.credited_dispatches))
            .collect();
        assert_eq!(counts, vec![(2, 2), (1, 2)]);
    }

    #[test]
    fn exit_without_enter_is_ignored_with_one_warning() {
        let t = tracker();
        t.exit_launch(sdk(1));
        t.exit_launch(sdk(1));
        assert_eq!(t.anomalies().count(Anomaly::ExitWithoutEnter), 2);
        // Later attribution is intact.
        t.enter_launch(sdk(1), call(1));
        assert_eq!(t.external_for_dispatch(), key(1, 0));
        t.exit_launch(sdk(1));
        assert_eq!(t.depth_on_this_thread(), 0);
        assert_eq!(t.drain_launches().len(), 1);
    }

    #[test]
    fn exit_of_an_exec_not_on_the_stack_leaves_the_stack_alone() {
        let t = tracker();
        t.enter_launch(sdk(1), call(1));
        t.exit_launch(sdk(2));
        assert_eq!(t.anomalies().count(Anomaly::ExitOfUnknownExec), 1);
        assert_eq!(t.depth_on_this_thread(), 1);
        assert_eq!(t.external_for_dispatch(), key(1, 0));
        t.exit_launch(sdk(1));
        assert_eq!(t.depth_on_this_thread(), 0);
    }

    #[test]
    fn exit_below_the_top_closes_the_launches_above_as_abandoned() {
        let t = tracker();
        t.enter_launch(sdk(1), call(1));
        t.enter_launch(sdk(2), call(2));
        assert_eq!(t.external_for_dispatch(), key(2, 0));
        t.exit_launch(sdk(1)); // exec 2's EXIT was lost
        assert_eq!(t.anomalies().count(Anomaly::ExitOutOfOrder), 1);
        assert_eq!(t.depth_on_this_thread(), 0);
        assert_eq!(t.external_for_dispatch(), 0);
        let endings: Vec<(u64, LaunchEnding)> = t
            .drain_launches()
            .iter()
            .map(|r| (r.correlation_id, r.ending))
            .collect();
        assert_eq!(
            endings,
            vec![(2, LaunchEnding::Abandoned), (1, LaunchEnding::Exited)]
        );
    }

    #[test]
    fn launches_nested_beyond_capacity_are_balanced_but_not_attributed() {
        let t = tracker();
        let cap = launch_stack::STACK_CAPACITY as u64;
        for i in 1..=cap + 3 {
            t.enter_launch(sdk(i), call(i));
        }
        assert_eq!(t.depth_on_this_thread(), cap as usize + 3);
        assert_eq!(t.anomalies().count(Anomaly::StackOverflow), 3);
        assert_eq!(t.external_for_dispatch(), 0, "deepest launch has no frame");
        for i in (cap + 1..=cap + 3).rev() {
            t.exit_launch(sdk(i));
        }
        assert_eq!(t.external_for_dispatch(), key(cap as u32, 0));
        for i in (1..=cap).rev() {
            t.exit_launch(sdk(i));
        }
        assert_eq!(t.depth_on_this_thread(), 0);
        assert_eq!(t.drain_launches().len(), cap as usize);
        assert_eq!(t.anomalies().count(Anomaly::ExitWithoutEnter), 0);
    }

    #[test]
    fn the_ordinal_counter_stops_at_u32_max_instead_of_wrapping() {
        let t = tracker();
        t.enter_launch(sdk(1), call(1));
        launch_stack::set_next_ordinal(t.serial(), u32::MAX - 1);
        assert_eq!(t.external_for_dispatch(), key(1, u32::MAX - 1));
        assert_eq!(t.external_for_dispatch(), key(1, u32::MAX));
        assert_eq!(t.external_for_dispatch(), 0);
        assert_eq!(t.external_for_dispatch(), 0);
        assert_eq!(t.anomalies().count(Anomaly::OrdinalCounterExhausted), 2);
        t.exit_launch(sdk(1));
        assert_eq!(t.drain_launches()[0].credited_dispatches, u32::MAX);
    }

    #[test]
    fn an_unpackable_exec_gets_no_pair_at_all() {
        let t = tracker();
        let wide = LaunchedExec::Sdk {
            graph_exec_id: 1 << 32,
            handle: ExecHandle(0xA),
        };
        assert_eq!(t.exec_created(wide), None);
        assert_eq!(t.enter_launch(wide, call(1)), None);
        assert_eq!(t.external_for_dispatch(), 0);
        t.exit_launch(wide);
        assert_eq!(t.drain_launches()[0].attribution, None);
        assert_eq!(t.anomalies().count(Anomaly::ExecIdTooWide), 2);
    }

    #[test]
    fn a_new_tracker_does_not_inherit_a_previous_trackers_open_launches() {
        let old = tracker();
        old.enter_launch(sdk(1), call(1));
        let new = tracker();
        assert_eq!(new.depth_on_this_thread(), 0);
        assert_eq!(new.external_for_dispatch(), 0);
        new.enter_launch(sdk(2), call(2));
        assert_eq!(new.external_for_dispatch(), key(2, 0));
    }
}
