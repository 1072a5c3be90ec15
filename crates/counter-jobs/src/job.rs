//! One job once its fields are checked: exactly one service with its
//! settings read, and the job's own run options.
//!
//! A job is one pass in either mode, and a pass never both counts and
//! traces: seed 004 keeps them apart because the thread trace's SQTT
//! traffic and serialization perturb the counters, and both services write
//! the one per-dispatch `user_data` slot the SDK hands out. So a job with
//! both services, or neither, is refused in every mode, never run halfway
//! or dropped.
use crate::error::Collector;
use crate::iterations::IterationRange;
use crate::schema::{CounterList, JobFields, Number, ReplayMode, Strings};

/// The thread trace's settings, rocprofv3's defaults where a job is silent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadTrace {
    pub target_cu: u64,
    pub shader_engine_mask: u64,
    pub buffer_size: u64,
    pub simd_select: u64,
    pub serialize_all: bool,
    pub perfcounter_ctrl: u64,
}

impl Default for ThreadTrace {
    /// rocprofv3's `--att-target-cu 1`, `--att-shader-engine-mask 0x1`,
    /// `--att-buffer-size 0x6000000`, `--att-simd-select 0xF`.
    fn default() -> ThreadTrace {
        ThreadTrace {
            target_cu: 1,
            shader_engine_mask: 0x1,
            buffer_size: 0x600_0000,
            simd_select: 0xF,
            serialize_all: false,
            perfcounter_ctrl: 0,
        }
    }
}

/// What a job collects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Service {
    /// Counter groups, in order: one from `pmc`, one or more from
    /// `pmc_groups`; none is empty.
    Counters(Vec<Vec<String>>),
    ThreadTrace(ThreadTrace),
}

/// Options that apply to a whole run (in `kernel` mode, to every pass).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunOptions {
    pub kernel_include_regex: Option<String>,
    pub kernel_exclude_regex: Option<String>,
    /// `None`: every launch of a selected kernel.
    pub kernel_iteration_range: Option<IterationRange>,
    pub output_directory: Option<String>,
    pub output_file: Option<String>,
    pub output_format: Vec<String>,
    /// Report each counter instance instead of the sum over dimensions.
    pub keep_dimensions: bool,
    pub att_library_path: Vec<String>,
}

fn strings(v: &Option<Strings>) -> Vec<String> {
    v.as_ref().map(Strings::values).unwrap_or_default()
}

impl RunOptions {
    /// The run options one job sets (an iteration range that does not
    /// parse is left out here: `Job::check` reports it).
    pub fn of(fields: &JobFields) -> RunOptions {
        RunOptions {
            kernel_include_regex: fields.kernel_include_regex.clone(),
            kernel_exclude_regex: fields.kernel_exclude_regex.clone(),
            kernel_iteration_range: IterationRange::parse(
                strings(&fields.kernel_iteration_range)
                    .iter()
                    .map(String::as_str),
            )
            .ok()
            .flatten(),
            output_directory: fields.output_directory.clone(),
            output_file: fields.output_file.clone(),
            output_format: strings(&fields.output_format),
            keep_dimensions: fields.pmc_keep_dimensions == Some(true),
            att_library_path: strings(&fields.att_library_path),
        }
    }
}

/// A checked job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Job {
    /// Its place in the file's `jobs`.
    pub index: usize,
    pub service: Service,
    pub options: RunOptions,
    /// Its own `replay_mode`, if written.
    pub replay_mode: Option<ReplayMode>,
}

fn counter_group(list: &CounterList, path: String, errors: &mut Collector) -> Vec<String> {
    let names = list.names();
    if names.is_empty() {
        errors.at(path, "an empty counter group: name at least one counter");
    }
    names
}

fn number(value: &Option<Number>, default: u64, path: String, errors: &mut Collector) -> u64 {
    match value.as_ref().map(Number::value) {
        None => default,
        Some(Ok(v)) => v,
        Some(Err(why)) => {
            errors.at(path, why);
            default
        }
    }
}

impl Job {
    /// Checks job `index`; `None` (with the reasons in `errors`) when it is
    /// refused.
    pub(crate) fn check(index: usize, fields: &JobFields, errors: &mut Collector) -> Option<Job> {
        let before = errors.len();
        let at = |field: &str| format!("jobs[{index}].{field}");
        let counts = fields.pmc.is_some() || fields.pmc_groups.is_some();
        match (counts, fields.traces()) {
            (true, true) => errors.at(
                format!("jobs[{index}]"),
                "selects two services (`pmc` and `advanced_thread_trace: true`): a job is one pass, and counters never share a pass with the thread trace, which perturbs them; split it into two jobs",
            ),
            (false, false) => errors.at(
                format!("jobs[{index}]"),
                "selects no service: give it `pmc` (a counter group) or `advanced_thread_trace: true`; kernels, copies and HIP calls are traced in every step without a job",
            ),
            _ => {}
        }
        if !fields.traces() {
            for field in fields.thread_trace_settings() {
                let why = if counts {
                    "a thread-trace setting on a counter job: move it to the job with `advanced_thread_trace: true`"
                } else {
                    "a thread-trace setting on a job that does not trace: add `advanced_thread_trace: true`"
                };
                errors.at(at(field), why);
            }
        }
        if let Some(ranges) = &fields.kernel_iteration_range {
            let texts = ranges.values();
            if let Err(why) = IterationRange::parse(texts.iter().map(String::as_str)) {
                errors.at(at("kernel_iteration_range"), why);
            }
        }
        let mut groups = Vec::new();
        if let Some(pmc) = &fields.pmc {
            groups.push(counter_group(pmc, at("pmc"), errors));
        }
        if let Some(list) = &fields.pmc_groups {
            if fields.pmc.is_some() {
                errors.at(
                    at("pmc_groups"),
                    "a job gives `pmc` or `pmc_groups`, not both",
                );
            } else if list.is_empty() {
                errors.at(at("pmc_groups"), "no counter group: name at least one");
            }
            for (k, g) in list.iter().enumerate() {
                groups.push(counter_group(g, at(&format!("pmc_groups[{k}]")), errors));
            }
        }
        let service = if fields.traces() {
            let d = ThreadTrace::default();
            Service::ThreadTrace(ThreadTrace {
                target_cu: number(
                    &fields.att_target_cu,
                    d.target_cu,
                    at("att_target_cu"),
                    errors,
                ),
                shader_engine_mask: number(
                    &fields.att_shader_engine_mask,
                    d.shader_engine_mask,
                    at("att_shader_engine_mask"),
                    errors,
                ),
                buffer_size: number(
                    &fields.att_buffer_size,
                    d.buffer_size,
                    at("att_buffer_size"),
                    errors,
                ),
                simd_select: number(
                    &fields.att_simd_select,
                    d.simd_select,
                    at("att_simd_select"),
                    errors,
                ),
                serialize_all: fields.att_serialize_all == Some(true),
                perfcounter_ctrl: number(
                    &fields.att_perfcounter_ctrl,
                    d.perfcounter_ctrl,
                    at("att_perfcounter_ctrl"),
                    errors,
                ),
            })
        } else {
            Service::Counters(groups)
        };
        (errors.len() == before).then(|| Job {
            index,
            service,
            options: RunOptions::of(fields),
            replay_mode: fields.replay_mode,
        })
    }
}
