//! The SDK's interception of device work, on the thread that processes it.
//!
//! - Kernel dispatch packets (hsa/queue.cpp WriteInterceptor, SDK-1.0):
//!   `dispatch_id` = ++ a process-wide counter from 1, in interception
//!   order; the correlation id is the processing thread's latest one (one
//!   the SDK constructs where it has none); the external-correlation request
//!   (populate_external_correlation_ids) fires once per submission of a
//!   dispatch packet (each kernel-replay pass is one), before ENQUEUE, with that thread's id and correlation id, only for
//!   contexts that trace the kind; barrier packets request nothing.
//! - Memory copies (hsa/async_copy.cpp): the same request (MEMORY_COPY) on
//!   the thread calling hsa_amd_memory_async_copy.
//!
//! What is captured here travels with the work; the record is written when
//! the work completes (see `completion`).
use super::context::contexts;
use super::correlation::corr_async_added;
use super::graph_trace::count_intercepted_dispatches;
use super::kernel_replay::switched_off;
use super::os::tid;
use rocprofiler_sys as sys;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};

/// (context index, buffer, external correlation value), inline for the
/// usual one tracing context: no allocation per dispatch, and no larger a
/// completion to move through the completion queue than a `Vec`'s.
pub(crate) type Deliveries = smallvec::SmallVec<[(usize, u64, u64); 1]>;

static DISPATCH_IDS: AtomicU64 = AtomicU64::new(1);

/// Asks every active context that buffers `buffer_kind` for an external
/// correlation id (if it configured the request service for
/// `request_kind`), and captures where the record goes.
fn capture(
    buffer_kind: u32,
    request_kind: sys::rocprofiler_external_correlation_id_request_kind_t,
    operation: i32,
    corr: u64,
) -> Deliveries {
    let mut out = Deliveries::new();
    let thread_id = tid();
    for (i, c) in contexts().iter().enumerate() {
        if !c.active.load(Ordering::Acquire) || switched_off(c.handle) {
            continue;
        }
        let Some(buffer) = c.buf_for(buffer_kind, operation) else {
            continue;
        };
        let mut external = 0u64;
        if let Some(e) = &c.ext {
            if request_kind.0 < 64 && e.kinds & (1 << request_kind.0) != 0 {
                let mut ud = sys::rocprofiler_user_data_t::default();
                // SAFETY: the tool's request callback with a valid user-data slot.
                let rc = unsafe {
                    (e.cb)(
                        thread_id,
                        c.id(),
                        request_kind,
                        operation,
                        corr,
                        &mut ud,
                        e.data as *mut c_void,
                    )
                };
                if rc == 0 {
                    external = ud.value();
                }
            }
        }
        out.push((i, buffer, external));
    }
    out
}

/// The dispatch id of a kernel packet intercepted on this thread, once per
/// packet however often kernel replay runs it.
pub(crate) fn reserve_dispatch() -> u64 {
    count_intercepted_dispatches(1);
    DISPATCH_IDS.fetch_add(1, Ordering::Relaxed)
}

/// One submission of an intercepted kernel packet under `corr` (one per
/// replay pass): the external-correlation request and where its record
/// goes.
pub(crate) fn submit_dispatch(corr: u64) -> Deliveries {
    let deliveries = capture(
        sys::rocprofiler_buffer_tracing_kind_t::KERNEL_DISPATCH.0,
        sys::rocprofiler_external_correlation_id_request_kind_t::KERNEL_DISPATCH,
        sys::rocprofiler_kernel_dispatch_operation_t::ENQUEUE.0 as i32,
        corr,
    );
    corr_async_added(corr);
    deliveries
}

/// One memory copy intercepted on this thread under `corr`.
pub(crate) fn intercept_copy(
    corr: u64,
    op: sys::rocprofiler_memory_copy_operation_t,
) -> Deliveries {
    let deliveries = capture(
        sys::rocprofiler_buffer_tracing_kind_t::MEMORY_COPY.0,
        sys::rocprofiler_external_correlation_id_request_kind_t::MEMORY_COPY,
        op.0 as i32,
        corr,
    );
    corr_async_added(corr);
    deliveries
}

/// What a KERNEL_DISPATCH record says, besides its times.
#[derive(Clone, Copy)]
pub(crate) struct DispatchInfo {
    pub corr: u64,
    pub thread: u64,
    pub agent: u64,
    pub queue: u64,
    pub kernel_id: u64,
    pub dispatch_id: u64,
    /// Work-items per dimension.
    pub grid: [u32; 3],
    pub workgroup: [u32; 3],
}

fn dim(v: [u32; 3]) -> sys::rocprofiler_dim3_t {
    sys::rocprofiler_dim3_t {
        x: v[0],
        y: v[1],
        z: v[2],
    }
}

pub(crate) fn dispatch_record(
    d: &DispatchInfo,
    start: u64,
    end: u64,
) -> sys::rocprofiler_buffer_tracing_kernel_dispatch_record_t {
    sys::rocprofiler_buffer_tracing_kernel_dispatch_record_t {
        size: std::mem::size_of::<sys::rocprofiler_buffer_tracing_kernel_dispatch_record_t>()
            as u64,
        kind: sys::rocprofiler_buffer_tracing_kind_t::KERNEL_DISPATCH,
        operation: sys::rocprofiler_kernel_dispatch_operation_t::COMPLETE,
        correlation_id: sys::rocprofiler_async_correlation_id_t {
            internal: d.corr,
            external: Default::default(),
        },
        thread_id: d.thread,
        start_timestamp: start,
        end_timestamp: end,
        dispatch_info: sys::rocprofiler_kernel_dispatch_info_t {
            agent_id: sys::rocprofiler_agent_id_t { handle: d.agent },
            queue_id: sys::rocprofiler_queue_id_t { handle: d.queue },
            kernel_id: d.kernel_id,
            dispatch_id: d.dispatch_id,
            workgroup_size: dim(d.workgroup),
            grid_size: dim(d.grid),
            ..Default::default()
        },
    }
}

/// What a MEMORY_COPY record says, besides its times.
pub(crate) struct CopyInfo {
    pub corr: u64,
    pub thread: u64,
    pub op: sys::rocprofiler_memory_copy_operation_t,
    pub src_agent: u64,
    pub dst_agent: u64,
    pub bytes: u64,
    pub src_address: u64,
    pub dst_address: u64,
}

pub(crate) fn copy_record(
    c: &CopyInfo,
    start: u64,
    end: u64,
) -> sys::rocprofiler_buffer_tracing_memory_copy_record_t {
    sys::rocprofiler_buffer_tracing_memory_copy_record_t {
        size: std::mem::size_of::<sys::rocprofiler_buffer_tracing_memory_copy_record_t>() as u64,
        kind: sys::rocprofiler_buffer_tracing_kind_t::MEMORY_COPY,
        operation: c.op,
        correlation_id: sys::rocprofiler_async_correlation_id_t {
            internal: c.corr,
            external: Default::default(),
        },
        thread_id: c.thread,
        start_timestamp: start,
        end_timestamp: end,
        dst_agent_id: sys::rocprofiler_agent_id_t {
            handle: c.dst_agent,
        },
        src_agent_id: sys::rocprofiler_agent_id_t {
            handle: c.src_agent,
        },
        bytes: c.bytes,
        dst_address: sys::rocprofiler_address_t::from_value(c.dst_address),
        src_address: sys::rocprofiler_address_t::from_value(c.src_address),
    }
}
