//! Graph attribution wired to the SDK.
//!
//! For the whole session (a callback context that stays active between
//! trace windows): the graph-building calls feed [`GraphStructure`], exec
//! lifecycle feeds the tracker's attribution ids, code-object callbacks map
//! host stubs to kernel ids, and [`Presence`] notes which threads are inside
//! a packet-writing call. While a window is open, each call's device work is
//! read from its arguments at ENTER. When a window is finished, its records
//! are attributed from that evidence (`graph_attribution::attribute_window`)
//! and only proven keys and links are written into its columns.
//!
//! `KINETO_ROCM_ATTRIBUTION_METHOD=seed` instead runs the SDK's documented
//! recipe (a per-thread launch stack answered through the external
//! correlation service) and emits its answers as they are: the seed PR's
//! method, kept so its failure under shared queues can be shown.
use super::hip_calls::{self, Captures, Role};
use super::presence::Presence;
use activity_store::{CopyDirection, FinalisedWindow};
use dashmap::DashMap;
use graph_attribution::{
    attribute_window, BlitKind, Call, CallWork, Direction, ExecHandle, ExecIdentity, GraphKey,
    GraphStructure, KernelShape, KeyVerdict, LaunchCall, LaunchTracker, LaunchedExec, LinkVerdict,
    Observation, Observed, SessionMemory, TrackerConfig, WindowEvidence,
};
use rocprofiler_sys::*;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, RwLock};

/// How graph keys are found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// From evidence: graph structure, call times, queue order.
    Evidence,
    /// The SDK's recipe: the processing thread's launch stack, unchecked.
    Seed,
}

impl Method {
    /// `KINETO_ROCM_ATTRIBUTION_METHOD`: `evidence` (default) or `seed`.
    pub fn from_env() -> Method {
        match std::env::var("KINETO_ROCM_ATTRIBUTION_METHOD").as_deref() {
            Ok("seed") => Method::Seed,
            Ok("evidence") | Err(_) => Method::Evidence,
            Ok(other) => {
                log::warn!(
                    "kineto-rocm: KINETO_ROCM_ATTRIBUTION_METHOD={other:?} is not `evidence` or `seed`; using evidence"
                );
                Method::Evidence
            }
        }
    }
}

/// What a trace window needs from the session around it.
pub struct WindowSpan {
    pub opened_ns: u64,
    pub closed_ns: u64,
    /// The last correlation id issued before the window closed.
    pub last_correlation_id: u64,
}

pub struct Attribution {
    method: Method,
    tracker: LaunchTracker,
    structure: GraphStructure,
    captures: Captures,
    /// Host stub -> kernel id (HOST_KERNEL_SYMBOL_REGISTER).
    stubs: RwLock<HashMap<u64, u64>>,
    /// Kernel ids of the runtime's blit kernels, and which kind each is.
    blits: RwLock<HashMap<u64, BlitKind>>,
    /// Device work of the calls of open windows, by correlation id.
    works: DashMap<u64, CallWork>,
    presence: Presence,
    memory: Mutex<SessionMemory>,
    last_correlation_id: AtomicU64,
    /// Packets a hardware queue holds (`ROC_AQL_QUEUE_SIZE`, read as the
    /// runtime reads it).
    queue_slots: u64,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// rocclr's own kernels (rocblit.hpp `BlitName`): fills and buffer copies
/// the runtime launches for memsets and copies.
const BLIT_PREFIX: &str = "__amd_rocclr_";

impl Attribution {
    pub fn new(graph_domain: bool, method: Method) -> Attribution {
        let identity = if graph_domain {
            ExecIdentity::SdkGraphDomain
        } else {
            ExecIdentity::RuntimeApi
        };
        Attribution {
            method,
            tracker: LaunchTracker::new(TrackerConfig::new(identity)),
            structure: GraphStructure::new(),
            captures: Captures::default(),
            stubs: RwLock::new(HashMap::new()),
            blits: RwLock::new(HashMap::new()),
            works: DashMap::new(),
            presence: Presence::default(),
            memory: Mutex::new(SessionMemory::new()),
            last_correlation_id: AtomicU64::new(0),
            queue_slots: std::env::var("ROC_AQL_QUEUE_SIZE")
                .ok()
                .and_then(|v| v.trim().parse().ok())
                .filter(|&v: &u64| v > 0)
                .unwrap_or(graph_attribution::evidence::DEFAULT_QUEUE_SLOTS),
        }
    }

    pub fn method(&self) -> Method {
        self.method
    }

    #[inline]
    pub fn tracker(&self) -> &LaunchTracker {
        &self.tracker
    }

    fn by_runtime_api(&self) -> bool {
        self.tracker.identity() == ExecIdentity::RuntimeApi
    }

    pub fn on_host_kernel(&self, host_function: u64, kernel_id: u64) {
        self.stubs
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(host_function, kernel_id);
    }

    pub fn on_device_kernel(&self, kernel_id: u64, name: &str) {
        if name.starts_with(BLIT_PREFIX) {
            self.blits
                .write()
                .unwrap_or_else(|p| p.into_inner())
                .insert(kernel_id, BlitKind::of_kernel(name));
        }
    }

    pub fn window_opened(&self, now_ns: u64) {
        self.presence.window_opened(now_ns);
    }

    pub fn last_correlation_id(&self) -> u64 {
        self.last_correlation_id.load(Ordering::Relaxed)
    }

    /// A HIP runtime call's ENTER or EXIT, on its thread, at `now_ns`;
    /// `collecting` says whether a window is open.
    pub fn on_hip_api(
        &self,
        operation: i32,
        phase: rocprofiler_callback_phase_t,
        call: LaunchCall,
        data: &rocprofiler_callback_tracing_hip_api_data_t,
        now_ns: u64,
        collecting: bool,
    ) {
        let role = hip_calls::role(operation);
        let enter = phase == rocprofiler_callback_phase_t::ENTER;
        let exit = phase == rocprofiler_callback_phase_t::EXIT;
        if enter {
            self.last_correlation_id
                .fetch_max(call.correlation_id, Ordering::Relaxed);
        }
        if role.writes_packets() {
            if enter {
                self.presence.entered(call.thread_id, now_ns);
            } else if exit {
                self.presence.exited(call.thread_id, now_ns);
            }
        }
        if enter && collecting && self.method == Method::Evidence {
            // SAFETY: `data.args` is the payload of `operation`.
            let work = unsafe {
                hip_calls::work_at_enter(
                    role,
                    &data.args,
                    |stream| self.captures.capturing(stream),
                    |exec| CallWork::Graph {
                        graph_id: self.tracker.attribution_of(exec),
                        exec: self.structure.exec_contents(exec),
                    },
                )
            };
            if !matches!(work, CallWork::NoDevice) {
                self.works.insert(call.correlation_id, work);
            }
        }
        // SAFETY: the retval member is plain data.
        let succeeded = exit && unsafe { data.retval.hipError_t_retval } == HIP_SUCCESS;
        if succeeded {
            if let Role::Build(build) = role {
                // SAFETY: `data.args` is the payload of a successful call of
                // `build`'s operation, at EXIT.
                unsafe { hip_calls::follow(build, &data.args, &self.structure, &self.captures) };
            }
        }
        self.track_exec_ids(operation, role, phase, call, data, succeeded);
    }

    /// Exec lifecycle and, for the seed method, launches (SDK < 1.3 sees them
    /// only through the runtime API; updates are seen only there on every
    /// version).
    fn track_exec_ids(
        &self,
        operation: i32,
        role: Role,
        phase: rocprofiler_callback_phase_t,
        call: LaunchCall,
        data: &rocprofiler_callback_tracing_hip_api_data_t,
        succeeded: bool,
    ) {
        use hip_calls::Build;
        use hip_runtime_api_id as op;
        match role {
            Role::Build(Build::ExecUpdate) if succeeded => {
                // SAFETY: hipGraphExecUpdate's arguments.
                let handle = unsafe { data.args.hipGraphExecUpdate.hGraphExec } as u64;
                self.tracker.exec_updated(ExecHandle(handle));
            }
            _ if !self.by_runtime_api() => {}
            Role::Build(Build::Instantiate) if succeeded => {
                // SAFETY: every instantiate starts with `hipGraphExec_t* pGraphExec`,
                // written at EXIT of a successful call.
                let out = unsafe { data.args.hipGraphInstantiate.pGraphExec };
                if !out.is_null() {
                    // SAFETY: the application's output slot, valid during the callback.
                    let handle = unsafe { std::ptr::read(out) } as u64;
                    self.tracker.exec_created(LaunchedExec::Runtime {
                        handle: ExecHandle(handle),
                    });
                }
            }
            Role::Build(Build::ExecDestroy) if succeeded => {
                // SAFETY: hipGraphExecDestroy's arguments.
                let handle = unsafe { data.args.hipGraphExecDestroy.graphExec } as u64;
                self.tracker.exec_destroyed(ExecHandle(handle));
            }
            Role::GraphLaunch if self.method == Method::Seed => {
                debug_assert!(matches!(
                    operation,
                    op::hipGraphLaunch | op::hipGraphLaunch_spt
                ));
                // SAFETY: both launches take (graphExec, stream).
                let handle = ExecHandle(unsafe { data.args.hipGraphLaunch.graphExec } as u64);
                let exec = LaunchedExec::Runtime { handle };
                match phase {
                    rocprofiler_callback_phase_t::ENTER => {
                        self.tracker.enter_launch(exec, call);
                    }
                    rocprofiler_callback_phase_t::EXIT => self.tracker.exit_launch(exec),
                    _ => {}
                }
            }
            _ => {}
        }
    }

    /// SDK 1.3+ HIP_GRAPH callbacks.
    pub fn on_graph_domain(
        &self,
        operation: rocprofiler_hip_graph_operation_t,
        phase: rocprofiler_callback_phase_t,
        call: LaunchCall,
        graph_exec_id: u64,
        handle: u64,
    ) {
        let exec = LaunchedExec::Sdk {
            graph_exec_id,
            handle: ExecHandle(handle),
        };
        match operation {
            rocprofiler_hip_graph_operation_t::EXEC_CREATE => {
                self.tracker.exec_created(exec);
            }
            rocprofiler_hip_graph_operation_t::EXEC_DESTROY => {
                self.tracker.exec_destroyed(ExecHandle(handle))
            }
            rocprofiler_hip_graph_operation_t::EXEC_LAUNCH if self.method == Method::Seed => {
                match phase {
                    rocprofiler_callback_phase_t::ENTER => {
                        self.tracker.enter_launch(exec, call);
                    }
                    rocprofiler_callback_phase_t::EXIT => self.tracker.exit_launch(exec),
                    _ => {}
                }
            }
            _ => {}
        }
    }

    /// Attributes a finished window in place; returns its summary lines.
    /// `complete`: every record of the window arrived and none was dropped;
    /// `calls_complete`: no HIP call record was dropped. Returns the summary
    /// lines, and whether records may be missing although every correlation
    /// id retired (a queue may have overflowed: ROCr processes the rest on
    /// its async thread, under correlation ids no call issued).
    pub fn attribute(
        &self,
        window: &mut FinalisedWindow,
        span: &WindowSpan,
        complete: bool,
        calls_complete: bool,
    ) -> (Vec<String>, bool) {
        let works: Vec<(u64, CallWork)> = {
            let keys: Vec<u64> = self
                .works
                .iter()
                .map(|e| *e.key())
                .filter(|&c| c <= span.last_correlation_id)
                .collect();
            keys.into_iter()
                .filter_map(|c| self.works.remove(&c))
                .collect()
        };
        // Calls in flight at the window's start, and those still in flight
        // now (whose records have not arrived), are edges of its evidence.
        let mut open_edge = self.presence.take_open_edge(span.opened_ns);
        open_edge.extend(self.presence.in_flight());
        let out = match self.method {
            Method::Evidence => {
                self.by_evidence(window, span, (complete, calls_complete), works, &open_edge)
            }
            Method::Seed => (self.by_seed(window), false),
        };
        lock(&self.memory).forget(&self.tracker.take_retired_attributions());
        out
    }

    fn by_seed(&self, window: &mut FinalisedWindow) -> Vec<String> {
        let mut carried = 0u64;
        let kernel_slots: Vec<u64> = window.kernels.external_slot().to_vec();
        let copy_slots: Vec<u64> = window.copies.external_slot().to_vec();
        for (slots, columns) in [
            (&kernel_slots, window.kernels.graph_columns_mut()),
            (&copy_slots, window.copies.graph_columns_mut()),
        ] {
            for (i, slot) in slots.iter().enumerate() {
                if let Some(key) = GraphKey::unpack(*slot) {
                    columns.graph_id[i] = Some(key.graph_id());
                    columns.graph_node_id[i] = Some(key.graph_node_id());
                    carried += 1;
                }
            }
        }
        let launches = self.tracker.drain_launches();
        vec![
            format!("graph attribution (seed method, unverified): {carried} records carry the tracker's answer"),
            format!("seed_launches={}", launches.len()),
        ]
    }

    fn by_evidence(
        &self,
        window: &mut FinalisedWindow,
        span: &WindowSpan,
        (complete, calls_complete): (bool, bool),
        works: Vec<(u64, CallWork)>,
        open_edge: &[graph_attribution::Span],
    ) -> (Vec<String>, bool) {
        let blits = self.blits.read().unwrap_or_else(|p| p.into_inner()).clone();
        let stubs = self.stubs.read().unwrap_or_else(|p| p.into_inner()).clone();
        let mut observations = Vec::with_capacity(window.kernels.len() + window.copies.len());
        for row in window.kernels.rows() {
            observations.push(Observation {
                correlation_id: row.correlation_id,
                observed: if let Some(&kind) = blits.get(&row.kernel_id) {
                    Observed::Blit(kind)
                } else {
                    Observed::Kernel(KernelShape {
                        kernel_id: row.kernel_id,
                        grid: row.grid,
                        block: row.workgroup,
                    })
                },
                queue_id: row.queue,
                dispatch_id: Some(row.dispatch_id),
                start_ns: row.start_ns,
                end_ns: row.end_ns,
            });
        }
        // A copy whose direction the decoder could not read matches nothing
        // and is withheld with "no matching producer".
        for row in window.copies.rows() {
            observations.push(Observation {
                correlation_id: row.correlation_id,
                observed: Observed::Copy {
                    direction: direction(row.direction).unwrap_or(Direction::HostToHost),
                    bytes: if direction(row.direction).is_some() {
                        row.bytes
                    } else {
                        u64::MAX
                    },
                },
                queue_id: 0,
                dispatch_id: None,
                start_ns: row.start_ns,
                end_ns: row.end_ns,
            });
        }
        let mut works: HashMap<u64, CallWork> = works.into_iter().collect();
        let calls: Vec<Call> = window
            .api_calls
            .rows()
            .map(|row| Call {
                correlation_id: row.correlation_id,
                thread_id: row.thread_id,
                enter_ns: row.start_ns,
                exit_ns: row.end_ns,
                stream: row.stream,
                work: works
                    .remove(&row.correlation_id)
                    .unwrap_or_else(|| hip_calls::work_of_role(hip_calls::role(row.operation))),
            })
            .collect();
        let evidence = WindowEvidence {
            observations: &observations,
            calls: &calls,
            open_edge,
            close_ns: span.closed_ns,
            complete,
            calls_complete,
            kernels: &stubs,
            queue_slots: self.queue_slots,
        };
        let attributed = attribute_window(&evidence, &mut lock(&self.memory));

        // Each call's CPU side, for records linked to another call than the
        // one that processed them.
        let links: HashMap<u64, CpuSide> = window
            .api_calls
            .rows()
            .map(|c| {
                (
                    c.correlation_id,
                    (c.external_id_default, c.external_id_user, c.stream),
                )
            })
            .collect();
        let (kernel_keys, copy_keys) = attributed.keys.split_at(window.kernels.len());
        let (kernel_links, copy_links) = attributed.links.split_at(window.kernels.len());
        fill_keys(window.kernels.graph_columns_mut(), kernel_keys);
        fill_keys(window.copies.graph_columns_mut(), copy_keys);
        fill_links(window.kernels.linkage_columns_mut(), kernel_links, &links);
        fill_links(window.copies.linkage_columns_mut(), copy_links, &links);

        let summary = &attributed.summary;
        let level = if summary.withheld() > 0 {
            log::Level::Warn
        } else {
            log::Level::Info
        };
        log::log!(
            level,
            "kineto-rocm: window {}: {}",
            window.id.get(),
            summary
        );
        let mut lines = vec![
            format!("attributed={}", summary.attributed()),
            format!("withheld={}", summary.withheld()),
            format!("linked={}", summary.linked()),
            format!("unlinked={}", summary.unlinked()),
            summary.to_string(),
        ];
        let anomalies = self.tracker.anomalies();
        if anomalies.total() > 0 {
            lines.push(format!("tracker_anomalies={}", anomalies.total()));
        }
        (lines, summary.queues_may_have_overflowed > 0)
    }
}

/// A call's CPU side a linked record takes: (default External id, user
/// External id, stream).
type CpuSide = (Option<u64>, Option<u64>, Option<u64>);

fn direction(d: CopyDirection) -> Option<Direction> {
    Some(match d {
        CopyDirection::HostToHost => Direction::HostToHost,
        CopyDirection::HostToDevice => Direction::HostToDevice,
        CopyDirection::DeviceToHost => Direction::DeviceToHost,
        CopyDirection::DeviceToDevice => Direction::DeviceToDevice,
        CopyDirection::Unknown => return None,
    })
}

fn fill_keys(columns: activity_store::GraphColumnsMut<'_>, keys: &[KeyVerdict]) {
    for (i, verdict) in keys.iter().enumerate() {
        if let Some(key) = verdict.key() {
            columns.graph_id[i] = Some(key.graph_id());
            columns.graph_node_id[i] = Some(key.graph_node_id());
        }
    }
}

/// A linked record takes its call's CPU side (External ids, stream); an
/// unlinked one keeps none, rather than a link that may be another call's.
fn fill_links(
    columns: activity_store::LinkageColumnsMut<'_>,
    links: &[LinkVerdict],
    calls: &HashMap<u64, CpuSide>,
) {
    for (i, link) in links.iter().enumerate() {
        let linked = link.correlation_id();
        if linked == columns.launch_correlation_id[i] {
            continue;
        }
        let (default, user, stream) = linked
            .and_then(|c| calls.get(&c).copied())
            .unwrap_or((None, None, None));
        columns.launch_correlation_id[i] = linked;
        columns.external_id_default[i] = default;
        columns.external_id_user[i] = user;
        columns.stream[i] = stream;
    }
}
