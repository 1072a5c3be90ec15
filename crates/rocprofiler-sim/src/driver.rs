//! The C driver ABI: how a host (Rust tests, C++ ctest, the CLI) drives the
//! ONE simulator that lives in the loaded librocprofiler_sim.so.
//!
//! ```c
//! int   rocsim_run_workload(const char* json, size_t len, const char* options_json, char** error_out);
//! int   rocsim_run_workload_file(const char* path, const char* options_json, char** error_out);
//! int   rocsim_wait_idle(uint64_t timeout_ns);
//! int   rocsim_shutdown(void);
//! char* rocsim_ground_truth_json(void);
//! void  rocsim_free_string(char*);
//! void  rocsim_set_marker_hook(void (*hook)(int phase, const char* name, uint64_t tid, void* data), void* data);
//! ```
//! Return codes: 0 success; -1 bad input (error_out says why); -2 the
//! process was initialized differently (SDK version or device count); -3
//! finalized; -4 timeout; -5 internal error (a panic, caught).
use crate::options::RunOptions;
use crate::sdk::state::{lock, sdk, Agents};
use crate::truth::GroundTruth;
use crate::workload::{SdkVersion, Workload};
use rocprofiler_sys as sys;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::{Mutex, OnceLock};

pub const ROCSIM_OK: c_int = 0;
pub const ROCSIM_BAD_INPUT: c_int = -1;
pub const ROCSIM_MISMATCH: c_int = -2;
pub const ROCSIM_FINALIZED: c_int = -3;
pub const ROCSIM_TIMEOUT: c_int = -4;
pub const ROCSIM_INTERNAL: c_int = -5;

fn truth() -> &'static Mutex<GroundTruth> {
    static T: OnceLock<Mutex<GroundTruth>> = OnceLock::new();
    T.get_or_init(|| Mutex::new(GroundTruth::default()))
}

fn run_lock() -> &'static Mutex<()> {
    static L: OnceLock<Mutex<()>> = OnceLock::new();
    L.get_or_init(|| Mutex::new(()))
}

type MarkerHook = unsafe extern "C" fn(c_int, *const c_char, u64, *mut c_void);

fn marker_hook() -> &'static Mutex<Option<(MarkerHook, usize)>> {
    static H: OnceLock<Mutex<Option<(MarkerHook, usize)>>> = OnceLock::new();
    H.get_or_init(|| Mutex::new(None))
}

/// Called by the runtime for push_marker (1) / pop_marker (2) ops.
pub(crate) fn call_marker_hook(phase: c_int, name: &str) {
    let hook = *lock(marker_hook());
    if let Some((f, data)) = hook {
        let c = CString::new(name.replace('\0', "?")).unwrap_or_default();
        // SAFETY: the host's hook with a NUL-terminated name valid for the call.
        unsafe {
            f(
                phase,
                c.as_ptr(),
                crate::sdk::state::tid(),
                data as *mut c_void,
            )
        };
    }
}

fn set_error(error_out: *mut *mut c_char, msg: &str) {
    if error_out.is_null() {
        return;
    }
    let c = CString::new(msg.replace('\0', "?")).unwrap_or_default();
    // SAFETY: non-null, the caller's char*; freed with rocsim_free_string.
    unsafe { *error_out = c.into_raw() };
}

/// The agents the SDK reports: a CPU agent (node 0) and one GPU per device.
fn make_agents(devices: u32) -> Agents {
    let leak = |s: String| -> *const c_char { CString::new(s).unwrap_or_default().into_raw() };
    let mut list = Vec::new();
    for node in 0..=devices {
        let gpu = node > 0;
        // SAFETY: rocprofiler_agent_v0_t is plain data (integers and pointers);
        // all-zero is a valid value that the fields below complete.
        let mut a: sys::rocprofiler_agent_v0_t = unsafe { std::mem::zeroed() };
        a.size = std::mem::size_of::<sys::rocprofiler_agent_v0_t>() as u64;
        a.id = sys::rocprofiler_agent_id_t {
            handle: crate::runtime::agent_handle(node),
        };
        a.type_ = if gpu {
            sys::rocprofiler_agent_type_t::GPU
        } else {
            sys::rocprofiler_agent_type_t::CPU
        };
        a.node_id = node;
        a.logical_node_id = node as i32;
        a.logical_node_type_id = if gpu { node as i32 - 1 } else { 0 };
        a.wave_front_size = if gpu { 64 } else { 0 };
        a.cu_count = if gpu { 304 } else { 0 };
        a.simd_per_cu = if gpu { 4 } else { 0 };
        a.cpu_cores_count = if gpu { 0 } else { 16 };
        a.gfx_target_version = if gpu { 90402 } else { 0 };
        a.vendor_id = 0x1002;
        a.device_id = if gpu { 0x74a1 } else { 0 };
        a.location_id = node * 0x100;
        a.name = leak(if gpu {
            "gfx942".into()
        } else {
            "rocsim-cpu".into()
        });
        a.vendor_name = leak("AMD".into());
        a.product_name = leak(if gpu {
            format!("rocprofiler-sim GPU {}", node - 1)
        } else {
            "rocprofiler-sim CPU".into()
        });
        a.model_name = leak(if gpu { "sim".into() } else { String::new() });
        list.push(a);
    }
    Agents { list }
}

/// GPUs a process gets unless its first workload needs more:
/// ROCSIM_DEVICES (default 4).
pub(crate) fn configured_devices() -> u32 {
    std::env::var("ROCSIM_DEVICES")
        .ok()
        .and_then(|v| v.parse::<u32>().ok())
        .unwrap_or(4)
        .clamp(1, 64)
}

/// First use of the runtime: fix the SDK version and agents, find tools.
fn ensure_initialized(w: &Workload) -> Result<(), (c_int, String)> {
    let s = sdk();
    if s.fini_status.load(Ordering::Acquire) != 0 {
        return Err((ROCSIM_FINALIZED, "the simulator was shut down".into()));
    }
    if s.init_status.load(Ordering::Acquire) == 0 {
        s.version.store(w.sdk_version.encoded(), Ordering::Release);
    }
    let have = SdkVersion::from_encoded(s.version());
    if have != w.sdk_version {
        return Err((
            ROCSIM_MISMATCH,
            format!(
                "this process already runs simulated SDK {have}; the workload asks for {} (one SDK per process: use another process)",
                w.sdk_version
            ),
        ));
    }
    // A process has a fixed set of agents: ROCSIM_DEVICES (default 4) GPUs,
    // or more if the first workload needs them.
    let agents = s
        .agents
        .get_or_init(|| make_agents(configured_devices().max(w.devices)));
    if agents.list.len() < w.devices as usize + 1 {
        return Err((
            ROCSIM_MISMATCH,
            format!(
                "this process was initialized with {} device(s); the workload asks for {}",
                agents.list.len() - 1,
                w.devices
            ),
        ));
    }
    s.initialize(None);
    Ok(())
}

fn run_text(text: &str, options_json: *const c_char) -> Result<(), (c_int, String)> {
    let opts: RunOptions = if options_json.is_null() {
        RunOptions::default()
    } else {
        // SAFETY: non-null, a NUL-terminated string from the host.
        let o = unsafe { CStr::from_ptr(options_json) }.to_string_lossy();
        if o.trim().is_empty() {
            RunOptions::default()
        } else {
            let de = &mut serde_json::Deserializer::from_str(&o);
            serde_path_to_error::deserialize(de).map_err(|e| {
                (
                    ROCSIM_BAD_INPUT,
                    format!("run options: at `{}`: {}", e.path(), e.inner()),
                )
            })?
        }
    };
    let name = opts
        .source_name
        .clone()
        .unwrap_or_else(|| "<inline workload>".into());
    let w = Workload::parse(text, &name).map_err(|e| (ROCSIM_BAD_INPUT, e.to_string()))?;
    let _g = lock(run_lock());
    ensure_initialized(&w)?;
    let mut opts = opts;
    opts.source_name = Some(name);
    let rt = crate::runtime::run(&w, &opts);
    let mut t = lock(truth());
    t.sdk_version = sdk().version();
    t.runs.push(rt);
    Ok(())
}

fn finish(
    r: std::thread::Result<Result<(), (c_int, String)>>,
    error_out: *mut *mut c_char,
) -> c_int {
    match r {
        Ok(Ok(())) => ROCSIM_OK,
        Ok(Err((code, msg))) => {
            set_error(error_out, &msg);
            code
        }
        Err(_) => {
            set_error(
                error_out,
                "internal error in the simulator (a panic was caught)",
            );
            ROCSIM_INTERNAL
        }
    }
}

/// Runs a workload given as JSON text; returns when every application thread
/// finished (completions may still be in flight).
/// # Safety
/// `json` points to `len` readable bytes; `options_json` is null or a
/// NUL-terminated string; `error_out` is null or a writable `char*` slot.
#[no_mangle]
pub unsafe extern "C" fn rocsim_run_workload(
    json: *const c_char,
    len: usize,
    options_json: *const c_char,
    error_out: *mut *mut c_char,
) -> c_int {
    let r = catch_unwind(AssertUnwindSafe(|| {
        if json.is_null() {
            return Err((ROCSIM_BAD_INPUT, "workload text is null".into()));
        }
        // SAFETY: the host passes `len` bytes at `json`.
        let bytes = unsafe { std::slice::from_raw_parts(json as *const u8, len) };
        let text = std::str::from_utf8(bytes)
            .map_err(|e| (ROCSIM_BAD_INPUT, format!("workload is not UTF-8: {e}")))?;
        run_text(text, options_json)
    }));
    finish(r, error_out)
}

/// Runs a workload file; errors name the file.
/// # Safety
/// `path` and `options_json` are null or NUL-terminated strings; `error_out`
/// is null or a writable `char*` slot.
#[no_mangle]
pub unsafe extern "C" fn rocsim_run_workload_file(
    path: *const c_char,
    options_json: *const c_char,
    error_out: *mut *mut c_char,
) -> c_int {
    let r = catch_unwind(AssertUnwindSafe(|| {
        if path.is_null() {
            return Err((ROCSIM_BAD_INPUT, "workload path is null".into()));
        }
        // SAFETY: non-null, a NUL-terminated path from the host.
        let p = unsafe { CStr::from_ptr(path) }
            .to_string_lossy()
            .into_owned();
        let text = std::fs::read_to_string(&p).map_err(|e| {
            (
                ROCSIM_BAD_INPUT,
                format!("workload {p}: cannot read the file: {e}"),
            )
        })?;
        let mut opts: serde_json::Value = if options_json.is_null() {
            serde_json::json!({})
        } else {
            // SAFETY: non-null, a NUL-terminated string from the host.
            let o = unsafe { CStr::from_ptr(options_json) }.to_string_lossy();
            if o.trim().is_empty() {
                serde_json::json!({})
            } else {
                serde_json::from_str(&o)
                    .map_err(|e| (ROCSIM_BAD_INPUT, format!("run options: {e}")))?
            }
        };
        if let Some(m) = opts.as_object_mut() {
            m.entry("source_name")
                .or_insert(serde_json::Value::String(p));
        }
        let o = CString::new(opts.to_string()).unwrap_or_default();
        run_text(&text, o.as_ptr())
    }));
    finish(r, error_out)
}

/// Waits until every completion was delivered and every buffer flushed.
#[no_mangle]
pub extern "C" fn rocsim_wait_idle(timeout_ns: u64) -> c_int {
    catch_unwind(|| {
        if sdk().wait_idle(timeout_ns) {
            ROCSIM_OK
        } else {
            ROCSIM_TIMEOUT
        }
    })
    .unwrap_or(ROCSIM_INTERNAL)
}

/// Driver shutdown: drains in-flight work, calls every tool's finalize.
#[no_mangle]
pub extern "C" fn rocsim_shutdown() -> c_int {
    catch_unwind(|| {
        let _g = lock(run_lock());
        sdk().finalize(30_000_000_000);
        ROCSIM_OK
    })
    .unwrap_or(ROCSIM_INTERNAL)
}

/// Every run's ground truth as JSON (free with rocsim_free_string).
#[no_mangle]
pub extern "C" fn rocsim_ground_truth_json() -> *mut c_char {
    catch_unwind(|| {
        let t = lock(truth());
        let s = serde_json::to_string(&*t).unwrap_or_else(|_| "{}".into());
        CString::new(s).unwrap_or_default().into_raw()
    })
    .unwrap_or(std::ptr::null_mut())
}

/// Frees a string this library returned.
/// # Safety
/// `s` is null or a string this library returned, freed once.
#[no_mangle]
pub unsafe extern "C" fn rocsim_free_string(s: *mut c_char) {
    if s.is_null() {
        return;
    }
    let _ = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: `s` came from CString::into_raw in this library.
        drop(unsafe { CString::from_raw(s) });
    }));
}

/// Installs (or with null, removes) the CPU-op marker hook.
#[no_mangle]
pub extern "C" fn rocsim_set_marker_hook(hook: Option<MarkerHook>, data: *mut c_void) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        *lock(marker_hook()) = hook.map(|h| (h, data as usize));
    }));
}
