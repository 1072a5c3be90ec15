//! CPU ops for the simulated workload: the workload's push_marker/pop_marker
//! ops reach the simulator's marker hook on the thread that runs them, and we
//! push/pop them into the tool as kineto pushes a CPU op's correlation id.
//! A marker named by a number uses that number as its id; any other name gets
//! the next free id (from 2^40, in the order names are first pushed in the
//! process). [`snapshot`] gives that mapping to `validate`, which must know
//! which External id a marker name became.
use once_cell::sync::OnceCell;
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

type PushFn = unsafe extern "C" fn(u64, c_int);
type PopFn = unsafe extern "C" fn(c_int);
type MarkerHook = unsafe extern "C" fn(c_int, *const c_char, u64, *mut c_void);
type SetHookFn = unsafe extern "C" fn(Option<MarkerHook>, *mut c_void);

struct ToolCalls {
    push: PushFn,
    pop: PopFn,
}

static TOOL: OnceCell<ToolCalls> = OnceCell::new();
static NAMED: OnceCell<Mutex<HashMap<String, u64>>> = OnceCell::new();
static NEXT_ID: AtomicU64 = AtomicU64::new(1 << 40);

const PUSH: c_int = 1;

unsafe extern "C" fn on_marker(
    phase: c_int,
    name: *const c_char,
    _thread: u64,
    _data: *mut c_void,
) {
    let _ = std::panic::catch_unwind(|| {
        let Some(tool) = TOOL.get() else { return };
        if phase == PUSH {
            let name = if name.is_null() {
                String::new()
            } else {
                // SAFETY: the simulator passes a NUL-terminated name valid for the call.
                unsafe { CStr::from_ptr(name) }
                    .to_string_lossy()
                    .into_owned()
            };
            let id = numeric_id(&name).unwrap_or_else(|| {
                let mut named = NAMED
                    .get_or_init(Default::default)
                    .lock()
                    .unwrap_or_else(|e| e.into_inner());
                *named
                    .entry(name)
                    .or_insert_with(|| NEXT_ID.fetch_add(1, Ordering::Relaxed))
            });
            // SAFETY: the tool's push, plain arguments.
            unsafe { (tool.push)(id, 0) };
        } else {
            // SAFETY: the tool's pop.
            unsafe { (tool.pop)(0) };
        }
    });
}

/// The id of a marker named by a number: that number.
fn numeric_id(name: &str) -> Option<u64> {
    name.parse::<u64>().ok()
}

/// Which External id each marker name became.
#[derive(Clone, Debug, Default)]
pub struct MarkerIds {
    named: HashMap<String, u64>,
}

impl MarkerIds {
    /// The mapping for names given ids in the order they were first pushed
    /// (names that are numbers need no entry).
    pub fn new(named: HashMap<String, u64>) -> MarkerIds {
        MarkerIds { named }
    }

    /// The id pushed for `name`; None for a name never pushed.
    pub fn id(&self, name: &str) -> Option<u64> {
        numeric_id(name).or_else(|| self.named.get(name).copied())
    }
}

/// The ids given so far in this process.
pub fn snapshot() -> MarkerIds {
    let named = NAMED
        .get()
        .map(|m| m.lock().unwrap_or_else(|e| e.into_inner()).clone())
        .unwrap_or_default();
    MarkerIds::new(named)
}

/// Connects the simulator's marker hook to the tool's correlation stack.
pub fn connect(
    simulator: &rocprofiler_sim::host::Simulator,
    tool: &libloading::os::unix::Library,
) -> Result<(), String> {
    // SAFETY: the C ABI of include/kineto_rocm.h.
    let push = unsafe { tool.get::<PushFn>(b"kineto_rocm_push_correlation_id") }
        .map_err(|e| e.to_string())?;
    // SAFETY: as above.
    let pop = unsafe { tool.get::<PopFn>(b"kineto_rocm_pop_correlation_id") }
        .map_err(|e| e.to_string())?;
    let _ = TOOL.set(ToolCalls {
        push: *push,
        pop: *pop,
    });
    // SAFETY: the simulator's driver ABI `rocsim_set_marker_hook`.
    let set_hook = unsafe { simulator.symbol::<SetHookFn>("rocsim_set_marker_hook") }
        .map_err(|e| e.to_string())?;
    // SAFETY: a static hook that lives for the process, no data.
    unsafe { set_hook(Some(on_marker), std::ptr::null_mut()) };
    Ok(())
}
