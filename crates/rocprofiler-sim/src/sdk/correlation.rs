//! Internal correlation ids and their retirement (context/correlation_id.cpp,
//! buffer_tracing.h CORRELATION_ID_RETIREMENT): a process-monotonic id per
//! API call, kept on the calling thread's stack while the call runs; an id
//! retires once its call returned and every async record carrying it was
//! delivered.
use super::buffer::{push_record, Rec};
use super::context::contexts;
use super::os::{lock, now_ns};
use rocprofiler_sys as sys;
use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

thread_local! {
    /// Correlation ids of the API calls in progress on this thread.
    static CORR_STACK: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

pub(crate) fn push_corr(c: u64) {
    let _ = CORR_STACK.try_with(|s| s.borrow_mut().push(c));
}
pub(crate) fn pop_corr() {
    let _ = CORR_STACK.try_with(|s| s.borrow_mut().pop());
}
/// The innermost API call in progress on this thread (0 outside any).
pub(crate) fn current_corr() -> u64 {
    CORR_STACK
        .try_with(|s| s.borrow().last().copied().unwrap_or(0))
        .unwrap_or(0)
}

struct CorrState {
    pending: u64,
    api_done: bool,
    /// Context indices (bits) that want CORRELATION_ID_RETIREMENT for it.
    mask: u64,
}

struct Correlation {
    next: AtomicU64,
    retire_enabled: AtomicBool,
    retire: Mutex<FxHashMap<u64, CorrState>>,
}

fn state() -> &'static Correlation {
    static C: OnceLock<Correlation> = OnceLock::new();
    C.get_or_init(|| Correlation {
        next: AtomicU64::new(1),
        retire_enabled: AtomicBool::new(false),
        retire: Mutex::new(FxHashMap::default()),
    })
}

pub(crate) fn next_corr() -> u64 {
    state().next.fetch_add(1, Ordering::Relaxed)
}

/// Set once configuration ends: does any context buffer retirements?
pub(crate) fn set_retirement_enabled(on: bool) {
    state().retire_enabled.store(on, Ordering::Release);
}

pub(crate) fn retirement_enabled() -> bool {
    state().retire_enabled.load(Ordering::Acquire)
}

/// Bits of the active contexts that buffer retirements.
pub(crate) fn retirement_mask() -> u64 {
    let kind = sys::rocprofiler_buffer_tracing_kind_t::CORRELATION_ID_RETIREMENT.0;
    let mut mask = 0u64;
    for (i, c) in contexts().iter().enumerate().take(64) {
        if c.active.load(Ordering::Acquire) && c.buf_for(kind, 0).is_some() {
            mask |= 1 << i;
        }
    }
    mask
}

/// A call took `corr`; `mask` = contexts that want its retirement.
pub(crate) fn corr_begin(corr: u64, mask: u64) {
    if mask != 0 && retirement_enabled() {
        lock(&state().retire).insert(
            corr,
            CorrState {
                pending: 0,
                api_done: false,
                mask,
            },
        );
    }
}

/// An async record (dispatch or copy) now carries `corr`.
pub(crate) fn corr_async_added(corr: u64) {
    if !retirement_enabled() {
        return;
    }
    if let Some(s) = lock(&state().retire).get_mut(&corr) {
        s.pending += 1;
    }
}

/// The call that took `corr` returned.
pub(crate) fn corr_api_done(corr: u64) {
    if !retirement_enabled() {
        return;
    }
    let retired = {
        let mut m = lock(&state().retire);
        match m.get_mut(&corr) {
            Some(s) => {
                s.api_done = true;
                if s.pending == 0 {
                    m.remove(&corr).map(|s| s.mask)
                } else {
                    None
                }
            }
            None => None,
        }
    };
    if let Some(mask) = retired {
        retire(corr, mask);
    }
}

/// One async record carrying `corr` was delivered.
pub(crate) fn corr_async_delivered(corr: u64) {
    if !retirement_enabled() {
        return;
    }
    let retired = {
        let mut m = lock(&state().retire);
        match m.get_mut(&corr) {
            Some(s) => {
                s.pending = s.pending.saturating_sub(1);
                if s.pending == 0 && s.api_done {
                    m.remove(&corr).map(|s| s.mask)
                } else {
                    None
                }
            }
            None => None,
        }
    };
    if let Some(mask) = retired {
        retire(corr, mask);
    }
}

fn retire(corr: u64, mask: u64) {
    let kind = sys::rocprofiler_buffer_tracing_kind_t::CORRELATION_ID_RETIREMENT;
    for (i, c) in contexts().iter().enumerate() {
        if i < 64 && mask & (1 << i) != 0 {
            if let Some(b) = c.buf_for(kind.0, 0) {
                push_record(
                    b,
                    Rec::Retire(
                        sys::rocprofiler_buffer_tracing_correlation_id_retirement_record_t {
                            size: std::mem::size_of::<
                                sys::rocprofiler_buffer_tracing_correlation_id_retirement_record_t,
                            >() as u64,
                            kind,
                            timestamp: now_ns(),
                            internal_correlation_id: corr,
                        },
                    ),
                );
            }
        }
    }
}
