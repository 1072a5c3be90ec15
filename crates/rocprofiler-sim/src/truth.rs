//! Ground truth: what really happened in a run, for tests and validation
//! only. The tool never sees it (it is not reachable through any SDK entry
//! point); hosts read it with `rocsim_ground_truth_json` after waiting for
//! the run's work to complete (device work may be processed and timed after
//! the run's threads finished).
use crate::workload::Direction;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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
    /// "rocm" or "ideal".
    pub submission_model: String,
    pub hw_queues_per_device: u32,
    pub devices: u32,
    /// GPU agent ids (handle values), by device index.
    pub agents: Vec<u64>,
    /// One per device record the SDK produced (kernels, blit kernels
    /// included, and copies), in processing order.
    pub ops: Vec<OpTruth>,
    /// One per hipGraphLaunch.
    pub launches: Vec<LaunchTruth>,
    /// hipGraphInstantiate / hipGraphExecUpdate / hipGraphExecDestroy events.
    pub exec_events: Vec<ExecEvent>,
    /// One per HIP API call, in the order the calls returned.
    pub calls: Vec<CallTruth>,
    /// Thread ids of the workload's threads, by index.
    pub threads: Vec<u64>,
    /// The thread that built shared execs and destroyed graphs at the end.
    pub setup_thread: u64,
    /// API calls made (each took one internal correlation id).
    pub api_calls: u64,
    /// Host functions the streams and graphs ran (hipLaunchHostFunc, host
    /// nodes), `rocm` model only.
    #[serde(default)]
    pub host_functions: Vec<HostFnTruth>,
    /// One per hipEventRecord: when the event's marker completed.
    #[serde(default)]
    pub events: Vec<EventTruth>,
    /// roctx marks and ranges, with the SDK callback times.
    #[serde(default)]
    pub markers: Vec<MarkerTruth>,
    /// One per replay of a graph event-record node, `rocm` model only.
    #[serde(default)]
    pub graph_events: Vec<GraphEventTruth>,
}

/// An event-record node's record in one replay.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct GraphEventTruth {
    /// The hipEvent_t value.
    pub event: u64,
    /// The hipGraphLaunch's correlation id.
    pub launch_correlation_id: u64,
    pub launching_thread: u64,
    /// The launch stream.
    pub stream_id: u64,
    /// The stream the record's marker went on (an exec's internal one when
    /// its segment ran there).
    pub exec_stream_id: u64,
    pub device: u32,
    pub graph_exec_id: u64,
    /// The node's creation index.
    pub node_index: u32,
    /// When the marker completed: every command before it on its stream,
    /// the node's dependencies included, had completed.
    pub completed_ns: u64,
}

/// A host function that ran on the simulated runtime's callback thread.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct HostFnTruth {
    /// hipLaunchHostFunc's, or the hipGraphLaunch's, correlation id.
    pub launch_correlation_id: u64,
    pub launching_thread: u64,
    /// The stream of that call.
    pub stream_id: u64,
    /// The stream it held (an exec's internal one for a host node).
    pub exec_stream_id: u64,
    pub device: u32,
    /// 0 for hipLaunchHostFunc.
    pub graph_exec_id: u64,
    /// The host node's creation index.
    pub node_index: Option<u32>,
    /// The function's address (hipLaunchHostFunc's `fn`, the node's
    /// `hipHostNodeParams::fn`).
    #[serde(default)]
    pub function: u64,
    pub start_ns: u64,
    pub end_ns: u64,
}

/// One hipEventRecord.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct EventTruth {
    /// The hipEvent_t value.
    pub event: u64,
    pub record_correlation_id: u64,
    pub stream_id: u64,
    pub device: u32,
    /// The record call's ENTER.
    pub enter_ns: u64,
    /// When the event's marker completed (all work before it on the stream
    /// done).
    pub completed_ns: u64,
}

/// A roctx mark or range.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct MarkerTruth {
    /// "mark", "thread_range" (push/pop) or "process_range" (start/stop).
    pub kind: String,
    pub message: String,
    /// The thread of the mark, push or start.
    pub thread: u64,
    /// The SDK callback times: the mark's, the push's/start's ENTER and the
    /// pop's/stop's EXIT.
    pub start_ns: u64,
    pub end_ns: u64,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpKind {
    #[default]
    Kernel,
    Memcpy,
}

/// One kernel dispatch (blit kernels included) or SDMA memory copy.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct OpTruth {
    pub kind: OpKind,
    /// A rocclr blit kernel (`__amd_rocclr_*`) doing a memset or copy.
    pub blit: bool,
    /// `dispatch_info.dispatch_id` of a kernel record; 0 for copies.
    pub dispatch_id: u64,
    /// A unique id per copy; 0 for kernels.
    pub copy_id: u64,
    /// `correlation_id.internal` on the record: the call in progress on the
    /// thread that processed the packet (or a correlation id the SDK made).
    pub record_correlation_id: u64,
    /// The thread that processed it (where the external-correlation request
    /// fired); the record's `thread_id`.
    pub processing_thread: u64,
    /// The HIP call that produced it (hipGraphLaunch, hipLaunchKernel,
    /// hipMemsetAsync, hipMemcpyAsync).
    pub launch_correlation_id: u64,
    /// The thread that made that call.
    pub launching_thread: u64,
    /// hipGraphExec_t value; 0 for eager work.
    pub exec_handle: u64,
    /// The SDK's graph_exec_id of that exec; 0 for eager work.
    pub graph_exec_id: u64,
    /// Successful hipGraphExecUpdate calls on the exec before this launch.
    pub exec_epoch: u32,
    /// The graph whose nodes the exec ran at launch time (after updates).
    pub graph: Option<String>,
    /// Node index in CREATION order; None for eager work.
    pub node_index: Option<u32>,
    /// Position among its launch's kernel and copy packets in the order the
    /// launching thread enqueued them (barriers excluded); 0 for eager work.
    pub submission_ordinal: u32,
    pub kernel_name: Option<String>,
    pub kernel_id: u64,
    /// Kernels: the record's `grid_size` (work-items per dimension) and
    /// `workgroup_size`; zero for copies.
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub bytes: u64,
    pub direction: Option<Direction>,
    /// A memset's byte value (fill blit kernels).
    #[serde(default)]
    pub value: Option<u32>,
    /// A peer copy's source and destination devices.
    #[serde(default)]
    pub src_device: Option<u32>,
    #[serde(default)]
    pub dst_device: Option<u32>,
    pub device: u32,
    pub agent_id: u64,
    /// Index of the HW queue on its device (creation order); 0 for copies.
    pub queue_index: u32,
    /// The record's queue id; 0 for SDMA copies.
    pub queue_id: u64,
    /// The stream of the launching call.
    pub stream_id: u64,
    /// The stream the packet was submitted on: the launching call's, or one
    /// of the exec's internal parallel streams (numbered from 1 << 32).
    pub exec_stream_id: u64,
    /// When the packet was published (copies: issued).
    pub publish_ns: u64,
    /// When it was processed (intercepted by the SDK).
    pub process_ns: u64,
    pub start_ns: u64,
    pub end_ns: u64,
    /// Processed on ROCr's async thread (queue overflow).
    pub async_processed: bool,
    /// Kernels: what the dispatch counted, by counter name, for the
    /// counters a dispatch counting service collected; empty otherwise.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub counters: BTreeMap<String, f64>,
    /// Kernels: each instance the dispatch counting service recorded for
    /// those counters (they sum to `counters`' values), in record order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub counter_instances: Vec<CounterInstanceTruth>,
    /// Kernels run more than once by kernel replay: which pass this record
    /// is (every pass has the dispatch's one dispatch id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay_pass: Option<u32>,
    /// Kernels: the raw thread-trace bytes the thread trace services got
    /// for this record (every shader engine); 0 when it was not traced.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub thread_trace_bytes: u64,
}

/// One counter instance's value for one dispatch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CounterInstanceTruth {
    pub counter: String,
    /// Its position in each of the counter's dimensions, by the SDK's
    /// dimension name (`DIMENSION_XCC`, ...), in the catalog's order.
    pub dimensions: Vec<(String, usize)>,
    pub value: f64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LaunchTruth {
    pub correlation_id: u64,
    pub thread: u64,
    pub exec_handle: u64,
    pub graph_exec_id: u64,
    pub exec_epoch: u32,
    pub graph: String,
    /// Kernel and copy packets the launch produced (barriers excluded).
    pub packets: u32,
    /// Kernels (blit kernels included) the launch really dispatched.
    pub kernel_dispatch_count: u64,
    /// What the SDK's HIP_GRAPH record says (0 before SDK 1.3).
    pub record_kernel_dispatch_count: u64,
    pub stream_id: u64,
    /// The launch stream's HW queue when the launch began.
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

/// One HIP API call.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct CallTruth {
    pub correlation_id: u64,
    pub thread: u64,
    /// `rocprofiler_hip_runtime_api_id_t`.
    pub operation: i32,
    pub name: String,
    pub stream_id: Option<u64>,
    pub enter_ns: u64,
    pub exit_ns: u64,
    /// The innermost push_marker name active on the thread at the call.
    pub marker: Option<String>,
    /// Event calls: the hipEvent_t value.
    #[serde(default)]
    pub event: Option<u64>,
    /// hipStreamWaitEvent / hipEventSynchronize: the hipEventRecord call
    /// whose record it waited for (None: the event was never recorded).
    #[serde(default)]
    pub waited_record_correlation_id: Option<u64>,
    /// hipDeviceSynchronize: the device.
    #[serde(default)]
    pub device: Option<u32>,
}
