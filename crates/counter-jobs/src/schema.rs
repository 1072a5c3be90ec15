//! The job file, field by field, as rocprofv3's input schema has it (seed
//! 004: `jobs`, a top-level `job_replay_mode`) plus the few kineto-rocm
//! adds. Unknown fields are errors: a misspelt option must not be ignored.
//!
//! Every option is an `Option`, so the folding rules can tell a field left
//! out from one written with its default: seed 004 found rocprofv3 treating
//! `att_serialize_all: false` as set because argparse's default is `False`.
use serde::Deserialize;

/// How a file's jobs run (seed 004's `job_replay_mode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JobReplayMode {
    /// Each job on its own: here, its own profiler step (window).
    #[default]
    Application,
    /// All jobs are the passes of one kernel-replay run, in job order.
    Kernel,
}

/// rocprofv3's `replay_mode` (`--replay-mode`): how one run collects
/// several counter groups.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReplayMode {
    Application,
    Kernel,
}

/// A counter group: a list, or one string of names separated by spaces or
/// commas (the form rocprofv3's command line and older files use).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(
    untagged,
    expecting = "a list of counter names, or one string of names separated by spaces or commas"
)]
pub enum CounterList {
    List(Vec<String>),
    Text(String),
}

impl CounterList {
    /// The names, trimmed, empty ones left out, in order.
    pub fn names(&self) -> Vec<String> {
        let split = |s: &str| -> Vec<String> {
            s.split(|c: char| c.is_whitespace() || c == ',')
                .filter(|n| !n.is_empty())
                .map(str::to_string)
                .collect()
        };
        match self {
            CounterList::List(v) => v.iter().flat_map(|n| split(n)).collect(),
            CounterList::Text(s) => split(s),
        }
    }
}

/// An integer, or a string holding one in decimal or `0x` hex (masks are
/// usually written in hex).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(
    untagged,
    expecting = "a non-negative integer, or a string holding one in decimal or 0x hex"
)]
pub enum Number {
    Int(u64),
    Text(String),
}

impl Number {
    pub fn value(&self) -> Result<u64, String> {
        match self {
            Number::Int(v) => Ok(*v),
            Number::Text(s) => {
                let t = s.trim();
                let parsed = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
                    Some(hex) => u64::from_str_radix(hex, 16),
                    None => t.parse(),
                };
                parsed.map_err(|_| format!("expected an integer or 0x hex, got {s:?}"))
            }
        }
    }
}

/// One string or a list of them (rocprofv3 writes several options as lists).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(untagged, expecting = "a string or a list of strings")]
pub enum Strings {
    One(String),
    Many(Vec<String>),
}

impl Strings {
    pub fn values(&self) -> Vec<String> {
        match self {
            Strings::One(s) => vec![s.clone()],
            Strings::Many(v) => v.clone(),
        }
    }
}

/// The whole file.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobFile {
    /// Absent: `application` (files written before seed 004 keep working).
    #[serde(default)]
    pub job_replay_mode: Option<JobReplayMode>,
    pub jobs: Vec<JobFields>,
}

/// One job as written. Service fields say what a pass collects; every other field is a
/// run option.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobFields {
    // The counter service.
    pub pmc: Option<CounterList>,
    /// Several groups on one job: one step each (application mode), or the
    /// passes of this job's replay run under `--replay-mode kernel`.
    pub pmc_groups: Option<Vec<CounterList>>,

    // The thread-trace service and its settings (rocprofv3's `--att-*`).
    pub advanced_thread_trace: Option<bool>,
    pub att_target_cu: Option<Number>,
    pub att_shader_engine_mask: Option<Number>,
    pub att_buffer_size: Option<Number>,
    pub att_simd_select: Option<Number>,
    pub att_serialize_all: Option<bool>,
    pub att_perfcounter_ctrl: Option<Number>,
    /// Where the decoder is; not a pass setting, so any job may carry it.
    pub att_library_path: Option<Strings>,

    // Run options: they apply to the whole run.
    pub kernel_include_regex: Option<String>,
    pub kernel_exclude_regex: Option<String>,
    pub kernel_iteration_range: Option<Strings>,
    pub output_directory: Option<String>,
    pub output_file: Option<String>,
    pub output_format: Option<Strings>,
    pub kernel_replay_beta_enabled: Option<bool>,
    pub replay_mode: Option<ReplayMode>,
    /// Device-wide sampling in time: it cannot be confined to one pass.
    pub collection_period: Option<Strings>,
    /// kineto-rocm's own: report each counter instance (per XCC, SE, ...)
    /// instead of their sum.
    pub pmc_keep_dimensions: Option<bool>,

    // rocprofv3's tracing switches: kineto-rocm always traces kernels,
    // copies and HIP calls, so they are accepted and change nothing.
    pub kernel_trace: Option<bool>,
    pub hip_runtime_trace: Option<bool>,
    pub hip_trace: Option<bool>,
    pub memory_copy_trace: Option<bool>,
    pub runtime_trace: Option<bool>,
    pub sys_trace: Option<bool>,
    pub truncate_kernels: Option<bool>,
}

impl JobFields {
    /// `advanced_thread_trace: true`; `false` is the default and selects nothing.
    pub fn traces(&self) -> bool {
        self.advanced_thread_trace == Some(true)
    }

    /// The thread-trace settings this job sets (`att_library_path` is not
    /// one: it only says where the decoder is).
    pub fn thread_trace_settings(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        if self.att_target_cu.is_some() {
            v.push("att_target_cu");
        }
        if self.att_shader_engine_mask.is_some() {
            v.push("att_shader_engine_mask");
        }
        if self.att_buffer_size.is_some() {
            v.push("att_buffer_size");
        }
        if self.att_simd_select.is_some() {
            v.push("att_simd_select");
        }
        // false is its default: written out, it still asks for nothing.
        if self.att_serialize_all == Some(true) {
            v.push("att_serialize_all");
        }
        if self.att_perfcounter_ctrl.is_some() {
            v.push("att_perfcounter_ctrl");
        }
        v
    }
}
