//! HIP runtime API operation ids (hip/runtime_api_id.h) and the argument
//! structs of the calls the backend reads (hip/api_args.h).
//!
//! The args union is 88 bytes in every SDK from 1.0 to 1.3 (its largest member
//! is hipExtModuleLaunchKernel's); only the members read here are declared.
use crate::types::rocprofiler_dim3_t;
use std::ffi::c_void;

/// `rocprofiler_hip_runtime_api_id_t` values used by the backend. The enum is
/// append-only, so these hold across SDK versions.
pub mod hip_runtime_api_id {
    pub const NONE: i32 = -1;
    pub const hipGraphExecDestroy: i32 = 143;
    pub const hipGraphExecUpdate: i32 = 153;
    pub const hipGraphInstantiate: i32 = 159;
    pub const hipGraphInstantiateWithFlags: i32 = 160;
    pub const hipGraphLaunch: i32 = 166;
    pub const hipLaunchKernel: i32 = 214;
    pub const hipMemcpy: i32 = 259;
    pub const hipMemcpyAsync: i32 = 268;
    pub const hipStreamCreate: i32 = 334;
    pub const hipStreamCreateWithFlags: i32 = 335;
    pub const hipStreamDestroy: i32 = 337;
    pub const hipGraphLaunch_spt: i32 = 420;
    pub const hipGraphInstantiateWithParams: i32 = 438;

    /// The runtime's name for an operation id this crate declares.
    pub fn name(operation: i32) -> Option<&'static str> {
        Some(match operation {
            hipGraphExecDestroy => "hipGraphExecDestroy",
            hipGraphExecUpdate => "hipGraphExecUpdate",
            hipGraphInstantiate => "hipGraphInstantiate",
            hipGraphInstantiateWithFlags => "hipGraphInstantiateWithFlags",
            hipGraphLaunch => "hipGraphLaunch",
            hipLaunchKernel => "hipLaunchKernel",
            hipMemcpy => "hipMemcpy",
            hipMemcpyAsync => "hipMemcpyAsync",
            hipStreamCreate => "hipStreamCreate",
            hipStreamCreateWithFlags => "hipStreamCreateWithFlags",
            hipStreamDestroy => "hipStreamDestroy",
            hipGraphLaunch_spt => "hipGraphLaunch_spt",
            hipGraphInstantiateWithParams => "hipGraphInstantiateWithParams",
            _ => return None,
        })
    }
}

/// `hipSuccess`.
pub const HIP_SUCCESS: i32 = 0;
/// `hipGraphExecUpdateSuccess`.
pub const HIP_GRAPH_EXEC_UPDATE_SUCCESS: i32 = 0;

pub type hipGraphExec_t = *mut c_void;
pub type hipGraph_t = *mut c_void;
pub type hipStream_t = *mut c_void;

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
