//! Loading the simulator into a host process.
//!
//! A host never runs the model in-process from this rlib: it dlopens
//! librocprofiler_sim.so with RTLD_NOW | RTLD_GLOBAL (so a tool that resolves
//! SDK symbols through the process finds the simulator's), and every call
//! goes through the .so's C driver ABI. Load the simulator FIRST, then the
//! tool (or name the tool in ROCP_TOOL_LIBRARIES); tools are discovered when
//! the first workload runs.
use crate::options::RunOptions;
use crate::truth::GroundTruth;
use libloading::os::unix::{Library, Symbol, RTLD_GLOBAL, RTLD_NOW};
use std::ffi::{c_char, c_int, CStr, CString};
use std::path::{Path, PathBuf};

/// The file name of the simulator library.
pub const LIBRARY_FILE: &str = "librocprofiler_sim.so";

#[derive(Debug)]
pub enum HostError {
    Load(String),
    /// A driver call failed: its return code and message.
    Driver(i32, String),
}

impl std::fmt::Display for HostError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HostError::Load(m) => write!(f, "loading the simulator: {m}"),
            HostError::Driver(code, m) => write!(f, "simulator error {code}: {m}"),
        }
    }
}

impl std::error::Error for HostError {}

type RunFn = unsafe extern "C" fn(*const c_char, usize, *const c_char, *mut *mut c_char) -> c_int;
type RunFileFn = unsafe extern "C" fn(*const c_char, *const c_char, *mut *mut c_char) -> c_int;
type WaitFn = unsafe extern "C" fn(u64) -> c_int;
type ShutdownFn = unsafe extern "C" fn() -> c_int;
type TruthFn = unsafe extern "C" fn() -> *mut c_char;
type FreeFn = unsafe extern "C" fn(*mut c_char);

/// The loaded simulator.
pub struct Simulator {
    lib: Library,
    path: PathBuf,
}

impl Simulator {
    /// dlopens the simulator with RTLD_NOW | RTLD_GLOBAL.
    pub fn load(path: impl AsRef<Path>) -> Result<Simulator, HostError> {
        let path = path.as_ref().to_path_buf();
        // SAFETY: loading the simulator runs no initializers beyond Rust's
        // std setup; RTLD_GLOBAL exports its SDK symbols to later libraries.
        let lib = unsafe { Library::open(Some(&path), RTLD_NOW | RTLD_GLOBAL) }
            .map_err(|e| HostError::Load(format!("{}: {e}", path.display())))?;
        Ok(Simulator { lib, path })
    }

    /// Finds librocprofiler_sim.so next to the running binary and loads it.
    pub fn load_default() -> Result<Simulator, HostError> {
        let p = locate_library(LIBRARY_FILE).ok_or_else(|| {
            HostError::Load(format!(
                "{LIBRARY_FILE} not found next to {:?} or in its parent (build the rocprofiler-sim crate)",
                std::env::current_exe().ok()
            ))
        })?;
        Simulator::load(p)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn sym<T>(&self, name: &[u8]) -> Result<Symbol<T>, HostError> {
        // SAFETY: the symbol's type is declared by the driver ABI (driver.rs).
        unsafe { self.lib.get::<T>(name) }.map_err(|e| HostError::Load(e.to_string()))
    }

    fn take_error(&self, code: c_int, err: *mut c_char) -> HostError {
        let msg = if err.is_null() {
            String::new()
        } else {
            // SAFETY: a string the library allocated; freed right after.
            let s = unsafe { CStr::from_ptr(err) }
                .to_string_lossy()
                .into_owned();
            if let Ok(free) = self.sym::<FreeFn>(b"rocsim_free_string\0") {
                // SAFETY: frees the library's own string once.
                unsafe { free(err) };
            }
            s
        };
        HostError::Driver(code, msg)
    }

    /// Runs a workload (JSON text) to completion of its threads.
    pub fn run_workload(&self, json: &str, options: &RunOptions) -> Result<(), HostError> {
        let f = self.sym::<RunFn>(b"rocsim_run_workload\0")?;
        let o = CString::new(serde_json::to_string(options).expect("options serialize"))
            .expect("no NUL");
        let mut err: *mut c_char = std::ptr::null_mut();
        // SAFETY: valid text pointer/length, NUL-terminated options, error slot.
        let rc = unsafe {
            f(
                json.as_ptr() as *const c_char,
                json.len(),
                o.as_ptr(),
                &mut err,
            )
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(self.take_error(rc, err))
        }
    }

    /// Runs a workload file; its errors name the file.
    pub fn run_workload_file(&self, path: &Path, options: &RunOptions) -> Result<(), HostError> {
        let f = self.sym::<RunFileFn>(b"rocsim_run_workload_file\0")?;
        let p =
            CString::new(path.display().to_string()).map_err(|e| HostError::Load(e.to_string()))?;
        let mut v = serde_json::to_value(options).expect("options serialize");
        if options.source_name.is_none() {
            if let Some(m) = v.as_object_mut() {
                m.remove("source_name");
            }
        }
        let o = CString::new(v.to_string()).expect("no NUL");
        let mut err: *mut c_char = std::ptr::null_mut();
        // SAFETY: NUL-terminated path and options, and an error slot.
        let rc = unsafe { f(p.as_ptr(), o.as_ptr(), &mut err) };
        if rc == 0 {
            Ok(())
        } else {
            Err(self.take_error(rc, err))
        }
    }

    /// Waits until every completion was delivered and buffers flushed.
    pub fn wait_idle(&self, timeout: std::time::Duration) -> Result<(), HostError> {
        let f = self.sym::<WaitFn>(b"rocsim_wait_idle\0")?;
        // SAFETY: plain integer argument.
        match unsafe { f(timeout.as_nanos().min(u64::MAX as u128) as u64) } {
            0 => Ok(()),
            rc => Err(HostError::Driver(
                rc,
                "timed out waiting for completions".into(),
            )),
        }
    }

    /// roctxRangePushA(message), as an application calls libroctx64: the
    /// level the range starts at.
    pub fn roctx_range_push(&self, message: &str) -> Result<i32, HostError> {
        let f = self.sym::<unsafe extern "C" fn(*const c_char) -> c_int>(b"roctxRangePushA\0")?;
        let m = CString::new(message).map_err(|e| HostError::Load(e.to_string()))?;
        // SAFETY: a NUL-terminated message valid for the call.
        Ok(unsafe { f(m.as_ptr()) })
    }

    /// roctxRangePop(): the level of the range it closed, -1 with none open.
    pub fn roctx_range_pop(&self) -> Result<i32, HostError> {
        let f = self.sym::<unsafe extern "C" fn() -> c_int>(b"roctxRangePop\0")?;
        // SAFETY: no arguments.
        Ok(unsafe { f() })
    }

    /// Driver shutdown: calls the tools' finalize.
    pub fn shutdown(&self) -> Result<(), HostError> {
        let f = self.sym::<ShutdownFn>(b"rocsim_shutdown\0")?;
        // SAFETY: no arguments.
        match unsafe { f() } {
            0 => Ok(()),
            rc => Err(HostError::Driver(rc, "shutdown failed".into())),
        }
    }

    /// The ground truth of every run so far.
    pub fn ground_truth(&self) -> Result<GroundTruth, HostError> {
        let f = self.sym::<TruthFn>(b"rocsim_ground_truth_json\0")?;
        let free = self.sym::<FreeFn>(b"rocsim_free_string\0")?;
        // SAFETY: returns a library-owned string or null.
        let p = unsafe { f() };
        if p.is_null() {
            return Err(HostError::Driver(-5, "no ground truth".into()));
        }
        // SAFETY: non-null NUL-terminated string from the library, freed once.
        let s = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
        // SAFETY: as above.
        unsafe { free(p) };
        serde_json::from_str(&s).map_err(|e| HostError::Driver(-5, e.to_string()))
    }

    /// Raw access to any exported symbol (the SDK entry points, for tests).
    ///
    /// # Safety
    /// `T` must be the symbol's true type.
    pub unsafe fn symbol<T>(&self, name: &str) -> Result<Symbol<T>, HostError> {
        let n = CString::new(name).map_err(|e| HostError::Load(e.to_string()))?;
        // SAFETY: forwarded to the caller.
        unsafe { self.lib.get::<T>(n.as_bytes_with_nul()) }
            .map_err(|e| HostError::Load(e.to_string()))
    }
}

/// Finds `file` next to the running binary: its directory and deps/ in it,
/// the parent (`target/<profile>/` when running from deps/) and its deps/,
/// and examples/ beside either; the newest copy where several exist, since
/// cargo leaves an uplifted copy behind when a later build of a dependant
/// refreshes only deps/ (a stale one would lack entry points the tool needs).
pub fn locate_library(file: &str) -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    // cargo uplifts a cdylib to target/<profile>/ only when it builds that
    // package for itself; as a dependency of a test or binary it stays in deps/.
    let mut candidates = vec![dir.join(file), dir.join("deps").join(file)];
    if let Some(parent) = dir.parent() {
        candidates.push(parent.join(file));
        candidates.push(parent.join("deps").join(file));
        candidates.push(parent.join("examples").join(file));
    }
    candidates.push(dir.join("examples").join(file));
    candidates
        .into_iter()
        .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
        .max_by_key(|(modified, _)| *modified)
        .map(|(_, p)| p)
}

/// Loads a tool library the way a process would (RTLD_NOW | RTLD_GLOBAL), so
/// the simulator's discovery finds its `rocprofiler_configure`. Load the
/// simulator first. The library stays loaded for the life of the process.
pub fn load_tool(path: &Path) -> Result<Library, HostError> {
    // SAFETY: loading a tool library; its initializers are the tool's own.
    unsafe { Library::open(Some(path), RTLD_NOW | RTLD_GLOBAL) }
        .map_err(|e| HostError::Load(format!("{}: {e}", path.display())))
}
