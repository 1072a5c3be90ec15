//! Where everything the SDK reports goes: decoded records into the activity
//! store, graph lifecycle and launches into the attribution layer, kernel
//! names into a table. Finishing a window turns the store's frames into the
//! bridge's `WindowActivities`, verified.
use super::attribution::{Attribution, Method, WindowSpan};
use super::decode::Decoded;
use super::devices::Devices;
use super::state::Tool;
use crate::api::CorrelationDomain;
use crate::bridge::ffi::{
    CopyActivity, DeviceLane, KernelActivity, RuntimeActivity, WindowActivities,
};
use activity_store::{
    ActivityStore, CopyDirection, ExternalDomain, FinalisedWindow, GraphLaunch, HipApiCall,
    KernelDispatch, MemoryCopy, StoreConfig, WindowId,
};
use graph_attribution::{LaunchCall, LaunchTracker};
use rocprofiler_sys::*;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, RwLock};
use std::time::{Duration, Instant};

/// kineto's default for ROCTRACER_MAX_EVENTS-like limits: records per window.
const DEFAULT_MAX_EVENTS: u64 = 50_000_000;
static MAX_EVENTS: AtomicU64 = AtomicU64::new(DEFAULT_MAX_EVENTS);

/// Reads KINETO_ROCM_DISABLE_GRAPH_ATTRIBUTION once, as DESIGN.md defines it.
pub fn attribution_enabled_from_env() -> bool {
    let value = std::env::var("KINETO_ROCM_DISABLE_GRAPH_ATTRIBUTION").ok();
    let (enabled, warning) = graph_attribution::graph_attribution_enabled(value.as_deref());
    if let Some(warning) = warning {
        log::warn!("kineto-rocm: {warning}");
    }
    enabled
}

/// One SDK buffer's records, sorted by kind; reused between buffers.
#[derive(Default)]
pub struct Batch {
    kernels: Vec<KernelDispatch>,
    copies: Vec<MemoryCopy>,
    api_calls: Vec<HipApiCall>,
    graph_launches: Vec<GraphLaunch>,
    retired: Vec<u64>,
}

impl Batch {
    pub fn add(&mut self, record: Decoded) {
        match record {
            Decoded::Kernel(k) => self.kernels.push(k),
            Decoded::Copy(c) => self.copies.push(c),
            Decoded::Api(a) => self.api_calls.push(a),
            Decoded::GraphLaunch(g) => self.graph_launches.push(g),
            Decoded::Retired { correlation_id } => self.retired.push(correlation_id),
        }
    }

    fn clear(&mut self) {
        self.kernels.clear();
        self.copies.clear();
        self.api_calls.clear();
        self.graph_launches.clear();
        self.retired.clear();
    }
}

#[derive(Default)]
struct WindowBook {
    /// The open window and when it opened.
    open: Option<(WindowId, u64)>,
    closed: Vec<(WindowId, WindowSpan)>,
}

pub struct Collector {
    store: ActivityStore,
    attribution: Option<Attribution>,
    /// A window is open: the session-long callbacks do collection work.
    collecting: AtomicBool,
    kernel_names: RwLock<HashMap<u64, String>>,
    windows: Mutex<WindowBook>,
    sdk_dropped: AtomicU64,
    devices: once_cell::sync::OnceCell<Devices>,
}

impl Collector {
    pub fn new(graph_domain: bool, attribution: Option<Method>) -> Collector {
        let config = StoreConfig {
            max_records_per_window: MAX_EVENTS.load(Ordering::Relaxed) as usize,
            ..StoreConfig::default()
        };
        Collector {
            store: ActivityStore::new(config),
            attribution: attribution.map(|method| Attribution::new(graph_domain, method)),
            collecting: AtomicBool::new(false),
            kernel_names: RwLock::new(HashMap::new()),
            windows: Mutex::new(WindowBook::default()),
            sdk_dropped: AtomicU64::new(0),
            devices: once_cell::sync::OnceCell::new(),
        }
    }

    /// The seed method's tracker, which the external-correlation request
    /// answers from (the evidence method configures no such request).
    #[inline]
    pub fn tracker(&self) -> Option<&LaunchTracker> {
        self.attribution
            .as_ref()
            .filter(|a| a.method() == Method::Seed)
            .map(Attribution::tracker)
    }

    /// The limit the store is built with (a setMaxEvents before the SDK
    /// initialised the tool).
    pub fn set_initial_max_events(max_events: u64) {
        MAX_EVENTS.store(max_events.max(1), Ordering::Relaxed);
    }

    /// kineto's setMaxEvents: the limit for windows from now on, and for
    /// records still to arrive in this one.
    pub fn set_max_events(&self, max_events: u64) {
        let max_events = max_events.max(1);
        self.store
            .set_max_records_per_window(usize::try_from(max_events).unwrap_or(usize::MAX));
    }

    pub fn push_external(&self, domain: CorrelationDomain, id: u64) {
        self.store.push_external(external_domain(domain), id)
    }

    pub fn pop_external(&self, domain: CorrelationDomain) -> Option<u64> {
        self.store.pop_external(external_domain(domain))
    }

    /// A HIP runtime call's ENTER or EXIT (these callbacks run for the whole
    /// session when attribution is on, only inside windows otherwise).
    pub fn on_hip_api(
        &self,
        operation: i32,
        phase: rocprofiler_callback_phase_t,
        call: LaunchCall,
        data: Option<&rocprofiler_callback_tracing_hip_api_data_t>,
        now_ns: u64,
    ) {
        let collecting = self.collecting.load(Ordering::Acquire);
        if collecting && phase == rocprofiler_callback_phase_t::ENTER {
            self.store.capture_for_api_call(call.correlation_id);
            self.store.issue(call.correlation_id, now_ns);
        }
        if let (Some(attribution), Some(data)) = (&self.attribution, data) {
            attribution.on_hip_api(operation, phase, call, data, now_ns, collecting);
        }
    }

    pub fn on_graph_domain(
        &self,
        operation: rocprofiler_hip_graph_operation_t,
        phase: rocprofiler_callback_phase_t,
        call: LaunchCall,
        graph_exec_id: u64,
        handle: u64,
    ) {
        if let Some(attribution) = &self.attribution {
            attribution.on_graph_domain(operation, phase, call, graph_exec_id, handle);
        }
    }

    pub fn on_stream_of(&self, correlation_id: u64, stream: u64) {
        self.store.record_stream(correlation_id, stream);
    }

    pub fn on_host_kernel(&self, host_function: u64, kernel_id: u64) {
        if let Some(attribution) = &self.attribution {
            attribution.on_host_kernel(host_function, kernel_id);
        }
    }

    pub fn on_kernel_symbol(&self, kernel_id: u64, name: String) {
        if let Some(attribution) = &self.attribution {
            attribution.on_device_kernel(kernel_id, &name);
        }
        self.kernel_names
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(kernel_id, name);
    }

    pub fn on_sdk_dropped(&self, count: u64) {
        if self.sdk_dropped.fetch_add(count, Ordering::Relaxed) == 0 {
            log::warn!(
                "kineto-rocm: the SDK dropped {count} records (buffer full); counted in the trace"
            );
        }
    }

    /// Takes one SDK buffer's decoded records: each kind pushed as one
    /// batch (one lock per run of a window, not per record), retirements
    /// last, so a correlation id retires only after its records are stored.
    pub fn on_records(&self, records: &mut Batch) {
        self.store.push_kernels(&records.kernels);
        self.store.push_copies(&records.copies);
        self.store.push_api_calls(&records.api_calls);
        self.store.push_graph_launches(&records.graph_launches);
        for correlation_id in records.retired.drain(..) {
            self.store.retire(correlation_id);
        }
        records.clear();
    }

    pub fn count_malformed(&self) {
        self.store.count_malformed(1);
    }

    pub fn open_window(&self, start_ns: u64) -> Result<(), String> {
        let mut book = self.windows.lock().unwrap_or_else(|e| e.into_inner());
        let id = self
            .store
            .open_window(start_ns)
            .map_err(|e| e.to_string())?;
        if let Some(attribution) = &self.attribution {
            attribution.window_opened(start_ns);
        }
        book.open = Some((id, start_ns));
        self.collecting.store(true, Ordering::Release);
        Ok(())
    }

    pub fn close_window(&self, stop_ns: u64) {
        let mut book = self.windows.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((id, opened_ns)) = book.open.take() {
            self.collecting.store(false, Ordering::Release);
            let span = WindowSpan {
                opened_ns,
                closed_ns: stop_ns,
                last_correlation_id: self
                    .attribution
                    .as_ref()
                    .map_or(0, Attribution::last_correlation_id),
            };
            match self.store.close_window(id, stop_ns) {
                Ok(()) => book.closed.push((id, span)),
                Err(e) => log::warn!("kineto-rocm: closing window: {e}"),
            }
        }
    }

    fn take_closed_windows(&self) -> Vec<(WindowId, WindowSpan)> {
        std::mem::take(
            &mut self
                .windows
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .closed,
        )
    }

    pub fn clear(&self) {
        let closed = self.take_closed_windows();
        for (id, _) in closed {
            let _ = self.store.finalise(id);
        }
    }

    /// Waits (at most `deadline` per window) for every correlation id issued
    /// in each closed window to retire, flushing the SDK's buffer between
    /// waits, then verifies and hands the windows over.
    pub fn finish_closed_windows(&self, tool: &Tool, deadline: Duration) -> Vec<WindowActivities> {
        let closed = self.take_closed_windows();
        let mut finished = Vec::with_capacity(closed.len());
        for (id, span) in closed {
            let until = Instant::now() + deadline;
            let completeness = match self.store.wait_until_retired(id, until, || tool.flush()) {
                Ok(completeness) => completeness,
                Err(e) => {
                    log::warn!("kineto-rocm: waiting for window {}: {e}", id.get());
                    continue;
                }
            };
            if !completeness.is_complete() {
                log::warn!(
                    "kineto-rocm: window {} finalised at its deadline with {} correlation ids still in flight; the trace says so",
                    id.get(),
                    completeness.outstanding()
                );
            }
            match self.store.finalise(id) {
                Ok(window) => {
                    crate::fault::finishing_window();
                    finished.push(self.to_activities(window, &span, tool))
                }
                Err(e) => log::warn!("kineto-rocm: finalising window {}: {e}", id.get()),
            }
        }
        finished
    }

    /// The SDK knows its agents once the runtime has loaded, not before.
    fn devices(&self, tool: &Tool) -> &Devices {
        if let Some(devices) = self.devices.get() {
            return devices;
        }
        match Devices::query(&tool.sdk) {
            Some(devices) => self.devices.get_or_init(|| devices),
            None => {
                static NONE: once_cell::sync::Lazy<Devices> =
                    once_cell::sync::Lazy::new(Devices::default);
                &NONE
            }
        }
    }

    fn to_activities(
        &self,
        mut window: FinalisedWindow,
        span: &WindowSpan,
        tool: &Tool,
    ) -> WindowActivities {
        let devices = self.devices(tool);
        let mut summary = Vec::new();
        let mut may_miss_records = false;
        if let Some(attribution) = &self.attribution {
            let drops = window.stats.session_drops;
            // Every record of the window's calls is here: its correlation ids
            // all retired and nothing was dropped.
            let calls_complete = window.stats.over_limit == 0
                && drops.over_limit == 0
                && drops.malformed == 0
                && self.sdk_dropped.load(Ordering::Relaxed) == 0;
            let complete =
                calls_complete && window.completeness.is_complete() && drops.after_finalise == 0;
            let (lines, overflowed) =
                attribution.attribute(&mut window, span, complete, calls_complete);
            summary.extend(lines);
            may_miss_records = overflowed;
        } else {
            summary.push("graph_attribution=disabled".to_string());
        }
        let names = self.kernel_names.read().unwrap_or_else(|e| e.into_inner());
        let mut name_index: HashMap<u64, u32> = HashMap::new();
        let mut kernel_names: Vec<String> = Vec::new();
        let k = &window.kernels;
        let mut kernels = Vec::with_capacity(k.len());
        for row in k.rows() {
            let index = *name_index.entry(row.kernel_id).or_insert_with(|| {
                kernel_names.push(
                    names
                        .get(&row.kernel_id)
                        .cloned()
                        .unwrap_or_else(|| format!("kernel_{}", row.kernel_id)),
                );
                (kernel_names.len() - 1) as u32
            });
            kernels.push(KernelActivity {
                name_index: index,
                device: devices.index_of(row.agent.0),
                stream: row.stream.unwrap_or(0),
                has_stream: row.stream.is_some(),
                queue: row.queue,
                correlation: row.launch_correlation_id.unwrap_or(0),
                has_correlation: row.launch_correlation_id.is_some(),
                dispatch_id: row.dispatch_id,
                start_ns: row.start_ns,
                end_ns: row.end_ns,
                grid_x: row.grid[0],
                grid_y: row.grid[1],
                grid_z: row.grid[2],
                block_x: row.workgroup[0],
                block_y: row.workgroup[1],
                block_z: row.workgroup[2],
                lds_bytes: row.lds_bytes,
                scratch_bytes: row.scratch_bytes,
                has_external_id: row.external_id_default.is_some(),
                external_id: row.external_id_default.unwrap_or(0),
                has_user_external_id: row.external_id_user.is_some(),
                user_external_id: row.external_id_user.unwrap_or(0),
                has_graph: row.graph_id.is_some() && row.graph_node_id.is_some(),
                graph_id: row.graph_id.unwrap_or(0),
                graph_node_id: row.graph_node_id.unwrap_or(0),
            });
        }
        let copies = window
            .copies
            .rows()
            .map(|row| {
                let device_agent = if row.direction == CopyDirection::DeviceToHost {
                    row.src_agent
                } else {
                    row.dst_agent
                };
                CopyActivity {
                    direction: row.direction.into(),
                    device: devices.index_of(device_agent.0),
                    stream: row.stream.unwrap_or(0),
                    has_stream: row.stream.is_some(),
                    correlation: row.launch_correlation_id.unwrap_or(0),
                    has_correlation: row.launch_correlation_id.is_some(),
                    bytes: row.bytes,
                    src_device: device_or_host(devices, row.src_agent.0),
                    dst_device: device_or_host(devices, row.dst_agent.0),
                    start_ns: row.start_ns,
                    end_ns: row.end_ns,
                    has_external_id: row.external_id_default.is_some(),
                    external_id: row.external_id_default.unwrap_or(0),
                    has_graph: row.graph_id.is_some() && row.graph_node_id.is_some(),
                    graph_id: row.graph_id.unwrap_or(0),
                    graph_node_id: row.graph_node_id.unwrap_or(0),
                }
            })
            .collect();
        let runtime = window
            .api_calls
            .rows()
            .map(|row| RuntimeActivity {
                name: hip_runtime_api_id::name(row.operation).unwrap_or("hipApi"),
                cid: row.operation as u32,
                thread_id: row.thread_id,
                correlation: row.correlation_id,
                start_ns: row.start_ns,
                end_ns: row.end_ns,
                has_external_id: row.external_id_default.is_some(),
                external_id: row.external_id_default.unwrap_or(0),
            })
            .collect();
        summary.push(
            match (window.completeness.is_complete(), may_miss_records) {
                (true, true) => "completeness=incomplete (a hardware queue may have overflowed: \
                             records ROCr processed later on its async thread may be missing)"
                    .to_string(),
                _ => format!("completeness={}", window.completeness),
            },
        );
        summary.push(format!("window_records={}", window.stats.records()));
        summary.push(format!("dropped={}", window.stats.session_drops));
        summary.push(format!(
            "sdk_dropped={}",
            self.sdk_dropped.load(Ordering::Relaxed)
        ));
        WindowActivities {
            kernel_names,
            kernels,
            copies,
            runtime,
            devices: devices
                .lanes()
                .into_iter()
                .map(|(device, name)| DeviceLane { device, name })
                .collect(),
            system_clock_offset_ns: system_clock_offset(tool),
            summary,
        }
    }
}

fn device_or_host(devices: &Devices, agent: u64) -> i64 {
    if devices.knows(agent) {
        devices.index_of(agent) as i64
    } else {
        -1
    }
}

fn external_domain(domain: CorrelationDomain) -> ExternalDomain {
    match domain {
        CorrelationDomain::Default => ExternalDomain::Default,
        CorrelationDomain::User => ExternalDomain::User,
    }
}

/// system_clock now minus the SDK's clock now: what kineto's clock adds.
fn system_clock_offset(tool: &Tool) -> i64 {
    let system = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0);
    system - tool.now() as i64
}
