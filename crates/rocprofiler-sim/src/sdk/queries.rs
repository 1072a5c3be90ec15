//! The SDK's introspection entry points (callback_tracing.cpp,
//! buffer_tracing.cpp, SDK-1.0): kind and operation names, iteration over
//! kinds, their operations, and a callback record's arguments. Iterators
//! call back once per item and stop at the first non-zero return; NONE and
//! the version's LAST are not items (as the headers document).
use super::args::iterate_hip_args;
use super::exports::guard;
use super::names;
use super::registration::{buffer_kind_last, callback_kind_last};
use rocprofiler_sys as sys;
use std::ffi::{c_char, c_void, CStr};

type Status = sys::rocprofiler_status_t;

fn write_name(name: Option<&'static CStr>, out: *mut *const c_char, len: *mut u64) {
    let (p, n) = match name {
        Some(c) => (c.as_ptr(), c.to_bytes().len() as u64),
        None => (std::ptr::null(), 0),
    };
    // SAFETY: each pointer is written only when non-null.
    unsafe {
        if !out.is_null() {
            *out = p;
        }
        if !len.is_null() {
            *len = n;
        }
    }
}

#[no_mangle]
pub extern "C" fn rocprofiler_query_callback_tracing_kind_name(
    kind: sys::rocprofiler_callback_tracing_kind_t,
    name: *mut *const c_char,
    name_len: *mut u64,
) -> Status {
    guard(|| {
        let n = (kind.0 < callback_kind_last())
            .then(|| names::callback_kind(kind.0))
            .flatten();
        write_name(n, name, name_len);
        if n.is_some() {
            Status::SUCCESS
        } else {
            Status::ERROR_KIND_NOT_FOUND
        }
    })
}

#[no_mangle]
pub extern "C" fn rocprofiler_query_buffer_tracing_kind_name(
    kind: sys::rocprofiler_buffer_tracing_kind_t,
    name: *mut *const c_char,
    name_len: *mut u64,
) -> Status {
    guard(|| {
        let n = (kind.0 < buffer_kind_last())
            .then(|| names::buffer_kind(kind.0))
            .flatten();
        write_name(n, name, name_len);
        if n.is_some() {
            Status::SUCCESS
        } else {
            Status::ERROR_KIND_NOT_FOUND
        }
    })
}

fn op_name_status(
    kind: u32,
    last: u32,
    name: Option<&'static CStr>,
    out: *mut *const c_char,
    len: *mut u64,
) -> Status {
    if kind >= last {
        return Status::ERROR_KIND_NOT_FOUND;
    }
    if kind == 0 {
        return Status::ERROR_INVALID_ARGUMENT;
    }
    write_name(name, out, len);
    if name.is_some() {
        Status::SUCCESS
    } else {
        Status::ERROR_OPERATION_NOT_FOUND
    }
}

#[no_mangle]
pub extern "C" fn rocprofiler_query_callback_tracing_kind_operation_name(
    kind: sys::rocprofiler_callback_tracing_kind_t,
    operation: sys::rocprofiler_tracing_operation_t,
    name: *mut *const c_char,
    name_len: *mut u64,
) -> Status {
    guard(|| {
        let n = names::callback_op(kind.0, operation);
        op_name_status(kind.0, callback_kind_last(), n, name, name_len)
    })
}

#[no_mangle]
pub extern "C" fn rocprofiler_query_buffer_tracing_kind_operation_name(
    kind: sys::rocprofiler_buffer_tracing_kind_t,
    operation: sys::rocprofiler_tracing_operation_t,
    name: *mut *const c_char,
    name_len: *mut u64,
) -> Status {
    guard(|| {
        let n = names::buffer_op(kind.0, operation);
        op_name_status(kind.0, buffer_kind_last(), n, name, name_len)
    })
}

#[no_mangle]
pub extern "C" fn rocprofiler_iterate_callback_tracing_kinds(
    callback: sys::rocprofiler_callback_tracing_kind_cb_t,
    data: *mut c_void,
) -> Status {
    guard(|| {
        let Some(cb) = callback else {
            return Status::ERROR_INVALID_ARGUMENT;
        };
        for k in 1..callback_kind_last() {
            // SAFETY: the tool's callback with a kind and its own data.
            if unsafe { cb(sys::rocprofiler_callback_tracing_kind_t(k), data) } != 0 {
                break;
            }
        }
        Status::SUCCESS
    })
}

#[no_mangle]
pub extern "C" fn rocprofiler_iterate_buffer_tracing_kinds(
    callback: sys::rocprofiler_buffer_tracing_kind_cb_t,
    data: *mut c_void,
) -> Status {
    guard(|| {
        let Some(cb) = callback else {
            return Status::ERROR_INVALID_ARGUMENT;
        };
        for k in 1..buffer_kind_last() {
            // SAFETY: the tool's callback with a kind and its own data.
            if unsafe { cb(sys::rocprofiler_buffer_tracing_kind_t(k), data) } != 0 {
                break;
            }
        }
        Status::SUCCESS
    })
}

#[no_mangle]
pub extern "C" fn rocprofiler_iterate_callback_tracing_kind_operations(
    kind: sys::rocprofiler_callback_tracing_kind_t,
    callback: sys::rocprofiler_callback_tracing_kind_operation_cb_t,
    data: *mut c_void,
) -> Status {
    guard(|| {
        let Some(cb) = callback else {
            return Status::ERROR_INVALID_ARGUMENT;
        };
        if kind.0 == 0 || kind.0 >= callback_kind_last() {
            return Status::ERROR_INVALID_ARGUMENT;
        }
        for op in names::callback_ops(kind.0) {
            // SAFETY: the tool's callback with a kind, an operation and its data.
            if unsafe { cb(kind, op, data) } != 0 {
                break;
            }
        }
        Status::SUCCESS
    })
}

#[no_mangle]
pub extern "C" fn rocprofiler_iterate_buffer_tracing_kind_operations(
    kind: sys::rocprofiler_buffer_tracing_kind_t,
    callback: sys::rocprofiler_buffer_tracing_kind_operation_cb_t,
    data: *mut c_void,
) -> Status {
    guard(|| {
        let Some(cb) = callback else {
            return Status::ERROR_INVALID_ARGUMENT;
        };
        if kind.0 == 0 || kind.0 >= buffer_kind_last() {
            return Status::ERROR_INVALID_ARGUMENT;
        }
        for op in names::buffer_ops(kind.0) {
            // SAFETY: the tool's callback with a kind, an operation and its data.
            if unsafe { cb(kind, op, data) } != 0 {
                break;
            }
        }
        Status::SUCCESS
    })
}

/// HIP runtime calls iterate their arguments; API domains the simulator
/// never produces (HSA, markers, HIP compiler, OMPT, rocDecode) have none to
/// report; the other kinds have no arguments (ERROR_NOT_IMPLEMENTED, as
/// callback_tracing.cpp answers for them).
#[no_mangle]
pub extern "C" fn rocprofiler_iterate_callback_tracing_kind_operation_args(
    record: sys::rocprofiler_callback_tracing_record_t,
    callback: sys::rocprofiler_callback_tracing_operation_args_cb_t,
    max_dereference_count: i32,
    user_data: *mut c_void,
) -> Status {
    use sys::rocprofiler_callback_tracing_kind_t as K;
    guard(|| {
        let Some(cb) = callback else {
            return Status::ERROR_INVALID_ARGUMENT;
        };
        match record.kind {
            K::NONE => Status::ERROR_INVALID_ARGUMENT,
            k if k.0 >= callback_kind_last() => Status::ERROR_INVALID_ARGUMENT,
            K::HIP_RUNTIME_API => {
                if record.payload.is_null() {
                    return Status::ERROR_INVALID_ARGUMENT;
                }
                // SAFETY: a HIP_RUNTIME_API record's payload is the call's
                // hip_api_data, live while the tool's callback runs.
                unsafe {
                    iterate_hip_args(
                        record.kind,
                        record.operation,
                        record.payload as *const _,
                        cb,
                        max_dereference_count,
                        user_data,
                    )
                };
                Status::SUCCESS
            }
            K::HSA_CORE_API
            | K::HSA_AMD_EXT_API
            | K::HSA_IMAGE_EXT_API
            | K::HSA_FINALIZE_EXT_API
            | K::MARKER_CORE_API
            | K::MARKER_CONTROL_API
            | K::MARKER_NAME_API
            | K::HIP_COMPILER_API
            | K::OMPT
            | K::ROCDECODE_API => Status::SUCCESS,
            _ => Status::ERROR_NOT_IMPLEMENTED,
        }
    })
}
