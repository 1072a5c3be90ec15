//! A tool that lives in the executable: the SDK finds the
//! `rocprofiler_configure` the program exports (registration.cpp
//! `find_clients`: the weak symbol / dlsym(RTLD_DEFAULT)), and when the
//! program exits without shutting the runtime down, the SDK's atexit
//! finalization runs the tool's finalizer and flushes its buffers.
//! build.rs exports the symbol from this test executable.
use rocprofiler_sim::host::Simulator;
use rocprofiler_sim::options::RunOptions;
use rocprofiler_sys as sys;
use std::ffi::{c_char, c_void};
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

static API_CALLBACKS: AtomicU64 = AtomicU64::new(0);
static DISPATCHES: AtomicU64 = AtomicU64::new(0);
static SDK: OnceLock<sys::Sdk> = OnceLock::new();
const EXIT_FILE: &str = "ROCSIM_EXE_TOOL_EXIT_FILE";

fn note(line: &str) {
    if let Ok(path) = std::env::var(EXIT_FILE) {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .unwrap();
        writeln!(f, "{line}").unwrap();
    }
}

unsafe extern "C" fn api_cb(
    _r: sys::rocprofiler_callback_tracing_record_t,
    _u: *mut sys::rocprofiler_user_data_t,
    _d: *mut c_void,
) {
    API_CALLBACKS.fetch_add(1, Ordering::Relaxed);
}

unsafe extern "C" fn buffer_cb(
    _c: sys::rocprofiler_context_id_t,
    _b: sys::rocprofiler_buffer_id_t,
    headers: *mut *mut sys::rocprofiler_record_header_t,
    n: usize,
    _d: *mut c_void,
    _drops: u64,
) {
    // SAFETY: the SDK passes `n` valid headers.
    let headers = unsafe { std::slice::from_raw_parts(headers, n) };
    let k = headers
        .iter()
        .filter(|h| {
            // SAFETY: each header is valid for the callback.
            let kind = unsafe { (***h).kind };
            kind == sys::rocprofiler_buffer_tracing_kind_t::KERNEL_DISPATCH.0
        })
        .count() as u64;
    DISPATCHES.fetch_add(k, Ordering::Relaxed);
    note(&format!("records {k}"));
}

unsafe extern "C" fn initialize(_f: sys::rocprofiler_client_finalize_t, _d: *mut c_void) -> i32 {
    let sdk = SDK.get_or_init(|| sys::Sdk::resolve().expect("the simulator's entry points"));
    let mut ctx = sys::rocprofiler_context_id_t::default();
    let mut buffer = sys::rocprofiler_buffer_id_t::default();
    // SAFETY: SDK entry points with valid arguments, inside initialize.
    unsafe {
        assert!((sdk.create_context)(&mut ctx).is_success());
        assert!((sdk.configure_callback_tracing_service)(
            ctx,
            sys::rocprofiler_callback_tracing_kind_t::HIP_RUNTIME_API,
            std::ptr::null(),
            0,
            Some(api_cb),
            std::ptr::null_mut(),
        )
        .is_success());
        // A watermark the run never reaches: records wait for a flush.
        assert!((sdk.create_buffer)(
            ctx,
            1 << 20,
            1 << 20,
            sys::rocprofiler_buffer_policy_t::LOSSLESS,
            Some(buffer_cb),
            std::ptr::null_mut(),
            &mut buffer,
        )
        .is_success());
        assert!((sdk.configure_buffer_tracing_service)(
            ctx,
            sys::rocprofiler_buffer_tracing_kind_t::KERNEL_DISPATCH,
            std::ptr::null(),
            0,
            buffer,
        )
        .is_success());
        assert!((sdk.start_context)(ctx).is_success());
    }
    0
}

unsafe extern "C" fn finalize(_d: *mut c_void) {
    note("finalized");
}

struct SyncResult(sys::rocprofiler_tool_configure_result_t);
// SAFETY: immutable after construction; tool_data is null.
unsafe impl Sync for SyncResult {}

static RESULT: SyncResult = SyncResult(sys::rocprofiler_tool_configure_result_t {
    size: std::mem::size_of::<sys::rocprofiler_tool_configure_result_t>(),
    initialize: Some(initialize),
    finalize: Some(finalize),
    tool_data: std::ptr::null_mut(),
});

#[no_mangle]
pub extern "C" fn rocprofiler_configure(
    _version: u32,
    _runtime_version: *const c_char,
    _priority: u32,
    _client: *mut sys::rocprofiler_client_id_t,
) -> *mut sys::rocprofiler_tool_configure_result_t {
    &RESULT.0 as *const _ as *mut _
}

const WORKLOAD: &str = r#"{"sdk_version": "1.3.0",
    "durations": {"default_kernel_ns": 2000000},
    "graphs": [{"name": "g", "nodes": [{"kernel": "exe_a"}, {"kernel": "exe_b", "deps": [0]}]}],
    "threads": [{"ops": [{"create_stream": {"name": "s"}},
        {"instantiate": {"graph": "g", "as": "e"}},
        {"launch": {"exec": "e", "stream": "s", "times": 5}}]}]}"#;

#[test]
fn a_tool_only_in_the_executable_is_configured() {
    if std::env::var(EXIT_FILE).is_ok() {
        return;
    }
    let sim = Simulator::load_default().expect("load librocprofiler_sim.so");
    sim.run_workload(WORKLOAD, &RunOptions::default()).unwrap();
    sim.wait_idle(std::time::Duration::from_secs(30)).unwrap();
    assert!(API_CALLBACKS.load(Ordering::Relaxed) > 0);
    assert_eq!(DISPATCHES.load(Ordering::Relaxed), 10);
    std::mem::forget(sim);
}

/// In the child process: run and exit at once, without shutdown.
#[test]
fn exit_child() {
    if std::env::var(EXIT_FILE).is_err() {
        return;
    }
    let sim = Simulator::load_default().expect("load librocprofiler_sim.so");
    sim.run_workload(WORKLOAD, &RunOptions::default()).unwrap();
    std::process::exit(0);
}

#[test]
fn buffers_reach_the_tool_at_exit() {
    if std::env::var(EXIT_FILE).is_ok() {
        return;
    }
    let file = std::env::temp_dir().join(format!("rocsim-exe-tool-exit-{}", std::process::id()));
    let _ = std::fs::remove_file(&file);
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "exit_child", "--test-threads=1"])
        .env(EXIT_FILE, &file)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let log = std::fs::read_to_string(&file).unwrap();
    let _ = std::fs::remove_file(&file);
    let records: u64 = log
        .lines()
        .filter_map(|l| l.strip_prefix("records "))
        .map(|n| n.parse::<u64>().unwrap())
        .sum();
    assert_eq!(records, 10, "every record delivered at exit:\n{log}");
    assert!(log.lines().any(|l| l == "finalized"), "{log}");
}
