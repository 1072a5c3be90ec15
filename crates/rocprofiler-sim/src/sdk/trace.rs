//! Firing callbacks and producing records, as the SDK's tracing layer does.
//!
//! - HIP API calls (hip/hip.cpp wrappers): a process-monotonic internal
//!   correlation id per call; ENTER and EXIT go to the contexts that were
//!   active at ENTER, with one user_data slot per context kept across both
//!   phases; a buffer record at EXIT.
//! - HIP_STREAM (hip/stream.cpp): SET fires ENTER before and EXIT after every
//!   API function that takes a hipStream_t, with internal correlation id 0;
//!   CREATE and DESTROY fire with phase NONE after the call returns. Stream
//!   ids are handed out in first-seen order.
//! - External correlation (external_correlation.cpp, tracing.hpp
//!   populate_contexts): requested per kernel dispatch / memory copy, on the
//!   thread writing the packet, only for contexts that trace that kind.
use super::state::*;
use rocprofiler_sys as sys;
use std::ffi::{c_char, c_void};
use std::sync::atomic::Ordering;

pub(crate) type UserSlots = Vec<(usize, sys::rocprofiler_user_data_t)>;

/// Active contexts with a callback service for (kind, op).
pub(crate) fn select(kind: u32, op: i32) -> UserSlots {
    let mut v = Vec::new();
    for (i, c) in sdk().contexts().iter().enumerate() {
        if c.active.load(Ordering::Acquire) && c.cb_for(kind, op).is_some() {
            v.push((i, sys::rocprofiler_user_data_t::default()));
        }
    }
    v
}

pub(crate) fn fire(
    slots: &mut UserSlots,
    kind: u32,
    op: i32,
    phase: sys::rocprofiler_callback_phase_t,
    corr: u64,
    payload: *mut c_void,
) {
    let ctxs = sdk().contexts();
    let thread_id = tid();
    for (i, ud) in slots.iter_mut() {
        let c = &ctxs[*i];
        let Some(s) = c.cb_for(kind, op) else {
            continue;
        };
        let record = sys::rocprofiler_callback_tracing_record_t {
            context_id: c.id(),
            thread_id,
            correlation_id: sys::rocprofiler_correlation_id_t {
                internal: corr,
                external: sys::rocprofiler_user_data_t::default(),
                ancestor: 0,
            },
            kind: sys::rocprofiler_callback_tracing_kind_t(kind),
            operation: op,
            phase,
            payload,
        };
        // SAFETY: the tool's callback with a record whose payload outlives the call.
        unsafe { (s.cb)(record, ud as *mut _, s.data as *mut c_void) };
    }
}

/// One-shot (phase NONE) callback.
pub(crate) fn fire_none(kind: u32, op: i32, corr: u64, payload: *mut c_void) {
    let mut slots = select(kind, op);
    if !slots.is_empty() {
        fire(
            &mut slots,
            kind,
            op,
            sys::rocprofiler_callback_phase_t::NONE,
            corr,
            payload,
        );
    }
}

pub(crate) fn kernel_symbol_registered(kernel_id: u64, name: *const c_char) {
    let kind = sys::rocprofiler_callback_tracing_kind_t::CODE_OBJECT.0;
    let op = sys::rocprofiler_code_object_operation_t::DEVICE_KERNEL_SYMBOL_REGISTER.0 as i32;
    let mut slots = select(kind, op);
    if slots.is_empty() {
        return;
    }
    let mut payload = sys::rocprofiler_callback_tracing_code_object_kernel_symbol_register_data_t {
        size: std::mem::size_of::<
            sys::rocprofiler_callback_tracing_code_object_kernel_symbol_register_data_t,
        >() as u64,
        kernel_id,
        code_object_id: 1,
        kernel_name: name,
        kernel_object: 0x4000_0000 + kernel_id * 0x40,
        kernarg_segment_size: 64,
        kernarg_segment_alignment: 8,
        group_segment_size: 0,
        private_segment_size: 0,
        sgpr_count: 32,
        arch_vgpr_count: 32,
        accum_vgpr_count: 0,
        kernel_code_entry_byte_offset: 256,
        kernel_address: sys::rocprofiler_address_t::from_value(0x4000_0000 + kernel_id * 0x40),
    };
    // Phase LOAD (= ENTER) when the code object is loaded, as code_object.cpp does.
    fire(
        &mut slots,
        kind,
        op,
        sys::rocprofiler_callback_phase_t::ENTER,
        0,
        &mut payload as *mut _ as *mut c_void,
    );
}

/// A stream as the tracing layer sees it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct StreamRef {
    pub id: u64,
    pub value: u64,
}

pub(crate) fn stream_event(op: sys::rocprofiler_hip_stream_operation_t, s: StreamRef) {
    let mut payload = stream_payload(s);
    fire_none(
        sys::rocprofiler_callback_tracing_kind_t::HIP_STREAM.0,
        op.0 as i32,
        0,
        &mut payload as *mut _ as *mut c_void,
    );
}

fn stream_payload(s: StreamRef) -> sys::rocprofiler_callback_tracing_hip_stream_data_t {
    sys::rocprofiler_callback_tracing_hip_stream_data_t {
        size: std::mem::size_of::<sys::rocprofiler_callback_tracing_hip_stream_data_t>() as u64,
        stream_id: sys::rocprofiler_stream_id_t { handle: s.id },
        stream_value: sys::rocprofiler_address_t::from_value(s.value),
    }
}

/// A HIP runtime API call in progress on this thread.
pub(crate) struct ApiCall {
    pub corr: u64,
    pub op: i32,
    pub start_ns: u64,
    pub payload: sys::rocprofiler_callback_tracing_hip_api_data_t,
    api_slots: UserSlots,
    stream: Option<(
        StreamRef,
        UserSlots,
        sys::rocprofiler_callback_tracing_hip_stream_data_t,
    )>,
    /// Contexts (indices) with HIP_RUNTIME_API buffer tracing active at ENTER.
    buffered: Vec<usize>,
    /// Contexts active at ENTER (for HIP_GRAPH buffer records).
    pub active_at_enter: Vec<usize>,
}

impl ApiCall {
    pub fn enter(
        op: i32,
        args: sys::rocprofiler_hip_api_args_t,
        stream: Option<StreamRef>,
    ) -> ApiCall {
        let s = sdk();
        let corr = s.next_corr();
        push_corr(corr);
        let start_ns = now_ns();
        let ctxs = s.contexts();
        let mut active_at_enter = Vec::new();
        let mut buffered = Vec::new();
        let mut mask = 0u64;
        let api_kind = sys::rocprofiler_buffer_tracing_kind_t::HIP_RUNTIME_API.0;
        let retire_kind = sys::rocprofiler_buffer_tracing_kind_t::CORRELATION_ID_RETIREMENT.0;
        for (i, c) in ctxs.iter().enumerate() {
            if !c.active.load(Ordering::Acquire) {
                continue;
            }
            active_at_enter.push(i);
            if c.buf_for(api_kind, op).is_some() {
                buffered.push(i);
            }
            if i < 64 && c.buf_for(retire_kind, 0).is_some() {
                mask |= 1 << i;
            }
        }
        if s.retirement_enabled() {
            s.corr_begin(corr, mask);
        }
        let stream = stream.map(|sr| {
            let kind = sys::rocprofiler_callback_tracing_kind_t::HIP_STREAM.0;
            let sop = sys::rocprofiler_hip_stream_operation_t::SET.0 as i32;
            let mut slots = select(kind, sop);
            let mut payload = stream_payload(sr);
            if !slots.is_empty() {
                fire(
                    &mut slots,
                    kind,
                    sop,
                    sys::rocprofiler_callback_phase_t::ENTER,
                    0,
                    &mut payload as *mut _ as *mut c_void,
                );
            }
            (sr, slots, payload)
        });
        let kind = sys::rocprofiler_callback_tracing_kind_t::HIP_RUNTIME_API.0;
        let mut call = ApiCall {
            corr,
            op,
            start_ns,
            payload: sys::rocprofiler_callback_tracing_hip_api_data_t {
                size: std::mem::size_of::<sys::rocprofiler_callback_tracing_hip_api_data_t>()
                    as u64,
                args,
                retval: Default::default(),
            },
            api_slots: select(kind, op),
            stream,
            buffered,
            active_at_enter,
        };
        if !call.api_slots.is_empty() {
            let p = &mut call.payload as *mut _ as *mut c_void;
            fire(
                &mut call.api_slots,
                kind,
                op,
                sys::rocprofiler_callback_phase_t::ENTER,
                corr,
                p,
            );
        }
        call
    }

    /// EXIT with `retval` (a hipError_t).
    pub fn exit(mut self, retval: i32) {
        let s = sdk();
        self.payload.retval.hipError_t_retval = retval;
        let kind = sys::rocprofiler_callback_tracing_kind_t::HIP_RUNTIME_API.0;
        if !self.api_slots.is_empty() {
            let p = &mut self.payload as *mut _ as *mut c_void;
            fire(
                &mut self.api_slots,
                kind,
                self.op,
                sys::rocprofiler_callback_phase_t::EXIT,
                self.corr,
                p,
            );
        }
        let end_ns = now_ns();
        for &i in &self.buffered {
            if let Some(b) = s.contexts()[i].buf_for(
                sys::rocprofiler_buffer_tracing_kind_t::HIP_RUNTIME_API.0,
                self.op,
            ) {
                s.push_record(
                    b,
                    Rec::Api(sys::rocprofiler_buffer_tracing_hip_api_record_t {
                        size: std::mem::size_of::<sys::rocprofiler_buffer_tracing_hip_api_record_t>(
                        ) as u64,
                        kind: sys::rocprofiler_buffer_tracing_kind_t::HIP_RUNTIME_API,
                        operation: self.op,
                        correlation_id: sys::rocprofiler_correlation_id_t {
                            internal: self.corr,
                            external: Default::default(),
                            ancestor: 0,
                        },
                        start_timestamp: self.start_ns,
                        end_timestamp: end_ns,
                        thread_id: tid(),
                    }),
                );
            }
        }
        if let Some((_, mut slots, mut payload)) = self.stream.take() {
            if !slots.is_empty() {
                fire(
                    &mut slots,
                    sys::rocprofiler_callback_tracing_kind_t::HIP_STREAM.0,
                    sys::rocprofiler_hip_stream_operation_t::SET.0 as i32,
                    sys::rocprofiler_callback_phase_t::EXIT,
                    0,
                    &mut payload as *mut _ as *mut c_void,
                );
            }
        }
        pop_corr();
        if s.retirement_enabled() {
            s.corr_api_done(self.corr);
        }
    }
}

/// HIP_GRAPH callbacks (SDK 1.3+ only; on 1.0 the kind cannot be configured).
pub(crate) struct GraphLaunchTrace {
    slots: UserSlots,
    payload: sys::rocprofiler_callback_tracing_hip_graph_data_t,
}

fn graph_payload(exec_id: u64, handle: u64) -> sys::rocprofiler_callback_tracing_hip_graph_data_t {
    sys::rocprofiler_callback_tracing_hip_graph_data_t {
        size: std::mem::size_of::<sys::rocprofiler_callback_tracing_hip_graph_data_t>() as u64,
        graph_exec_id: sys::rocprofiler_graph_exec_id_t { handle: exec_id },
        graph_exec_value: sys::rocprofiler_address_t::from_value(handle),
    }
}

pub(crate) fn graph_event(
    op: sys::rocprofiler_hip_graph_operation_t,
    corr: u64,
    exec_id: u64,
    handle: u64,
) {
    if !sdk_has_graph() {
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

fn sdk_has_graph() -> bool {
    sdk().version() >= sys::HIP_GRAPH_DOMAIN_VERSION
}

impl GraphLaunchTrace {
    pub fn enter(corr: u64, exec_id: u64, handle: u64) -> Option<GraphLaunchTrace> {
        if !sdk_has_graph() {
            return None;
        }
        let kind = sys::rocprofiler_callback_tracing_kind_t::HIP_GRAPH.0;
        let op = sys::rocprofiler_hip_graph_operation_t::EXEC_LAUNCH.0 as i32;
        let mut t = GraphLaunchTrace {
            slots: select(kind, op),
            payload: graph_payload(exec_id, handle),
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

    pub fn exit(mut self, corr: u64) {
        if self.slots.is_empty() {
            return;
        }
        let kind = sys::rocprofiler_callback_tracing_kind_t::HIP_GRAPH.0;
        let op = sys::rocprofiler_hip_graph_operation_t::EXEC_LAUNCH.0 as i32;
        let p = &mut self.payload as *mut _ as *mut c_void;
        fire(
            &mut self.slots,
            kind,
            op,
            sys::rocprofiler_callback_phase_t::EXIT,
            corr,
            p,
        );
    }
}

/// The HIP_GRAPH buffer record of one launch (1.3+).
#[allow(clippy::too_many_arguments)]
pub(crate) fn graph_launch_record(
    call: &ApiCall,
    agent: u64,
    queue: u64,
    exec_id: u64,
    kernel_dispatch_count: u64,
) {
    if !sdk_has_graph() {
        return;
    }
    let s = sdk();
    let kind = sys::rocprofiler_buffer_tracing_kind_t::HIP_GRAPH;
    let op = sys::rocprofiler_hip_graph_operation_t::EXEC_LAUNCH.0;
    for &i in &call.active_at_enter {
        if let Some(b) = s.contexts()[i].buf_for(kind.0, op as i32) {
            s.push_record(
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

/// At packet write time, on the writing thread: ask every active context that
/// buffers `buffer_kind` for an external correlation id (if it configured the
/// request service for `request_kind`), and capture where the record goes.
/// Returns (context index, buffer, external value).
pub(crate) fn capture_async(
    buffer_kind: u32,
    request_kind: sys::rocprofiler_external_correlation_id_request_kind_t,
    operation: i32,
    corr: u64,
) -> Vec<(usize, u64, u64)> {
    let mut out = Vec::new();
    let thread_id = tid();
    for (i, c) in sdk().contexts().iter().enumerate() {
        if !c.active.load(Ordering::Acquire) {
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
