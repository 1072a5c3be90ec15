//! Ground truth: what really happened in a run, for tests and validation
//! only. The tool never sees it (it is not reachable through any SDK entry
//! point); hosts read it with `rocsim_ground_truth_json`.
//!
//! Every field added for the `rocm` submission model (specs/sim-rocm-model.md,
//! "Truth") is `#[serde(default)]`, so a truth written by a simulator that
//! predates it still parses: its `submission_model` is then `None`.
use crate::options::SubmissionModel;
use crate::workload::Direction;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct GroundTruth {
    /// The simulated SDK version the process runs (encoded), 0 before init.
    pub sdk_version: u32,
    /// Every run since the process started, in order.
    pub runs: Vec<RunTruth>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RunTruth {
    pub source: String,
    pub hw_queues_per_device: u32,
    pub devices: u32,
    /// GPU agent ids (handle values), by device index.
    pub agents: Vec<u64>,
    /// Kernel dispatches and copies, in write order.
    pub ops: Vec<OpTruth>,
    /// One per hipGraphLaunch.
    pub launches: Vec<LaunchTruth>,
    /// hipGraphInstantiate / hipGraphExecUpdate / hipGraphExecDestroy events.
    pub exec_events: Vec<ExecEvent>,
    /// Thread ids of the workload's threads, by index.
    pub threads: Vec<u64>,
    /// API calls made (each took one internal correlation id).
    pub api_calls: u64,
    /// The submission model the run used. `None`: written by a simulator
    /// that predates the field, which always ran today's model (`ideal`).
    #[serde(default)]
    pub submission_model: Option<SubmissionModel>,
    /// One per HIP API call the run made, in no particular order.
    #[serde(default)]
    pub calls: Vec<CallTruth>,
}

/// One HIP API call.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct CallTruth {
    /// Its internal correlation id.
    pub correlation_id: u64,
    /// The thread that made it.
    pub thread: u64,
    /// The HIP runtime API operation id.
    pub operation: u32,
    /// The HIP runtime API name (e.g. `hipGraphLaunch`).
    pub name: String,
    /// The stream it names, if it names one.
    #[serde(default)]
    pub stream_id: Option<u64>,
    pub enter_ns: u64,
    pub exit_ns: u64,
    /// The innermost `push_marker` name active on the thread at the call.
    #[serde(default)]
    pub marker: Option<String>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpKind {
    #[default]
    Kernel,
    Memcpy,
}

/// One device record the SDK produced: a kernel dispatch (blit kernels
/// included) or a memory copy.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct OpTruth {
    pub kind: OpKind,
    /// A kernel rocclr launched for a memset or memcpy
    /// (`__amd_rocclr_fillBufferAligned`, `__amd_rocclr_copyBuffer`).
    #[serde(default)]
    pub blit: bool,
    /// `dispatch_info.dispatch_id` of a kernel record; 0 for copies. (A
    /// simulator that predates `copy_id` gave copies one too, never shown on
    /// their record.)
    pub dispatch_id: u64,
    /// A unique id per copy op; 0 for kernels.
    #[serde(default)]
    pub copy_id: u64,
    /// `correlation_id.internal` on the record: the API call in progress on
    /// the thread that PROCESSED the packet.
    pub record_correlation_id: u64,
    /// The thread that processed the packet (where the external-correlation
    /// request fired).
    #[serde(default)]
    pub processing_thread: u64,
    /// The HIP call that produced this op (hipGraphLaunch, hipLaunchKernel,
    /// hipMemsetAsync, hipMemcpyAsync).
    pub launch_correlation_id: u64,
    /// Thread that called the launching API.
    pub launching_thread: u64,
    /// hipGraphExec_t value; 0 for eager work.
    pub exec_handle: u64,
    /// The SDK's graph_exec_id of that exec; 0 for eager work.
    pub graph_exec_id: u64,
    /// Successful hipGraphExecUpdate calls on the exec before this launch.
    #[serde(default)]
    pub exec_epoch: u32,
    /// The graph whose nodes the exec ran at launch time (after updates).
    pub graph: Option<String>,
    /// Node index in CREATION order; None for eager work.
    pub node_index: Option<u32>,
    /// Position among the launch's kernel and copy packets in the order the
    /// launching thread enqueued them (barriers excluded); 0 for eager work.
    #[serde(default)]
    pub submission_ordinal: u32,
    pub kernel_name: Option<String>,
    pub kernel_id: u64,
    /// Grid (work-items per dimension) and workgroup size, as recorded.
    #[serde(default)]
    pub grid: [u32; 3],
    #[serde(default)]
    pub block: [u32; 3],
    pub bytes: u64,
    /// Copies (and blit kernels of copies): the direction asked for.
    #[serde(default)]
    pub direction: Option<Direction>,
    pub device: u32,
    pub agent_id: u64,
    pub queue_index: u32,
    /// 0 for SDMA copies.
    pub queue_id: u64,
    /// The launching call's stream.
    pub stream_id: u64,
    /// The stream the packet was submitted on (an exec's internal parallel
    /// streams included).
    #[serde(default)]
    pub exec_stream_id: u64,
    /// When the launching thread published the packet, and when it was
    /// processed (the SDK's intercept ran).
    #[serde(default)]
    pub publish_ns: u64,
    #[serde(default)]
    pub process_ns: u64,
    pub start_ns: u64,
    pub end_ns: u64,
    /// Processed by ROCr's async thread (queue overflow).
    #[serde(default)]
    pub async_processed: bool,
    /// Superseded by `submission_ordinal` (kept while today's simulator
    /// writes it).
    #[serde(default)]
    pub ordinal: u32,
    /// Superseded by `processing_thread`.
    #[serde(default)]
    pub writing_thread: u64,
    /// Superseded by `publish_ns` / `process_ns`.
    #[serde(default)]
    pub submit_ns: u64,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct LaunchTruth {
    pub correlation_id: u64,
    pub thread: u64,
    pub exec_handle: u64,
    pub graph_exec_id: u64,
    /// Successful hipGraphExecUpdate calls on the exec before this launch.
    #[serde(default)]
    pub exec_epoch: u32,
    pub graph: String,
    pub packets: u32,
    /// The launch's true kernel count (its own kernel packets), which under
    /// the `rocm` model need not be the SDK record's count.
    pub kernel_dispatch_count: u64,
    pub stream_id: u64,
    pub queue_id: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ExecEvent {
    /// "instantiate", "update", "update_failed" or "destroy".
    pub event: String,
    pub correlation_id: u64,
    pub thread: u64,
    pub exec_handle: u64,
    pub graph_exec_id: u64,
    pub graph: Option<String>,
}
