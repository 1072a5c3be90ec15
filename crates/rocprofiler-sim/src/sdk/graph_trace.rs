//! HIP_GRAPH tracing (SDK 1.3+; rocprofiler-sdk hip/graph.cpp, GRAPH-SDK
//! 3d3121e0: `wrap_instantiate`, `wrap_launch`, `emit_graph_launch_record`;
//! the count in hsa/queue.cpp `WriteInterceptor`, SDK-NEW 00327028):
//! EXEC_CREATE / EXEC_DESTROY with phase NONE, EXEC_LAUNCH ENTER/EXIT
//! around hipGraphLaunch, and one
//! buffer record per successful launch, written synchronously when the
//! launch returns. `wrap_launch` pushes a launch state on the SDK's own
//! thread-local launch stack; WriteInterceptor counts every dispatch packet
//! it intercepts while a launch is on top of THAT thread's stack
//! (`current_launch_state()`): the record's `kernel_dispatch_count`.
use super::buffer::{push_record, Rec};
use super::context::contexts;
use super::os::{now_ns, tid};
use super::registration::has_hip_graph;
use super::trace::{fire, fire_none, select, ApiCall, UserSlots};
use rocprofiler_sys as sys;
use std::cell::RefCell;
use std::ffi::c_void;

thread_local! {
    /// graph.cpp `g_launch_stack`: dispatches counted per launch in progress.
    static LAUNCH_STACK: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

/// WriteInterceptor: `n` dispatch packets intercepted on this thread.
pub(crate) fn count_intercepted_dispatches(n: u64) {
    let _ = LAUNCH_STACK.try_with(|s| {
        if let Some(top) = s.borrow_mut().last_mut() {
            *top += n;
        }
    });
}

/// `current_launch_state() != nullptr`: a graph launch is in progress on
/// THIS thread (not necessarily the launch whose packet it processes).
pub(crate) fn graph_launch_active() -> bool {
    LAUNCH_STACK
        .try_with(|s| !s.borrow().is_empty())
        .unwrap_or(false)
}

fn graph_payload(exec_id: u64, handle: u64) -> sys::rocprofiler_callback_tracing_hip_graph_data_t {
    sys::rocprofiler_callback_tracing_hip_graph_data_t {
        size: std::mem::size_of::<sys::rocprofiler_callback_tracing_hip_graph_data_t>() as u64,
        graph_exec_id: sys::rocprofiler_graph_exec_id_t { handle: exec_id },
        graph_exec_value: sys::rocprofiler_address_t::from_value(handle),
    }
}

/// EXEC_CREATE or EXEC_DESTROY (phase NONE).
pub(crate) fn graph_event(
    op: sys::rocprofiler_hip_graph_operation_t,
    corr: u64,
    exec_id: u64,
    handle: u64,
) {
    if !has_hip_graph() {
        return;
    }
    let mut p = graph_payload(exec_id, handle);
    fire_none(
        sys::rocprofiler_callback_tracing_kind_t::HIP_GRAPH.0,
        op.0 as i32,
        corr,
        &mut p as *mut _ as *mut c_void,
    );
}

/// One hipGraphLaunch as graph.cpp's `wrap_launch` sees it.
pub(crate) struct GraphLaunchTrace {
    slots: UserSlots,
    payload: sys::rocprofiler_callback_tracing_hip_graph_data_t,
    corr: u64,
}

impl GraphLaunchTrace {
    /// Pushes the launch state, then fires ENTER. None before SDK 1.3.
    pub fn enter(corr: u64, exec_id: u64, handle: u64) -> Option<GraphLaunchTrace> {
        if !has_hip_graph() {
            return None;
        }
        let _ = LAUNCH_STACK.try_with(|s| s.borrow_mut().push(0));
        let kind = sys::rocprofiler_callback_tracing_kind_t::HIP_GRAPH.0;
        let op = sys::rocprofiler_hip_graph_operation_t::EXEC_LAUNCH.0 as i32;
        let mut t = GraphLaunchTrace {
            slots: select(kind, op),
            payload: graph_payload(exec_id, handle),
            corr,
        };
        if !t.slots.is_empty() {
            let p = &mut t.payload as *mut _ as *mut c_void;
            fire(
                &mut t.slots,
                kind,
                op,
                sys::rocprofiler_callback_phase_t::ENTER,
                corr,
                p,
            );
        }
        Some(t)
    }

    /// Fires EXIT, then pops the launch state; returns the dispatches it
    /// counted on this thread.
    pub fn exit(mut self) -> u64 {
        if !self.slots.is_empty() {
            let kind = sys::rocprofiler_callback_tracing_kind_t::HIP_GRAPH.0;
            let op = sys::rocprofiler_hip_graph_operation_t::EXEC_LAUNCH.0 as i32;
            let p = &mut self.payload as *mut _ as *mut c_void;
            fire(
                &mut self.slots,
                kind,
                op,
                sys::rocprofiler_callback_phase_t::EXIT,
                self.corr,
                p,
            );
        }
        LAUNCH_STACK
            .try_with(|s| s.borrow_mut().pop())
            .ok()
            .flatten()
            .unwrap_or(0)
    }
}

/// The HIP_GRAPH buffer record of one launch (1.3+), written now.
pub(crate) fn graph_launch_record(
    call: &ApiCall,
    agent: u64,
    queue: u64,
    exec_id: u64,
    kernel_dispatch_count: u64,
) {
    if !has_hip_graph() {
        return;
    }
    let kind = sys::rocprofiler_buffer_tracing_kind_t::HIP_GRAPH;
    let op = sys::rocprofiler_hip_graph_operation_t::EXEC_LAUNCH.0;
    for &i in &call.active_at_enter {
        if let Some(b) = contexts()[i].buf_for(kind.0, op as i32) {
            push_record(
                b,
                Rec::Graph(sys::rocprofiler_buffer_tracing_hip_graph_record_t {
                    size: std::mem::size_of::<sys::rocprofiler_buffer_tracing_hip_graph_record_t>()
                        as u64,
                    kind,
                    operation: op,
                    correlation_id: sys::rocprofiler_correlation_id_t {
                        internal: call.corr,
                        external: Default::default(),
                        ancestor: 0,
                    },
                    thread_id: tid(),
                    start_timestamp: call.start_ns,
                    end_timestamp: now_ns(),
                    agent_id: sys::rocprofiler_agent_id_t { handle: agent },
                    queue_id: sys::rocprofiler_queue_id_t { handle: queue },
                    graph_exec_id: sys::rocprofiler_graph_exec_id_t { handle: exec_id },
                    kernel_dispatch_count,
                }),
            );
        }
    }
}
