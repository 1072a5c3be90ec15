//! Dispatch thread trace (experimental/thread-trace/core.h and dispatch.h,
//! SDK 1.0 and later): per agent, the tool says at each dispatch whether to
//! trace it, and gets the trace's raw bytes per shader engine once it ran.
//! The bytes are only decodable by the closed decoder plugin.
use crate::enums::rocprofiler_status_t;
use crate::types::{
    rocprofiler_agent_id_t, rocprofiler_async_correlation_id_t, rocprofiler_context_id_t,
    rocprofiler_queue_id_t, rocprofiler_user_data_t,
};
use std::ffi::c_void;

/// `rocprofiler_thread_trace_parameter_type_t`.
pub mod thread_trace_parameter {
    pub const TARGET_CU: u32 = 0;
    pub const SHADER_ENGINE_MASK: u32 = 1;
    pub const BUFFER_SIZE: u32 = 2;
    pub const SIMD_SELECT: u32 = 3;
    pub const PERFCOUNTERS_CTRL: u32 = 4;
    pub const PERFCOUNTER: u32 = 5;
    pub const SERIALIZE_ALL: u32 = 6;
}

/// `rocprofiler_thread_trace_parameter_t`: a type and a 16-byte union whose
/// first member is `uint64_t value` (the PERFCOUNTER member, a counter id
/// and a 4-bit SIMD mask, is not used here).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct rocprofiler_thread_trace_parameter_t {
    pub type_: u32,
    pub value: u64,
    pub perfcounter_simd_mask: u64,
}

/// `rocprofiler_thread_trace_control_flags_t`.
pub mod thread_trace_control {
    pub const NONE: u32 = 0;
    pub const START_AND_STOP: u32 = 3;
}

/// `rocprofiler_thread_trace_dispatch_callback_t`: trace this dispatch?
pub type rocprofiler_thread_trace_dispatch_callback_t = Option<
    unsafe extern "C" fn(
        agent_id: rocprofiler_agent_id_t,
        queue_id: rocprofiler_queue_id_t,
        correlation_id: rocprofiler_async_correlation_id_t,
        kernel_id: u64,
        dispatch_id: u64,
        userdata_config: *mut c_void,
        userdata_shader: *mut rocprofiler_user_data_t,
    ) -> u32,
>;

/// `rocprofiler_thread_trace_shader_data_callback_t`: one shader engine's
/// raw trace bytes, valid for the call.
pub type rocprofiler_thread_trace_shader_data_callback_t = Option<
    unsafe extern "C" fn(
        agent: rocprofiler_agent_id_t,
        shader_engine_id: i64,
        data: *mut c_void,
        data_size: usize,
        userdata: rocprofiler_user_data_t,
    ),
>;

pub type rocprofiler_configure_dispatch_thread_trace_service_fn =
    unsafe extern "C" fn(
        context_id: rocprofiler_context_id_t,
        agent_id: rocprofiler_agent_id_t,
        parameters: *mut rocprofiler_thread_trace_parameter_t,
        num_parameters: usize,
        dispatch_callback: rocprofiler_thread_trace_dispatch_callback_t,
        shader_callback: rocprofiler_thread_trace_shader_data_callback_t,
        callback_userdata: *mut c_void,
    ) -> rocprofiler_status_t;
