//! The counters a run asks for: the job file (`--jobs FILE`, else
//! `KINETO_ROCM_JOB_FILE`) and `--pmc`, `--replay-mode`,
//! `--kernel-replay-beta-enabled`, checked together before anything runs,
//! so a bad request costs the user no run, and the plan shown so the user
//! sees which step or pass collects what.
use counter_jobs::{
    fold, load_file, CommandLine, JobErrors, JobReplayMode, Plan, RunCollection, RunOptions,
    ThreadTrace,
};
use std::path::{Path, PathBuf};

/// The environment variable naming a job file when `--jobs` is not given.
pub const JOB_FILE_ENV: &str = "KINETO_ROCM_JOB_FILE";

/// The tool's variable naming the counter group to collect per dispatch
/// (src/tool/sdk/counting.rs reads it).
pub const PMC_ENV: &str = "KINETO_ROCM_PMC";
/// The tool's switch for per-instance counter values.
pub const DIMENSIONS_ENV: &str = "KINETO_ROCM_COUNTER_DIMENSIONS";

/// Did `--counter-dimensions` or a job's `pmc_keep_dimensions` ask for
/// counter instances? (`check_jobs` sets the tool's variable for either.)
pub fn dimensions_asked() -> bool {
    std::env::var(DIMENSIONS_ENV).is_ok_and(|v| v == "1")
}

/// In application mode, each run's counter group (`None`: the thread-trace
/// run): one run is collected on every dispatch, several one per profiled
/// window. `None` in kernel mode.
pub fn application_runs(plan: &Plan) -> Option<Vec<Option<Vec<String>>>> {
    (plan.mode == JobReplayMode::Application).then(|| {
        plan.runs
            .iter()
            .map(|run| match &run.collection {
                RunCollection::Counters(group) => Some(group.clone()),
                _ => None,
            })
            .collect()
    })
}

/// The tool's variable for a kernel-replay run (src/tool/sdk/kernel_replay.rs
/// reads it): the configured passes in order, each a counter group or
/// the thread trace.
pub const KERNEL_REPLAY_ENV: &str = "KINETO_ROCM_KERNEL_REPLAY";
/// The kernel filters, in either mode (src/tool/sdk/kernel_filter.rs).
pub const KERNEL_INCLUDE_ENV: &str = "KINETO_ROCM_KERNEL_INCLUDE_REGEX";
pub const KERNEL_EXCLUDE_ENV: &str = "KINETO_ROCM_KERNEL_EXCLUDE_REGEX";
pub const KERNEL_ITERATION_ENV: &str = "KINETO_ROCM_KERNEL_ITERATION_RANGE";

/// The tool's variables for a run's kernel filters: `(name, value)`, only
/// those the run sets.
fn filter_env(options: &RunOptions) -> Vec<(&'static str, String)> {
    let mut env = Vec::new();
    env.extend(
        options
            .kernel_include_regex
            .clone()
            .map(|r| (KERNEL_INCLUDE_ENV, r)),
    );
    env.extend(
        options
            .kernel_exclude_regex
            .clone()
            .map(|r| (KERNEL_EXCLUDE_ENV, r)),
    );
    env.extend(
        options
            .kernel_iteration_range
            .as_ref()
            .map(|r| (KERNEL_ITERATION_ENV, r.to_string())),
    );
    env
}

/// What a plan's errors name it by: its job file, or the command line.
fn source(jobs: &JobPlan) -> String {
    jobs.file
        .as_ref()
        .map_or("the command line".to_string(), |f| f.display().to_string())
}

/// What an error names a run by: its job, or the command line.
fn job(run: &counter_jobs::Run) -> String {
    run.jobs
        .first()
        .map_or("the command line".to_string(), |j| format!("jobs[{j}]"))
}

/// In application mode, the kernel filters every window applies: the tool
/// reads one filter when it starts, so runs that filter differently are
/// refused (naming them) rather than filtered alike behind the user's back.
pub fn application_filter_env(jobs: &JobPlan) -> Result<Vec<(&'static str, String)>, String> {
    let runs = &jobs.plan.runs;
    let Some(first) = runs.first() else {
        return Ok(Vec::new());
    };
    let first_env = filter_env(&first.options);
    if let Some(other) = runs.iter().find(|r| filter_env(&r.options) != first_env) {
        return Err(format!(
            "bad counter request in {}: {} and {} filter kernels differently (kernel_include_regex, kernel_exclude_regex, kernel_iteration_range); each job is a profiler window of one run here, and one run applies one filter: give the jobs the same filter, or run them separately",
            source(jobs),
            job(first),
            job(other)
        ));
    }
    Ok(first_env)
}
/// The thread-trace pass's settings and where its raw data goes
/// (src/tool/sdk/thread_trace.rs).
pub const THREAD_TRACE_ENV: &str = "KINETO_ROCM_THREAD_TRACE";
pub const THREAD_TRACE_DIR_ENV: &str = "KINETO_ROCM_THREAD_TRACE_DIR";

/// Kernel mode's raw thread trace goes next to the trace, in `TRACE.att/`,
/// unless the user named a directory; returns the directory it chose.
pub fn thread_trace_next_to(trace: &Path) -> Option<PathBuf> {
    if std::env::var_os(THREAD_TRACE_DIR_ENV).is_some_and(|d| !d.is_empty()) {
        return None;
    }
    let mut dir = trace.as_os_str().to_owned();
    dir.push(".att");
    std::env::set_var(THREAD_TRACE_DIR_ENV, &dir);
    Some(PathBuf::from(dir))
}

/// The trace's settings as the tool reads them (src/tool/sdk/thread_trace.rs).
fn thread_trace_settings(t: &ThreadTrace) -> String {
    format!(
        "target_cu={},shader_engine_mask={:#x},buffer_size={:#x},simd_select={:#x},perfcounter_ctrl={},serialize_all={}",
        t.target_cu,
        t.shader_engine_mask,
        t.buffer_size,
        t.simd_select,
        t.perfcounter_ctrl,
        u8::from(t.serialize_all)
    )
}

/// In application mode, the thread trace's settings when a run traces
/// (`None` when none does): the SDK takes the service's settings once, at
/// initialisation, so thread-trace jobs that set them differently are
/// refused, naming them.
pub fn application_thread_trace_env(
    jobs: &JobPlan,
) -> Result<Option<(&'static str, String)>, String> {
    let mut traces = jobs
        .plan
        .runs
        .iter()
        .filter_map(|run| match &run.collection {
            RunCollection::ThreadTrace(t) => Some((run, t)),
            _ => None,
        });
    let Some((first_run, first)) = traces.next() else {
        return Ok(None);
    };
    if let Some((other_run, _)) = traces.find(|(_, t)| *t != first) {
        return Err(format!(
            "bad counter request in {}: {} and {} set the thread trace differently; the SDK takes the trace's settings once per run: give them the same att_* settings, or run them separately",
            source(jobs),
            job(first_run),
            job(other_run)
        ));
    }
    Ok(Some((THREAD_TRACE_ENV, thread_trace_settings(first))))
}

/// In kernel mode, the tool's variables for the run: `(name, value)`;
/// `None` in application mode.
pub fn kernel_replay_env(plan: &Plan) -> Option<Vec<(&'static str, String)>> {
    let run = plan.runs.iter().find(|r| r.replays())?;
    let RunCollection::Replay(replay) = &run.collection else {
        return None;
    };
    let mut passes: Vec<String> = replay.groups().iter().map(|g| g.join(",")).collect();
    if let Some(after) = replay.att_after_groups() {
        passes.insert(after as usize, "thread_trace".to_string());
    }
    let mut env = vec![(KERNEL_REPLAY_ENV, passes.join(";"))];
    env.extend(filter_env(&run.options));
    if let Some(t) = replay.thread_trace() {
        env.push((THREAD_TRACE_ENV, thread_trace_settings(t)));
    }
    Some(env)
}

/// A counter request and its plan.
pub struct JobPlan {
    /// The job file; `None` when the command line alone asks.
    pub file: Option<PathBuf>,
    pub plan: Plan,
}

/// The job file asked for, from the flag or else the environment (an empty
/// value is unset).
fn job_file(flag: Option<&Path>) -> Option<PathBuf> {
    flag.map(Path::to_path_buf).or_else(|| {
        std::env::var_os(JOB_FILE_ENV)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    })
}

fn report(errors: &JobErrors, what: &str) -> String {
    let mut text = format!(
        "bad counter request in {what} ({} problem(s)); nothing was run:",
        errors.0.len()
    );
    for e in &errors.0 {
        text.push_str(&format!("\n  {e}"));
    }
    text
}

/// The plan of the counters asked for; `Ok(None)` when none are. `Err` is
/// the whole report of what is wrong.
pub fn plan(flag: Option<&Path>, cli: &CommandLine) -> Result<Option<JobPlan>, String> {
    let Some(file) = job_file(flag) else {
        if cli == &CommandLine::default() {
            return Ok(None);
        }
        let plan = fold(None, cli).map_err(|e| report(&e, "the command line"))?;
        return Ok(Some(JobPlan { file: None, plan }));
    };
    let name = file.display().to_string();
    let what = format!("job file {name}");
    let parsed = load_file(&file).map_err(|e| report(&e, &what))?;
    let plan = fold(Some((&parsed, &name)), cli).map_err(|e| report(&e, &what))?;
    Ok(Some(JobPlan {
        file: Some(file),
        plan,
    }))
}
