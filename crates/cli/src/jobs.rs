//! The counters a run asks for: the job file (`--jobs FILE`, else
//! `KINETO_ROCM_JOB_FILE`) and `--pmc`, `--replay-mode`,
//! `--kernel-replay-beta-enabled`, checked together before anything runs,
//! so a bad request costs the user no run, and the plan shown so the user
//! sees which step or pass collects what.
use counter_jobs::{fold, load_file, CommandLine, JobErrors, JobReplayMode, Plan, RunCollection};
use std::path::{Path, PathBuf};

/// The environment variable naming a job file when `--jobs` is not given.
pub const JOB_FILE_ENV: &str = "KINETO_ROCM_JOB_FILE";

/// The tool's variable naming the counter group to collect per dispatch
/// (src/tool/sdk/counting.rs reads it).
pub const PMC_ENV: &str = "KINETO_ROCM_PMC";

/// In application mode, each run's counter group (`None`: a run that is no
/// counter group, a thread trace, which the tool does not collect yet): one
/// run is collected on every dispatch, several one per profiled window.
/// `None` in kernel mode.
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
