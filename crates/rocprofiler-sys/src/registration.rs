//! Tool registration (registration.h): how the SDK finds and starts a tool.
use crate::enums::rocprofiler_status_t;
use std::ffi::{c_char, c_void};

/// `rocprofiler_client_id_t`, filled by the SDK.
#[repr(C)]
#[derive(Debug)]
pub struct rocprofiler_client_id_t {
    pub size: usize,
    pub name: *const c_char,
    pub handle: u32,
}

pub type rocprofiler_client_finalize_t = Option<unsafe extern "C" fn(rocprofiler_client_id_t)>;
pub type rocprofiler_tool_initialize_t = Option<
    unsafe extern "C" fn(
        finalize_func: rocprofiler_client_finalize_t,
        tool_data: *mut c_void,
    ) -> i32,
>;
pub type rocprofiler_tool_finalize_t = Option<unsafe extern "C" fn(tool_data: *mut c_void)>;

/// What `rocprofiler_configure` returns: the tool's initialize/finalize pair.
#[repr(C)]
#[derive(Debug)]
pub struct rocprofiler_tool_configure_result_t {
    pub size: usize,
    pub initialize: rocprofiler_tool_initialize_t,
    pub finalize: rocprofiler_tool_finalize_t,
    pub tool_data: *mut c_void,
}

/// `rocprofiler_configure`, exported by a tool.
pub type rocprofiler_configure_func_t = Option<
    unsafe extern "C" fn(
        version: u32,
        runtime_version: *const c_char,
        priority: u32,
        client_id: *mut rocprofiler_client_id_t,
    ) -> *mut rocprofiler_tool_configure_result_t,
>;

/// The symbol a tool exports for discovery.
pub const CONFIGURE_SYMBOL: &str = "rocprofiler_configure";

pub type rocprofiler_force_configure_fn =
    unsafe extern "C" fn(configure_func: rocprofiler_configure_func_t) -> rocprofiler_status_t;
