//! Registration (registration.cpp): the simulated SDK version, tool
//! discovery and configuration, init status 0 (not initialized) / -1 (the
//! tools' initialize running) / 1 (done), and finalization.
//!
//! - `rocprofiler_force_configure` returns ERROR_CONFIGURATION_LOCKED
//!   unless the status is 0, otherwise records the function and initializes
//!   at once.
//! - `initialize()` registers `std::atexit(finalize ...)` (registration.cpp
//!   line 686, SDK-1.0) before configuring the tools, so a process that
//!   exits without shutting the runtime down still runs the tools'
//!   finalizers and flushes every buffer.
//! - `finalize()` runs once: the clients' finalizers, then the buffers are
//!   flushed and contexts deactivated.
use super::buffer::flush_all;
use super::completion::wait_delivered;
use super::context::{contexts, freeze};
use super::correlation::set_retirement_enabled;
use super::os::lock;
use rocprofiler_sys as sys;
use std::ffi::{c_char, c_void, CString};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// How long finalization at process exit waits for device work in flight,
/// so that records of work that already ran reach the buffers it flushes.
const EXIT_DRAIN_NS: u64 = 2_000_000_000;

pub(crate) struct ToolClient {
    pub initialize: sys::rocprofiler_tool_initialize_t,
    pub finalize: sys::rocprofiler_tool_finalize_t,
    pub tool_data: usize,
    pub finalized: AtomicBool,
    pub handle: u32,
}

pub(crate) struct Registration {
    pub version: AtomicU32,
    pub init_status: AtomicI32,
    pub fini_status: AtomicI32,
    lifecycle: Mutex<()>,
    clients: Mutex<Vec<Arc<ToolClient>>>,
}

pub(crate) fn registration() -> &'static Registration {
    static R: OnceLock<Registration> = OnceLock::new();
    R.get_or_init(|| Registration {
        version: AtomicU32::new(default_version()),
        init_status: AtomicI32::new(0),
        fini_status: AtomicI32::new(0),
        lifecycle: Mutex::new(()),
        clients: Mutex::new(Vec::new()),
    })
}

/// ROCSIM_SDK_VERSION ("1.0.0") if set and valid, else 1.3.0.
fn default_version() -> u32 {
    std::env::var("ROCSIM_SDK_VERSION")
        .ok()
        .and_then(|v| v.parse::<crate::workload::SdkVersion>().ok())
        .map(|v| v.encoded())
        .unwrap_or(10300)
}

/// The simulated SDK version, encoded.
pub(crate) fn version() -> u32 {
    registration().version.load(Ordering::Acquire)
}

/// Does this version have the HIP_GRAPH domain (1.3.0+)?
pub(crate) fn has_hip_graph() -> bool {
    version() >= sys::HIP_GRAPH_DOMAIN_VERSION
}

/// One past the last callback tracing kind this version has.
pub(crate) fn callback_kind_last() -> u32 {
    let g = sys::rocprofiler_callback_tracing_kind_t::HIP_GRAPH.0;
    if has_hip_graph() {
        g + 1
    } else {
        g
    }
}

/// One past the last buffer tracing kind this version has.
pub(crate) fn buffer_kind_last() -> u32 {
    let g = sys::rocprofiler_buffer_tracing_kind_t::HIP_GRAPH.0;
    if has_hip_graph() {
        g + 1
    } else {
        g
    }
}

pub(crate) fn init_status() -> i32 {
    registration().init_status.load(Ordering::Acquire)
}

pub(crate) fn fini_status() -> i32 {
    registration().fini_status.load(Ordering::Acquire)
}

/// Configuration is open only while the tools' initialize runs.
pub(crate) fn configuration_open() -> bool {
    init_status() == -1
}

/// Waits until every completion was delivered, then flushes every buffer.
/// False on timeout.
pub(crate) fn wait_idle(timeout_ns: u64) -> bool {
    let ok = wait_delivered(timeout_ns);
    if ok {
        flush_all();
    }
    ok
}

extern "C" fn finalize_at_exit() {
    let _ = std::panic::catch_unwind(|| finalize(EXIT_DRAIN_NS));
}

/// The runtime's first use: find tools, configure and initialize them,
/// then lock configuration. Idempotent.
pub(crate) fn initialize(forced: Option<sys::rocprofiler_configure_func_t>) {
    let r = registration();
    let _g = lock(&r.lifecycle);
    if r.init_status.load(Ordering::Acquire) != 0 {
        return;
    }
    r.init_status.store(-1, Ordering::Release);
    // SAFETY: registers a plain extern "C" function with no arguments.
    unsafe { libc::atexit(finalize_at_exit) };
    let mut configure_fns: Vec<usize> = Vec::new();
    if let Some(Some(f)) = forced {
        configure_fns.push(f as usize);
    }
    for f in super::discovery::discover() {
        if !configure_fns.contains(&f) {
            configure_fns.push(f);
        }
    }
    let runtime_version = CString::new(format!(
        "rocprofiler-sim {}",
        crate::workload::SdkVersion::from_encoded(version())
    ))
    .unwrap_or_default();
    let mut results = Vec::new();
    for (priority, f) in configure_fns.iter().enumerate() {
        // SAFETY: `f` is the address of a `rocprofiler_configure` exported
        // by a loaded object (or handed to rocprofiler_force_configure).
        let configure: unsafe extern "C" fn(
            u32,
            *const c_char,
            u32,
            *mut sys::rocprofiler_client_id_t,
        )
            -> *mut sys::rocprofiler_tool_configure_result_t =
            unsafe { std::mem::transmute::<usize, _>(*f) };
        let mut client = sys::rocprofiler_client_id_t {
            size: std::mem::size_of::<sys::rocprofiler_client_id_t>(),
            name: std::ptr::null(),
            handle: priority as u32,
        };
        // SAFETY: a tool's configure with valid arguments; `client` lives
        // across the call.
        let result = unsafe {
            configure(
                version(),
                runtime_version.as_ptr(),
                priority as u32,
                &mut client,
            )
        };
        if result.is_null() {
            continue;
        }
        // SAFETY: a non-null result points to the tool's configure result,
        // which the SDK contract keeps alive until finalization.
        let res = unsafe { &*result };
        results.push(Arc::new(ToolClient {
            initialize: res.initialize,
            finalize: res.finalize,
            tool_data: res.tool_data as usize,
            finalized: AtomicBool::new(false),
            handle: priority as u32,
        }));
    }
    *lock(&r.clients) = results.clone();
    for c in &results {
        if let Some(init) = c.initialize {
            // SAFETY: the tool's initialize with our finalize function and
            // its own tool_data.
            let rc = unsafe { init(Some(client_finalize), c.tool_data as *mut c_void) };
            if rc != 0 {
                c.finalized.store(true, Ordering::Release);
            }
        }
    }
    freeze();
    let retire = contexts().iter().any(|c| {
        c.buf[sys::rocprofiler_buffer_tracing_kind_t::CORRELATION_ID_RETIREMENT.0 as usize]
            .is_some()
    });
    set_retirement_enabled(retire);
    r.init_status.store(1, Ordering::Release);
}

/// Finalization, once: deliver what is in flight (waiting at most
/// `timeout_ns`), call the tools' finalize, flush every buffer, deactivate
/// every context.
pub(crate) fn finalize(timeout_ns: u64) {
    let r = registration();
    let _g = lock(&r.lifecycle);
    if r.fini_status.load(Ordering::Acquire) != 0 {
        return;
    }
    r.fini_status.store(-1, Ordering::Release);
    wait_idle(timeout_ns);
    if r.init_status.load(Ordering::Acquire) > 0 {
        let clients = lock(&r.clients).clone();
        for c in clients {
            finalize_client(&c);
        }
    }
    flush_all();
    for c in contexts() {
        c.active.store(false, Ordering::Release);
    }
    r.fini_status.store(1, Ordering::Release);
}

extern "C" fn client_finalize(client: sys::rocprofiler_client_id_t) {
    let _ = std::panic::catch_unwind(|| {
        let clients = lock(&registration().clients).clone();
        if let Some(c) = clients.iter().find(|c| c.handle == client.handle) {
            finalize_client(c);
        }
    });
}

fn finalize_client(c: &ToolClient) {
    if c.finalized.swap(true, Ordering::AcqRel) {
        return;
    }
    if let Some(fin) = c.finalize {
        // SAFETY: the tool's finalize with its own tool_data, called once.
        unsafe { fin(c.tool_data as *mut c_void) };
    }
}
