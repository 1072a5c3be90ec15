//! Callback tracing of HIP API calls and streams, as the SDK's tracing layer
//! does (the selection and firing other callback kinds share).
//!
//! - HIP API calls (hip/hip.cpp wrappers): a process-monotonic internal
//!   correlation id per call; ENTER and EXIT go to the contexts that were
//!   active at ENTER, with one user_data slot per context kept across both
//!   phases; a buffer record at EXIT.
//! - HIP_STREAM (hip/stream.cpp): SET fires ENTER before and EXIT after every
//!   API function that takes a hipStream_t, with internal correlation id 0;
//!   CREATE and DESTROY fire with phase NONE after the call returns. Stream
//!   ids are handed out in first-seen order.
use super::buffer::{push_record, Rec};
use super::context::contexts;
use super::correlation::{
    corr_api_done, corr_begin, next_corr, pop_corr, push_corr, retirement_mask,
};
use super::os::{now_ns, tid};
use rocprofiler_sys as sys;
use std::ffi::c_void;
use std::sync::atomic::Ordering;

pub(crate) type UserSlots = Vec<(usize, sys::rocprofiler_user_data_t)>;

/// Active contexts with a callback service for (kind, op).
pub(crate) fn select(kind: u32, op: i32) -> UserSlots {
    let mut v = Vec::new();
    for (i, c) in contexts().iter().enumerate() {
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
    let ctxs = contexts();
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
        let corr = next_corr();
        push_corr(corr);
        let start_ns = now_ns();
        let mut active_at_enter = Vec::new();
        let mut buffered = Vec::new();
        let api_kind = sys::rocprofiler_buffer_tracing_kind_t::HIP_RUNTIME_API.0;
        for (i, c) in contexts().iter().enumerate() {
            if !c.active.load(Ordering::Acquire) {
                continue;
            }
            active_at_enter.push(i);
            if c.buf_for(api_kind, op).is_some() {
                buffered.push(i);
            }
        }
        corr_begin(corr, retirement_mask());
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

    /// EXIT with `retval` (a hipError_t); returns the call's end time.
    pub fn exit(mut self, retval: i32) -> u64 {
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
            if let Some(b) = contexts()[i].buf_for(
                sys::rocprofiler_buffer_tracing_kind_t::HIP_RUNTIME_API.0,
                self.op,
            ) {
                push_record(
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
        corr_api_done(self.corr);
        end_ns
    }
}
