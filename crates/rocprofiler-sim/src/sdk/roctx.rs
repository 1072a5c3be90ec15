//! ROCTX ranges (libroctx64's roctxRangePushA / roctxRangePop), traced as
//! the SDK traces them, so a tool can open and close its windows on a
//! program's own ranges.
//!
//! - The calls (rocprofiler-sdk-roctx/roctx.cpp roctxRangePushA,
//!   roctxRangePop): a thread-local nesting level; push returns the level it
//!   starts at (0-based) and raises it; pop returns the level it closes, or
//!   -1 with no range open.
//! - Their tracing (rocprofiler-sdk/marker/marker.cpp roctx_api_impl::
//!   functor): like a HIP API call, a correlation id constructed for the call
//!   and made the thread's latest while it runs, ENTER and EXIT to the
//!   contexts with a MARKER_CORE_API callback service for the operation,
//!   with a `rocprofiler_callback_tracing_marker_api_data_t` payload
//!   (its args hold the message; the retval is set for EXIT).
use super::correlation::{
    corr_api_done, corr_begin, next_corr, pop_corr, push_corr, retirement_mask,
};
use super::trace::{fire, select};
use rocprofiler_sys as sys;
use std::cell::Cell;
use std::ffi::{c_char, c_int, c_void};

thread_local! {
    static LEVEL: Cell<c_int> = const { Cell::new(0) };
}

/// One traced ROCTX call: `body` runs between ENTER and EXIT and returns
/// the call's result.
fn traced(
    op: sys::rocprofiler_marker_core_api_id_t,
    message: *const c_char,
    body: impl FnOnce() -> c_int,
) -> c_int {
    let kind = sys::rocprofiler_callback_tracing_kind_t::MARKER_CORE_API.0;
    let mut slots = select(kind, op.0);
    if slots.is_empty() {
        return body();
    }
    let corr = next_corr();
    push_corr(corr);
    corr_begin(corr, retirement_mask());
    let mut payload = sys::rocprofiler_callback_tracing_marker_api_data_t {
        size: std::mem::size_of::<sys::rocprofiler_callback_tracing_marker_api_data_t>() as u64,
        args: sys::rocprofiler_marker_api_args_t { raw: [0; 2] },
        retval: sys::rocprofiler_marker_api_retval_t { int64_t_retval: 0 },
    };
    payload.args.message = message;
    let p = &mut payload as *mut _ as *mut c_void;
    let enter = sys::rocprofiler_callback_phase_t::ENTER;
    fire(&mut slots, kind, op.0, enter, corr, p);
    let result = body();
    payload.retval.int32_t_retval = result;
    let p = &mut payload as *mut _ as *mut c_void;
    let exit = sys::rocprofiler_callback_phase_t::EXIT;
    fire(&mut slots, kind, op.0, exit, corr, p);
    pop_corr();
    corr_api_done(corr);
    result
}

#[no_mangle]
pub extern "C" fn roctxRangePushA(message: *const c_char) -> c_int {
    let op = sys::rocprofiler_marker_core_api_id_t::roctxRangePushA;
    traced(op, message, || {
        LEVEL.with(|level| {
            let started = level.get();
            level.set(started + 1);
            started
        })
    })
}

#[no_mangle]
pub extern "C" fn roctxRangePop() -> c_int {
    let op = sys::rocprofiler_marker_core_api_id_t::roctxRangePop;
    traced(op, std::ptr::null(), || {
        LEVEL.with(|level| match level.get() {
            0 => -1,
            open => {
                level.set(open - 1);
                open - 1
            }
        })
    })
}
