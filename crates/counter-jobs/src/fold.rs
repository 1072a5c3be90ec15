//! How a job file (and the command line next to it) becomes runs, and every
//! combination that is refused.
//!
//! A run is what one profiler step (trace window) collects. Seed 004's
//! rules, with its two "found, not fixed" bugs fixed:
//!
//! - `job_replay_mode: application` (the default, and what a file without
//!   the field gets): each job is a run of its own, in job order, and no job
//!   is dropped: a thread-trace job gets its run like a counter job.
//!   `pmc_groups` gives one run per group, unless the job (or
//!   `--replay-mode kernel`) asks for kernel replay, when its groups are the
//!   passes of its one run.
//! - `job_replay_mode: kernel`: the jobs are the passes of one kernel-replay
//!   run, in job order: each job's `pmc` a counter group, the thread-trace
//!   job's pass after the counter jobs ahead of it. Every other option
//!   applies to the whole run: jobs that set it must agree, and a boolean
//!   left at its default (written out or not) does not count as set.
//! - Kernel replay is beta: it needs `kernel_replay_beta_enabled: true` on a
//!   job or `--kernel-replay-beta-enabled`, as rocprofv3 does.
use crate::error::{Collector, JobErrors, COMMAND_LINE};
use crate::job::{Job, RunOptions, Service, ThreadTrace};
use crate::plan::PassLayout;
use crate::schema::{JobFields, JobFile, JobReplayMode, ReplayMode};
use std::fmt::Debug;

/// What the command line adds next to a job file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CommandLine {
    /// `--pmc`: counter groups.
    pub pmc: Vec<Vec<String>>,
    /// `--replay-mode`.
    pub replay_mode: Option<ReplayMode>,
    /// `--kernel-replay-beta-enabled`.
    pub kernel_replay_beta_enabled: bool,
}

/// What a run collects per dispatch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunCollection {
    /// One pass, one counter group.
    Counters(Vec<String>),
    /// One pass, the thread trace.
    ThreadTrace(ThreadTrace),
    /// Kernel replay: one pass per group, plus the trace's.
    Replay(Replay),
}

/// The passes of a kernel-replay run: at least one counter group, and the
/// trace after `att_after_groups` of them (never past the last).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replay {
    groups: Vec<Vec<String>>,
    thread_trace: Option<(ThreadTrace, u64)>,
}

impl Replay {
    fn new(groups: Vec<Vec<String>>, thread_trace: Option<(ThreadTrace, u64)>) -> Replay {
        assert!(!groups.is_empty(), "a replay run has a counter group");
        if let Some((_, after)) = &thread_trace {
            assert!(
                *after as usize <= groups.len(),
                "the trace goes between groups"
            );
        }
        Replay {
            groups,
            thread_trace,
        }
    }

    pub fn groups(&self) -> &[Vec<String>] {
        &self.groups
    }

    pub fn thread_trace(&self) -> Option<&ThreadTrace> {
        self.thread_trace.as_ref().map(|(t, _)| t)
    }

    /// How many configured groups run before the trace pass
    /// (`ROCPROF_KERNEL_REPLAY_ATT_AFTER_GROUPS`).
    pub fn att_after_groups(&self) -> Option<u64> {
        self.thread_trace.as_ref().map(|(_, after)| *after)
    }

    /// The layout when every group is collectable.
    pub fn layout(&self) -> PassLayout {
        let groups = self.groups.len() as u64;
        match self.att_after_groups() {
            Some(after) => PassLayout::with_thread_trace(groups, after).expect("checked in new"),
            None => PassLayout::counters(groups),
        }
    }
}

/// One profiler step's collection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run {
    /// The jobs folded into it; empty for the command line's groups.
    pub jobs: Vec<usize>,
    pub collection: RunCollection,
    pub options: RunOptions,
}

impl Run {
    /// Does this run replay dispatches?
    pub fn replays(&self) -> bool {
        matches!(self.collection, RunCollection::Replay(_))
    }
}

/// The runs, in the order they are collected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub mode: JobReplayMode,
    pub runs: Vec<Run>,
}

/// Folds `file` (named `name` in errors; `None`: no job file) and `cli`
/// into runs, or every reason it cannot, in file order.
pub fn fold(file: Option<(&JobFile, &str)>, cli: &CommandLine) -> Result<Plan, JobErrors> {
    let (fields, name, mode) = match file {
        Some((f, name)) => (&f.jobs[..], name, f.job_replay_mode.unwrap_or_default()),
        None => (&[][..], COMMAND_LINE, JobReplayMode::Application),
    };
    let mut errors = Collector::new(name);
    let jobs: Vec<Option<Job>> = fields
        .iter()
        .enumerate()
        .map(|(i, f)| Job::check(i, f, &mut errors))
        .collect();
    let plan = match mode {
        JobReplayMode::Kernel => fold_kernel(fields, &jobs, cli, &mut errors),
        JobReplayMode::Application => fold_application(fields, &jobs, cli, &mut errors),
    };
    errors.finish(plan)
}

/// The one value the jobs that set a run option give it; a job that sets a
/// different one is an error naming the first.
fn agree<V: PartialEq + Debug>(
    field: &str,
    values: impl Iterator<Item = (usize, Option<V>)>,
    errors: &mut Collector,
) -> Option<V> {
    let mut first: Option<(usize, V)> = None;
    for (i, v) in values {
        let Some(v) = v else { continue };
        match &first {
            None => first = Some((i, v)),
            Some((j, w)) if *w != v => errors.at(
                format!("jobs[{i}].{field}"),
                format!(
                    "{v:?} disagrees with jobs[{j}]'s {w:?}: under job_replay_mode kernel a run option applies to the whole run, so jobs that set it must agree"
                ),
            ),
            Some(_) => {}
        }
    }
    first.map(|(_, v)| v)
}

/// Non-empty list, else None (an empty list sets nothing).
fn set(v: Vec<String>) -> Option<Vec<String>> {
    (!v.is_empty()).then_some(v)
}

/// The run options of a kernel-mode run: each from whichever jobs set it.
fn merged_options(fields: &[JobFields], errors: &mut Collector) -> RunOptions {
    let each = || fields.iter().map(RunOptions::of).enumerate();
    RunOptions {
        kernel_include_regex: agree(
            "kernel_include_regex",
            each().map(|(i, o)| (i, o.kernel_include_regex)),
            errors,
        ),
        kernel_exclude_regex: agree(
            "kernel_exclude_regex",
            each().map(|(i, o)| (i, o.kernel_exclude_regex)),
            errors,
        ),
        kernel_iteration_range: agree(
            "kernel_iteration_range",
            each().map(|(i, o)| (i, o.kernel_iteration_range)),
            errors,
        ),
        output_directory: agree(
            "output_directory",
            each().map(|(i, o)| (i, o.output_directory)),
            errors,
        ),
        output_file: agree(
            "output_file",
            each().map(|(i, o)| (i, o.output_file)),
            errors,
        ),
        output_format: agree(
            "output_format",
            each().map(|(i, o)| (i, set(o.output_format))),
            errors,
        )
        .unwrap_or_default(),
        // A boolean at its default is not set, so only `true` can be
        // given, and two jobs cannot disagree on it.
        keep_dimensions: fields.iter().any(|j| j.pmc_keep_dimensions == Some(true)),
        att_library_path: agree(
            "att_library_path",
            each().map(|(i, o)| (i, set(o.att_library_path))),
            errors,
        )
        .unwrap_or_default(),
    }
}

fn beta_acknowledged(fields: &[JobFields], cli: &CommandLine) -> bool {
    cli.kernel_replay_beta_enabled
        || fields
            .iter()
            .any(|j| j.kernel_replay_beta_enabled == Some(true))
}

const BETA: &str = "kernel replay is beta: acknowledge it with `kernel_replay_beta_enabled: true` on a job or with --kernel-replay-beta-enabled";

fn fold_kernel(
    fields: &[JobFields],
    jobs: &[Option<Job>],
    cli: &CommandLine,
    errors: &mut Collector,
) -> Plan {
    if !cli.pmc.is_empty() {
        errors.at_command_line(
            "--pmc",
            "under job_replay_mode kernel the counter groups are the job file's jobs: drop --pmc or add a job for it",
        );
    }
    if cli.replay_mode == Some(ReplayMode::Application) {
        errors.at_command_line(
            "--replay-mode",
            "`application` contradicts the job file's job_replay_mode: kernel",
        );
    }
    let mut groups = Vec::new();
    let mut thread_trace: Option<(usize, ThreadTrace, u64)> = None;
    for (i, (f, job)) in fields.iter().zip(jobs).enumerate() {
        let at = |field: &str| format!("jobs[{i}].{field}");
        if f.pmc_groups.is_some() {
            errors.at(
                at("pmc_groups"),
                "not allowed under job_replay_mode kernel, where each job is one pass: give each group a job of its own with `pmc`",
            );
        }
        if f.replay_mode == Some(ReplayMode::Application) {
            errors.at(
                at("replay_mode"),
                "`application` contradicts job_replay_mode: kernel",
            );
        }
        if f.collection_period.is_some() {
            errors.at(
                at("collection_period"),
                "sampling over time covers every pass, so it cannot be one pass of a kernel-replay run",
            );
        }
        match job.as_ref().map(|j| &j.service) {
            Some(Service::Counters(g)) if f.pmc_groups.is_none() => groups.extend(g.clone()),
            Some(Service::ThreadTrace(t)) => match &thread_trace {
                Some((j, _, _)) => errors.at(
                    at("advanced_thread_trace"),
                    format!("a second thread-trace job (jobs[{j}] traces already): one pass traces, so one job may"),
                ),
                None => thread_trace = Some((i, t.clone(), groups.len() as u64)),
            },
            _ => {}
        }
    }
    // A job whose `pmc_groups` was refused above still meant counters.
    if !fields
        .iter()
        .any(|f| f.pmc.is_some() || f.pmc_groups.is_some())
    {
        errors.at(
            "jobs",
            "no job collects counters (`pmc`): a kernel-replay run needs at least one counter group",
        );
    }
    if !beta_acknowledged(fields, cli) {
        errors.at("job_replay_mode", BETA);
    }
    let options = merged_options(fields, errors);
    let runs = if groups.is_empty() {
        Vec::new()
    } else {
        vec![Run {
            jobs: (0..fields.len()).collect(),
            collection: RunCollection::Replay(Replay::new(
                groups,
                thread_trace.map(|(_, t, after)| (t, after)),
            )),
            options,
        }]
    };
    Plan {
        mode: JobReplayMode::Kernel,
        runs,
    }
}

fn fold_application(
    fields: &[JobFields],
    jobs: &[Option<Job>],
    cli: &CommandLine,
    errors: &mut Collector,
) -> Plan {
    let mut runs = Vec::new();
    for (k, g) in cli.pmc.iter().enumerate() {
        if g.is_empty() {
            errors.at_command_line(&format!("--pmc[{k}]"), "an empty counter group");
        }
    }
    if !cli.pmc.is_empty() {
        if cli.replay_mode == Some(ReplayMode::Kernel) {
            runs.push(Run {
                jobs: Vec::new(),
                collection: RunCollection::Replay(Replay::new(cli.pmc.clone(), None)),
                options: RunOptions::default(),
            });
        } else {
            runs.extend(cli.pmc.iter().map(|g| Run {
                jobs: Vec::new(),
                collection: RunCollection::Counters(g.clone()),
                options: RunOptions::default(),
            }));
        }
    }
    for job in jobs.iter().flatten() {
        let run = |collection| Run {
            jobs: vec![job.index],
            collection,
            options: job.options.clone(),
        };
        let kernel = job.replay_mode.or(cli.replay_mode) == Some(ReplayMode::Kernel);
        match &job.service {
            Service::Counters(groups) if kernel && groups.len() > 1 => runs.push(run(
                RunCollection::Replay(Replay::new(groups.clone(), None)),
            )),
            Service::Counters(groups) => runs.extend(
                groups
                    .iter()
                    .map(|g| run(RunCollection::Counters(g.clone()))),
            ),
            Service::ThreadTrace(t) => {
                if job.replay_mode == Some(ReplayMode::Kernel) {
                    errors.at(
                        format!("jobs[{}].replay_mode", job.index),
                        "kernel replay replays a dispatch once per counter group, and this job collects no counters",
                    );
                }
                runs.push(run(RunCollection::ThreadTrace(t.clone())));
            }
        }
    }
    for (i, f) in fields.iter().enumerate() {
        if f.collection_period.is_some() {
            errors.at(
                format!("jobs[{i}].collection_period"),
                "not supported: kineto-rocm collects per profiler step, so the profiler's schedule sets the window",
            );
        }
    }
    if cli.replay_mode == Some(ReplayMode::Kernel) {
        let counters = !cli.pmc.is_empty()
            || fields
                .iter()
                .any(|f| f.pmc.is_some() || f.pmc_groups.is_some());
        if !counters {
            errors.at_command_line(
                "--replay-mode",
                "kernel replay replays dispatches once per counter group, and no counters are asked for (`pmc`, `pmc_groups` or --pmc)",
            );
        }
    }
    if !beta_acknowledged(fields, cli) {
        if cli.replay_mode == Some(ReplayMode::Kernel) {
            errors.at_command_line("--kernel-replay-beta-enabled", BETA);
        } else if let Some(i) = fields
            .iter()
            .position(|f| f.replay_mode == Some(ReplayMode::Kernel))
        {
            errors.at(format!("jobs[{i}].replay_mode"), BETA);
        }
    }
    Plan {
        mode: JobReplayMode::Application,
        runs,
    }
}
