//! Graph attribution: the evidence kept over the session, and its use when
//! a window is finished.
//!
//! For the whole session (a callback context that stays active between
//! trace windows; the SDK adapter reads the calls, tool/sdk/graph_calls.rs):
//! the graph-building calls feed [`GraphStructure`], exec lifecycle feeds
//! the tracker's attribution ids, code-object callbacks map host stubs to
//! kernel ids, and [`Presence`] notes which threads are inside a
//! packet-writing call. While a window is open, each call's device work is
//! recorded from its arguments at ENTER. When a window is finished, its
//! records are attributed from that evidence
//! (`graph_attribution::attribute_window`) and only proven keys and links
//! are written into its columns.
//!
//! `KINETO_ROCM_ATTRIBUTION_METHOD=launch-stack` instead runs the SDK's
//! documented recipe (a per-thread launch stack answered through the
//! external correlation service) and emits its answers as they are: the
//! first round's method, kept so its failure under shared queues can be
//! shown.
use super::call_works::CallWorks;
use super::captures::Captures;
use super::presence::Presence;
use super::roles;
use activity_store::{
    ApiCallFrame, Attributable, CopyDirection, FastMap, FinalisedWindow, KernelFrame, LaunchLink,
};
use graph_attribution::{
    attribute_window, Assumptions, BlitKind, Call, CallWork, Direction, ExecContents, ExecHandle,
    ExecIdentity, GraphKey, GraphStructure, KernelShape, KeyVerdict, LaunchCall, LaunchTracker,
    LentColumns, LinkVerdict, Observation, Observations, Observed, ObservedId, ObservedTable,
    SessionMemory, TrackerConfig, WindowEvidence,
};
use std::cell::OnceCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

/// How graph keys are found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// From evidence: graph structure, call times, queue order.
    Evidence,
    /// The SDK's recipe: the processing thread's launch stack, unchecked.
    LaunchStack,
}

impl Method {
    /// `KINETO_ROCM_ATTRIBUTION_METHOD`: `evidence` (default) or `launch-stack`.
    pub fn from_env() -> Method {
        match std::env::var("KINETO_ROCM_ATTRIBUTION_METHOD").as_deref() {
            Ok("launch-stack") => Method::LaunchStack,
            Ok("evidence") | Err(_) => Method::Evidence,
            Ok(other) => {
                log::warn!(
                    "kineto-rocm: KINETO_ROCM_ATTRIBUTION_METHOD={other:?} is not `evidence` or `launch-stack`; using evidence"
                );
                Method::Evidence
            }
        }
    }
}

/// Whether graph attribution is on: reads
/// KINETO_ROCM_DISABLE_GRAPH_ATTRIBUTION, warning about a value it does not
/// understand.
pub fn enabled_from_env() -> bool {
    let value = std::env::var("KINETO_ROCM_DISABLE_GRAPH_ATTRIBUTION").ok();
    let (enabled, warning) = graph_attribution::graph_attribution_enabled(value.as_deref());
    if let Some(warning) = warning {
        log::warn!("kineto-rocm: {warning}");
    }
    enabled
}

/// What attributing a window gave.
pub struct Attributed {
    /// Summary lines for the trace metadata.
    pub lines: Vec<String>,
    /// Records may be missing although every correlation id retired.
    pub overflowed: bool,
    /// What each graph launch of the window ran, by its correlation id.
    pub launches: HashMap<u64, Arc<ExecContents>>,
    /// Every record's launching call in the columns is proven (the
    /// evidence method); false: it is the record's processing call.
    pub links_proven: bool,
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
    stubs: RwLock<FastMap<u64, u64>>,
    /// Kernel ids of the runtime's blit kernels, and which kind each is.
    blits: RwLock<FastMap<u64, BlitKind>>,
    /// Device work of the calls of open windows.
    works: CallWorks,
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
            stubs: RwLock::new(FastMap::default()),
            blits: RwLock::new(FastMap::default()),
            works: CallWorks::default(),
            presence: Presence::default(),
            memory: Mutex::new(SessionMemory::with_assumptions(assumptions_from_env())),
            last_correlation_id: AtomicU64::new(0),
            queue_slots: std::env::var("ROC_AQL_QUEUE_SIZE")
                .ok()
                .and_then(|v| v.trim().parse().ok())
                .filter(|&v: &u64| v > 0)
                .unwrap_or(graph_attribution::evidence::DEFAULT_QUEUE_SLOTS),
        }
    }

    /// Exec lifecycle and, for the launch-stack method, the launch stack.
    #[inline]
    pub fn tracker(&self) -> &LaunchTracker {
        &self.tracker
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

    /// A HIP runtime call entered, on its thread, at `now_ns`.
    /// `writes_packets`: the call may write packets to a hardware queue.
    pub fn call_entered(&self, call: LaunchCall, writes_packets: bool, now_ns: u64) {
        self.last_correlation_id
            .fetch_max(call.correlation_id, Ordering::Relaxed);
        if writes_packets {
            self.presence.entered(call.thread_id, now_ns);
        }
    }

    /// That call exited at `now_ns`.
    pub fn call_exited(&self, call: LaunchCall, writes_packets: bool, now_ns: u64) {
        if writes_packets {
            self.presence.exited(call.thread_id, now_ns);
        }
    }

    /// Whether each call's device work is read from its arguments at ENTER
    /// (the evidence method), to be handed to `record_work`.
    pub fn reads_call_work(&self) -> bool {
        self.method == Method::Evidence
    }

    /// The device work of a call issued inside a window.
    pub fn record_work(&self, call: LaunchCall, work: CallWork) {
        if !matches!(work, CallWork::NoDevice) {
            self.works.record(call.thread_id, call.correlation_id, work);
        }
    }

    /// What launching `exec` runs, as far as its graph was followed.
    pub fn graph_launch_work(&self, exec: ExecHandle) -> CallWork {
        CallWork::Graph {
            graph_id: self.tracker.attribution_of(exec),
            exec: self.structure.exec_contents(exec),
        }
    }

    /// Graphs as the graph-building calls built them.
    pub fn structure(&self) -> &GraphStructure {
        &self.structure
    }

    /// Streams being captured into graphs.
    pub fn captures(&self) -> &Captures {
        &self.captures
    }

    /// Whether exec lifecycle is seen through the HIP runtime API (SDK <
    /// 1.3) rather than the SDK's HIP_GRAPH domain.
    pub fn by_runtime_api(&self) -> bool {
        self.tracker.identity() == ExecIdentity::RuntimeApi
    }

    /// Whether graph launches are pushed on the tracker's launch stack (the
    /// launch-stack method).
    pub fn tracks_launches(&self) -> bool {
        self.method == Method::LaunchStack
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
    ) -> Attributed {
        let works = self.works.take_through(span.last_correlation_id);
        // Calls in flight at the window's start, and those still in flight
        // now (whose records have not arrived), are edges of its evidence.
        let mut open_edge = self.presence.take_open_edge(span.opened_ns);
        open_edge.extend(self.presence.in_flight());
        // What each graph launch ran, for the timeline (node details and
        // dependencies of the nodes whose keys are proven).
        let launches: HashMap<u64, Arc<ExecContents>> = works
            .iter()
            .filter_map(|(c, w)| match w {
                CallWork::Graph { exec, .. } => Some((*c, exec.clone())),
                _ => None,
            })
            .collect();
        let (lines, overflowed) = match self.method {
            Method::Evidence => {
                self.by_evidence(window, span, (complete, calls_complete), works, &open_edge)
            }
            Method::LaunchStack => (self.by_launch_stack(window), false),
        };
        lock(&self.memory).forget(&self.tracker.take_retired_attributions());
        Attributed {
            lines,
            overflowed,
            launches,
            links_proven: self.method == Method::Evidence,
        }
    }

    fn by_launch_stack(&self, window: &mut FinalisedWindow) -> Vec<String> {
        let carried = carry_slots(&mut window.kernels) + carry_slots(&mut window.copies);
        let launches = self.tracker.drain_launches();
        vec![
            format!("graph attribution (launch-stack method, unverified): {carried} records carry the tracker's answer"),
            format!("launch_stack_launches={}", launches.len()),
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
        let mut observed = ObservedTable::default();
        let mut observations = kernel_observations(&window.kernels, &blits, &mut observed);
        observations.reserve(window.copies.len());
        // A copy whose direction the decoder could not read matches nothing
        // and is withheld with "no matching producer".
        for row in window.copies.rows() {
            observations.push(Observation {
                correlation_id: row.correlation_id,
                observed: observed.intern(Observed::Copy {
                    direction: direction(row.direction).unwrap_or(Direction::HostToHost),
                    bytes: if direction(row.direction).is_some() {
                        row.bytes
                    } else {
                        u64::MAX
                    },
                }),
                queue_id: 0,
                dispatch_id: None,
                start_ns: row.start_ns,
                end_ns: row.end_ns,
            });
        }
        // In correlation order (each shard is already: a thread's calls
        // are recorded as they enter, so the sort merges a few runs), and
        // the window's calls mostly come in that order too: the next call's
        // work is mostly the next one, else a binary search finds it. No
        // map built and emptied. A call's work is recorded once, at its
        // ENTER, and taken once.
        let mut works: Vec<(u64, Option<CallWork>)> =
            works.into_iter().map(|(c, w)| (c, Some(w))).collect();
        works.sort_by_key(|&(c, _)| c);
        let mut next = 0;
        let mut work_of = |c: u64| {
            let i = match works.get(next) {
                Some(&(w, _)) if w == c => next,
                _ => works.binary_search_by_key(&c, |&(c, _)| c).ok()?,
            };
            next = i + 1;
            works[i].1.take()
        };
        // The six columns a call needs, not whole rows (an eager window has
        // a call per record).
        let a = &window.api_calls;
        let calls: Vec<Call> = (0..a.len())
            .map(|i| Call {
                correlation_id: a.correlation_id()[i],
                thread_id: a.thread_id()[i],
                enter_ns: a.start_ns()[i],
                exit_ns: a.end_ns()[i],
                stream: a.stream()[i],
                work: work_of(a.correlation_id()[i])
                    .unwrap_or_else(|| roles::work_of_role(roles::role(a.operation()[i]))),
            })
            .collect();
        let evidence = WindowEvidence {
            observations: &observations,
            observed: observed.values(),
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
        // one that processed them: built only if one is (a window whose
        // calls each processed their own records, as most do, never needs
        // it, and an eager window has a call per record).
        let cpu_sides = CpuSides::new(&window.api_calls);
        let (kernel_keys, copy_keys) = attributed.keys.split_at(window.kernels.len());
        let (kernel_links, copy_links) = attributed.links.split_at(window.kernels.len());
        fill_keys(&mut window.kernels, kernel_keys);
        fill_keys(&mut window.copies, copy_keys);
        fill_links(&mut window.kernels, kernel_links, &cpu_sides);
        fill_links(&mut window.copies, copy_links, &cpu_sides);

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

/// The assumptions `KINETO_ROCM_ATTRIBUTION_DISTRUST` leaves the rules.
fn assumptions_from_env() -> Assumptions {
    let value = std::env::var(graph_attribution::DISTRUST_VAR).ok();
    let (assumptions, warning) = Assumptions::parse(value.as_deref());
    if let Some(warning) = warning {
        log::warn!("kineto-rocm: {warning}");
    }
    assumptions
}

/// A call's CPU side a linked record takes: (default External id, user
/// External id, stream).
type CpuSide = (Option<u64>, Option<u64>, Option<u64>);

/// The window's calls' CPU sides by correlation id, indexed the first time
/// one is asked for.
struct CpuSides<'a> {
    calls: &'a ApiCallFrame,
    by_correlation: OnceCell<FastMap<u64, CpuSide>>,
}

impl<'a> CpuSides<'a> {
    fn new(calls: &'a ApiCallFrame) -> Self {
        CpuSides {
            calls,
            by_correlation: OnceCell::new(),
        }
    }

    fn of(&self, correlation_id: u64) -> Option<CpuSide> {
        self.by_correlation
            .get_or_init(|| {
                self.calls
                    .rows()
                    .map(|c| {
                        (
                            c.correlation_id,
                            (c.external_id_default, c.external_id_user, c.stream),
                        )
                    })
                    .collect()
            })
            .get(&correlation_id)
            .copied()
    }
}

fn direction(d: CopyDirection) -> Option<Direction> {
    Some(match d {
        CopyDirection::HostToHost => Direction::HostToHost,
        CopyDirection::HostToDevice => Direction::HostToDevice,
        CopyDirection::DeviceToHost => Direction::DeviceToHost,
        CopyDirection::DeviceToDevice => Direction::DeviceToDevice,
        CopyDirection::Unknown => return None,
    })
}

/// Gives each record that carries the launch-stack method's answer its
/// graph key; returns how many did.
fn carry_slots(frame: &mut impl Attributable) -> u64 {
    let mut carried = 0;
    for row in 0..frame.row_count() {
        if let Some(key) = GraphKey::unpack(frame.external_slot(row)) {
            frame.set_graph_key(row, key.graph_id(), key.graph_node_id());
            carried += 1;
        }
    }
    carried
}

fn fill_keys(frame: &mut impl Attributable, keys: &[KeyVerdict]) {
    for (row, verdict) in keys.iter().enumerate() {
        if let Some(key) = verdict.key() {
            frame.set_graph_key(row, key.graph_id(), key.graph_node_id());
        }
    }
}

/// A linked record takes its call's CPU side (External ids, stream); an
/// unlinked one keeps none, rather than a link that may be another call's.
fn fill_links(frame: &mut impl Attributable, links: &[LinkVerdict], calls: &CpuSides<'_>) {
    for (row, link) in links.iter().enumerate() {
        let linked = link.correlation_id();
        if linked == frame.launch_correlation_id(row) {
            continue;
        }
        let (default, user, stream) = linked
            .and_then(|c| calls.of(c))
            .unwrap_or((None, None, None));
        frame.set_link(
            row,
            LaunchLink {
                launch_correlation_id: linked,
                stream,
                external_id_default: default,
                external_id_user: user,
            },
        );
    }
}

/// What the rules read of a window's kernel records, in row order: the
/// frame's id and time columns lent as they are, and what a kernel ran
/// worked out once per launch shape and interned in `table` (`blits`: the
/// runtime's own blit kernels, by kernel id).
pub fn kernel_observations<'a>(
    kernels: &'a KernelFrame,
    blits: &FastMap<u64, BlitKind>,
    table: &mut ObservedTable,
) -> Observations<'a> {
    let observed: Vec<ObservedId> = kernels
        .launch_shapes()
        .iter()
        .map(|shape| {
            table.intern(match blits.get(&shape.kernel_id) {
                Some(&kind) => Observed::Blit(kind),
                None => Observed::Kernel(KernelShape {
                    kernel_id: shape.kernel_id,
                    grid: shape.grid,
                    block: shape.workgroup,
                }),
            })
        })
        .collect();
    let queues: Vec<u64> = kernels.places().iter().map(|p| p.queue).collect();
    let lent = LentColumns {
        correlation_id: kernels.correlation_id(),
        dispatch_id: kernels.dispatch_id(),
        start_ns: kernels.start_ns(),
        end_ns: kernels.end_ns(),
    };
    Observations::lending(
        lent,
        kernels
            .launch_shape_ids()
            .iter()
            .map(|&s| observed[s as usize]),
        kernels.place_ids().iter().map(|&p| queues[p as usize]),
    )
}
