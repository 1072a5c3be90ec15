//! Runs the graph-attribution verifier over a finished window and writes its
//! verdicts into the window's graph columns: only vouched or repaired pairs
//! are ever filled in, so a pair the verifier cannot stand behind never
//! leaves the backend.
use activity_store::{CopyDirection, FinalisedWindow};
use graph_attribution::{
    verify_window, ApiSpan, DispatchKind, DispatchObservation, ExecKnowledge, LaunchLedger,
    LaunchRecord, LaunchTracker, SdkLaunch, Verdict, VerificationSummary, WindowEvidence,
};
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::Mutex;

/// Launch records kept between windows for launches whose dispatches have
/// not been verified yet.
const LEDGER_CAPACITY: usize = 1 << 18;

pub struct Verification {
    state: Mutex<State>,
}

struct State {
    ledger: LaunchLedger,
    knowledge: ExecKnowledge,
    lost_seen: u64,
    session: VerificationSummary,
}

impl Default for Verification {
    fn default() -> Self {
        Verification {
            state: Mutex::new(State {
                ledger: LaunchLedger::with_capacity(LEDGER_CAPACITY),
                knowledge: ExecKnowledge::new(),
                lost_seen: 0,
                session: VerificationSummary::default(),
            }),
        }
    }
}

/// A copy's identity: its size, direction and endpoints.
fn signature_of(value: impl Hash) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    value.hash(&mut hasher);
    hasher.finish()
}

fn direction_code(direction: CopyDirection) -> u8 {
    match direction {
        CopyDirection::HostToHost => 1,
        CopyDirection::HostToDevice => 2,
        CopyDirection::DeviceToHost => 3,
        CopyDirection::DeviceToDevice => 4,
        CopyDirection::Unknown => 0,
    }
}

impl Verification {
    /// Verifies `window` in place and returns its summary lines.
    pub fn verify(&self, tracker: &LaunchTracker, window: &mut FinalisedWindow) -> Vec<String> {
        self.verify_with_launches(tracker, window, tracker.drain_launches())
    }

    /// As [`Verification::verify`], with the launches finished since the last
    /// window given rather than drained from the tracker.
    pub fn verify_with_launches(
        &self,
        tracker: &LaunchTracker,
        window: &mut FinalisedWindow,
        finished_launches: Vec<LaunchRecord>,
    ) -> Vec<String> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let State {
            ledger,
            knowledge,
            lost_seen,
            session,
        } = &mut *state;
        ledger.absorb(finished_launches);

        let calls: HashSet<u64> = window.api_calls.correlation_id().iter().copied().collect();
        let launches = ledger.take_where(|correlation| calls.contains(&correlation));
        // Launches older than this window's calls belong to no window left to verify.
        if let Some(&newest) = window.api_calls.correlation_id().iter().max() {
            ledger.take_where(|correlation| correlation <= newest);
        }
        let lost_now = tracker.dropped_launches() + ledger.evicted();
        let launches_lost = lost_now - *lost_seen;
        *lost_seen = lost_now;

        let kernels = &window.kernels;
        let copies = &window.copies;
        let mut observations = Vec::with_capacity(kernels.len() + copies.len());
        for row in kernels.rows() {
            observations.push(DispatchObservation {
                correlation_id: row.correlation_id,
                external: row.external_slot,
                // The SDK's kernel id already names what ran.
                signature: row.kernel_id,
                kind: DispatchKind::Kernel,
                queue_id: row.queue,
                thread_id: row.thread_id,
                start_ns: row.start_ns,
            });
        }
        for row in copies.rows() {
            observations.push(DispatchObservation {
                correlation_id: row.correlation_id,
                external: row.external_slot,
                signature: signature_of((
                    row.bytes,
                    direction_code(row.direction),
                    row.src_agent.0,
                    row.dst_agent.0,
                )),
                kind: DispatchKind::Copy,
                queue_id: 0,
                thread_id: row.thread_id,
                start_ns: row.start_ns,
            });
        }
        let sdk_counts: HashMap<u64, u32> = window
            .graph_launches
            .rows()
            .map(|launch| {
                (
                    launch.correlation_id,
                    launch.kernel_dispatch_count.min(u32::MAX as u64) as u32,
                )
            })
            .collect();
        // For the contended-window rules: each launch's queue, every API
        // call's ENTER/EXIT, and whether any dispatch record may be missing.
        let sdk_launches: Vec<SdkLaunch> = window
            .graph_launches
            .rows()
            .map(|launch| SdkLaunch {
                correlation_id: launch.correlation_id,
                queue_id: launch.queue,
                kernel_dispatch_count: launch.kernel_dispatch_count.min(u32::MAX as u64) as u32,
            })
            .collect();
        let api_spans: Vec<ApiSpan> = window
            .api_calls
            .rows()
            .map(|call| ApiSpan {
                correlation_id: call.correlation_id,
                thread_id: call.thread_id,
                enter_ns: call.start_ns,
                exit_ns: call.end_ns,
            })
            .collect();
        let drops = window.stats.session_drops;
        let dispatches_complete = window.completeness.is_complete()
            && window.stats.over_limit == 0
            && drops.after_finalise == 0
            && drops.over_limit == 0
            && drops.malformed == 0;
        let evidence = WindowEvidence {
            observations: &observations,
            launches: &launches,
            sdk_kernel_counts: (!window.graph_launches.is_empty()).then_some(&sdk_counts),
            launches_lost,
            sdk_launches: (!window.graph_launches.is_empty()).then_some(&sdk_launches[..]),
            api_spans: &api_spans,
            dispatches_complete,
            // The seed's submission hazard (seed 000, as rocprofiler-sim's
            // runtime models it): a launch appends its packets before trying
            // the queue, and the thread holding the queue writes every
            // pending packet. Lets threads that take turns on a queue (steps
            // on fresh threads) be learned and vouched for.
            holder_writes_pending: true,
        };
        let verified = verify_window(&evidence, knowledge);
        for retired in tracker.take_retired_attributions() {
            knowledge.forget(retired);
        }

        let (kernel_verdicts, copy_verdicts) = verified.verdicts.split_at(kernels.len());
        fill(window.kernels.graph_columns_mut(), kernel_verdicts);
        fill(window.copies.graph_columns_mut(), copy_verdicts);
        let links: HashMap<u64, (Option<u64>, Option<u64>)> = window
            .api_calls
            .rows()
            .map(|call| {
                (
                    call.correlation_id,
                    (call.external_id_default, call.external_id_user),
                )
            })
            .collect();
        relink(
            window.kernels.linkage_columns_mut(),
            kernel_verdicts,
            &links,
        );
        relink(window.copies.linkage_columns_mut(), copy_verdicts, &links);

        session.merge(&verified.summary);
        let level = if verified.summary.withheld() > 0 {
            log::Level::Warn
        } else {
            log::Level::Info
        };
        log::log!(
            level,
            "kineto-rocm: window {}: {}",
            window.id.get(),
            verified.summary
        );
        let mut lines = vec![
            format!("attributed={}", verified.summary.attributed),
            format!("vouched={}", verified.summary.vouched),
            format!("repaired={}", verified.summary.repaired),
            format!("withheld={}", verified.summary.withheld()),
            format!("{}", verified.summary),
        ];
        if launches_lost > 0 {
            lines.push(format!("launch_records_lost={launches_lost}"));
        }
        let anomalies = tracker.anomalies();
        if anomalies.total() > 0 {
            lines.push(format!("tracker_anomalies={}", anomalies.total()));
        }
        lines
    }
}

/// A repaired dispatch was credited to the wrong launch, so its correlation
/// id (and the CPU op it links to) may be another thread's. Where the
/// verifier found its true launch, link it to that launch's CPU op; where it
/// could not, drop the link rather than show a wrong one.
fn relink(
    columns: activity_store::LinkageColumnsMut<'_>,
    verdicts: &[Verdict],
    links: &HashMap<u64, (Option<u64>, Option<u64>)>,
) {
    for (i, verdict) in verdicts.iter().enumerate() {
        let Verdict::Repaired { correlation_id, .. } = *verdict else {
            continue;
        };
        let (default, user) = match correlation_id {
            Some(launch) => {
                columns.correlation_id[i] = launch;
                links.get(&launch).copied().unwrap_or((None, None))
            }
            None => (None, None),
        };
        columns.external_id_default[i] = default;
        columns.external_id_user[i] = user;
    }
}

fn fill(columns: activity_store::GraphColumnsMut<'_>, verdicts: &[Verdict]) {
    for (i, verdict) in verdicts.iter().enumerate() {
        if let Some(key) = verdict.emitted_key() {
            columns.graph_id[i] = Some(key.graph_id());
            columns.graph_node_id[i] = Some(key.graph_node_id());
        }
    }
}
