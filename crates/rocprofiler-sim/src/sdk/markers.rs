//! roctx calls as the SDK's marker tracing reports them
//! (rocprofiler-sdk lib/rocprofiler-sdk/marker/marker.cpp, range_marker.cpp
//! and its `range_marker.def.cpp`):
//!
//! - MARKER_CORE_API: every roctx call (roctxMarkA, roctxRangePushA,
//!   roctxRangePop, roctxRangeStartA, roctxRangeStop) takes an internal
//!   correlation id and fires ENTER and EXIT with its arguments;
//!   roctxRangeStartA returns the range id.
//! - MARKER_CORE_RANGE_API (`MARKER_RANGE_API_INFO_DEFINITION_V`): a push
//!   and its pop are one roctxThreadRangeA, ENTER at the push with the
//!   message, EXIT at the pop, one correlation id; a start and its stop one
//!   roctxProcessRangeA; roctxMarkA fires ENTER and EXIT at once.
//!
//! Both domains exist from SDK 1.0 (fwd.h: MARKER_CORE_RANGE_API = 21 for
//! callbacks, 32 for buffers, before HIP_GRAPH). Buffer records of the
//! marker domains are not simulated (the tool reads the callbacks).
use super::correlation::next_corr;
use super::os::{lock, now_ns, tid};
use super::trace::{fire, select, UserSlots};
use crate::runtime::RunShared;
use crate::truth::MarkerTruth;
use rocprofiler_sys as sys;
use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{c_void, CString};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

const CORE: u32 = sys::rocprofiler_callback_tracing_kind_t::MARKER_CORE_API.0;
const RANGE: u32 = sys::rocprofiler_callback_tracing_kind_t::MARKER_CORE_RANGE_API.0;

use sys::marker_core_api_id as core_op;
use sys::marker_core_range_api_id as range_op;

/// A range-domain callback pair in progress.
struct Open {
    corr: u64,
    slots: UserSlots,
    payload: sys::rocprofiler_callback_tracing_marker_api_data_t,
    _message: CString,
    message: String,
    thread: u64,
    start_ns: u64,
}

thread_local! {
    static PUSHED: RefCell<Vec<Open>> = const { RefCell::new(Vec::new()) };
}

fn started() -> &'static Mutex<HashMap<u64, Open>> {
    static STARTED: OnceLock<Mutex<HashMap<u64, Open>>> = OnceLock::new();
    STARTED.get_or_init(|| Mutex::new(HashMap::new()))
}

// SAFETY: Send is sound: the payload's message pointer points into
// `_message`, which moves with it.
unsafe impl Send for Open {}

fn payload(
    args: sys::rocprofiler_marker_api_args_t,
) -> sys::rocprofiler_callback_tracing_marker_api_data_t {
    sys::rocprofiler_callback_tracing_marker_api_data_t {
        size: std::mem::size_of::<sys::rocprofiler_callback_tracing_marker_api_data_t>() as u64,
        args,
        retval: Default::default(),
    }
}

fn message_args(m: &CString) -> sys::rocprofiler_marker_api_args_t {
    sys::rocprofiler_marker_api_args_t {
        message: m.as_ptr(),
    }
}

/// One MARKER_CORE_API call, ENTER and EXIT; `retval` set before EXIT.
fn core_call(op: i32, args: sys::rocprofiler_marker_api_args_t, retval: u64) {
    let mut slots = select(CORE, op);
    if slots.is_empty() {
        return;
    }
    let corr = next_corr();
    let mut p = payload(args);
    let ptr = &mut p as *mut _ as *mut c_void;
    fire(
        &mut slots,
        CORE,
        op,
        sys::rocprofiler_callback_phase_t::ENTER,
        corr,
        ptr,
    );
    p.retval.roctx_range_id_t_retval = retval;
    let ptr = &mut p as *mut _ as *mut c_void;
    fire(
        &mut slots,
        CORE,
        op,
        sys::rocprofiler_callback_phase_t::EXIT,
        corr,
        ptr,
    );
}

fn open_range(op: i32, message: &str) -> Open {
    let m = CString::new(message.replace('\0', " ")).expect("no NUL");
    let mut slots = select(RANGE, op);
    let corr = next_corr();
    let mut p = payload(message_args(&m));
    let start_ns = now_ns();
    if !slots.is_empty() {
        let ptr = &mut p as *mut _ as *mut c_void;
        fire(
            &mut slots,
            RANGE,
            op,
            sys::rocprofiler_callback_phase_t::ENTER,
            corr,
            ptr,
        );
    }
    Open {
        corr,
        slots,
        payload: p,
        _message: m,
        message: message.to_string(),
        thread: tid(),
        start_ns,
    }
}

fn close_range(run: &RunShared, op: i32, kind: &str, mut o: Open) {
    if !o.slots.is_empty() {
        let ptr = &mut o.payload as *mut _ as *mut c_void;
        fire(
            &mut o.slots,
            RANGE,
            op,
            sys::rocprofiler_callback_phase_t::EXIT,
            o.corr,
            ptr,
        );
    }
    let end_ns = now_ns();
    record(run, kind, &o.message, o.thread, o.start_ns, end_ns);
}

fn record(run: &RunShared, kind: &str, message: &str, thread: u64, start_ns: u64, end_ns: u64) {
    if run.record_truth {
        lock(&run.truth).markers.push(MarkerTruth {
            kind: kind.into(),
            message: message.into(),
            thread,
            start_ns,
            end_ns,
        });
    }
}

/// roctxMarkA(message).
pub(crate) fn mark(run: &RunShared, message: &str) {
    let start_ns = now_ns();
    let m = CString::new(message.replace('\0', " ")).expect("no NUL");
    core_call(core_op::roctxMarkA, message_args(&m), 0);
    let mut slots = select(RANGE, range_op::roctxMarkA);
    if !slots.is_empty() {
        let corr = next_corr();
        let mut p = payload(message_args(&m));
        let ptr = &mut p as *mut _ as *mut c_void;
        let op = range_op::roctxMarkA;
        fire(
            &mut slots,
            RANGE,
            op,
            sys::rocprofiler_callback_phase_t::ENTER,
            corr,
            ptr,
        );
        fire(
            &mut slots,
            RANGE,
            op,
            sys::rocprofiler_callback_phase_t::EXIT,
            corr,
            ptr,
        );
    }
    record(run, "mark", message, tid(), start_ns, now_ns());
}

/// roctxRangePushA(message).
pub(crate) fn push(message: &str) {
    let m = CString::new(message.replace('\0', " ")).expect("no NUL");
    core_call(core_op::roctxRangePushA, message_args(&m), 0);
    let open = open_range(range_op::roctxThreadRangeA, message);
    PUSHED.with_borrow_mut(|p| p.push(open));
}

/// roctxRangePop(): closes this thread's innermost push (none: nothing).
pub(crate) fn pop(run: &RunShared) {
    let Some(open) = PUSHED.with_borrow_mut(Vec::pop) else {
        return;
    };
    core_call(core_op::roctxRangePop, Default::default(), 0);
    close_range(run, range_op::roctxThreadRangeA, "thread_range", open);
}

/// roctxRangeStartA(message): returns the range id.
pub(crate) fn start(message: &str) -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    let m = CString::new(message.replace('\0', " ")).expect("no NUL");
    core_call(core_op::roctxRangeStartA, message_args(&m), id);
    let open = open_range(range_op::roctxProcessRangeA, message);
    lock(started()).insert(id, open);
    id
}

/// roctxRangeStop(id).
pub(crate) fn stop(run: &RunShared, id: u64) {
    let args = sys::rocprofiler_marker_api_args_t { range_id: id };
    core_call(core_op::roctxRangeStop, args, 0);
    if let Some(open) = lock(started()).remove(&id) {
        close_range(run, range_op::roctxProcessRangeA, "process_range", open);
    }
}
