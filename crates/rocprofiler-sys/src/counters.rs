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

/// `rocprofiler_counter_instance_id_t`: a counter id in the top 16 bits and
/// its dimension indices in the low 48 (counters/id_decode.hpp).
pub type rocprofiler_counter_instance_id_t = u64;

/// `rocprofiler_counter_record_t` (fwd.h): one value of one counter instance.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct rocprofiler_counter_record_t {
    pub id: rocprofiler_counter_instance_id_t,
    pub counter_value: f64,
    pub dispatch_id: u64,
    pub user_data: crate::types::rocprofiler_user_data_t,
    pub agent_id: rocprofiler_agent_id_t,
}

/// `rocprofiler_dispatch_counting_service_data_t`
/// (dispatch_counting_service.h): the dispatch a counting callback is about.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct rocprofiler_dispatch_counting_service_data_t {
    pub size: u64,
    pub correlation_id: crate::rocprofiler_async_correlation_id_t,
    pub start_timestamp: u64,
    pub end_timestamp: u64,
    pub dispatch_info: crate::types::rocprofiler_kernel_dispatch_info_t,
}

/// `rocprofiler_dispatch_counting_service_cb_t`: before the dispatch is
/// enqueued, the tool names the counter config to collect (0: none).
pub type rocprofiler_dispatch_counting_service_cb_t = Option<
    unsafe extern "C" fn(
        dispatch_data: rocprofiler_dispatch_counting_service_data_t,
        config: *mut rocprofiler_counter_config_id_t,
        user_data: *mut crate::types::rocprofiler_user_data_t,
        callback_data_args: *mut c_void,
    ),
>;

/// `rocprofiler_dispatch_counting_record_cb_t`: the dispatch's counter
/// values, once it completed.
pub type rocprofiler_dispatch_counting_record_cb_t = Option<
    unsafe extern "C" fn(
        dispatch_data: rocprofiler_dispatch_counting_service_data_t,
        record_data: *mut rocprofiler_counter_record_t,
        record_count: usize,
        user_data: crate::types::rocprofiler_user_data_t,
        callback_data_args: *mut c_void,
    ),
>;

pub type rocprofiler_configure_callback_dispatch_counting_service_fn =
    unsafe extern "C" fn(
        context_id: crate::types::rocprofiler_context_id_t,
        dispatch_callback: rocprofiler_dispatch_counting_service_cb_t,
        dispatch_callback_args: *mut c_void,
        record_callback: rocprofiler_dispatch_counting_record_cb_t,
        record_callback_args: *mut c_void,
    ) -> rocprofiler_status_t;
pub type rocprofiler_query_record_counter_id_fn = unsafe extern "C" fn(
    id: rocprofiler_counter_instance_id_t,
    counter_id: *mut rocprofiler_counter_id_t,
) -> rocprofiler_status_t;

/// `rocprofiler_counter_dimension_id_t` (fwd.h): which dimension a
/// position is asked for (the SDK's internal dimension number, 0 = all 48
/// bits).
pub type rocprofiler_counter_dimension_id_t = u64;

/// `rocprofiler_counter_record_dimension_info_t` (fwd.h): one dimension of
/// a counter. 24 bytes: name at 0, instance_size at 8, id at 16.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct rocprofiler_counter_record_dimension_info_t {
    pub name: *const c_char,
    /// How many positions the dimension has.
    pub instance_size: usize,
    /// The id `rocprofiler_query_record_dimension_position` takes.
    pub id: rocprofiler_counter_dimension_id_t,
}

/// `rocprofiler_counter_dimension_info_t` (counters.h): an instance's
/// position in one dimension. 24 bytes: size at 0, dimension_name at 8,
/// index at 16.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct rocprofiler_counter_dimension_info_t {
    pub size: u64,
    pub dimension_name: *const c_char,
    pub index: usize,
}

/// `rocprofiler_counter_record_dimension_instance_info_t` (counters.h): one
/// instance a counter can report and its position in each dimension.
/// 40 bytes: size 0, instance_id 8, counter_id 16, dimensions_count 24,
/// dimensions 32.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct rocprofiler_counter_record_dimension_instance_info_t {
    pub size: u64,
    pub instance_id: rocprofiler_counter_instance_id_t,
    pub counter_id: u64,
    pub dimensions_count: u64,
    pub dimensions: *const *const rocprofiler_counter_dimension_info_t,
}

/// `rocprofiler_counter_info_v1_t` (counters.h): VERSION_0's fields after a
/// size, then the counter's dimensions and every instance it can report.
/// 88 bytes: size 0, id 8, name 16, description 24, block 32, expression
/// 40, the bit-field byte (`flags`, as in v0) 48, dimensions_count 56,
/// dimensions 64, dimensions_instances_count 72, dimensions_instances 80.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct rocprofiler_counter_info_v1_t {
    pub size: u64,
    pub id: rocprofiler_counter_id_t,
    pub name: *const c_char,
    pub description: *const c_char,
    pub block: *const c_char,
    pub expression: *const c_char,
    pub flags: u8,
    pub dimensions_count: u64,
    pub dimensions: *const *const rocprofiler_counter_record_dimension_info_t,
    pub dimensions_instances_count: u64,
    pub dimensions_instances: *const *const rocprofiler_counter_record_dimension_instance_info_t,
}

pub type rocprofiler_query_record_dimension_position_fn =
    unsafe extern "C" fn(
        id: rocprofiler_counter_instance_id_t,
        dim: rocprofiler_counter_dimension_id_t,
        pos: *mut usize,
    ) -> rocprofiler_status_t;
