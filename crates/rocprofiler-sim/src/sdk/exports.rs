//! The SDK's configuration and control entry points: contexts, services,
//! buffers, agents, clock. Each catches panics (a panic becomes
//! ROCPROFILER_STATUS_ERROR) and checks its pointers; statuses follow the
//! real sources: every configure call returns ERROR_CONFIGURATION_LOCKED
//! outside the tools' initialize (callback_tracing.cpp, buffer.cpp:
//! `get_init_status() > -1`); a kind <= NONE or past the version's LAST is
//! ERROR_KIND_NOT_FOUND (context/domain.cpp `add_domain`).
use super::agents::agents;
use super::buffer::{buffer, create_buffer, destroy_buffer, flush_and_wait};
use super::context::{
    create_context, with_building_ctx, with_ctx, BufService, CbService, ExtService,
};
use super::kernel_replay;
use super::os::{now_ns, tid};
use super::registration::{
    buffer_kind_last, callback_kind_last, configuration_open, fini_status, has_hip_graph,
    init_status, initialize, version,
};
use rocprofiler_sys as sys;
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;

type Status = sys::rocprofiler_status_t;

/// Runs an entry point's body; no panic crosses the C boundary.
pub(crate) fn guard(f: impl FnOnce() -> Status) -> Status {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(Status::ERROR)
}

fn finalized() -> bool {
    fini_status() > 0
}

fn ops_slice<'a>(ops: *const i32, n: usize) -> Result<&'a [i32], Status> {
    if n == 0 {
        return Ok(&[]);
    }
    if ops.is_null() {
        return Err(Status::ERROR_INVALID_ARGUMENT);
    }
    // SAFETY: the caller passes `n` operations at `ops` (checked non-null).
    let v = unsafe { std::slice::from_raw_parts(ops, n) };
    if v.iter().any(|o| !(0..4096).contains(o)) {
        return Err(Status::ERROR_OPERATION_NOT_FOUND);
    }
    Ok(v)
}

#[no_mangle]
pub extern "C" fn rocprofiler_get_version(
    major: *mut u32,
    minor: *mut u32,
    patch: *mut u32,
) -> Status {
    guard(|| {
        let v = version();
        // SAFETY: each pointer is written only when non-null.
        unsafe {
            if !major.is_null() {
                *major = v / 10000;
            }
            if !minor.is_null() {
                *minor = (v / 100) % 100;
            }
            if !patch.is_null() {
                *patch = v % 100;
            }
        }
        Status::SUCCESS
    })
}

#[no_mangle]
pub extern "C" fn rocprofiler_is_initialized(status: *mut i32) -> Status {
    guard(|| {
        if status.is_null() {
            return Status::ERROR_INVALID_ARGUMENT;
        }
        // SAFETY: non-null, the caller's int.
        unsafe { *status = init_status() };
        Status::SUCCESS
    })
}

#[no_mangle]
pub extern "C" fn rocprofiler_is_finalized(status: *mut i32) -> Status {
    guard(|| {
        if status.is_null() {
            return Status::ERROR_INVALID_ARGUMENT;
        }
        // SAFETY: non-null, the caller's int.
        unsafe { *status = fini_status() };
        Status::SUCCESS
    })
}

#[no_mangle]
pub extern "C" fn rocprofiler_force_configure(
    configure_func: sys::rocprofiler_configure_func_t,
) -> Status {
    guard(|| {
        if finalized() {
            return Status::ERROR_FINALIZED;
        }
        if init_status() != 0 {
            return Status::ERROR_CONFIGURATION_LOCKED;
        }
        initialize(Some(configure_func));
        Status::SUCCESS
    })
}

#[no_mangle]
pub extern "C" fn rocprofiler_create_context(
    context_id: *mut sys::rocprofiler_context_id_t,
) -> Status {
    guard(|| {
        if context_id.is_null() {
            return Status::ERROR_INVALID_ARGUMENT;
        }
        if !configuration_open() {
            return Status::ERROR_CONFIGURATION_LOCKED;
        }
        let h = create_context();
        // SAFETY: non-null, the caller's context id.
        unsafe { (*context_id).handle = h };
        Status::SUCCESS
    })
}

#[no_mangle]
pub extern "C" fn rocprofiler_start_context(context_id: sys::rocprofiler_context_id_t) -> Status {
    guard(|| {
        if finalized() {
            return Status::ERROR_FINALIZED;
        }
        match with_ctx(context_id.handle, |c| {
            c.active.store(true, Ordering::Release)
        }) {
            Some(()) => Status::SUCCESS,
            None => Status::ERROR_CONTEXT_NOT_FOUND,
        }
    })
}

#[no_mangle]
pub extern "C" fn rocprofiler_stop_context(context_id: sys::rocprofiler_context_id_t) -> Status {
    // Does not wait for work in flight: records of dispatches enqueued while
    // the context was active still arrive (fwd.h, KERNEL_DISPATCH_ENQUEUE).
    guard(|| {
        match with_ctx(context_id.handle, |c| {
            c.active.store(false, Ordering::Release)
        }) {
            Some(()) => Status::SUCCESS,
            None => Status::ERROR_CONTEXT_NOT_FOUND,
        }
    })
}

fn context_query(
    context_id: sys::rocprofiler_context_id_t,
    status: *mut i32,
    active: bool,
) -> Status {
    guard(|| {
        if status.is_null() {
            return Status::ERROR_INVALID_ARGUMENT;
        }
        let r = with_ctx(context_id.handle, |c| {
            if active {
                c.active.load(Ordering::Acquire) as i32
            } else {
                1
            }
        });
        // SAFETY: non-null, the caller's int.
        unsafe { *status = r.unwrap_or(0) };
        if r.is_some() {
            Status::SUCCESS
        } else {
            Status::ERROR_CONTEXT_NOT_FOUND
        }
    })
}

#[no_mangle]
pub extern "C" fn rocprofiler_context_is_valid(
    context_id: sys::rocprofiler_context_id_t,
    status: *mut i32,
) -> Status {
    context_query(context_id, status, false)
}

#[no_mangle]
pub extern "C" fn rocprofiler_context_is_active(
    context_id: sys::rocprofiler_context_id_t,
    status: *mut i32,
) -> Status {
    context_query(context_id, status, true)
}

#[no_mangle]
pub extern "C" fn rocprofiler_configure_callback_tracing_service(
    context_id: sys::rocprofiler_context_id_t,
    kind: sys::rocprofiler_callback_tracing_kind_t,
    operations: *const sys::rocprofiler_tracing_operation_t,
    operations_count: usize,
    callback: sys::rocprofiler_callback_tracing_cb_t,
    callback_args: *mut c_void,
) -> Status {
    guard(|| {
        if !configuration_open() {
            return Status::ERROR_CONFIGURATION_LOCKED;
        }
        if with_ctx(context_id.handle, |_| ()).is_none() {
            return Status::ERROR_CONTEXT_NOT_FOUND;
        }
        // domain.cpp add_domain: NONE or past LAST (HIP_GRAPH on 1.0) is
        // unknown. KERNEL_REPLAY is modelled on the kernel-replay branch,
        // which builds on 1.3's graph domain.
        let replay = kind == sys::rocprofiler_callback_tracing_kind_t::KERNEL_REPLAY;
        let known = if replay {
            has_hip_graph()
        } else {
            kind.0 != 0 && kind.0 < callback_kind_last()
        };
        if !known {
            return Status::ERROR_KIND_NOT_FOUND;
        }
        let Some(cb) = callback else {
            return Status::ERROR_INVALID_ARGUMENT;
        };
        let ops = match ops_slice(operations, operations_count) {
            Ok(o) => o.to_vec(),
            Err(e) => return e,
        };
        with_building_ctx(context_id.handle, |c| {
            let slot = &mut c.cb[kind.0 as usize];
            // kernel_replay.h: exactly one context may configure the domain.
            if slot.is_some() || (replay && !kernel_replay::claim(c.handle)) {
                return Status::ERROR_SERVICE_ALREADY_CONFIGURED;
            }
            *slot = Some(CbService {
                cb,
                data: callback_args as usize,
                ops,
            });
            Status::SUCCESS
        })
        .unwrap_or(Status::ERROR_CONFIGURATION_LOCKED)
    })
}

#[no_mangle]
pub extern "C" fn rocprofiler_create_buffer(
    context: sys::rocprofiler_context_id_t,
    size: usize,
    watermark: usize,
    policy: sys::rocprofiler_buffer_policy_t,
    callback: sys::rocprofiler_buffer_tracing_cb_t,
    callback_data: *mut c_void,
    buffer_id: *mut sys::rocprofiler_buffer_id_t,
) -> Status {
    guard(|| {
        if !configuration_open() {
            return Status::ERROR_CONFIGURATION_LOCKED;
        }
        if buffer_id.is_null() || callback.is_none() || size == 0 || policy.0 >= 3 {
            return Status::ERROR_INVALID_ARGUMENT;
        }
        if with_ctx(context.handle, |_| ()).is_none() {
            return Status::ERROR_CONTEXT_NOT_FOUND;
        }
        let h = create_buffer(
            context.handle,
            size,
            watermark,
            policy,
            callback,
            callback_data,
        );
        // SAFETY: non-null, the caller's buffer id.
        unsafe { (*buffer_id).handle = h };
        Status::SUCCESS
    })
}

#[no_mangle]
pub extern "C" fn rocprofiler_flush_buffer(buffer_id: sys::rocprofiler_buffer_id_t) -> Status {
    guard(|| {
        if finalized() {
            return Status::ERROR_FINALIZED;
        }
        if buffer(buffer_id.handle).is_none() {
            return Status::ERROR_BUFFER_NOT_FOUND;
        }
        flush_and_wait(buffer_id.handle);
        Status::SUCCESS
    })
}

#[no_mangle]
pub extern "C" fn rocprofiler_destroy_buffer(buffer_id: sys::rocprofiler_buffer_id_t) -> Status {
    guard(|| {
        if destroy_buffer(buffer_id.handle) {
            Status::SUCCESS
        } else {
            Status::ERROR_BUFFER_NOT_FOUND
        }
    })
}

#[no_mangle]
pub extern "C" fn rocprofiler_configure_buffer_tracing_service(
    context_id: sys::rocprofiler_context_id_t,
    kind: sys::rocprofiler_buffer_tracing_kind_t,
    operations: *const sys::rocprofiler_tracing_operation_t,
    operations_count: usize,
    buffer_id: sys::rocprofiler_buffer_id_t,
) -> Status {
    guard(|| {
        if !configuration_open() {
            return Status::ERROR_CONFIGURATION_LOCKED;
        }
        if with_ctx(context_id.handle, |_| ()).is_none() {
            return Status::ERROR_CONTEXT_NOT_FOUND;
        }
        if buffer(buffer_id.handle).is_none() {
            return Status::ERROR_BUFFER_NOT_FOUND;
        }
        if kind.0 == 0 || kind.0 >= buffer_kind_last() {
            return Status::ERROR_KIND_NOT_FOUND;
        }
        let ops = match ops_slice(operations, operations_count) {
            Ok(o) => o.to_vec(),
            Err(e) => return e,
        };
        with_building_ctx(context_id.handle, |c| {
            let slot = &mut c.buf[kind.0 as usize];
            if slot.is_some() {
                return Status::ERROR_SERVICE_ALREADY_CONFIGURED;
            }
            *slot = Some(BufService {
                buffer: buffer_id.handle,
                ops,
            });
            Status::SUCCESS
        })
        .unwrap_or(Status::ERROR_CONFIGURATION_LOCKED)
    })
}

#[no_mangle]
pub extern "C" fn rocprofiler_configure_external_correlation_id_request_service(
    context_id: sys::rocprofiler_context_id_t,
    kinds: *const sys::rocprofiler_external_correlation_id_request_kind_t,
    kinds_count: usize,
    callback: sys::rocprofiler_external_correlation_id_request_cb_t,
    callback_args: *mut c_void,
) -> Status {
    guard(|| {
        if !configuration_open() {
            return Status::ERROR_CONFIGURATION_LOCKED;
        }
        if with_ctx(context_id.handle, |_| ()).is_none() {
            return Status::ERROR_CONTEXT_NOT_FOUND;
        }
        let Some(cb) = callback else {
            return Status::ERROR_INVALID_ARGUMENT;
        };
        // external_correlation.cpp: null kinds = every kind; non-null with
        // count 0 is invalid; NONE or >= LAST is an unknown kind.
        let mut mask = 0u64;
        if kinds.is_null() {
            mask = (1u64 << 19) - 2;
        } else {
            if kinds_count == 0 {
                return Status::ERROR_INVALID_ARGUMENT;
            }
            // SAFETY: the caller passes `kinds_count` kinds at `kinds`.
            for k in unsafe { std::slice::from_raw_parts(kinds, kinds_count) } {
                if k.0 == 0 || k.0 >= 19 {
                    return Status::ERROR_KIND_NOT_FOUND;
                }
                mask |= 1 << k.0;
            }
        }
        with_building_ctx(context_id.handle, |c| {
            if c.ext.is_some() {
                return Status::ERROR_SERVICE_ALREADY_CONFIGURED;
            }
            c.ext = Some(ExtService {
                cb,
                data: callback_args as usize,
                kinds: mask,
            });
            Status::SUCCESS
        })
        .unwrap_or(Status::ERROR_CONFIGURATION_LOCKED)
    })
}

#[no_mangle]
pub extern "C" fn rocprofiler_query_available_agents(
    version: sys::rocprofiler_agent_version_t,
    callback: sys::rocprofiler_query_available_agents_cb_t,
    agent_size: usize,
    user_data: *mut c_void,
) -> Status {
    guard(|| {
        if version != sys::rocprofiler_agent_version_t::V0 {
            return Status::ERROR_INCOMPATIBLE_ABI;
        }
        let Some(cb) = callback else {
            return Status::ERROR_INVALID_ARGUMENT;
        };
        if agent_size > std::mem::size_of::<sys::rocprofiler_agent_v0_t>() {
            return Status::ERROR_INCOMPATIBLE_ABI;
        }
        let mut ptrs: Vec<*const c_void> = agents()
            .list
            .iter()
            .map(|a| a as *const _ as *const c_void)
            .collect();
        // SAFETY: the tool's callback with an array of agent pointers that
        // live for the process.
        unsafe { cb(version, ptrs.as_mut_ptr(), ptrs.len(), user_data) }
    })
}

#[no_mangle]
pub extern "C" fn rocprofiler_get_timestamp(ts: *mut sys::rocprofiler_timestamp_t) -> Status {
    guard(|| {
        if ts.is_null() {
            return Status::ERROR_INVALID_ARGUMENT;
        }
        // SAFETY: non-null, the caller's timestamp.
        unsafe { *ts = now_ns() };
        Status::SUCCESS
    })
}

#[no_mangle]
pub extern "C" fn rocprofiler_get_thread_id(tid_out: *mut sys::rocprofiler_thread_id_t) -> Status {
    guard(|| {
        if tid_out.is_null() {
            return Status::ERROR_INVALID_ARGUMENT;
        }
        // SAFETY: non-null, the caller's thread id.
        unsafe { *tid_out = tid() };
        Status::SUCCESS
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_an_error_status() {
        let s = guard(|| panic!("boom"));
        assert_eq!(s, Status::ERROR);
    }

    #[test]
    fn null_pointers_are_invalid_arguments() {
        assert_eq!(
            rocprofiler_get_timestamp(std::ptr::null_mut()),
            Status::ERROR_INVALID_ARGUMENT
        );
        assert_eq!(
            rocprofiler_is_initialized(std::ptr::null_mut()),
            Status::ERROR_INVALID_ARGUMENT
        );
        assert_eq!(
            rocprofiler_get_thread_id(std::ptr::null_mut()),
            Status::ERROR_INVALID_ARGUMENT
        );
        assert_eq!(
            rocprofiler_create_context(std::ptr::null_mut()),
            Status::ERROR_INVALID_ARGUMENT
        );
    }
}
