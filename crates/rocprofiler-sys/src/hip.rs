//! HIP runtime API operation ids (hip/runtime_api_id.h) and the argument
//! structs of the calls the backend reads (hip/api_args.h).
//!
//! The args union is 88 bytes in every SDK from 1.0 to 1.3 (its largest member
//! is hipExtModuleLaunchKernel's); only the members read here are declared.
use crate::types::rocprofiler_dim3_t;
use std::ffi::c_void;

/// `rocprofiler_hip_runtime_api_id_t` values the backend and the simulator
/// use by name, and the name of every id. The enum is append-only, so these
/// hold across SDK versions (see [`crate::hip_api_names`]).
pub mod hip_runtime_api_id {
    use crate::hip_api_names::RUNTIME_API_NAMES;

    pub const NONE: i32 = -1;
    pub const hipDeviceSynchronize: i32 = 66;
    pub const hipEventRecord: i32 = 81;
    pub const hipExtLaunchKernel: i32 = 84;
    pub const hipFree: i32 = 90;
    pub const hipGraphAddEmptyNode: i32 = 120;
    pub const hipGraphAddKernelNode: i32 = 124;
    pub const hipGraphAddMemcpyNode1D: i32 = 128;
    pub const hipGraphAddMemsetNode: i32 = 131;
    pub const hipGraphClone: i32 = 133;
    pub const hipGraphCreate: i32 = 134;
    pub const hipGraphDestroy: i32 = 136;
    pub const hipGraphExecDestroy: i32 = 143;
    pub const hipGraphExecUpdate: i32 = 153;
    pub const hipGraphInstantiate: i32 = 159;
    pub const hipGraphInstantiateWithFlags: i32 = 160;
    pub const hipGraphLaunch: i32 = 166;
    pub const hipLaunchKernel: i32 = 214;
    pub const hipMalloc: i32 = 215;
    pub const hipMemcpy: i32 = 259;
    pub const hipMemcpyAsync: i32 = 268;
    pub const hipMemset: i32 = 288;
    pub const hipMemsetAsync: i32 = 293;
    pub const hipModuleLaunchKernel: i32 = 308;
    pub const hipStreamBeginCapture: i32 = 333;
    pub const hipStreamCreate: i32 = 334;
    pub const hipStreamCreateWithFlags: i32 = 335;
    pub const hipStreamDestroy: i32 = 337;
    pub const hipStreamEndCapture: i32 = 338;
    pub const hipStreamSynchronize: i32 = 346;
    pub const hipStreamWaitEvent: i32 = 348;
    pub const hipMemsetAsync_spt: i32 = 397;
    pub const hipMemcpyAsync_spt: i32 = 402;
    pub const hipLaunchKernel_spt: i32 = 419;
    pub const hipGraphLaunch_spt: i32 = 420;
    pub const hipGraphInstantiateWithParams: i32 = 438;

    /// One past the largest id any SDK this crate knows reports.
    pub const LAST: i32 = RUNTIME_API_NAMES.len() as i32;

    /// The id of a runtime function, by name (the table is append-only,
    /// so an id found here holds in every SDK that has the function).
    pub fn by_name(name: &str) -> Option<i32> {
        RUNTIME_API_NAMES
            .iter()
            .position(|n| *n == name)
            .map(|i| i as i32)
    }

    /// The runtime's name for an operation id.
    pub fn name(operation: i32) -> Option<&'static str> {
        usize::try_from(operation)
            .ok()
            .and_then(|i| RUNTIME_API_NAMES.get(i))
            .copied()
    }
}

/// `hipSuccess`.
pub const HIP_SUCCESS: i32 = 0;
/// `hipGraphExecUpdateSuccess`.
pub const HIP_GRAPH_EXEC_UPDATE_SUCCESS: i32 = 0;

pub type hipGraphExec_t = *mut c_void;
pub type hipGraph_t = *mut c_void;
pub type hipGraphNode_t = *mut c_void;
pub type hipStream_t = *mut c_void;
pub type hipFunction_t = *mut c_void;
pub type hipEvent_t = *mut c_void;
/// `void (*)(void* userData)`, a host function a stream or graph runs.
pub type hipHostFn_t = *mut c_void;

/// `hipMemcpyKind` values.
pub mod hip_memcpy_kind {
    pub const hipMemcpyHostToHost: i32 = 0;
    pub const hipMemcpyHostToDevice: i32 = 1;
    pub const hipMemcpyDeviceToHost: i32 = 2;
    pub const hipMemcpyDeviceToDevice: i32 = 3;
    pub const hipMemcpyDefault: i32 = 4;
}

/// `hipKernelNodeParams` (hip/hip_runtime_api.h): what a kernel node runs.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hipKernelNodeParams {
    pub blockDim: rocprofiler_dim3_t,
    pub extra: *mut *mut c_void,
    /// The kernel's host stub, as hipLaunchKernel's `function_address`.
    pub func: *mut c_void,
    pub gridDim: rocprofiler_dim3_t,
    pub kernelParams: *mut *mut c_void,
    pub sharedMemBytes: u32,
}

/// `hipMemsetParams` (hip/hip_runtime_api.h).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hipMemsetParams {
    pub dst: *mut c_void,
    pub elementSize: u32,
    pub height: usize,
    pub pitch: usize,
    pub value: u32,
    pub width: usize,
}

/// `hipHostNodeParams` (hip/hip_runtime_api.h): `{fn, userData}`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hipHostNodeParams {
    pub fn_: hipHostFn_t,
    pub userData: *mut c_void,
}

/// `hipEventCreate(hipEvent_t* event)`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hip_event_create_args {
    pub event: *mut hipEvent_t,
}

/// `hipEventRecord(hipEvent_t event, hipStream_t stream)`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hip_event_record_args {
    pub event: hipEvent_t,
    pub stream: hipStream_t,
}

/// `hipEventSynchronize(hipEvent_t event)`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hip_event_synchronize_args {
    pub event: hipEvent_t,
}

/// `hipStreamWaitEvent(hipStream_t stream, hipEvent_t event, unsigned int flags)`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hip_stream_wait_event_args {
    pub stream: hipStream_t,
    pub event: hipEvent_t,
    pub flags: u32,
}

/// `hipStreamSynchronize(hipStream_t stream)`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hip_stream_synchronize_args {
    pub stream: hipStream_t,
}

/// `hipSetDevice(int deviceId)`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hip_set_device_args {
    pub deviceId: i32,
}

/// `hipLaunchHostFunc(hipStream_t stream, hipHostFn_t fn, void* userData)`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hip_launch_host_func_args {
    pub stream: hipStream_t,
    pub fn_: hipHostFn_t,
    pub userData: *mut c_void,
}

/// `hipMemcpyPeerAsync(void* dst, int dstDeviceId, const void* src, int
/// srcDevice, size_t sizeBytes, hipStream_t stream)`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hip_memcpy_peer_async_args {
    pub dst: *mut c_void,
    pub dstDeviceId: i32,
    pub src: *const c_void,
    pub srcDevice: i32,
    pub sizeBytes: usize,
    pub stream: hipStream_t,
}

/// `hipGraphAddHostNode(pGraphNode, graph, pDependencies, numDependencies,
/// const hipHostNodeParams* pNodeParams)`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hip_graph_add_host_node_args {
    pub pGraphNode: *mut hipGraphNode_t,
    pub graph: hipGraph_t,
    pub pDependencies: *const hipGraphNode_t,
    pub numDependencies: usize,
    pub pNodeParams: *const hipHostNodeParams,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hip_graph_launch_args {
    pub graphExec: hipGraphExec_t,
    pub stream: hipStream_t,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hip_graph_instantiate_args {
    pub pGraphExec: *mut hipGraphExec_t,
    pub graph: hipGraph_t,
    pub pErrorNode: *mut *mut c_void,
    pub pLogBuffer: *mut i8,
    pub bufferSize: usize,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hip_graph_instantiate_with_flags_args {
    pub pGraphExec: *mut hipGraphExec_t,
    pub graph: hipGraph_t,
    pub flags: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hip_graph_exec_update_args {
    pub hGraphExec: hipGraphExec_t,
    pub hGraph: hipGraph_t,
    pub hErrorNode_out: *mut *mut c_void,
    /// `hipGraphExecUpdateResult*`: 0 (hipGraphExecUpdateSuccess) on success.
    pub updateResult_out: *mut i32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hip_graph_exec_destroy_args {
    pub graphExec: hipGraphExec_t,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hip_launch_kernel_args {
    pub function_address: *const c_void,
    pub numBlocks: rocprofiler_dim3_t,
    pub dimBlocks: rocprofiler_dim3_t,
    pub args: *mut *mut c_void,
    pub sharedMemBytes: usize,
    pub stream: hipStream_t,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hip_memcpy_async_args {
    pub dst: *mut c_void,
    pub src: *const c_void,
    pub sizeBytes: usize,
    /// `hipMemcpyKind`.
    pub kind: i32,
    pub stream: hipStream_t,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hip_stream_create_args {
    pub stream: *mut hipStream_t,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hip_graph_create_args {
    pub pGraph: *mut hipGraph_t,
    pub flags: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hip_graph_destroy_args {
    pub graph: hipGraph_t,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hip_graph_add_kernel_node_args {
    pub pGraphNode: *mut hipGraphNode_t,
    pub graph: hipGraph_t,
    pub pDependencies: *const hipGraphNode_t,
    pub numDependencies: usize,
    pub pNodeParams: *const hipKernelNodeParams,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hip_graph_add_memcpy_node_1d_args {
    pub pGraphNode: *mut hipGraphNode_t,
    pub graph: hipGraph_t,
    pub pDependencies: *const hipGraphNode_t,
    pub numDependencies: usize,
    pub dst: *mut c_void,
    pub src: *const c_void,
    pub count: usize,
    /// `hipMemcpyKind`.
    pub kind: i32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hip_graph_add_memset_node_args {
    pub pGraphNode: *mut hipGraphNode_t,
    pub graph: hipGraph_t,
    pub pDependencies: *const hipGraphNode_t,
    pub numDependencies: usize,
    pub pMemsetParams: *const hipMemsetParams,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hip_graph_add_empty_node_args {
    pub pGraphNode: *mut hipGraphNode_t,
    pub graph: hipGraph_t,
    pub pDependencies: *const hipGraphNode_t,
    pub numDependencies: usize,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hip_memset_async_args {
    pub dst: *mut c_void,
    pub value: i32,
    pub sizeBytes: usize,
    pub stream: hipStream_t,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hip_module_launch_kernel_args {
    pub func: hipFunction_t,
    pub gridDimX: u32,
    pub gridDimY: u32,
    pub gridDimZ: u32,
    pub blockDimX: u32,
    pub blockDimY: u32,
    pub blockDimZ: u32,
    pub sharedMemBytes: u32,
    pub stream: hipStream_t,
    pub kernelParams: *mut *mut c_void,
    pub extra: *mut *mut c_void,
}

/// `hipStreamDestroy(hipStream_t stream)` arguments.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hip_stream_destroy_args {
    pub stream: hipStream_t,
}

/// `hipMalloc(void** ptr, size_t size)` arguments.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hip_malloc_args {
    pub ptr: *mut *mut c_void,
    pub size: usize,
}

/// `hipFree(void* ptr)` arguments.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hip_free_args {
    pub ptr: *mut c_void,
}

/// `hipMemcpy(void* dst, const void* src, size_t sizeBytes, hipMemcpyKind kind)` arguments.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hip_memcpy_args {
    pub dst: *mut c_void,
    pub src: *const c_void,
    pub sizeBytes: usize,
    /// `hipMemcpyKind`.
    pub kind: i32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hip_graph_clone_args {
    pub pGraphClone: *mut hipGraph_t,
    pub originalGraph: hipGraph_t,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hip_stream_begin_capture_args {
    pub stream: hipStream_t,
    /// `hipStreamCaptureMode`.
    pub mode: i32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hip_stream_end_capture_args {
    pub stream: hipStream_t,
    pub pGraph: *mut hipGraph_t,
}

/// `rocprofiler_hip_api_args_t` (88 bytes, 8-aligned).
#[repr(C)]
#[derive(Clone, Copy)]
pub union rocprofiler_hip_api_args_t {
    pub hipGraphLaunch: hip_graph_launch_args,
    pub hipGraphInstantiate: hip_graph_instantiate_args,
    pub hipGraphInstantiateWithFlags: hip_graph_instantiate_with_flags_args,
    pub hipGraphExecUpdate: hip_graph_exec_update_args,
    pub hipGraphExecDestroy: hip_graph_exec_destroy_args,
    pub hipLaunchKernel: hip_launch_kernel_args,
    pub hipMemcpyAsync: hip_memcpy_async_args,
    pub hipStreamCreate: hip_stream_create_args,
    pub hipGraphCreate: hip_graph_create_args,
    pub hipGraphDestroy: hip_graph_destroy_args,
    pub hipGraphAddKernelNode: hip_graph_add_kernel_node_args,
    pub hipGraphAddMemcpyNode1D: hip_graph_add_memcpy_node_1d_args,
    pub hipGraphAddMemsetNode: hip_graph_add_memset_node_args,
    pub hipGraphAddEmptyNode: hip_graph_add_empty_node_args,
    pub hipMemsetAsync: hip_memset_async_args,
    pub hipModuleLaunchKernel: hip_module_launch_kernel_args,
    pub hipMemcpy: hip_memcpy_args,
    pub hipGraphClone: hip_graph_clone_args,
    pub hipStreamBeginCapture: hip_stream_begin_capture_args,
    pub hipStreamEndCapture: hip_stream_end_capture_args,
    pub hipEventCreate: hip_event_create_args,
    pub hipEventRecord: hip_event_record_args,
    pub hipEventSynchronize: hip_event_synchronize_args,
    pub hipStreamWaitEvent: hip_stream_wait_event_args,
    pub hipStreamSynchronize: hip_stream_synchronize_args,
    pub hipSetDevice: hip_set_device_args,
    pub hipLaunchHostFunc: hip_launch_host_func_args,
    pub hipMemcpyPeerAsync: hip_memcpy_peer_async_args,
    pub hipGraphAddHostNode: hip_graph_add_host_node_args,
    /// The union's full extent in every SDK from 1.0 to 1.3.
    pub raw: [u64; 11],
}

impl Default for rocprofiler_hip_api_args_t {
    fn default() -> Self {
        Self { raw: [0; 11] }
    }
}

/// `rocprofiler_hip_api_retval_t` (24 bytes: its widest member is
/// hipChannelFormatDesc).
#[repr(C)]
#[derive(Clone, Copy)]
pub union rocprofiler_hip_api_retval_t {
    pub hipError_t_retval: i32,
    pub int_retval: i32,
    pub uint64_t_retval: u64,
    pub raw: [u64; 3],
}

impl Default for rocprofiler_hip_api_retval_t {
    fn default() -> Self {
        Self { raw: [0; 3] }
    }
}
