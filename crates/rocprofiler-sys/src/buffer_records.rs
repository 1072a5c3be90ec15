//! Records delivered in batches to a buffer callback (buffer_tracing.h,
//! buffer.h). Each starts with its own `size`: a reader must not look past it.
use crate::enums::*;
use crate::types::*;
use std::ffi::c_void;

/// HIP_RUNTIME_API buffer record (no arguments; see the _EXT kind for those).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct rocprofiler_buffer_tracing_hip_api_record_t {
    pub size: u64,
    pub kind: rocprofiler_buffer_tracing_kind_t,
    pub operation: rocprofiler_tracing_operation_t,
    pub correlation_id: rocprofiler_correlation_id_t,
    pub start_timestamp: rocprofiler_timestamp_t,
    pub end_timestamp: rocprofiler_timestamp_t,
    pub thread_id: rocprofiler_thread_id_t,
}

/// KERNEL_DISPATCH buffer record. It carries no stream id: the stream comes
/// from HIP_STREAM SET callbacks around the dispatch.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct rocprofiler_buffer_tracing_kernel_dispatch_record_t {
    pub size: u64,
    pub kind: rocprofiler_buffer_tracing_kind_t,
    pub operation: rocprofiler_kernel_dispatch_operation_t,
    pub correlation_id: rocprofiler_async_correlation_id_t,
    /// The thread the SDK intercepted the dispatch on.
    pub thread_id: rocprofiler_thread_id_t,
    pub start_timestamp: rocprofiler_timestamp_t,
    pub end_timestamp: rocprofiler_timestamp_t,
    pub dispatch_info: rocprofiler_kernel_dispatch_info_t,
}

/// MEMORY_COPY buffer record; `operation` is the direction.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct rocprofiler_buffer_tracing_memory_copy_record_t {
    pub size: u64,
    pub kind: rocprofiler_buffer_tracing_kind_t,
    pub operation: rocprofiler_memory_copy_operation_t,
    pub correlation_id: rocprofiler_async_correlation_id_t,
    pub thread_id: rocprofiler_thread_id_t,
    pub start_timestamp: rocprofiler_timestamp_t,
    pub end_timestamp: rocprofiler_timestamp_t,
    pub dst_agent_id: rocprofiler_agent_id_t,
    pub src_agent_id: rocprofiler_agent_id_t,
    pub bytes: u64,
    pub dst_address: rocprofiler_address_t,
    pub src_address: rocprofiler_address_t,
}

/// CORRELATION_ID_RETIREMENT: every async record of this correlation id has
/// been delivered.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct rocprofiler_buffer_tracing_correlation_id_retirement_record_t {
    pub size: u64,
    pub kind: rocprofiler_buffer_tracing_kind_t,
    pub timestamp: rocprofiler_timestamp_t,
    pub internal_correlation_id: u64,
}

/// HIP_GRAPH buffer record (SDK 1.3+): one per successful hipGraphLaunch.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct rocprofiler_buffer_tracing_hip_graph_record_t {
    pub size: u64,
    pub kind: rocprofiler_buffer_tracing_kind_t,
    pub operation: u32,
    pub correlation_id: rocprofiler_correlation_id_t,
    pub thread_id: rocprofiler_thread_id_t,
    pub start_timestamp: rocprofiler_timestamp_t,
    pub end_timestamp: rocprofiler_timestamp_t,
    pub agent_id: rocprofiler_agent_id_t,
    pub queue_id: rocprofiler_queue_id_t,
    pub graph_exec_id: rocprofiler_graph_exec_id_t,
    pub kernel_dispatch_count: u64,
}

/// `rocprofiler_buffer_tracing_cb_t`.
pub type rocprofiler_buffer_tracing_cb_t = Option<
    unsafe extern "C" fn(
        context: rocprofiler_context_id_t,
        buffer_id: rocprofiler_buffer_id_t,
        headers: *mut *mut rocprofiler_record_header_t,
        num_headers: usize,
        data: *mut c_void,
        drop_count: u64,
    ),
>;
