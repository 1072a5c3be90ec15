//! The dispatch thread trace: the SDK's dispatch thread trace service
//! (experimental/thread-trace/dispatch.h) on a context of its own,
//! configured for every GPU at initialisation and started with each
//! window. Two ways to ask for it:
//! - kernel mode: a submission is traced only on the pass the plan gives
//!   the trace, which the kernel-replay callback publishes (`trace_pass`),
//!   so the trace never shares a pass with counters;
//! - application mode (`KINETO_ROCM_THREAD_TRACE` set and no kernel-replay
//!   plan): every dispatch the kernel filters select is traced while the
//!   trace is asked for, from the start, and switched per profiler window
//!   by `request`/`release` (step mode gives a thread-trace job its own
//!   window, so it never shares one with a counter group).
//!
//! Each shader engine's raw bytes go to
//! `DIR/dispatch-<id>-pass-<p>-se<k>.att` (`KINETO_ROCM_THREAD_TRACE_DIR`,
//! default `kineto-rocm-thread-trace-<pid>`; pass 0 for a dispatch not
//! replayed), named on the kernel event; decoding them is the closed
//! decoder plugin's work.
//!
//! `KINETO_ROCM_THREAD_TRACE` carries the job's settings as
//! `name=value` pairs (target_cu, shader_engine_mask, buffer_size,
//! simd_select, perfcounter_ctrl, serialize_all).
use super::agents;
use super::kernel_filter;
use super::tool::check;
use crate::error::ToolError;
use crate::tool::finish::thread_traces;
use dashmap::DashMap;
use once_cell::sync::{Lazy, OnceCell};
use rocprofiler_sys::*;
use std::cell::Cell;
use std::ffi::c_void;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU8, Ordering};

pub const SETTINGS_ENV: &str = "KINETO_ROCM_THREAD_TRACE";
pub const DIR_ENV: &str = "KINETO_ROCM_THREAD_TRACE_DIR";

static DIR: OnceCell<PathBuf> = OnceCell::new();
/// The pass each traced dispatch was traced on, until its data came.
static TRACED_PASS: Lazy<DashMap<u64, u32>> = Lazy::new(DashMap::new);

/// Application mode: is every selected dispatch traced now? `UNSAID` until
/// `request`, `release` or the service's configuration says, so a choice
/// made before the SDK initialised the tool is kept.
static EVERY_DISPATCH: AtomicU8 = AtomicU8::new(UNSAID);
const UNSAID: u8 = 0;
const ON: u8 = 1;
const OFF: u8 = 2;

thread_local! {
    /// (dispatch id, pass) when this thread's next submission is a trace pass.
    static TRACE_PASS: Cell<Option<(u64, u32)>> = const { Cell::new(None) };
}

/// Kernel mode: this thread's next submission is `(dispatch id, pass)`'s
/// thread-trace pass (`None`: it is not one).
pub fn trace_pass(pass: Option<(u64, u32)>) {
    TRACE_PASS.with(|p| p.set(pass));
}

/// Are the trace's settings set? Without a kernel-replay plan, that asks
/// for application mode's trace.
pub fn wanted_without_replay() -> bool {
    std::env::var_os(SETTINGS_ENV).is_some_and(|v| !v.is_empty())
}

/// Application mode: traces every selected dispatch from now on.
pub fn request() {
    EVERY_DISPATCH.store(ON, Ordering::Relaxed);
}

/// Application mode: traces nothing from now on.
pub fn release() {
    EVERY_DISPATCH.store(OFF, Ordering::Relaxed);
}

/// Application mode, at configuration: traces from the start unless
/// `release` already said otherwise.
pub fn request_unless_released() {
    let _ = EVERY_DISPATCH.compare_exchange(UNSAID, ON, Ordering::Relaxed, Ordering::Relaxed);
}

/// The job's settings as the SDK's parameters.
pub fn parameters(text: &str) -> Result<Vec<rocprofiler_thread_trace_parameter_t>, ToolError> {
    use rocprofiler_sys::thread_trace_parameter as P;
    let mut out = Vec::new();
    for pair in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let Some((name, value)) = pair.split_once('=') else {
            return Err(ToolError::Unavailable(format!(
                "{SETTINGS_ENV}: `{pair}` is not name=value"
            )));
        };
        let type_ = match name.trim() {
            "target_cu" => P::TARGET_CU,
            "shader_engine_mask" => P::SHADER_ENGINE_MASK,
            "buffer_size" => P::BUFFER_SIZE,
            "simd_select" => P::SIMD_SELECT,
            "perfcounter_ctrl" => P::PERFCOUNTERS_CTRL,
            "serialize_all" => P::SERIALIZE_ALL,
            other => {
                return Err(ToolError::Unavailable(format!(
                    "{SETTINGS_ENV}: unknown setting `{other}`"
                )))
            }
        };
        let value = value.trim();
        let parsed = match value.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16),
            None => value.parse(),
        }
        .map_err(|_| {
            ToolError::Unavailable(format!(
                "{SETTINGS_ENV}: `{name}` = `{value}` is not a number"
            ))
        })?;
        out.push(rocprofiler_thread_trace_parameter_t {
            type_,
            value: parsed,
            perfcounter_simd_mask: 0,
        });
    }
    Ok(out)
}

/// A context tracing every GPU (for a kernel-replay plan with a trace
/// pass, or application mode's trace, then asked for from the start);
/// `Ok(None)` when the SDK has no such service.
pub fn configure(sdk: &Sdk) -> Result<Option<rocprofiler_context_id_t>, ToolError> {
    let Some(configure) = dispatch_thread_trace_service() else {
        log::error!("kineto-rocm: this SDK has no dispatch thread trace service; the thread-trace pass collects nothing");
        return Ok(None);
    };
    let mut params = parameters(&std::env::var(SETTINGS_ENV).unwrap_or_default())?;
    let dir = std::env::var_os(DIR_ENV)
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(format!("kineto-rocm-thread-trace-{}", std::process::id()))
        });
    std::fs::create_dir_all(&dir).map_err(|e| {
        ToolError::Unavailable(format!("{DIR_ENV}: cannot create {}: {e}", dir.display()))
    })?;
    let _ = DIR.set(dir);
    let mut context = rocprofiler_context_id_t::default();
    // SAFETY: create_context writes one context id through a valid pointer.
    check("rocprofiler_create_context", unsafe {
        (sdk.create_context)(&mut context)
    })?;
    let gpus = agents::query(sdk).map(|d| d.agents()).unwrap_or_default();
    if gpus.is_empty() {
        log::error!(
            "kineto-rocm: no GPU agent at initialisation; the thread-trace pass collects nothing"
        );
    }
    for agent in gpus {
        // SAFETY: valid context; `params` outlives the call; static callbacks.
        let status = unsafe {
            configure(
                context,
                rocprofiler_agent_id_t { handle: agent },
                params.as_mut_ptr(),
                params.len(),
                Some(on_dispatch),
                Some(on_shader_data),
                std::ptr::null_mut(),
            )
        };
        check(
            "rocprofiler_configure_dispatch_thread_trace_service",
            status,
        )?;
    }
    Ok(Some(context))
}

unsafe extern "C" fn on_dispatch(
    _agent_id: rocprofiler_agent_id_t,
    _queue_id: rocprofiler_queue_id_t,
    _correlation_id: rocprofiler_async_correlation_id_t,
    kernel_id: u64,
    dispatch_id: u64,
    _userdata_config: *mut c_void,
    userdata_shader: *mut rocprofiler_user_data_t,
) -> u32 {
    std::panic::catch_unwind(|| {
        let replay_pass = TRACE_PASS
            .with(Cell::get)
            .filter(|(d, _)| *d == dispatch_id)
            .map(|(_, pass)| pass);
        let pass = match replay_pass {
            Some(pass) => pass,
            None if EVERY_DISPATCH.load(Ordering::Relaxed) == ON
                && kernel_filter::selects(kernel_id, dispatch_id) =>
            {
                0
            }
            None => return thread_trace_control::NONE,
        };
        TRACED_PASS.insert(dispatch_id, pass);
        if !userdata_shader.is_null() {
            // SAFETY: the SDK's slot for this dispatch's shader data.
            unsafe { (*userdata_shader).value = dispatch_id };
        }
        thread_trace_control::START_AND_STOP
    })
    .unwrap_or(thread_trace_control::NONE)
}

unsafe extern "C" fn on_shader_data(
    _agent: rocprofiler_agent_id_t,
    shader_engine_id: i64,
    data: *mut c_void,
    data_size: usize,
    userdata: rocprofiler_user_data_t,
) {
    let _ = std::panic::catch_unwind(|| {
        let (Some(dir), false) = (DIR.get(), data.is_null()) else {
            return;
        };
        // SAFETY: the value on_dispatch wrote.
        let dispatch_id = unsafe { userdata.value };
        let Some(pass) = TRACED_PASS.get(&dispatch_id).map(|p| *p) else {
            return;
        };
        // SAFETY: the SDK passes `data_size` bytes, valid for the call.
        let bytes = unsafe { std::slice::from_raw_parts(data as *const u8, data_size) };
        let file = dir.join(format!(
            "dispatch-{dispatch_id}-pass-{pass}-se{shader_engine_id}.att"
        ));
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&file)
            .and_then(|mut f| f.write_all(bytes));
        match written {
            Ok(()) => thread_traces::add(dispatch_id, pass, file.display().to_string()),
            Err(e) => log::error!(
                "kineto-rocm: thread trace of dispatch {dispatch_id} not written to {}: {e}",
                file.display()
            ),
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_become_parameters_and_bad_ones_are_named() {
        let p = parameters("target_cu=2, shader_engine_mask=0x3,serialize_all=1").unwrap();
        let got: Vec<(u32, u64)> = p.iter().map(|p| (p.type_, p.value)).collect();
        assert_eq!(got, vec![(0, 2), (1, 3), (6, 1)]);
        assert!(parameters("").unwrap().is_empty());
        let e = parameters("target_cu").unwrap_err().to_string();
        assert!(e.contains("`target_cu` is not name=value"), "{e}");
        let e = parameters("colour=3").unwrap_err().to_string();
        assert!(e.contains("unknown setting `colour`"), "{e}");
        let e = parameters("buffer_size=big").unwrap_err().to_string();
        assert!(e.contains("`buffer_size` = `big` is not a number"), "{e}");
    }
}
