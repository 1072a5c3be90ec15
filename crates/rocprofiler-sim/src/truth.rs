//! Ground truth: what really happened in a run, for tests and validation
//! only. The tool never sees it (it is not reachable through any SDK entry
//! point); hosts read it with `rocsim_ground_truth_json`.
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
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpKind {
    Kernel,
    Memcpy,
}

/// One kernel dispatch or memory copy.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OpTruth {
    pub kind: OpKind,
    /// `dispatch_info.dispatch_id` of a kernel record (copies get one too, not
    /// shown on their record).
    pub dispatch_id: u64,
    /// `correlation_id.internal` on the record: the API call in progress on
    /// the thread that WROTE the packet.
    pub record_correlation_id: u64,
    /// The exec instance: correlation id of the hipGraphLaunch (or of the
    /// eager hipLaunchKernel / hipMemcpyAsync) that produced this op.
    pub launch_correlation_id: u64,
    /// hipGraphExec_t value; 0 for eager work.
    pub exec_handle: u64,
    /// The SDK's graph_exec_id of that exec; 0 for eager work.
    pub graph_exec_id: u64,
    /// The graph whose nodes the exec ran at launch time (after updates).
    pub graph: Option<String>,
    /// Node index in CREATION order; None for eager work.
    pub node_index: Option<u32>,
    /// Position of the packet within its launch (submission order).
    pub ordinal: u32,
    pub kernel_name: Option<String>,
    pub kernel_id: u64,
    pub bytes: u64,
    /// Thread that called the launching API.
    pub launching_thread: u64,
    /// Thread that wrote the packet (and on which the external-correlation
    /// request fired).
    pub writing_thread: u64,
    pub device: u32,
    pub agent_id: u64,
    pub queue_index: u32,
    pub queue_id: u64,
    pub stream_id: u64,
    pub submit_ns: u64,
    pub start_ns: u64,
    pub end_ns: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LaunchTruth {
    pub correlation_id: u64,
    pub thread: u64,
    pub exec_handle: u64,
    pub graph_exec_id: u64,
    pub graph: String,
    pub packets: u32,
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
