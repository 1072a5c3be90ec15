//! One profiling session on the simulated runtime: the simulator and the
//! tool library are loaded as a real process would load them (the simulator
//! first, RTLD_GLOBAL; then the tool, found by the simulator through its
//! exported `rocprofiler_configure`), and the tool is driven through its C ABI.
use crate::output::Output;
use rocprofiler_sim::host::{self, Simulator};
use rocprofiler_sim::options::RunOptions;
use rocprofiler_sim::truth::GroundTruth;
use rocprofiler_sim::workload::Workload;
use std::ffi::{c_char, c_int, CString};
use std::path::{Path, PathBuf};
use std::time::Duration;

const TOOL_FILE: &str = "libkineto_rocm.so";

type StatusFn = unsafe extern "C" fn() -> c_int;
type WriteTracesFn =
    unsafe extern "C" fn(*const *const c_char, *const c_int, c_int, c_int) -> c_int;

/// A workload to run: its text and where it came from (for error messages).
pub struct WorkloadSource {
    pub name: String,
    pub text: String,
}

impl WorkloadSource {
    pub fn from_file(path: &Path) -> Result<WorkloadSource, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
        Ok(WorkloadSource {
            name: path.display().to_string(),
            text,
        })
    }

    /// The same workload, run as another simulated SDK version.
    pub fn with_sdk_version(self, version: &str) -> Result<WorkloadSource, String> {
        version
            .parse::<rocprofiler_sim::workload::SdkVersion>()
            .map_err(|e| format!("--sdk-version {version}: {e}"))?;
        let mut value: serde_json::Value = serde_json::from_str(&self.text)
            .map_err(|e| format!("{}: not JSON: {e}", self.name))?;
        value["sdk_version"] = serde_json::Value::String(version.to_string());
        Ok(WorkloadSource {
            name: format!("{} (as SDK {version})", self.name),
            text: value.to_string(),
        })
    }
}

pub struct Session {
    simulator: Simulator,
    tool: libloading::os::unix::Library,
}

pub fn tool_path() -> Result<PathBuf, String> {
    if let Ok(path) = std::env::var("KINETO_ROCM_TOOL_LIBRARY") {
        return Ok(PathBuf::from(path));
    }
    host::locate_library(TOOL_FILE)
        .ok_or_else(|| format!("{TOOL_FILE} not found next to the kineto-rocm binary (build the workspace: cargo build --release)"))
}

impl Session {
    /// Loads the simulator for `workload`'s SDK version, then the tool.
    pub fn load(workload: &WorkloadSource) -> Result<Session, String> {
        let parsed = Workload::parse(&workload.text, &workload.name).map_err(|e| e.to_string())?;
        // The simulated SDK initialises at the tool's first call; make it the
        // version the workload asks for.
        std::env::set_var("ROCSIM_SDK_VERSION", parsed.sdk_version.to_string());
        // A workload that sizes its queues stands for a process started with
        // ROC_AQL_QUEUE_SIZE set: the runtime and the tool both read it.
        if let Some(slots) = parsed.rocm.hw_queue_slots {
            if std::env::var_os("ROC_AQL_QUEUE_SIZE").is_none() {
                std::env::set_var("ROC_AQL_QUEUE_SIZE", slots.to_string());
            }
        }
        let simulator = Simulator::load_default().map_err(|e| e.to_string())?;
        let tool = host::load_tool(&tool_path()?).map_err(|e| e.to_string())?;
        crate::markers::connect(&simulator, &tool)?;
        Ok(Session { simulator, tool })
    }

    fn call(&self, name: &str) -> Result<(), String> {
        // SAFETY: the C ABI of include/kineto_rocm.h: `int name(void)`.
        let f = unsafe { self.tool.get::<StatusFn>(name.as_bytes()) }
            .map_err(|e| format!("{name}: {e}"))?;
        // SAFETY: no arguments; the tool catches its own panics.
        match unsafe { f() } {
            0 => Ok(()),
            code => Err(format!(
                "{name} failed with status {code} (see the log above)"
            )),
        }
    }

    pub fn start(&self) -> Result<(), String> {
        self.call("kineto_rocm_start")
    }

    pub fn stop(&self) -> Result<(), String> {
        self.call("kineto_rocm_stop")
    }

    /// Counts this group (counter names) on every dispatch from now on.
    pub fn request_counters(&self, group: &[String]) -> Result<(), String> {
        type RequestFn = unsafe extern "C" fn(*const c_char) -> c_int;
        let name = "kineto_rocm_request_counters";
        // SAFETY: include/kineto_rocm.h: `int name(const char*)`.
        let f = unsafe { self.tool.get::<RequestFn>(name.as_bytes()) }
            .map_err(|e| format!("{name}: {e}"))?;
        let names = CString::new(group.join(","))
            .map_err(|_| format!("{name}: a counter name holds a NUL byte"))?;
        // SAFETY: a NUL-terminated string that outlives the call.
        match unsafe { f(names.as_ptr()) } {
            0 => Ok(()),
            code => Err(format!(
                "{name} failed with status {code} (see the log above)"
            )),
        }
    }

    /// Counts nothing from now on.
    pub fn release_counters(&self) -> Result<(), String> {
        self.call("kineto_rocm_release_counters")
    }

    /// Application mode: traces every selected dispatch from now on (on),
    /// or none.
    pub fn set_thread_trace(&self, on: bool) -> Result<(), String> {
        type SetFn = unsafe extern "C" fn(c_int) -> c_int;
        let name = "kineto_rocm_set_thread_trace";
        // SAFETY: include/kineto_rocm.h: `int name(int)`.
        let f = unsafe { self.tool.get::<SetFn>(name.as_bytes()) }
            .map_err(|e| format!("{name}: {e}"))?;
        // SAFETY: a plain integer argument; the tool catches its own panics.
        match unsafe { f(c_int::from(on)) } {
            0 => Ok(()),
            code => Err(format!(
                "{name} failed with status {code} (see the log above)"
            )),
        }
    }

    pub fn run(&self, workload: &WorkloadSource, options: &RunOptions) -> Result<(), String> {
        let mut options = options.clone();
        options
            .source_name
            .get_or_insert_with(|| workload.name.clone());
        self.simulator
            .run_workload(&workload.text, &options)
            .map_err(|e| e.to_string())
    }

    /// Writes the finished windows to every output (the same windows to each).
    pub fn write_traces(&self, outputs: &[Output], gzip_level: u32) -> Result<(), String> {
        // SAFETY: `int kineto_rocm_write_traces(const char* const*, const int*, int, int)`.
        let f = unsafe { self.tool.get::<WriteTracesFn>(b"kineto_rocm_write_traces") }
            .map_err(|e| e.to_string())?;
        let paths: Vec<CString> = outputs
            .iter()
            .map(|o| CString::new(o.path.display().to_string()).map_err(|e| e.to_string()))
            .collect::<Result<_, _>>()?;
        let pointers: Vec<*const c_char> = paths.iter().map(|p| p.as_ptr()).collect();
        let formats: Vec<c_int> = outputs.iter().map(|o| o.format.code()).collect();
        let count = c_int::try_from(outputs.len()).map_err(|e| e.to_string())?;
        let level = c_int::try_from(gzip_level).map_err(|e| e.to_string())?;
        // SAFETY: `count` valid paths (NUL-terminated) and formats, alive for the call.
        match unsafe { f(pointers.as_ptr(), formats.as_ptr(), count, level) } {
            0 => Ok(()),
            code => {
                let names: Vec<String> = outputs
                    .iter()
                    .map(|o| o.path.display().to_string())
                    .collect();
                Err(format!(
                    "writing {} failed with status {code}",
                    names.join(", ")
                ))
            }
        }
    }

    pub fn ground_truth(&self) -> Result<GroundTruth, String> {
        self.simulator.ground_truth().map_err(|e| e.to_string())
    }

    /// Lets every completion be delivered, then runs the tools' finalize.
    pub fn shutdown(&self) -> Result<(), String> {
        self.simulator
            .wait_idle(Duration::from_secs(60))
            .map_err(|e| e.to_string())?;
        self.simulator.shutdown().map_err(|e| e.to_string())
    }
}
