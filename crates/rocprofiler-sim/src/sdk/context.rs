//! Contexts and the services configured on them (context/context.hpp,
//! callback_tracing.cpp, buffer_tracing.cpp, external_correlation.cpp):
//! contexts are built while the tools' initialize runs and frozen after it.
use super::dispatch_counting::CountingService;
use super::os::lock;
use super::thread_trace::TraceService;
use rocprofiler_sys as sys;
use std::ffi::c_void;
use std::sync::atomic::AtomicBool;
use std::sync::{Mutex, OnceLock};

pub(crate) const CONTEXT_OFFSET: u64 = 0x100;
/// Slots per kind table (callback kinds < 32, buffer kinds < 64 in 1.3).
const KIND_SLOTS: usize = 64;

#[derive(Clone)]
pub(crate) struct CbService {
    pub cb: unsafe extern "C" fn(
        sys::rocprofiler_callback_tracing_record_t,
        *mut sys::rocprofiler_user_data_t,
        *mut c_void,
    ),
    pub data: usize,
    /// Empty = every operation.
    pub ops: Vec<i32>,
}

#[derive(Clone)]
pub(crate) struct BufService {
    pub buffer: u64,
    pub ops: Vec<i32>,
}

#[derive(Clone)]
pub(crate) struct ExtService {
    pub cb: unsafe extern "C" fn(
        sys::rocprofiler_thread_id_t,
        sys::rocprofiler_context_id_t,
        sys::rocprofiler_external_correlation_id_request_kind_t,
        sys::rocprofiler_tracing_operation_t,
        u64,
        *mut sys::rocprofiler_user_data_t,
        *mut c_void,
    ) -> i32,
    pub data: usize,
    /// Bit n set = request kind n asked for.
    pub kinds: u64,
}

fn op_selected(ops: &[i32], op: i32) -> bool {
    ops.is_empty() || ops.contains(&op)
}

pub(crate) struct Ctx {
    pub handle: u64,
    pub active: AtomicBool,
    pub cb: Vec<Option<CbService>>,
    pub buf: Vec<Option<BufService>>,
    pub ext: Option<ExtService>,
    /// Dispatch counting services, in the order configured.
    pub counting: Vec<CountingService>,
    /// Dispatch thread trace services, one per agent configured.
    pub thread_trace: Vec<TraceService>,
}

impl Ctx {
    fn new(handle: u64) -> Ctx {
        Ctx {
            handle,
            active: AtomicBool::new(false),
            cb: vec![None; KIND_SLOTS],
            buf: vec![None; KIND_SLOTS],
            ext: None,
            counting: Vec::new(),
            thread_trace: Vec::new(),
        }
    }
    pub fn cb_for(&self, kind: u32, op: i32) -> Option<&CbService> {
        self.cb
            .get(kind as usize)?
            .as_ref()
            .filter(|s| op_selected(&s.ops, op))
    }
    pub fn buf_for(&self, kind: u32, op: i32) -> Option<u64> {
        self.buf
            .get(kind as usize)?
            .as_ref()
            .filter(|s| op_selected(&s.ops, op))
            .map(|s| s.buffer)
    }
    pub fn id(&self) -> sys::rocprofiler_context_id_t {
        sys::rocprofiler_context_id_t {
            handle: self.handle,
        }
    }
}

struct Contexts {
    building: Mutex<Vec<Ctx>>,
    frozen: OnceLock<Vec<Ctx>>,
}

fn contexts_state() -> &'static Contexts {
    static C: OnceLock<Contexts> = OnceLock::new();
    C.get_or_init(|| Contexts {
        building: Mutex::new(Vec::new()),
        frozen: OnceLock::new(),
    })
}

/// The contexts once configuration ended (empty before).
pub(crate) fn contexts() -> &'static [Ctx] {
    contexts_state()
        .frozen
        .get()
        .map(|v| v.as_slice())
        .unwrap_or(&[])
}

pub(crate) fn create_context() -> u64 {
    let mut b = lock(&contexts_state().building);
    let handle = CONTEXT_OFFSET + b.len() as u64;
    b.push(Ctx::new(handle));
    handle
}

/// Ends configuration: the contexts built so far become the fixed set.
pub(crate) fn freeze() {
    let c = contexts_state();
    let ctxs = std::mem::take(&mut *lock(&c.building));
    let _ = c.frozen.set(ctxs);
}

/// Runs `f` on the context while it can still be configured.
pub(crate) fn with_building_ctx<R>(handle: u64, f: impl FnOnce(&mut Ctx) -> R) -> Option<R> {
    let c = contexts_state();
    if c.frozen.get().is_some() {
        return None;
    }
    let mut b = lock(&c.building);
    b.iter_mut().find(|c| c.handle == handle).map(f)
}

/// Runs `f` on a context whether or not configuration has ended.
pub(crate) fn with_ctx<R>(handle: u64, f: impl FnOnce(&Ctx) -> R) -> Option<R> {
    let c = contexts_state();
    if let Some(v) = c.frozen.get() {
        return v.iter().find(|c| c.handle == handle).map(f);
    }
    let b = lock(&c.building);
    b.iter().find(|c| c.handle == handle).map(f)
}
