//! The hot path: the SDK asks, per kernel dispatch or memory copy, what to put
//! in the record's external correlation slot. The answer is the packed graph
//! key of the launch on top of this thread's launch stack, or nothing.
//!
//! Contract (the hot-path rule of shared/DESIGN.md, the project's design
//! card, outside this repo): no allocation, no lock, no syscall. `tracker()`
//! is a OnceCell read; `external_for_dispatch` touches thread-local state
//! only.
use rocprofiler_sys::*;
use std::ffi::c_void;

pub unsafe extern "C" fn on_request(
    _thread_id: rocprofiler_thread_id_t,
    _context_id: rocprofiler_context_id_t,
    _kind: rocprofiler_external_correlation_id_request_kind_t,
    _operation: rocprofiler_tracing_operation_t,
    _internal_corr_id: u64,
    external: *mut rocprofiler_user_data_t,
    _data: *mut c_void,
) -> i32 {
    let answer = std::panic::catch_unwind(|| {
        let tracker = super::tool::tracker()?;
        let packed = tracker.external_for_dispatch();
        (packed != 0).then_some(packed)
    });
    match answer {
        Ok(Some(packed)) if !external.is_null() => {
            // SAFETY: the SDK passes a valid slot for this dispatch's external value.
            unsafe { (*external).value = packed };
            0
        }
        _ => 1,
    }
}
