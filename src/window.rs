//! A finished trace window: what the tool hands to a trace writer, in Rust
//! terms. Every record here is already attributed and linked; a field that
//! is `None` is unknown and is left out of the trace, never guessed.
//!
//! Why its own type: the writers (our JSON writer, the C++ face) read the
//! same window, and only the bridge (src/bridge.rs) needs its C++ shape.
pub use activity_store::CopyDirection;

/// A record's graph node, vouched for or repaired by attribution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GraphNode {
    pub graph_id: u64,
    /// Packed: above 2^53 for most nodes.
    pub graph_node_id: u64,
}

/// One GPU kernel dispatch.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelActivity {
    /// Index into `FinishedWindow::kernel_names`.
    pub name_index: u32,
    pub device: u32,
    /// `None`: the kernel goes on a lane named after its HSA queue.
    pub stream: Option<u64>,
    pub queue: u64,
    /// The launching call; `None`: no flow arrow, no External id.
    pub correlation: Option<u64>,
    pub dispatch_id: u64,
    pub start_ns: u64,
    pub end_ns: u64,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub lds_bytes: u32,
    pub scratch_bytes: u32,
    pub external_id: Option<u64>,
    pub user_external_id: Option<u64>,
    pub graph: Option<GraphNode>,
    /// Hardware counter values by counter name, in the order asked for;
    /// only counters whose record came.
    pub counters: Vec<(String, f64)>,
}

/// One memory copy. Copies run on no HSA queue the SDK reports.
#[derive(Clone, Debug, PartialEq)]
pub struct CopyActivity {
    pub direction: CopyDirection,
    pub device: u32,
    /// `None`: the copy goes on its device's "copies" lane.
    pub stream: Option<u64>,
    pub correlation: Option<u64>,
    pub bytes: u64,
    /// -1: the host.
    pub src_device: i64,
    pub dst_device: i64,
    pub start_ns: u64,
    pub end_ns: u64,
    pub external_id: Option<u64>,
    pub graph: Option<GraphNode>,
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
    pub external_id: Option<u64>,
}

/// A GPU as kineto names its lane.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceLane {
    pub device: u32,
    pub name: String,
}

/// Everything one finished trace window produced.
#[derive(Clone, Debug, Default)]
pub struct FinishedWindow {
    pub kernel_names: Vec<String>,
    pub kernels: Vec<KernelActivity>,
    pub copies: Vec<CopyActivity>,
    pub runtime: Vec<RuntimeActivity>,
    pub devices: Vec<DeviceLane>,
    /// Add to an SDK timestamp to get system_clock nanoseconds (kineto's clock).
    pub system_clock_offset_ns: i64,
    /// `key=value` lines for the trace metadata: attribution counts,
    /// completeness, drops.
    pub summary: Vec<String>,
}
