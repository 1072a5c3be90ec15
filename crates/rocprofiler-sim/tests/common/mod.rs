//! Shared by the integration tests: each test FILE is one process with one
//! simulator (one SDK initialization, as in a real process) and the test tool.
#![allow(dead_code)]
use rocprofiler_sim::host::{load_tool, locate_library, Simulator};
use rocprofiler_sim::options::RunOptions;
use rocprofiler_sim::truth::RunTruth;
use serde_json::Value;
use std::collections::HashMap;
use std::ffi::{c_char, CStr};
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Duration;

pub struct Env {
    pub sim: Simulator,
    pub tool: libloading::os::unix::Library,
}

/// Loads the simulator (RTLD_GLOBAL) and then the test tool; `env` is set
/// before the tool is loaded (the tool reads it at configure time).
pub fn env_with(vars: &[(&str, &str)]) -> &'static Env {
    static ENV: OnceLock<Env> = OnceLock::new();
    ENV.get_or_init(|| {
        for (k, v) in vars {
            std::env::set_var(k, v);
        }
        let sim = Simulator::load_default().expect("load librocprofiler_sim.so");
        let tool_path = locate_library("librocsim_test_tool.so").expect(
            "librocsim_test_tool.so not built: run `cargo test` (which builds examples) or `cargo build --examples -p rocprofiler-sim`",
        );
        let tool = load_tool(&tool_path).expect("load the test tool");
        Env { sim, tool }
    })
}

pub fn env() -> &'static Env {
    env_with(&[])
}

/// Serializes tests inside one process (they share the tool's log).
pub fn serial() -> MutexGuard<'static, ()> {
    static M: Mutex<()> = Mutex::new(());
    M.lock().unwrap_or_else(|p| p.into_inner())
}

pub fn workload(name: &str) -> PathBuf {
    rocprofiler_sim::workload::shipped::path(name)
}

impl Env {
    pub fn tool_results(&self) -> Value {
        // SAFETY: the test tool's accessors, as declared in the example.
        unsafe {
            let f = self
                .tool
                .get::<unsafe extern "C" fn() -> *mut c_char>(b"rocsim_test_tool_results_json\0")
                .unwrap();
            let free = self
                .tool
                .get::<unsafe extern "C" fn(*mut c_char)>(b"rocsim_test_tool_free\0")
                .unwrap();
            let p = f();
            let v = serde_json::from_str(&CStr::from_ptr(p).to_string_lossy()).unwrap();
            free(p);
            v
        }
    }

    pub fn tool_clear(&self) {
        // SAFETY: the test tool's accessor.
        unsafe {
            self.tool
                .get::<unsafe extern "C" fn()>(b"rocsim_test_tool_clear\0")
                .unwrap()()
        }
    }

    pub fn tool_stop(&self) -> u32 {
        // SAFETY: the test tool's accessor.
        unsafe {
            self.tool
                .get::<unsafe extern "C" fn() -> u32>(b"rocsim_test_tool_stop\0")
                .unwrap()()
        }
    }

    /// Runs a workload file, waits for every record, returns the run's truth
    /// and what the tool saw.
    pub fn run(&self, file: &str, opts: RunOptions) -> (RunTruth, Value) {
        self.tool_clear();
        self.sim
            .run_workload_file(&workload(file), &opts)
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        self.sim.wait_idle(Duration::from_secs(60)).expect("idle");
        let truth = self.sim.ground_truth().unwrap().runs.pop().unwrap();
        (truth, self.tool_results())
    }
}

pub fn probes(v: &Value) -> HashMap<String, u64> {
    v["probes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p[0].as_str().unwrap().to_string(), p[1].as_u64().unwrap()))
        .collect()
}

pub fn rows(v: &Value, key: &str) -> Vec<Vec<u64>> {
    v[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r.as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_u64().unwrap())
                .collect()
        })
        .collect()
}

/// Seeds of the seeded property tests: KINETO_ROCM_TEST_SEEDS
/// (comma-separated, as the CLI's adversarial suite reads it), else
/// `default`; printed so a failing run can be rerun with its seeds.
pub fn seeds(default: &[u64]) -> Vec<u64> {
    let seeds: Vec<u64> = match std::env::var("KINETO_ROCM_TEST_SEEDS") {
        Ok(list) => list
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| {
                s.parse()
                    .unwrap_or_else(|_| panic!("KINETO_ROCM_TEST_SEEDS: not a seed: {s}"))
            })
            .collect(),
        Err(_) => default.to_vec(),
    };
    eprintln!("seeds {seeds:?} (KINETO_ROCM_TEST_SEEDS, default {default:?})");
    assert!(!seeds.is_empty(), "no seeds");
    seeds
}
