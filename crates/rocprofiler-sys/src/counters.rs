//! The counter catalog and counter configurations (counters.h,
//! counter_config.h, fwd.h; experimental since SDK 1.0): which counters an
//! agent supports, what each is, and a group of them bound to an agent.
use crate::enums::{rocprofiler_counter_info_version_id_t, rocprofiler_status_t};
use crate::types::rocprofiler_agent_id_t;
use std::ffi::{c_char, c_void};

/// `rocprofiler_counter_id_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct rocprofiler_counter_id_t {
    pub handle: u64,
}

/// `rocprofiler_counter_config_id_t` (`rocprofiler_profile_config_id_t`
/// before 1.0).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct rocprofiler_counter_config_id_t {
    pub handle: u64,
}

/// `rocprofiler_counter_info_v0_t`. C declares `is_constant : 1` and
/// `is_derived : 1` in one `uint8_t`; GCC and Clang allocate bit-fields
/// from the least significant bit, so they are bits 0 and 1 of `flags`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct rocprofiler_counter_info_v0_t {
    pub id: rocprofiler_counter_id_t,
    pub name: *const c_char,
    pub description: *const c_char,
    /// The hardware block (non-derived counters only; else "").
    pub block: *const c_char,
    /// The expression (derived counters only; else "").
    pub expression: *const c_char,
    pub flags: u8,
}

impl rocprofiler_counter_info_v0_t {
    pub const IS_CONSTANT: u8 = 1;
    pub const IS_DERIVED: u8 = 2;
}

/// `rocprofiler_available_counters_cb_t`.
pub type rocprofiler_available_counters_cb_t = Option<
    unsafe extern "C" fn(
        agent_id: rocprofiler_agent_id_t,
        counters: *mut rocprofiler_counter_id_t,
        num_counters: usize,
        user_data: *mut c_void,
    ) -> rocprofiler_status_t,
>;

pub type rocprofiler_iterate_agent_supported_counters_fn =
    unsafe extern "C" fn(
        agent_id: rocprofiler_agent_id_t,
        cb: rocprofiler_available_counters_cb_t,
        user_data: *mut c_void,
    ) -> rocprofiler_status_t;
pub type rocprofiler_query_counter_info_fn = unsafe extern "C" fn(
    counter_id: rocprofiler_counter_id_t,
    version: rocprofiler_counter_info_version_id_t,
    info: *mut c_void,
) -> rocprofiler_status_t;
pub type rocprofiler_create_counter_config_fn = unsafe extern "C" fn(
    agent_id: rocprofiler_agent_id_t,
    counters_list: *mut rocprofiler_counter_id_t,
    counters_count: usize,
    config_id: *mut rocprofiler_counter_config_id_t,
) -> rocprofiler_status_t;
pub type rocprofiler_destroy_counter_config_fn =
    unsafe extern "C" fn(config_id: rocprofiler_counter_config_id_t) -> rocprofiler_status_t;
