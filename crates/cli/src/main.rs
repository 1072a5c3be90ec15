//! kineto-rocm: runs a workload on the simulated ROCm runtime with the real
//! tool library attached, writes a kineto-format trace, and checks it.
//!
//!   kineto-rocm demo                         the built-in 32-node graph x 200
//!   kineto-rocm run --workload W --out T     any workload file
//!   kineto-rocm validate --workload W        compare with the ground truth
mod counter_table;
mod jobs;
mod markers;
mod session;
mod table;
mod trace;
mod validate;

use clap::{Args, Parser, Subcommand, ValueEnum};
use rocprofiler_sim::options::{RunOptions, SubmissionModel};
use session::{Session, WorkloadSource};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "kineto-rocm",
    version,
    about = "ROCm activity backend for kineto, on a simulated runtime"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the built-in 32-node x 200-replay workload and print the per-node table.
    Demo {
        /// Where to write the trace.
        #[arg(long, default_value = "kineto-rocm-demo.json")]
        out: PathBuf,
        #[command(flatten)]
        model: ModelArgs,
    },
    /// Run a workload file and write its trace.
    Run {
        #[command(flatten)]
        run: RunArgs,
        /// Where to write the trace.
        #[arg(long)]
        out: PathBuf,
    },
    /// Run a workload file and compare the trace with the simulator's ground truth.
    Validate {
        #[command(flatten)]
        run: RunArgs,
        /// Print the comparison as JSON.
        #[arg(long)]
        json: bool,
        /// Keep the trace here (default: a temporary file).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Also write the simulator's ground truth here (JSON), to inspect
        /// a verdict by hand.
        #[arg(long)]
        truth_out: Option<PathBuf>,
    },
}

/// How the simulator submits work and how the tool attributes it.
#[derive(Args, Clone, Default)]
struct ModelArgs {
    /// The simulator's submission model (overrides the workload's):
    /// `rocm` as HIP and rocprofiler-sdk do, `ideal` the first round's model.
    #[arg(long, value_enum)]
    submission_model: Option<ModelArg>,
    /// Upper bound of the simulated submission jitter per packet, in ns
    /// (default 2000; 0 disables it).
    #[arg(long)]
    jitter_ns: Option<u64>,
    /// How long the tool waits for in-flight records when a window ends
    /// (sets KINETO_ROCM_FLUSH_DEADLINE_MS for the tool).
    #[arg(long)]
    flush_deadline_ms: Option<u64>,
    /// The tool's attribution: `evidence` (default) or `launch-stack`, the
    /// first round's per-thread-stack answers taken as they are, for
    /// comparison (sets KINETO_ROCM_ATTRIBUTION_METHOD for the tool).
    #[arg(long, value_enum)]
    attribution_method: Option<AttributionMethod>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ModelArg {
    Rocm,
    Ideal,
}

impl From<ModelArg> for SubmissionModel {
    fn from(model: ModelArg) -> SubmissionModel {
        match model {
            ModelArg::Rocm => SubmissionModel::Rocm,
            ModelArg::Ideal => SubmissionModel::Ideal,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum AttributionMethod {
    Evidence,
    LaunchStack,
}

impl ModelArgs {
    /// Sets what the tool reads from its environment; call before it loads.
    fn export_tool_settings(&self) {
        if let Some(ms) = self.flush_deadline_ms {
            std::env::set_var("KINETO_ROCM_FLUSH_DEADLINE_MS", ms.to_string());
        }
        if let Some(method) = self.attribution_method {
            let value = match method {
                AttributionMethod::Evidence => "evidence",
                AttributionMethod::LaunchStack => "launch-stack",
            };
            std::env::set_var("KINETO_ROCM_ATTRIBUTION_METHOD", value);
        }
    }

    fn apply(&self, options: &mut RunOptions) {
        if let Some(model) = self.submission_model {
            options.submission_model = Some(model.into());
        }
        if let Some(jitter) = self.jitter_ns {
            options.jitter_ns = jitter;
        }
    }
}

#[derive(Args)]
struct RunArgs {
    /// The workload file (JSON; see docs/workload-format.md).
    #[arg(long)]
    workload: PathBuf,
    /// Hardware queues per device (overrides the workload and GPU_MAX_HW_QUEUES).
    #[arg(long)]
    hw_queues: Option<u32>,
    /// Compute timestamps without waiting for simulated durations.
    #[arg(long)]
    virtual_time: bool,
    /// Seed of the simulated submission jitter.
    #[arg(long)]
    seed: Option<u64>,
    /// Run as this simulated SDK version instead of the workload's
    /// (e.g. 1.0.0: no HIP_GRAPH domain, attribution from HIP API tracing).
    #[arg(long)]
    sdk_version: Option<String>,
    /// Run the workload this many times, as the steps of a training loop.
    #[arg(long, default_value_t = 1)]
    steps: u32,
    /// Which steps to profile, as a profiler schedule would: e.g. `1-2,4-5`
    /// opens one trace window over steps 1-2 and another over 4-5 (steps
    /// count from 0). Default: one window over every step.
    #[arg(long, value_parser = parse_schedule)]
    profile_steps: Option<Schedule>,
    /// Write each window to its own file (OUT with `.N` before the
    /// extension) as soon as it stops, so memory holds one window at a time.
    #[arg(long)]
    trace_per_window: bool,
    /// A counter job file (JSON or YAML: rocprofv3's `jobs` with
    /// `job_replay_mode`; default: $KINETO_ROCM_JOB_FILE). It is checked
    /// and its plan shown before the run; a bad file exits with 2.
    #[arg(long, value_name = "FILE")]
    jobs: Option<PathBuf>,
    /// A counter group, names separated by spaces or commas; repeat the
    /// flag for several groups (rocprofv3's --pmc).
    #[arg(long, value_name = "COUNTERS")]
    pmc: Vec<String>,
    /// How several counter groups are collected: `application`, a profiler
    /// step each, or `kernel`, the passes of a kernel replay.
    #[arg(long, value_enum)]
    replay_mode: Option<ReplayArg>,
    /// Acknowledges that kernel replay is a beta SDK service.
    #[arg(long)]
    kernel_replay_beta_enabled: bool,
    #[command(flatten)]
    model: ModelArgs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ReplayArg {
    Application,
    Kernel,
}

/// Profiled step ranges, inclusive, in order and not overlapping.
#[derive(Clone, Debug)]
struct Schedule(Vec<(u32, u32)>);

fn parse_schedule(text: &str) -> Result<Schedule, String> {
    let mut ranges: Vec<(u32, u32)> = Vec::new();
    for part in text.split(',') {
        let (first, last) = match part.split_once('-') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (part.trim(), part.trim()),
        };
        let parse = |v: &str| {
            v.parse::<u32>()
                .map_err(|_| format!("`{part}`: expected a step or a range like 1-2"))
        };
        let (first, last) = (parse(first)?, parse(last)?);
        if last < first {
            return Err(format!("`{part}`: a range ends before it starts"));
        }
        if ranges
            .last()
            .is_some_and(|&(_, previous)| first <= previous)
        {
            return Err(format!(
                "`{part}`: ranges must be increasing and not overlap"
            ));
        }
        ranges.push((first, last));
    }
    Ok(Schedule(ranges))
}

impl RunArgs {
    fn plan<'a>(&self, out: &'a Path) -> Plan<'a> {
        let steps = self.steps.max(1);
        Plan {
            options: self.options(),
            steps,
            schedule: self
                .profile_steps
                .clone()
                .unwrap_or(Schedule(vec![(0, steps - 1)])),
            out,
            trace_per_window: self.trace_per_window,
        }
    }

    fn options(&self) -> RunOptions {
        let mut options = RunOptions {
            hw_queues: self.hw_queues,
            virtual_time: self.virtual_time,
            ..RunOptions::default()
        };
        if let Some(seed) = self.seed {
            options.seed = seed;
        }
        self.model.apply(&mut options);
        options
    }
}

fn progress(message: &str) {
    eprintln!("kineto-rocm: {message}");
}

/// Why a command stopped.
enum Stop {
    /// The user's input is wrong (a bad job file): exit 2, as for a bad flag.
    BadInput(String),
    Failed(String),
}

impl From<String> for Stop {
    fn from(message: String) -> Stop {
        Stop::Failed(message)
    }
}

/// Checks the job file asked for and shows its plan, through `show` (stdout
/// for `run`; stderr for `validate`, whose stdout may be JSON). True when a
/// counter group will be collected.
fn check_jobs(args: &RunArgs, show: fn(&str)) -> Result<bool, Stop> {
    let cli = counter_jobs::CommandLine {
        pmc: args
            .pmc
            .iter()
            .map(|g| counter_jobs::schema::CounterList::Text(g.clone()).names())
            .collect(),
        replay_mode: args.replay_mode.map(|m| match m {
            ReplayArg::Application => counter_jobs::ReplayMode::Application,
            ReplayArg::Kernel => counter_jobs::ReplayMode::Kernel,
        }),
        kernel_replay_beta_enabled: args.kernel_replay_beta_enabled,
    };
    let Some(jobs) = jobs::plan(args.jobs.as_deref(), &cli).map_err(Stop::BadInput)? else {
        return Ok(false);
    };
    match &jobs.file {
        Some(file) => show(&format!("counter plan of job file {}:", file.display())),
        None => show("counter plan of the command line:"),
    }
    for line in jobs.plan.to_string().lines() {
        show(line);
    }
    match jobs::single_group(&jobs.plan) {
        Some(group) => {
            std::env::set_var(jobs::PMC_ENV, group.join(","));
            progress(&format!(
                "collecting {} per dispatch (the dispatch counting service)",
                group.join(",")
            ));
            Ok(true)
        }
        None => {
            progress(
                "not collected yet: only one counter group in application mode is; this plan is checked and shown, and the trace carries no counter values",
            );
            Ok(false)
        }
    }
}

/// How a workload is run: how many steps, which are profiled, where traces go.
struct Plan<'a> {
    options: RunOptions,
    steps: u32,
    schedule: Schedule,
    out: &'a Path,
    trace_per_window: bool,
}

impl<'a> Plan<'a> {
    fn single(options: RunOptions, out: &'a Path) -> Plan<'a> {
        Plan {
            options,
            steps: 1,
            schedule: Schedule(vec![(0, 0)]),
            out,
            trace_per_window: false,
        }
    }

    fn window_file(&self, index: usize) -> PathBuf {
        let stem = self
            .out
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("trace");
        let extension = self
            .out
            .extension()
            .and_then(|s| s.to_str())
            .unwrap_or("json");
        self.out
            .with_file_name(format!("{stem}.{index}.{extension}"))
    }
}

/// Loads, then runs each step, opening and closing trace windows on the
/// schedule; writes the trace(s).
fn profile(workload: &WorkloadSource, plan: &Plan) -> Result<Session, String> {
    let session = Session::load(workload)?;
    let started = std::time::Instant::now();
    let mut window = 0;
    for step in 0..plan.steps {
        let opens = plan.schedule.0.iter().any(|&(first, _)| first == step);
        let closes = plan.schedule.0.iter().any(|&(_, last)| last == step);
        if opens {
            session.start()?;
        }
        if plan.steps > 1 {
            progress(&format!(
                "step {step}/{} of {}{}",
                plan.steps,
                workload.name,
                if opens || closes { " (profiled)" } else { "" }
            ));
        } else {
            progress(&format!("running {}", workload.name));
        }
        session.run(workload, &plan.options)?;
        if closes {
            session.stop()?;
            if plan.trace_per_window {
                let file = plan.window_file(window);
                progress(&format!(
                    "window {window} stopped; writing {}",
                    file.display()
                ));
                session.write_trace(&file)?;
            }
            window += 1;
        }
    }
    if !plan.trace_per_window {
        progress(&format!(
            "workload done in {:.2?}; waiting for in-flight records and writing {}",
            started.elapsed(),
            plan.out.display()
        ));
        session.write_trace(plan.out)?;
    }
    Ok(session)
}

fn demo(out: &Path, model: &ModelArgs) -> Result<(), String> {
    let workload = WorkloadSource {
        name: "built-in graph-32x200".into(),
        text: rocprofiler_sim::workload::shipped::GRAPH_32X200.into(),
    };
    let mut options = RunOptions {
        record_truth: false,
        ..RunOptions::default()
    };
    model.apply(&mut options);
    model.export_tool_settings();
    let session = profile(&workload, &Plan::single(options, out))?;
    session.shutdown()?;
    let trace = trace::read(out)?;
    table::print(&table::node_rows(&trace.events));
    let kernels = trace
        .events
        .iter()
        .filter(|e| e.category == trace::GpuCategory::Kernel);
    let (total, attributed) =
        kernels.fold((0, 0), |(n, a), e| (n + 1, a + e.graph.is_some() as usize));
    println!(
        "\n{total} kernel events, {attributed} carrying graph id and graph node id; trace: {}",
        out.display()
    );
    for line in &trace.summary {
        println!("tool: {line}");
    }
    Ok(())
}

impl RunArgs {
    fn workload(&self) -> Result<WorkloadSource, String> {
        let workload = WorkloadSource::from_file(&self.workload)?;
        match &self.sdk_version {
            None => Ok(workload),
            Some(version) => workload.with_sdk_version(version),
        }
    }
}

fn run(args: &RunArgs, out: &Path) -> Result<(), Stop> {
    let counters = check_jobs(args, |line| println!("{line}"))?;
    let workload = args.workload()?;
    args.model.export_tool_settings();
    let mut plan = args.plan(out);
    // Nothing here compares with the ground truth; do not keep it.
    plan.options.record_truth = false;
    let session = profile(&workload, &plan)?;
    session.shutdown()?;
    let files: Vec<PathBuf> = if plan.trace_per_window {
        (0..plan.schedule.0.len())
            .map(|w| plan.window_file(w))
            .collect()
    } else {
        vec![out.to_path_buf()]
    };
    for file in files {
        let counts = trace::count_gpu_events(&file)?;
        println!(
            "{}: {} kernels ({} with graph fields), {} memory copies",
            file.display(),
            counts.kernels,
            counts.graphed,
            counts.copies
        );
        if counters {
            let rows = counter_table::node_rows(&trace::read(&file)?.events);
            if rows.is_empty() {
                println!("no graph node carries counter values");
            } else {
                println!("counter means per graph node:");
                counter_table::print(&rows);
            }
        }
    }
    Ok(())
}

fn validate_command(
    args: &RunArgs,
    json: bool,
    out: Option<&Path>,
    truth_out: Option<&Path>,
) -> Result<bool, Stop> {
    check_jobs(args, |line| eprintln!("{line}"))?;
    let workload = args.workload()?;
    args.model.export_tool_settings();
    let default_out =
        std::env::temp_dir().join(format!("kineto-rocm-validate-{}.json", std::process::id()));
    let keep = out.is_some();
    let out = out.unwrap_or(&default_out);
    let plan = args.plan(out);
    if let Some(&(_, last)) = plan.schedule.0.last() {
        if last >= plan.steps {
            return Err(Stop::Failed(format!(
                "--profile-steps names step {last}, but only {} steps run (--steps)",
                plan.steps
            )));
        }
    }
    let session = profile(&workload, &plan)?;
    session.shutdown()?;
    let started = std::time::Instant::now();
    let truth = session.ground_truth()?;
    progress(&format!("ground truth read in {:.2?}", started.elapsed()));
    if let Some(path) = truth_out {
        let file = std::fs::File::create(path)
            .map_err(|e| format!("{}: cannot create: {e}", path.display()))?;
        serde_json::to_writer(std::io::BufWriter::new(file), &truth)
            .map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
    }
    if truth.runs.len() != plan.steps as usize {
        return Err(Stop::Failed(format!(
            "the simulator recorded {} runs for {} steps",
            truth.runs.len(),
            plan.steps
        )));
    }
    if let Some(asked) = args.model.submission_model {
        let asked = SubmissionModel::from(asked);
        // A simulator that predates the field ran the ideal model only.
        let ran = match truth.runs[0].submission_model.as_str() {
            "" => "ideal",
            other => other,
        };
        if ran != asked.name() {
            return Err(Stop::Failed(format!(
                "asked for --submission-model {}, but the simulator ran {ran}: \
                 nothing to validate under the model asked for",
                asked.name()
            )));
        }
    }
    let steps_of = |&(first, last): &(u32, u32)| -> Vec<usize> {
        (first..=last).map(|s| s as usize).collect()
    };
    let files: Vec<(PathBuf, Vec<Vec<usize>>)> = if plan.trace_per_window {
        plan.schedule
            .0
            .iter()
            .enumerate()
            .map(|(w, range)| (plan.window_file(w), vec![steps_of(range)]))
            .collect()
    } else {
        vec![(
            out.to_path_buf(),
            plan.schedule.0.iter().map(steps_of).collect(),
        )]
    };
    let markers = markers::snapshot();
    let parsed = rocprofiler_sim::workload::Workload::parse(&workload.text, &workload.name)
        .map_err(|e| e.to_string())?;
    let mut validator = validate::Validator::new(&truth.runs, truth.sdk_version, &markers)
        .with_graphs(&parsed.graphs);
    for (file, windows) in &files {
        let trace = trace::read(file)?;
        validator.add_trace(&trace, windows);
        if !keep {
            let _ = std::fs::remove_file(file);
        }
    }
    let report = validator.finish();
    progress(&format!(
        "{} trace file(s) read and compared in {:.2?}",
        files.len(),
        started.elapsed()
    ));
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).expect("report serialises")
        );
    } else {
        validate::print(&report);
    }
    Ok(report.is_clean)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match &cli.command {
        Command::Demo { out, model } => demo(out, model).map(|_| true).map_err(Stop::Failed),
        Command::Run { run: args, out } => run(args, out).map(|_| true),
        Command::Validate {
            run: args,
            json,
            out,
            truth_out,
        } => validate_command(args, *json, out.as_deref(), truth_out.as_deref()),
    };
    match outcome {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!(
                "kineto-rocm: validation failed: wrong claims, missing or extra events, or nothing shown"
            );
            ExitCode::from(2)
        }
        Err(Stop::BadInput(message)) => {
            eprintln!("kineto-rocm: {message}");
            ExitCode::from(2)
        }
        Err(Stop::Failed(message)) => {
            eprintln!("kineto-rocm: {message}");
            ExitCode::FAILURE
        }
    }
}
