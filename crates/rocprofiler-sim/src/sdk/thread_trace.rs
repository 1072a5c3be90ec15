//! The dispatch thread trace service (experimental/thread-trace/dispatch.h;
//! thread_trace/att_core.cpp and att_service.cpp, SDK 1.0 and later).
//!
//! - Configured per agent on a context still being built (else
//!   ERROR_CONTEXT_INVALID; an unknown agent ERROR_AGENT_NOT_FOUND; no
//!   callbacks ERROR_INVALID_ARGUMENT).
//! - At each submission of a kernel packet, each active context's service
//!   for the packet's agent is asked, on the processing thread, whether to
//!   trace it (the dispatch callback, with its user data slot for the
//!   shader data); START_AND_STOP traces it.
//! - Once the dispatch completed, the shader-data callback gets the raw
//!   trace of each shader engine in the configured mask (default 0x1),
//!   then the dispatch's record is written. The bytes are synthetic and
//!   deterministic (a function of the dispatch, its pass and the engine):
//!   the real ones are only decodable by the closed decoder plugin, which
//!   nothing here runs.
use super::context::{contexts, with_building_ctx};
use super::exports::guard;
use super::intercept::DispatchInfo;
use super::kernel_replay::switched_off;
use rocprofiler_sys as sys;
use std::ffi::c_void;
use std::sync::atomic::Ordering;

type Status = sys::rocprofiler_status_t;

/// One configured service.
#[derive(Clone)]
pub(crate) struct TraceService {
    agent: u64,
    shader_engine_mask: u64,
    dispatch: sys::rocprofiler_thread_trace_dispatch_callback_t,
    shader: sys::rocprofiler_thread_trace_shader_data_callback_t,
    userdata: usize,
}

/// The services that trace one dispatch, with their shader user data.
#[derive(Default)]
pub(crate) struct Traced {
    /// Each tracing service and the shader user data its callback wrote.
    traces: Vec<(TraceService, u64)>,
    dispatch_id: u64,
    /// The submission's number among its dispatch's (its replay pass).
    pass: u32,
}

#[no_mangle]
pub extern "C" fn rocprofiler_configure_dispatch_thread_trace_service(
    context_id: sys::rocprofiler_context_id_t,
    agent_id: sys::rocprofiler_agent_id_t,
    parameters: *mut sys::rocprofiler_thread_trace_parameter_t,
    num_parameters: usize,
    dispatch_callback: sys::rocprofiler_thread_trace_dispatch_callback_t,
    shader_callback: sys::rocprofiler_thread_trace_shader_data_callback_t,
    callback_userdata: *mut c_void,
) -> Status {
    guard(|| {
        if dispatch_callback.is_none() || shader_callback.is_none() {
            return Status::ERROR_INVALID_ARGUMENT;
        }
        if !super::agents::agents()
            .list
            .iter()
            .any(|a| a.id.handle == agent_id.handle)
        {
            return Status::ERROR_AGENT_NOT_FOUND;
        }
        let params: &[sys::rocprofiler_thread_trace_parameter_t] =
            if parameters.is_null() || num_parameters == 0 {
                &[]
            } else {
                // SAFETY: the caller passes `num_parameters` parameters.
                unsafe { std::slice::from_raw_parts(parameters, num_parameters) }
            };
        let shader_engine_mask = params
            .iter()
            .rev()
            .find(|p| p.type_ == sys::thread_trace_parameter::SHADER_ENGINE_MASK)
            .map_or(1, |p| p.value);
        let service = TraceService {
            agent: agent_id.handle,
            shader_engine_mask,
            dispatch: dispatch_callback,
            shader: shader_callback,
            userdata: callback_userdata as usize,
        };
        match with_building_ctx(context_id.handle, |c| c.thread_trace.push(service)) {
            Some(()) => Status::SUCCESS,
            None => Status::ERROR_CONTEXT_INVALID,
        }
    })
}

/// Asks every active context's services for the dispatch's agent whether
/// to trace this submission (`pass`: its replay pass, 0 when not replayed).
pub(crate) fn request(info: &DispatchInfo, pass: u32) -> Traced {
    let mut traces = Vec::new();
    for c in contexts() {
        if c.thread_trace.is_empty() || !c.active.load(Ordering::Acquire) || switched_off(c.handle)
        {
            continue;
        }
        for service in c.thread_trace.iter().filter(|s| s.agent == info.agent) {
            let Some(cb) = service.dispatch else { continue };
            let mut shader = sys::rocprofiler_user_data_t::default();
            // SAFETY: the tool's dispatch callback with a valid user-data slot.
            let flags = unsafe {
                cb(
                    sys::rocprofiler_agent_id_t { handle: info.agent },
                    sys::rocprofiler_queue_id_t { handle: info.queue },
                    sys::rocprofiler_async_correlation_id_t {
                        internal: info.corr,
                        external: Default::default(),
                    },
                    info.kernel_id,
                    info.dispatch_id,
                    service.userdata as *mut c_void,
                    &mut shader,
                )
            };
            if flags == sys::thread_trace_control::START_AND_STOP {
                traces.push((service.clone(), shader.value()));
            }
        }
    }
    Traced {
        traces,
        dispatch_id: info.dispatch_id,
        pass,
    }
}

/// The raw bytes of one shader engine's trace of one submission.
pub(crate) fn trace_bytes(dispatch_id: u64, pass: u32, shader_engine: u32) -> Vec<u8> {
    let seed = dispatch_id
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
        .wrapping_add(u64::from(pass) << 32 | u64::from(shader_engine));
    let len = 64 + (seed % 192) as usize;
    let mut out = b"ROCSIMATT".to_vec();
    let mut x = seed | 1;
    while out.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.push(x as u8);
    }
    out
}

impl Traced {
    /// The shader engines traced, by every service, and their byte counts.
    pub(crate) fn bytes(&self) -> u64 {
        self.traces
            .iter()
            .flat_map(|(s, _)| engines(s.shader_engine_mask))
            .map(|se| trace_bytes(self.dispatch_id, self.pass, se).len() as u64)
            .sum()
    }

    /// Hands each service its shader engines' data (the SDK's completion
    /// thread, before the dispatch's record).
    pub(crate) fn deliver(self) {
        for (service, shader) in self.traces {
            let Some(cb) = service.shader else { continue };
            for se in engines(service.shader_engine_mask) {
                let mut data = trace_bytes(self.dispatch_id, self.pass, se);
                // SAFETY: the tool's shader-data callback; `data` outlives the call.
                unsafe {
                    cb(
                        sys::rocprofiler_agent_id_t {
                            handle: service.agent,
                        },
                        i64::from(se),
                        data.as_mut_ptr() as *mut c_void,
                        data.len(),
                        sys::rocprofiler_user_data_t::from_value(shader),
                    )
                };
            }
        }
    }
}

fn engines(mask: u64) -> impl Iterator<Item = u32> {
    (0..64).filter(move |se| mask & (1 << se) != 0)
}
