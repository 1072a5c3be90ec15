//! Payloads of synchronous callbacks (callback_tracing.h), reached through
//! `rocprofiler_callback_tracing_record_t::payload`.
use crate::hip::{rocprofiler_hip_api_args_t, rocprofiler_hip_api_retval_t};
use crate::types::*;
use std::ffi::{c_char, c_void};

/// Payload of HIP_RUNTIME_API callbacks.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct rocprofiler_callback_tracing_hip_api_data_t {
    pub size: u64,
    pub args: rocprofiler_hip_api_args_t,
    pub retval: rocprofiler_hip_api_retval_t,
}

/// Payload of CODE_OBJECT DEVICE_KERNEL_SYMBOL_REGISTER: kernel_id -> name.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct rocprofiler_callback_tracing_code_object_kernel_symbol_register_data_t {
    pub size: u64,
    pub kernel_id: u64,
    pub code_object_id: u64,
    pub kernel_name: *const c_char,
    pub kernel_object: u64,
    pub kernarg_segment_size: u32,
    pub kernarg_segment_alignment: u32,
    pub group_segment_size: u32,
    pub private_segment_size: u32,
    pub sgpr_count: u32,
    pub arch_vgpr_count: u32,
    pub accum_vgpr_count: u32,
    pub kernel_code_entry_byte_offset: i64,
    pub kernel_address: rocprofiler_address_t,
}

/// Payload of CODE_OBJECT HOST_KERNEL_SYMBOL_REGISTER (callback_tracing.h,
/// SDK 1.0): the host stub a HIP program launches a kernel through
/// (hipLaunchKernel's `function_address`, a kernel node's `func`) and the
/// kernel id its dispatch records carry.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct rocprofiler_callback_tracing_code_object_host_kernel_symbol_register_data_t {
    pub size: u64,
    pub host_function_id: u64,
    pub kernel_id: u64,
    pub code_object_id: u64,
    pub host_function: rocprofiler_address_t,
    pub modules: rocprofiler_address_t,
    pub device_function: *const c_char,
    pub thread_limit: u32,
    pub thread_ids: rocprofiler_dim3_t,
    pub block_ids: rocprofiler_dim3_t,
    pub block_dims: rocprofiler_dim3_t,
    pub grid_dims: rocprofiler_dim3_t,
    pub workgroup_size: u64,
}

/// Payload of HIP_STREAM CREATE / DESTROY / SET.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct rocprofiler_callback_tracing_hip_stream_data_t {
    pub size: u64,
    pub stream_id: rocprofiler_stream_id_t,
    pub stream_value: rocprofiler_address_t,
}

/// Payload of HIP_GRAPH EXEC_CREATE / EXEC_DESTROY / EXEC_LAUNCH (SDK 1.3+).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct rocprofiler_callback_tracing_hip_graph_data_t {
    pub size: u64,
    pub graph_exec_id: rocprofiler_graph_exec_id_t,
    /// The raw hipGraphExec_t pointer value.
    pub graph_exec_value: rocprofiler_address_t,
}

/// `rocprofiler_marker_api_args_t` (marker/api_args.h): 16 bytes, its
/// widest members being `{name, agent}` and `{name, device_id}`; only the
/// members read here are declared.
#[repr(C)]
#[derive(Clone, Copy)]
pub union rocprofiler_marker_api_args_t {
    /// roctxMarkA, roctxRangePushA, roctxRangeStartA, and the range domain's
    /// roctxThreadRangeA / roctxProcessRangeA: `const char* message`.
    pub message: *const c_char,
    /// roctxRangeStop: `roctx_range_id_t id`.
    pub range_id: u64,
    pub raw: [u64; 2],
}

impl Default for rocprofiler_marker_api_args_t {
    fn default() -> Self {
        Self { raw: [0; 2] }
    }
}

/// `rocprofiler_marker_api_retval_t`: int32, int64 or a range id.
#[repr(C)]
#[derive(Clone, Copy)]
pub union rocprofiler_marker_api_retval_t {
    pub int32_t_retval: i32,
    pub int64_t_retval: i64,
    pub roctx_range_id_t_retval: u64,
}

impl Default for rocprofiler_marker_api_retval_t {
    fn default() -> Self {
        Self {
            roctx_range_id_t_retval: 0,
        }
    }
}

/// Payload of MARKER_CORE_API and MARKER_CORE_RANGE_API callbacks
/// (`rocprofiler_callback_tracing_marker_api_data_t`).
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct rocprofiler_callback_tracing_marker_api_data_t {
    pub size: u64,
    pub args: rocprofiler_marker_api_args_t,
    pub retval: rocprofiler_marker_api_retval_t,
}

/// `rocprofiler_marker_core_api_id_t` (marker/api_id.h): the roctx core
/// table's operations.
pub mod marker_core_api_id {
    pub const roctxMarkA: i32 = 0;
    pub const roctxRangePushA: i32 = 1;
    pub const roctxRangePop: i32 = 2;
    pub const roctxRangeStartA: i32 = 3;
    pub const roctxRangeStop: i32 = 4;
}

/// `rocprofiler_marker_core_range_api_id_t`: the range domain reports a
/// push/pop pair as one roctxThreadRangeA (ENTER at the push, EXIT at the
/// pop, one correlation id) and a start/stop pair as one roctxProcessRangeA.
pub mod marker_core_range_api_id {
    pub const roctxMarkA: i32 = 0;
    pub const roctxThreadRangeA: i32 = 1;
    pub const roctxProcessRangeA: i32 = 2;
    pub const roctxGetThreadId: i32 = 3;
}

/// `rocprofiler_callback_tracing_cb_t`.
pub type rocprofiler_callback_tracing_cb_t = Option<
    unsafe extern "C" fn(
        record: rocprofiler_callback_tracing_record_t,
        user_data: *mut rocprofiler_user_data_t,
        callback_data: *mut c_void,
    ),
>;

/// `rocprofiler_external_correlation_id_request_cb_t`: return 0 when the
/// value was set.
pub type rocprofiler_external_correlation_id_request_cb_t = Option<
    unsafe extern "C" fn(
        thread_id: rocprofiler_thread_id_t,
        context_id: rocprofiler_context_id_t,
        kind: crate::enums::rocprofiler_external_correlation_id_request_kind_t,
        operation: rocprofiler_tracing_operation_t,
        internal_corr_id_value: u64,
        external_corr_id_value: *mut rocprofiler_user_data_t,
        data: *mut c_void,
    ) -> i32,
>;
