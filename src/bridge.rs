//! The cxx bridge: the only door between the Rust core and the C++ face.
//!
//! Types cross by value. The C++ side owns only kineto types (RocmActivityApi,
//! the child profiler, kineto's RocprofActivityApi drop-in); everything
//! collected, attributed and verified is built in Rust and handed over as one
//! `WindowActivities` per finished trace window, converted here from the
//! core's [`FinishedWindow`]: `mod ffi` holds only the boundary. Errors cross
//! as `Result` (a C++ exception on that side, caught there before it could
//! reach kineto).
//!
//! cxx aborts the process when a panic escapes an `extern "Rust"` function,
//! so every function below runs inside `guarded`: a panic becomes
//! `ToolError::Internal` and costs the caller one call's result, never the
//! host process.

#[cxx::bridge(namespace = "kineto_rocm")]
mod ffi {
    /// Which way a memory copy went (the SDK's MEMORY_COPY operation).
    #[derive(Debug)]
    enum CopyDirection {
        HostToHost,
        HostToDevice,
        DeviceToHost,
        DeviceToDevice,
        Unknown,
    }

    /// Every args key a trace writer puts on a GPU or runtime event; names
    /// and value types come from one table (src/vocabulary.rs), whose
    /// `MetadataKey` lists the same keys in the same order.
    #[derive(Debug)]
    enum MetadataKey {
        Device,
        Stream,
        HsaQueue,
        Correlation,
        Cid,
        DispatchId,
        Kind,
        Kernel,
        Grid,
        Block,
        SharedMemory,
        ScratchMemory,
        Bytes,
        MemoryBandwidth,
        SrcDevice,
        DstDevice,
        GraphId,
        GraphNodeId,
        Value,
        MangledName,
        CudaSyncKind,
        WaitOnStream,
        WaitOnEventRecordCorrelation,
        WaitOnEventId,
        EventId,
        HostFunction,
        Timing,
        OverheadCount,
        ReplayPass,
        ThreadTrace,
    }

    /// What a runtime blit kernel is shown as (its call or node proven).
    #[derive(Debug)]
    enum BlitKind {
        /// A kernel: not a blit, or not proven.
        None,
        /// gpu_memset: `blit_bytes` set to `blit_value`.
        Memset,
        /// gpu_memcpy: `blit_bytes` in `blit_direction`.
        Copy,
    }

    /// Which synchronisation (CUPTI's names: "Stream Sync", "Context
    /// Sync", "Event Sync", "Stream Wait Event").
    #[derive(Debug)]
    enum SyncKind {
        Stream,
        Device,
        Event,
        StreamWaitEvent,
    }

    /// A dependency arrow's end: which list, which index.
    #[derive(Debug)]
    enum GpuList {
        Kernel,
        Copy,
        HostFn,
    }

    /// The JSON type of a key's value, the same in every writer.
    #[derive(Debug)]
    enum ValueType {
        /// Signed integer.
        Int,
        /// Unsigned integer (above 2^53 for graph node ids).
        Uint,
        Float,
        /// Quoted string.
        Str,
        /// `[x, y, z]`, a JSON array of integers.
        IntArray,
    }

    /// One GPU kernel, already verified: `has_graph` is true only for pairs
    /// the verifier vouched for or repaired.
    #[derive(Clone, Debug, PartialEq)]
    pub struct KernelActivity {
        pub name_index: u32,
        pub device: u32,
        /// Meaningful only when `has_stream`.
        pub stream: u64,
        /// False: the stream is unknown; the kernel goes on a lane named
        /// after its HSA queue and carries no "stream" arg.
        pub has_stream: bool,
        pub queue: u64,
        /// Meaningful only when `has_correlation`.
        pub correlation: u64,
        /// False: the launching call is unknown; no "correlation" arg, no
        /// flow arrow, no External id.
        pub has_correlation: bool,
        pub dispatch_id: u64,
        pub start_ns: u64,
        pub end_ns: u64,
        pub grid_x: u32,
        pub grid_y: u32,
        pub grid_z: u32,
        pub block_x: u32,
        pub block_y: u32,
        pub block_z: u32,
        pub lds_bytes: u32,
        pub scratch_bytes: u32,
        pub has_external_id: bool,
        pub external_id: u64,
        pub has_user_external_id: bool,
        pub user_external_id: u64,
        pub has_graph: bool,
        pub graph_id: u64,
        pub graph_node_id: u64,
        /// Hardware counters: names and values, index for index; each an
        /// arg keyed by the counter's name, then (dimensions asked for)
        /// each instance's, keyed by `counter_instance_key`
        /// (src/vocabulary.rs).
        pub counter_names: Vec<String>,
        pub counter_values: Vec<f64>,
        /// A blit kernel shown as a memset or copy.
        pub blit: BlitKind,
        pub blit_bytes: u64,
        pub blit_value: u32,
        pub blit_direction: CopyDirection,
        /// True: drawn on the graph branch lane of `stream` for HSA queue
        /// `queue`.
        pub has_branch: bool,
        /// True: one pass (`replay_pass`, 0-based) of a dispatch kernel
        /// replay ran several times.
        pub has_replay_pass: bool,
        pub replay_pass: u32,
        /// The files of this pass's raw thread trace; empty: not traced.
        pub thread_trace: String,
    }

    /// One memory copy. Copies run on no HSA queue the SDK reports.
    #[derive(Clone, Debug, PartialEq)]
    pub struct CopyActivity {
        pub direction: CopyDirection,
        pub device: u32,
        pub stream: u64,
        /// False: the stream is unknown; the copy goes on its device's
        /// "copies" lane and carries no "stream" arg.
        pub has_stream: bool,
        pub correlation: u64,
        /// As on `KernelActivity`.
        pub has_correlation: bool,
        pub bytes: u64,
        pub src_device: i64,
        pub dst_device: i64,
        pub start_ns: u64,
        pub end_ns: u64,
        pub has_external_id: bool,
        pub external_id: u64,
        pub has_graph: bool,
        pub graph_id: u64,
        pub graph_node_id: u64,
    }

    /// One HIP runtime call, on its CPU thread.
    #[derive(Clone, Debug, PartialEq)]
    pub struct RuntimeActivity {
        pub name: &'static str,
        /// The SDK's HIP runtime API operation id (kineto's "cid").
        pub cid: u32,
        pub thread_id: u64,
        pub correlation: u64,
        pub start_ns: u64,
        pub end_ns: u64,
        pub has_external_id: bool,
        pub external_id: u64,
    }

    /// A synchronising call: its CPU times on the lane of what it waited
    /// on (the device's stream, the device's "syncs" lane, or, device
    /// unknown, the calling thread).
    #[derive(Clone, Debug, PartialEq)]
    pub struct SyncActivity {
        pub kind: SyncKind,
        pub thread_id: u64,
        pub correlation: u64,
        pub start_ns: u64,
        pub end_ns: u64,
        pub has_device: bool,
        pub device: u32,
        pub has_stream: bool,
        pub stream: u64,
        pub has_event: bool,
        pub event: u64,
        /// -1: unknown.
        pub wait_on_stream: i64,
        /// -1: unknown (the event was not recorded while traced).
        pub wait_on_record_correlation: i64,
        pub has_external_id: bool,
        pub external_id: u64,
    }

    /// A hipEventRecord at the end of the work it captures.
    #[derive(Clone, Debug, PartialEq)]
    pub struct EventActivity {
        pub event: u64,
        pub thread_id: u64,
        pub correlation: u64,
        /// False (device or stream unknown): on the calling thread.
        pub has_lane: bool,
        pub device: u32,
        pub stream: u64,
        pub ts_ns: u64,
        pub has_external_id: bool,
        pub external_id: u64,
        /// A graph event-record node's record: its node.
        pub has_graph: bool,
        pub graph_id: u64,
        pub graph_node_id: u64,
    }

    /// A host function, bounded by the work around it on its stream.
    #[derive(Clone, Debug, PartialEq)]
    pub struct HostFnActivity {
        pub device: u32,
        pub stream: u64,
        pub correlation: u64,
        pub function: u64,
        pub start_ns: u64,
        pub end_ns: u64,
        pub has_graph: bool,
        pub graph_id: u64,
        pub graph_node_id: u64,
        pub has_branch: bool,
        pub branch_queue: u64,
        pub has_external_id: bool,
        pub external_id: u64,
    }

    /// A roctx mark or range on its CPU thread.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Annotation {
        pub name: String,
        pub thread_id: u64,
        pub start_ns: u64,
        pub end_ns: u64,
        pub id: u64,
    }

    /// What a roctx range enclosed on one device lane.
    #[derive(Clone, Debug, PartialEq)]
    pub struct GpuAnnotation {
        pub name: String,
        pub id: u64,
        pub device: u32,
        pub stream: u64,
        pub has_branch: bool,
        pub branch_queue: u64,
        pub start_ns: u64,
        pub end_ns: u64,
    }

    /// A graph dependency arrow between two shown events of one replay.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Dependency {
        pub from_list: GpuList,
        pub from_index: u64,
        pub to_list: GpuList,
        pub to_index: u64,
    }

    /// The backend's own cost.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Overhead {
        pub name: &'static str,
        pub start_ns: u64,
        pub end_ns: u64,
        pub count: u64,
    }

    /// A GPU as kineto names its lane.
    #[derive(Clone, Debug, PartialEq)]
    pub struct DeviceLane {
        pub device: u32,
        pub name: String,
    }

    /// Everything one finished trace window produced.
    #[derive(Clone, Debug, Default)]
    pub struct WindowActivities {
        /// Demangled.
        pub kernel_names: Vec<String>,
        /// The raw symbols, by the same index.
        pub kernel_symbols: Vec<String>,
        pub kernels: Vec<KernelActivity>,
        pub copies: Vec<CopyActivity>,
        pub runtime: Vec<RuntimeActivity>,
        pub syncs: Vec<SyncActivity>,
        pub events: Vec<EventActivity>,
        pub host_functions: Vec<HostFnActivity>,
        pub annotations: Vec<Annotation>,
        pub gpu_annotations: Vec<GpuAnnotation>,
        pub dependencies: Vec<Dependency>,
        pub overheads: Vec<Overhead>,
        pub devices: Vec<DeviceLane>,
        /// Add to an SDK timestamp to get system_clock nanoseconds (kineto's clock).
        pub system_clock_offset_ns: i64,
        /// `key=value` lines for the trace metadata: attribution counts,
        /// completeness, drops.
        pub summary: Vec<String>,
    }

    extern "Rust" {
        /// Starts collecting (configuring the SDK first if needed).
        fn start_collection() -> Result<()>;
        /// Stops collecting; records in flight still land in this window.
        fn stop_collection() -> Result<()>;
        /// Waits (bounded) for the stopped windows to complete and hands them over.
        fn take_finished_windows() -> Result<Vec<WindowActivities>>;
        /// Pushes a CPU op's id in the default (`user == false`) or user domain.
        fn push_correlation_id(id: u64, user: bool) -> Result<()>;
        fn pop_correlation_id(user: bool) -> Result<()>;
        /// Beyond this many records per window, drop and count.
        fn set_max_events(max_events: u64) -> Result<()>;
        /// Empty when collecting is possible, else one line saying why not.
        fn unavailable_reason() -> Result<String>;
        /// Clears anything collected and not yet taken.
        fn clear_activities() -> Result<()>;
        /// Asks the SDK to configure the tool now, without starting a window
        /// (kineto's RocprofLogger::ensureRegistered).
        fn register_tool() -> Result<()>;
        /// Counts these hardware counters (comma-separated names) on every
        /// dispatch from now on; kernel events carry their values.
        fn request_counters(names: &str) -> Result<()>;
        /// Stops counting; values already counted stay.
        fn release_counters() -> Result<()>;

        /// The args key as every writer spells it.
        fn metadata_key_name(key: MetadataKey) -> &'static str;
        /// The JSON type its value has in every writer.
        fn metadata_key_type(key: MetadataKey) -> ValueType;
        /// The "kind" arg of a kernel ("Dispatch Kernel").
        fn kernel_kind() -> &'static str;
        /// The "kind" arg of a copy ("HtoD", ...).
        fn copy_kind(direction: CopyDirection) -> &'static str;
        /// A copy's event name ("Memcpy HtoD (Host -> Device)").
        fn copy_event_name(direction: CopyDirection) -> &'static str;
        /// Lanes: "stream N" (tid = stream); a stream-less kernel's HSA
        /// queue ("HW queue 0x...", tids from `queue_lane_base` up, dense per
        /// device); a device's stream-less copies (`copy_lane_id`, "copies").
        fn stream_lane_name(stream: u64) -> String;
        fn queue_lane_name(queue: u64) -> String;
        fn queue_lane_base() -> u32;
        fn copy_lane_id() -> u32;
        fn copy_lane_name() -> &'static str;
        /// A graph replay's branch lane: "stream N graph branch (HW queue
        /// 0x...)", tids from `branch_lane_base` up, dense per device.
        fn branch_lane_name(stream: u64, queue: u64) -> String;
        fn branch_lane_base() -> u32;
        /// Device-wide syncs' lane per device.
        fn sync_lane_id() -> u32;
        fn sync_lane_name() -> &'static str;
        /// The overhead lane of the CPU process.
        fn overhead_tid() -> u32;
        fn overhead_lane_name() -> &'static str;
        /// Names and kinds of the timeline's events.
        fn memset_name() -> &'static str;
        fn memset_kind() -> &'static str;
        fn peer_copy_name() -> &'static str;
        fn peer_copy_kind() -> &'static str;
        fn sync_name(kind: SyncKind) -> &'static str;
        fn event_record_name() -> &'static str;
        fn host_fn_name() -> &'static str;
        fn timing_bounds() -> &'static str;
        fn timing_event() -> &'static str;
        fn dependency_name() -> &'static str;
        /// Where a dependency arrow's carrier sits on an event.
        fn dependency_carrier_ns(start: u64, end: u64, source: bool) -> u64;
    }
}

use crate::error::ToolError;
use crate::window::{self, FinishedWindow};
use crate::{panics, session, vocabulary};

/// Runs one bridge call; a panic inside becomes `ToolError::Internal`.
fn guarded<T>(
    what: &'static str,
    f: impl FnOnce() -> Result<T, ToolError>,
) -> Result<T, ToolError> {
    panics::catch(f)
        .unwrap_or_else(|panic| Err(ToolError::Internal(format!("panic in {what}: {panic}"))))
}

fn start_collection() -> Result<(), ToolError> {
    guarded("start_collection", session::start_collection)
}

fn stop_collection() -> Result<(), ToolError> {
    guarded("stop_collection", session::stop_collection)
}

fn take_finished_windows() -> Result<Vec<ffi::WindowActivities>, ToolError> {
    guarded("take_finished_windows", || {
        let windows = session::take_finished_windows()?;
        Ok(windows
            .into_iter()
            .map(ffi::WindowActivities::from)
            .collect())
    })
}

fn push_correlation_id(id: u64, user: bool) -> Result<(), ToolError> {
    guarded("push_correlation_id", || {
        session::push_correlation_id(user, id);
        Ok(())
    })
}

fn pop_correlation_id(user: bool) -> Result<(), ToolError> {
    guarded("pop_correlation_id", || {
        session::pop_correlation_id(user);
        Ok(())
    })
}

fn set_max_events(max_events: u64) -> Result<(), ToolError> {
    guarded("set_max_events", || {
        session::set_max_events(max_events);
        Ok(())
    })
}

fn unavailable_reason() -> Result<String, ToolError> {
    guarded("unavailable_reason", || {
        Ok(session::unavailable_reason().unwrap_or_default())
    })
}

fn clear_activities() -> Result<(), ToolError> {
    guarded("clear_activities", || {
        session::clear_activities();
        Ok(())
    })
}

fn register_tool() -> Result<(), ToolError> {
    guarded("register_tool", session::register_tool)
}

fn request_counters(names: &str) -> Result<(), ToolError> {
    guarded("request_counters", || session::request_counters(names))
}

fn release_counters() -> Result<(), ToolError> {
    guarded("release_counters", || {
        session::release_counters();
        Ok(())
    })
}

fn metadata_key_name(key: ffi::MetadataKey) -> &'static str {
    key_of(key).map_or("", vocabulary::name)
}

fn metadata_key_type(key: ffi::MetadataKey) -> ffi::ValueType {
    key_of(key).map_or(ffi::ValueType::Str, |key| {
        vocabulary::spec(key).value.into()
    })
}

fn kernel_kind() -> &'static str {
    vocabulary::KERNEL_KIND
}

fn copy_kind(direction: ffi::CopyDirection) -> &'static str {
    vocabulary::copy_kind(direction.into())
}

fn copy_event_name(direction: ffi::CopyDirection) -> &'static str {
    vocabulary::copy_event_name(direction.into())
}

fn stream_lane_name(stream: u64) -> String {
    vocabulary::stream_lane_name(stream)
}

fn queue_lane_name(queue: u64) -> String {
    vocabulary::queue_lane_name(queue)
}

fn queue_lane_base() -> u32 {
    vocabulary::QUEUE_LANE_BASE
}

fn copy_lane_id() -> u32 {
    vocabulary::COPY_LANE_ID
}

fn copy_lane_name() -> &'static str {
    vocabulary::COPY_LANE_NAME
}

fn branch_lane_name(stream: u64, queue: u64) -> String {
    vocabulary::branch_lane_name(stream, queue)
}

fn branch_lane_base() -> u32 {
    vocabulary::BRANCH_LANE_BASE
}

fn sync_lane_id() -> u32 {
    vocabulary::SYNC_LANE_ID
}

fn sync_lane_name() -> &'static str {
    vocabulary::SYNC_LANE_NAME
}

fn overhead_tid() -> u32 {
    vocabulary::OVERHEAD_TID
}

fn overhead_lane_name() -> &'static str {
    vocabulary::OVERHEAD_LANE_NAME
}

fn memset_name() -> &'static str {
    vocabulary::MEMSET_NAME
}

fn memset_kind() -> &'static str {
    vocabulary::MEMSET_KIND
}

fn peer_copy_name() -> &'static str {
    vocabulary::PEER_COPY_NAME
}

fn peer_copy_kind() -> &'static str {
    vocabulary::PEER_COPY_KIND
}

fn sync_name(kind: ffi::SyncKind) -> &'static str {
    vocabulary::sync_name(match kind {
        ffi::SyncKind::Stream => window::SyncKind::Stream,
        ffi::SyncKind::Device => window::SyncKind::Device,
        ffi::SyncKind::Event => window::SyncKind::Event,
        _ => window::SyncKind::StreamWaitEvent,
    })
}

fn event_record_name() -> &'static str {
    vocabulary::EVENT_RECORD_NAME
}

fn host_fn_name() -> &'static str {
    vocabulary::HOST_FN_NAME
}

fn timing_bounds() -> &'static str {
    vocabulary::TIMING_BOUNDS
}

fn timing_event() -> &'static str {
    vocabulary::TIMING_EVENT
}

fn dependency_name() -> &'static str {
    vocabulary::DEPENDENCY_NAME
}

fn dependency_carrier_ns(start: u64, end: u64, source: bool) -> u64 {
    crate::output::kineto_json::dependency_carrier_ns(start, end, source)
}

impl From<window::CopyDirection> for ffi::CopyDirection {
    fn from(direction: window::CopyDirection) -> Self {
        use window::CopyDirection as D;
        match direction {
            D::HostToHost => ffi::CopyDirection::HostToHost,
            D::HostToDevice => ffi::CopyDirection::HostToDevice,
            D::DeviceToHost => ffi::CopyDirection::DeviceToHost,
            D::DeviceToDevice => ffi::CopyDirection::DeviceToDevice,
            D::Unknown => ffi::CopyDirection::Unknown,
        }
    }
}

/// A C++ caller can pass any value; one this build does not know is Unknown.
impl From<ffi::CopyDirection> for window::CopyDirection {
    fn from(direction: ffi::CopyDirection) -> Self {
        use window::CopyDirection as D;
        match direction {
            ffi::CopyDirection::HostToHost => D::HostToHost,
            ffi::CopyDirection::HostToDevice => D::HostToDevice,
            ffi::CopyDirection::DeviceToHost => D::DeviceToHost,
            ffi::CopyDirection::DeviceToDevice => D::DeviceToDevice,
            _ => D::Unknown,
        }
    }
}

/// The vocabulary's key for a bridge key; `None` for a value past the last
/// key (C++ can pass any).
fn key_of(key: ffi::MetadataKey) -> Option<vocabulary::MetadataKey> {
    use vocabulary::MetadataKey as K;
    Some(match key {
        ffi::MetadataKey::Device => K::Device,
        ffi::MetadataKey::Stream => K::Stream,
        ffi::MetadataKey::HsaQueue => K::HsaQueue,
        ffi::MetadataKey::Correlation => K::Correlation,
        ffi::MetadataKey::Cid => K::Cid,
        ffi::MetadataKey::DispatchId => K::DispatchId,
        ffi::MetadataKey::Kind => K::Kind,
        ffi::MetadataKey::Kernel => K::Kernel,
        ffi::MetadataKey::Grid => K::Grid,
        ffi::MetadataKey::Block => K::Block,
        ffi::MetadataKey::SharedMemory => K::SharedMemory,
        ffi::MetadataKey::ScratchMemory => K::ScratchMemory,
        ffi::MetadataKey::Bytes => K::Bytes,
        ffi::MetadataKey::MemoryBandwidth => K::MemoryBandwidth,
        ffi::MetadataKey::SrcDevice => K::SrcDevice,
        ffi::MetadataKey::DstDevice => K::DstDevice,
        ffi::MetadataKey::GraphId => K::GraphId,
        ffi::MetadataKey::GraphNodeId => K::GraphNodeId,
        ffi::MetadataKey::Value => K::Value,
        ffi::MetadataKey::MangledName => K::MangledName,
        ffi::MetadataKey::CudaSyncKind => K::CudaSyncKind,
        ffi::MetadataKey::WaitOnStream => K::WaitOnStream,
        ffi::MetadataKey::WaitOnEventRecordCorrelation => K::WaitOnEventRecordCorrelation,
        ffi::MetadataKey::WaitOnEventId => K::WaitOnEventId,
        ffi::MetadataKey::EventId => K::EventId,
        ffi::MetadataKey::HostFunction => K::HostFunction,
        ffi::MetadataKey::Timing => K::Timing,
        ffi::MetadataKey::OverheadCount => K::OverheadCount,
        ffi::MetadataKey::ReplayPass => K::ReplayPass,
        ffi::MetadataKey::ThreadTrace => K::ThreadTrace,
        _ => return None,
    })
}

impl From<vocabulary::ValueType> for ffi::ValueType {
    fn from(value: vocabulary::ValueType) -> Self {
        use vocabulary::ValueType as V;
        match value {
            V::Int => ffi::ValueType::Int,
            V::Uint => ffi::ValueType::Uint,
            V::Float => ffi::ValueType::Float,
            V::Str => ffi::ValueType::Str,
            V::IntArray => ffi::ValueType::IntArray,
        }
    }
}

impl From<window::KernelActivity> for ffi::KernelActivity {
    fn from(k: window::KernelActivity) -> Self {
        let graph = k.graph;
        let blit = k.blit();
        let (stream, correlation) = (k.stream(), k.correlation());
        let (external_id, user_external_id) = (k.external_id(), k.user_external_id());
        let extras = k.extras.map(|e| *e).unwrap_or_default();
        // Instances after the sums: the C++ face writes every pair as an
        // arg, so per-dimension keys reach kineto's writer unchanged.
        let (counter_names, counter_values) = extras
            .counters
            .into_iter()
            .chain(extras.counter_instances)
            .unzip();
        ffi::KernelActivity {
            name_index: k.name_index,
            device: k.device,
            stream: stream.unwrap_or(0),
            has_stream: stream.is_some(),
            queue: k.queue,
            correlation: correlation.unwrap_or(0),
            has_correlation: correlation.is_some(),
            dispatch_id: k.dispatch_id,
            start_ns: k.start_ns,
            end_ns: k.end_ns,
            grid_x: k.grid[0],
            grid_y: k.grid[1],
            grid_z: k.grid[2],
            block_x: k.block[0],
            block_y: k.block[1],
            block_z: k.block[2],
            lds_bytes: k.lds_bytes,
            scratch_bytes: k.scratch_bytes,
            has_external_id: external_id.is_some(),
            external_id: external_id.unwrap_or(0),
            has_user_external_id: user_external_id.is_some(),
            user_external_id: user_external_id.unwrap_or(0),
            has_graph: graph.is_some(),
            graph_id: graph.map_or(0, |g| g.graph_id.get()),
            graph_node_id: graph.map_or(0, |g| g.graph_node_id),
            counter_names,
            counter_values,
            blit: match blit {
                None => ffi::BlitKind::None,
                Some(window::Blit::Memset { .. }) => ffi::BlitKind::Memset,
                Some(window::Blit::Copy { .. }) => ffi::BlitKind::Copy,
            },
            blit_bytes: match blit {
                Some(window::Blit::Memset { bytes, .. } | window::Blit::Copy { bytes, .. }) => {
                    bytes
                }
                None => 0,
            },
            blit_value: match blit {
                Some(window::Blit::Memset { value, .. }) => value,
                _ => 0,
            },
            blit_direction: match blit {
                Some(window::Blit::Copy { direction, .. }) => direction.into(),
                _ => ffi::CopyDirection::Unknown,
            },
            has_branch: k.branch.is_some(),
            has_replay_pass: extras.replay.is_some(),
            replay_pass: extras.replay.map_or(0, |r| r.pass),
            thread_trace: extras.thread_trace.unwrap_or_default(),
        }
    }
}

impl From<window::CopyActivity> for ffi::CopyActivity {
    fn from(c: window::CopyActivity) -> Self {
        let graph = c.graph;
        ffi::CopyActivity {
            direction: c.direction.into(),
            device: c.device,
            stream: c.stream.unwrap_or(0),
            has_stream: c.stream.is_some(),
            correlation: c.correlation.unwrap_or(0),
            has_correlation: c.correlation.is_some(),
            bytes: c.bytes,
            src_device: c.src_device,
            dst_device: c.dst_device,
            start_ns: c.start_ns,
            end_ns: c.end_ns,
            has_external_id: c.external_id.is_some(),
            external_id: c.external_id.unwrap_or(0),
            has_graph: graph.is_some(),
            graph_id: graph.map_or(0, |g| g.graph_id.get()),
            graph_node_id: graph.map_or(0, |g| g.graph_node_id),
        }
    }
}

impl From<window::RuntimeActivity> for ffi::RuntimeActivity {
    fn from(r: window::RuntimeActivity) -> Self {
        ffi::RuntimeActivity {
            name: r.name,
            cid: r.cid,
            thread_id: r.thread_id,
            correlation: r.correlation,
            start_ns: r.start_ns,
            end_ns: r.end_ns,
            has_external_id: r.external_id.is_some(),
            external_id: r.external_id.unwrap_or(0),
        }
    }
}

fn gpu_list(r: window::GpuRef) -> (ffi::GpuList, u64) {
    match r {
        window::GpuRef::Kernel(i) => (ffi::GpuList::Kernel, i as u64),
        window::GpuRef::Copy(i) => (ffi::GpuList::Copy, i as u64),
        window::GpuRef::HostFn(i) => (ffi::GpuList::HostFn, i as u64),
    }
}

fn sync_activity(s: window::SyncActivity) -> ffi::SyncActivity {
    ffi::SyncActivity {
        kind: match s.kind {
            window::SyncKind::Stream => ffi::SyncKind::Stream,
            window::SyncKind::Device => ffi::SyncKind::Device,
            window::SyncKind::Event => ffi::SyncKind::Event,
            window::SyncKind::StreamWaitEvent => ffi::SyncKind::StreamWaitEvent,
        },
        thread_id: s.thread_id,
        correlation: s.correlation,
        start_ns: s.start_ns,
        end_ns: s.end_ns,
        has_device: s.device.is_some(),
        device: s.device.unwrap_or(0),
        has_stream: s.stream.is_some(),
        stream: s.stream.unwrap_or(0),
        has_event: s.event.is_some(),
        event: s.event.unwrap_or(0),
        wait_on_stream: s.wait_on_stream.map_or(-1, |v| v as i64),
        wait_on_record_correlation: s.wait_on_record_correlation.map_or(-1, |v| v as i64),
        has_external_id: s.external_id.is_some(),
        external_id: s.external_id.unwrap_or(0),
    }
}

impl From<FinishedWindow> for ffi::WindowActivities {
    fn from(w: FinishedWindow) -> Self {
        ffi::WindowActivities {
            kernel_names: w.kernel_names,
            kernel_symbols: w.kernel_symbols,
            kernels: w.kernels.into_iter().map(Into::into).collect(),
            copies: w.copies.into_iter().map(Into::into).collect(),
            runtime: w.runtime.into_iter().map(Into::into).collect(),
            syncs: w.syncs.into_iter().map(sync_activity).collect(),
            events: w
                .events
                .into_iter()
                .map(|e| ffi::EventActivity {
                    event: e.event,
                    thread_id: e.thread_id,
                    correlation: e.correlation,
                    has_lane: e.device.is_some() && e.stream.is_some(),
                    device: e.device.unwrap_or(0),
                    stream: e.stream.unwrap_or(0),
                    ts_ns: e.ts_ns,
                    has_external_id: e.external_id.is_some(),
                    external_id: e.external_id.unwrap_or(0),
                    has_graph: e.graph.is_some(),
                    graph_id: e.graph.map_or(0, |g| g.graph_id.get()),
                    graph_node_id: e.graph.map_or(0, |g| g.graph_node_id),
                })
                .collect(),
            host_functions: w
                .host_functions
                .into_iter()
                .map(|h| ffi::HostFnActivity {
                    device: h.device,
                    stream: h.stream,
                    correlation: h.correlation,
                    function: h.function,
                    start_ns: h.start_ns,
                    end_ns: h.end_ns,
                    has_graph: h.graph.is_some(),
                    graph_id: h.graph.map_or(0, |g| g.graph_id.get()),
                    graph_node_id: h.graph.map_or(0, |g| g.graph_node_id),
                    has_branch: h.branch.is_some(),
                    branch_queue: h.branch.unwrap_or(0),
                    has_external_id: h.external_id.is_some(),
                    external_id: h.external_id.unwrap_or(0),
                })
                .collect(),
            annotations: w
                .annotations
                .into_iter()
                .map(|a| ffi::Annotation {
                    name: a.name,
                    thread_id: a.thread_id,
                    start_ns: a.start_ns,
                    end_ns: a.end_ns,
                    id: a.id,
                })
                .collect(),
            gpu_annotations: w
                .gpu_annotations
                .into_iter()
                .map(|g| ffi::GpuAnnotation {
                    name: g.name,
                    id: g.id,
                    device: g.device,
                    stream: g.stream,
                    has_branch: g.branch.is_some(),
                    branch_queue: g.branch.unwrap_or(0),
                    start_ns: g.start_ns,
                    end_ns: g.end_ns,
                })
                .collect(),
            dependencies: w
                .dependencies
                .into_iter()
                .map(|d| {
                    let (from_list, from_index) = gpu_list(d.from);
                    let (to_list, to_index) = gpu_list(d.to);
                    ffi::Dependency {
                        from_list,
                        from_index,
                        to_list,
                        to_index,
                    }
                })
                .collect(),
            overheads: w
                .overheads
                .into_iter()
                .map(|o| ffi::Overhead {
                    name: o.name,
                    start_ns: o.start_ns,
                    end_ns: o.end_ns,
                    count: o.count,
                })
                .collect(),
            devices: w
                .devices
                .into_iter()
                .map(|d| ffi::DeviceLane {
                    device: d.device,
                    name: d.name,
                })
                .collect(),
            system_clock_offset_ns: w.system_clock_offset_ns,
            summary: w.summary,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_inside_a_bridge_call_becomes_an_internal_error() {
        let result: Result<(), ToolError> = guarded("a test call", || panic!("boom"));
        match result {
            Err(ToolError::Internal(why)) => {
                assert!(why.contains("a test call") && why.contains("boom"), "{why}")
            }
            other => panic!("expected an internal error, got {other:?}"),
        }
    }

    #[test]
    fn every_bridge_key_has_its_vocabulary_name_and_type() {
        for (index, spec) in vocabulary::CATALOG.iter().enumerate() {
            let key = ffi::MetadataKey {
                repr: index.try_into().unwrap(),
            };
            assert_eq!(key_of(key), Some(spec.key));
            assert_eq!(metadata_key_name(key), spec.name);
            assert_eq!(metadata_key_type(key), ffi::ValueType::from(spec.value));
        }
        let past = ffi::MetadataKey {
            repr: vocabulary::CATALOG.len().try_into().unwrap(),
        };
        assert_eq!(key_of(past), None);
    }

    #[test]
    fn the_cxx_face_gets_instance_values_after_the_sums_as_name_value_pairs() {
        let kernel = window::KernelActivity {
            extras: window::KernelExtras {
                counters: vec![("GRBM_COUNT".into(), 9.0)],
                counter_instances: vec![
                    ("GRBM_COUNT[XCC=0,INSTANCE=0]".into(), 5.0),
                    ("GRBM_COUNT[XCC=1,INSTANCE=0]".into(), 4.0),
                ],
                ..Default::default()
            }
            .boxed(),
            ..Default::default()
        };
        let k = ffi::KernelActivity::from(kernel);
        assert_eq!(
            k.counter_names,
            [
                "GRBM_COUNT",
                "GRBM_COUNT[XCC=0,INSTANCE=0]",
                "GRBM_COUNT[XCC=1,INSTANCE=0]"
            ]
        );
        assert_eq!(k.counter_values, [9.0, 5.0, 4.0]);
    }

    #[test]
    fn errors_other_than_panics_pass_through_unchanged() {
        let result: Result<(), ToolError> = guarded("a test call", || {
            Err(ToolError::Usage("stop without a start"))
        });
        assert_eq!(result, Err(ToolError::Usage("stop without a start")));
    }
}
