//! Scalar aliases, handles, unions and the records every service shares
//! (fwd.h).
use crate::enums::*;
use std::ffi::c_void;

pub type rocprofiler_timestamp_t = u64;
/// Equivalent to `syscall(__NR_gettid)`.
pub type rocprofiler_thread_id_t = u64;
pub type rocprofiler_tracing_operation_t = i32;
pub type rocprofiler_kernel_id_t = u64;
pub type rocprofiler_dispatch_id_t = u64;

/// `rocprofiler_user_data_t`: the slot a tool may fill (external correlation).
#[repr(C)]
#[derive(Clone, Copy)]
pub union rocprofiler_user_data_t {
    pub value: u64,
    pub ptr: *mut c_void,
}

impl rocprofiler_user_data_t {
    pub const fn from_value(value: u64) -> Self {
        Self { value }
    }
    pub fn value(&self) -> u64 {
        // SAFETY: both members are 8-byte plain data; reading either is defined.
        unsafe { self.value }
    }
}

impl Default for rocprofiler_user_data_t {
    fn default() -> Self {
        Self { value: 0 }
    }
}

impl std::fmt::Debug for rocprofiler_user_data_t {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "user_data({:#x})", self.value())
    }
}

/// `rocprofiler_address_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub union rocprofiler_address_t {
    pub handle: u64,
    pub value: u64,
    pub ptr: *const c_void,
}

impl rocprofiler_address_t {
    pub const fn from_value(value: u64) -> Self {
        Self { value }
    }
    pub fn value(&self) -> u64 {
        // SAFETY: every member is 8-byte plain data.
        unsafe { self.value }
    }
}

impl Default for rocprofiler_address_t {
    fn default() -> Self {
        Self { value: 0 }
    }
}

impl std::fmt::Debug for rocprofiler_address_t {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "address({:#x})", self.value())
    }
}

macro_rules! handle {
    ($($(#[$doc:meta])* $name:ident),* $(,)?) => {$(
        $(#[$doc])*
        #[repr(C)]
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
        pub struct $name {
            pub handle: u64,
        }
    )*};
}

handle! {
    /// `rocprofiler_context_id_t`; [`ROCPROFILER_CONTEXT_NONE`] is invalid.
    rocprofiler_context_id_t,
    rocprofiler_queue_id_t,
    rocprofiler_stream_id_t,
    /// Process-monotonic from 1; 0 means "not a graph" (SDK 1.3+).
    rocprofiler_graph_exec_id_t,
    rocprofiler_buffer_id_t,
    rocprofiler_agent_id_t,
}

pub const ROCPROFILER_CONTEXT_NONE: rocprofiler_context_id_t =
    rocprofiler_context_id_t { handle: u64::MAX };

/// `rocprofiler_dim3_t`.
#[repr(C)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct rocprofiler_dim3_t {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

/// `rocprofiler_correlation_id_t`: on synchronous records.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct rocprofiler_correlation_id_t {
    pub internal: u64,
    pub external: rocprofiler_user_data_t,
    pub ancestor: u64,
}

/// `rocprofiler_async_correlation_id_t`: on kernel dispatch and copy records.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct rocprofiler_async_correlation_id_t {
    pub internal: u64,
    pub external: rocprofiler_user_data_t,
}

/// `rocprofiler_callback_tracing_record_t`, passed by value to callbacks.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct rocprofiler_callback_tracing_record_t {
    pub context_id: rocprofiler_context_id_t,
    pub thread_id: rocprofiler_thread_id_t,
    pub correlation_id: rocprofiler_correlation_id_t,
    pub kind: rocprofiler_callback_tracing_kind_t,
    pub operation: rocprofiler_tracing_operation_t,
    pub phase: rocprofiler_callback_phase_t,
    pub payload: *mut c_void,
}

/// `rocprofiler_record_header_t`: category and kind, or their 64-bit hash.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct rocprofiler_record_header_t {
    pub category: u32,
    pub kind: u32,
    pub payload: *mut c_void,
}

impl rocprofiler_record_header_t {
    /// `rocprofiler_record_header_compute_hash`.
    pub const fn hash(&self) -> u64 {
        self.category as u64 | ((self.kind as u64) << 32)
    }
}

/// `rocprofiler_kernel_dispatch_info_t`; 128 bytes by the SDK's static_assert.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct rocprofiler_kernel_dispatch_info_t {
    pub size: u64,
    pub agent_id: rocprofiler_agent_id_t,
    pub queue_id: rocprofiler_queue_id_t,
    pub kernel_id: rocprofiler_kernel_id_t,
    pub dispatch_id: rocprofiler_dispatch_id_t,
    /// Scratch bytes per work-item.
    pub private_segment_size: u32,
    /// LDS bytes per work-group.
    pub group_segment_size: u32,
    pub workgroup_size: rocprofiler_dim3_t,
    pub grid_size: rocprofiler_dim3_t,
    pub reserved_padding: [u8; 56],
}

impl Default for rocprofiler_kernel_dispatch_info_t {
    fn default() -> Self {
        Self {
            size: std::mem::size_of::<Self>() as u64 - 56,
            agent_id: Default::default(),
            queue_id: Default::default(),
            kernel_id: 0,
            dispatch_id: 0,
            private_segment_size: 0,
            group_segment_size: 0,
            workgroup_size: Default::default(),
            grid_size: Default::default(),
            reserved_padding: [0; 56],
        }
    }
}
