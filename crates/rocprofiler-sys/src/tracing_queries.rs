//! Introspection entry points of callback_tracing.h and buffer_tracing.h
//! (SDK 1.0): kind and operation names, iteration over kinds, operations and
//! a callback record's arguments. Tools that build name tables or print
//! arguments (kineto's rocprofiler-sdk backend) call them.
use crate::enums::*;
use crate::types::*;
use std::ffi::{c_char, c_void};

/// `rocprofiler_callback_tracing_kind_cb_t`: non-zero stops the iteration.
pub type rocprofiler_callback_tracing_kind_cb_t = Option<
    unsafe extern "C" fn(kind: rocprofiler_callback_tracing_kind_t, data: *mut c_void) -> i32,
>;

/// `rocprofiler_callback_tracing_kind_operation_cb_t`: non-zero stops.
pub type rocprofiler_callback_tracing_kind_operation_cb_t = Option<
    unsafe extern "C" fn(
        kind: rocprofiler_callback_tracing_kind_t,
        operation: rocprofiler_tracing_operation_t,
        data: *mut c_void,
    ) -> i32,
>;

/// `rocprofiler_callback_tracing_operation_args_cb_t`: called once per
/// argument of a traced call; non-zero stops.
pub type rocprofiler_callback_tracing_operation_args_cb_t = Option<
    unsafe extern "C" fn(
        kind: rocprofiler_callback_tracing_kind_t,
        operation: rocprofiler_tracing_operation_t,
        arg_number: u32,
        arg_value_addr: *const c_void,
        arg_indirection_count: i32,
        arg_type: *const c_char,
        arg_name: *const c_char,
        arg_value_str: *const c_char,
        arg_dereference_count: i32,
        data: *mut c_void,
    ) -> i32,
>;

/// `rocprofiler_buffer_tracing_kind_cb_t`: non-zero stops the iteration.
pub type rocprofiler_buffer_tracing_kind_cb_t =
    Option<unsafe extern "C" fn(kind: rocprofiler_buffer_tracing_kind_t, data: *mut c_void) -> i32>;

/// `rocprofiler_buffer_tracing_kind_operation_cb_t`: non-zero stops.
pub type rocprofiler_buffer_tracing_kind_operation_cb_t = Option<
    unsafe extern "C" fn(
        kind: rocprofiler_buffer_tracing_kind_t,
        operation: rocprofiler_tracing_operation_t,
        data: *mut c_void,
    ) -> i32,
>;

pub type rocprofiler_query_callback_tracing_kind_name_fn =
    unsafe extern "C" fn(
        kind: rocprofiler_callback_tracing_kind_t,
        name: *mut *const c_char,
        name_len: *mut u64,
    ) -> rocprofiler_status_t;

pub type rocprofiler_query_callback_tracing_kind_operation_name_fn =
    unsafe extern "C" fn(
        kind: rocprofiler_callback_tracing_kind_t,
        operation: rocprofiler_tracing_operation_t,
        name: *mut *const c_char,
        name_len: *mut u64,
    ) -> rocprofiler_status_t;

pub type rocprofiler_iterate_callback_tracing_kinds_fn =
    unsafe extern "C" fn(
        callback: rocprofiler_callback_tracing_kind_cb_t,
        data: *mut c_void,
    ) -> rocprofiler_status_t;

pub type rocprofiler_iterate_callback_tracing_kind_operations_fn =
    unsafe extern "C" fn(
        kind: rocprofiler_callback_tracing_kind_t,
        callback: rocprofiler_callback_tracing_kind_operation_cb_t,
        data: *mut c_void,
    ) -> rocprofiler_status_t;

pub type rocprofiler_iterate_callback_tracing_kind_operation_args_fn =
    unsafe extern "C" fn(
        record: rocprofiler_callback_tracing_record_t,
        callback: rocprofiler_callback_tracing_operation_args_cb_t,
        max_dereference_count: i32,
        user_data: *mut c_void,
    ) -> rocprofiler_status_t;

pub type rocprofiler_query_buffer_tracing_kind_name_fn =
    unsafe extern "C" fn(
        kind: rocprofiler_buffer_tracing_kind_t,
        name: *mut *const c_char,
        name_len: *mut u64,
    ) -> rocprofiler_status_t;

pub type rocprofiler_query_buffer_tracing_kind_operation_name_fn =
    unsafe extern "C" fn(
        kind: rocprofiler_buffer_tracing_kind_t,
        operation: rocprofiler_tracing_operation_t,
        name: *mut *const c_char,
        name_len: *mut u64,
    ) -> rocprofiler_status_t;

pub type rocprofiler_iterate_buffer_tracing_kinds_fn = unsafe extern "C" fn(
    callback: rocprofiler_buffer_tracing_kind_cb_t,
    data: *mut c_void,
)
    -> rocprofiler_status_t;

pub type rocprofiler_iterate_buffer_tracing_kind_operations_fn =
    unsafe extern "C" fn(
        kind: rocprofiler_buffer_tracing_kind_t,
        callback: rocprofiler_buffer_tracing_kind_operation_cb_t,
        data: *mut c_void,
    ) -> rocprofiler_status_t;
