//! kineto-rocm: runs a workload on the simulated ROCm runtime with the real
//! tool library attached, writes a kineto-format trace, and checks it.
//!
//!   kineto-rocm demo                         the built-in 32-node graph x 200
//!   kineto-rocm run --workload W --out T     any workload file
//!   kineto-rocm validate --workload W        compare with the ground truth
//!   kineto-rocm convert IN OUT               any trace we read, as JSON
//!   kineto-rocm report TRACE...              per graph node, per rank, plots
//!   kineto-rocm record -- PROGRAM ARGS...    any HIP program, traced from outside
mod counter_table;
mod forward_signals;
mod jobs;
mod markers;
mod output;
mod pftrace;
mod progress;
mod record;
mod report;
mod session;
mod trace;
mod trace_file;
mod validate;

use clap::{Args, Parser, Subcommand, ValueEnum};
use output::{Format, Output};
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
        /// Where to write the trace; repeat it to write the same windows to
        /// several files (say one JSON and one .pftrace).
        #[arg(long, required = true)]
        out: Vec<PathBuf>,
        #[command(flatten)]
        format: FormatArgs,
    },
    /// Run any HIP program with kineto-rocm loaded by the SDK
    /// (ROCP_TOOL_LIBRARIES) and write its trace when it exits or is
    /// stopped by SIGINT/SIGTERM.
    Record(RecordArgs),
    /// Per graph node figures (count, mean, p50, p99, share of the replay,
    /// drift over replays), slowest first, from one trace or one per rank.
    Report {
        /// Traces: kineto-format JSON (ours or PyTorch's export), plain or
        /// gzipped, or pftrace. Several: one per rank of a distributed job.
        #[arg(required = true)]
        traces: Vec<PathBuf>,
        /// Also write the table and the plots as an HTML page.
        #[arg(long)]
        html: Option<PathBuf>,
        /// Write the plots as SVG.
        #[arg(long)]
        svg: Option<PathBuf>,
        /// The node whose duration across replays is plotted, as
        /// GRAPH_ID:NODE (default: the slowest node).
        #[arg(long, value_parser = parse_node)]
        node: Option<(u64, u32)>,
        /// Print the report as JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Read a pftrace (plain or gzipped) and write it as kineto-format JSON.
    Convert {
        /// The trace to read.
        input: PathBuf,
        /// Where to write the JSON.
        output: PathBuf,
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

/// `record`'s options.
#[derive(Args)]
struct RecordArgs {
    /// Where to write the trace (`%p` becomes the program's process id).
    #[arg(short, long, default_value = "kineto-rocm-record.json")]
    out: PathBuf,
    #[command(flatten)]
    format: FormatArgs,
    /// Open the window this long after the program's first HIP call.
    #[arg(long, default_value_t = 0)]
    delay_ms: u64,
    /// Close the window after this long (default: when the program ends).
    #[arg(long)]
    duration_ms: Option<u64>,
    /// Follow the program's ROCTX range of this message instead: each push
    /// opens a window (on any thread), its pop closes it.
    #[arg(long, conflicts_with_all = ["delay_ms", "duration_ms"])]
    roctx_range: Option<String>,
    /// No graph attribution: no graph fields, no cost
    /// (KINETO_ROCM_DISABLE_GRAPH_ATTRIBUTION=1).
    #[arg(long)]
    no_graph_attribution: bool,
    /// `evidence` (default) or `launch-stack` (KINETO_ROCM_ATTRIBUTION_METHOD).
    #[arg(long, value_enum)]
    attribution_method: Option<AttributionMethod>,
    /// How long the window's end waits for records in flight
    /// (KINETO_ROCM_FLUSH_DEADLINE_MS, default 5000).
    #[arg(long)]
    flush_deadline_ms: Option<u64>,
    /// The SDK buffer's size in bytes (KINETO_ROCM_BUFFER_BYTES).
    #[arg(long)]
    buffer_bytes: Option<u64>,
    /// The program and its arguments, after `--`.
    #[arg(last = true, required = true)]
    program: Vec<std::ffi::OsString>,
}

/// The trace file format.
#[derive(Args, Clone)]
struct FormatArgs {
    /// `json` (kineto's chrome trace) or `pftrace` (Perfetto's protobuf);
    /// default: `.pftrace` files are Perfetto, others JSON.
    #[arg(long, value_enum)]
    format: Option<Format>,
    /// gzip level of pftrace files: 1 (fast) to 9 (smallest), 0 uncompressed.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(0..=9))]
    gzip_level: u32,
}

impl FormatArgs {
    fn outputs(&self, paths: &[PathBuf]) -> Vec<Output> {
        paths.iter().map(|p| Output::new(p, self.format)).collect()
    }
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

impl AttributionMethod {
    fn env_value(self) -> &'static str {
        match self {
            AttributionMethod::Evidence => "evidence",
            AttributionMethod::LaunchStack => "launch-stack",
        }
    }
}

impl ModelArgs {
    /// Sets what the tool reads from its environment; call before it loads.
    fn export_tool_settings(&self) {
        if let Some(ms) = self.flush_deadline_ms {
            std::env::set_var("KINETO_ROCM_FLUSH_DEADLINE_MS", ms.to_string());
        }
        if let Some(method) = self.attribution_method {
            std::env::set_var("KINETO_ROCM_ATTRIBUTION_METHOD", method.env_value());
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
    /// Also show each counter instance's value (one arg per instance,
    /// `SQ_WAVES[XCC=0,SHADER_ENGINE=1,INSTANCE=0]`) beside the counter's
    /// sum (KINETO_ROCM_COUNTER_DIMENSIONS=1); `validate` then expects
    /// every instance.
    #[arg(long)]
    counter_dimensions: bool,
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

fn parse_node(text: &str) -> Result<(u64, u32), String> {
    let bad = || format!("`{text}`: expected GRAPH_ID:NODE, like 1:4");
    let (graph, node) = text.split_once(':').ok_or_else(bad)?;
    Ok((
        graph.trim().parse().map_err(|_| bad())?,
        node.trim().parse().map_err(|_| bad())?,
    ))
}

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
    fn plan(&self, outputs: Vec<Output>, gzip_level: u32) -> Plan {
        let steps = self.steps.max(1);
        Plan {
            options: self.options(),
            steps,
            schedule: self
                .profile_steps
                .clone()
                .unwrap_or(Schedule(vec![(0, steps - 1)])),
            outputs,
            gzip_level,
            trace_per_window: self.trace_per_window,
            window_groups: Vec::new(),
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

/// What the counters asked for make a run collect.
enum Collect {
    Nothing,
    /// One group on every dispatch (`KINETO_ROCM_PMC`).
    Group,
    /// Kernel mode: every pass of the plan on each selected dispatch.
    KernelReplay,
    /// Application mode's thread trace on every selected dispatch.
    ThreadTrace,
    /// Step mode: the k-th profiled window collects the plan's run k (a
    /// counter group; `None`: the thread trace).
    PerWindow(Vec<Option<Vec<String>>>),
}

impl Collect {
    /// Does any window count hardware counters?
    fn counts(&self) -> bool {
        match self {
            Collect::Group | Collect::KernelReplay => true,
            Collect::PerWindow(groups) => groups.iter().any(Option::is_some),
            Collect::Nothing | Collect::ThreadTrace => false,
        }
    }

    /// Does any window or pass run the thread trace?
    fn traces(&self) -> bool {
        match self {
            Collect::KernelReplay | Collect::ThreadTrace => true,
            Collect::PerWindow(groups) => groups.iter().any(Option::is_none),
            Collect::Nothing | Collect::Group => false,
        }
    }
}

/// Checks the job file asked for and shows its plan, through `show` (stdout
/// for `run`; stderr for `validate`, whose stdout may be JSON).
fn check_jobs(args: &RunArgs, show: fn(&str)) -> Result<Collect, Stop> {
    if args.counter_dimensions {
        std::env::set_var(jobs::DIMENSIONS_ENV, "1");
    }
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
        return Ok(Collect::Nothing);
    };
    match &jobs.file {
        Some(file) => show(&format!("counter plan of job file {}:", file.display())),
        None => show("counter plan of the command line:"),
    }
    for line in jobs.plan.to_string().lines() {
        show(line);
    }
    if jobs.plan.runs.iter().any(|r| r.options.keep_dimensions) {
        std::env::set_var(jobs::DIMENSIONS_ENV, "1");
    }
    let Some(groups) = jobs::application_runs(&jobs.plan) else {
        let env = jobs::kernel_replay_env(&jobs.plan).unwrap_or_default();
        for (name, value) in &env {
            std::env::set_var(name, value);
        }
        progress(
            "kernel replay: each selected eager dispatch runs once per pass (the SDK's kernel-replay service); graph launches are not replayed",
        );
        return Ok(Collect::KernelReplay);
    };
    for (name, value) in jobs::application_filter_env(&jobs).map_err(Stop::BadInput)? {
        std::env::set_var(name, value);
    }
    if let Some((name, value)) =
        jobs::application_thread_trace_env(&jobs).map_err(Stop::BadInput)?
    {
        std::env::set_var(name, value);
    }
    match groups.as_slice() {
        [Some(group)] => {
            std::env::set_var(jobs::PMC_ENV, group.join(","));
            progress(&format!(
                "collecting {} per dispatch (the dispatch counting service)",
                group.join(",")
            ));
            Ok(Collect::Group)
        }
        [] => Ok(Collect::Nothing),
        [None] => {
            progress("thread trace: every selected dispatch is traced (the SDK's dispatch thread trace service)");
            Ok(Collect::ThreadTrace)
        }
        _ => {
            show_step_mode(&groups);
            Ok(Collect::PerWindow(groups))
        }
    }
}

/// Says which window collects what.
fn show_step_mode(groups: &[Option<Vec<String>>]) {
    for (window, group) in groups.iter().enumerate() {
        match group {
            Some(group) => progress(&format!(
                "step mode: window {window} collects {}",
                group.join(",")
            )),
            None => progress(&format!(
                "step mode: window {window} runs the thread trace on every selected dispatch"
            )),
        }
    }
}

/// How a workload is run: how many steps, which are profiled, where traces go.
struct Plan {
    options: RunOptions,
    steps: u32,
    schedule: Schedule,
    outputs: Vec<Output>,
    gzip_level: u32,
    trace_per_window: bool,
    /// Step mode: the counter group each profiled window collects.
    window_groups: Vec<Option<Vec<String>>>,
}

impl Plan {
    fn single(options: RunOptions, out: Output) -> Plan {
        Plan {
            options,
            steps: 1,
            schedule: Schedule(vec![(0, 0)]),
            outputs: vec![out],
            gzip_level: 1,
            trace_per_window: false,
            window_groups: Vec::new(),
        }
    }

    /// Step mode: one profiled window per run of the plan. With neither
    /// `--steps` nor `--profile-steps` given, one step per run, each its own
    /// window; otherwise the schedule must open a window for every run.
    fn collect_per_window(&mut self, collect: Collect, args: &RunArgs) -> Result<(), Stop> {
        let Collect::PerWindow(groups) = collect else {
            return Ok(());
        };
        let runs = groups.len() as u32;
        if args.profile_steps.is_none() && args.steps <= 1 {
            self.steps = runs;
            self.schedule = Schedule((0..runs).map(|s| (s, s)).collect());
        } else if (self.schedule.0.len() as u32) < runs {
            return Err(Stop::BadInput(format!(
                "step mode: the counter plan has {runs} runs, one per profiled window, but the schedule opens {} window(s); profile {runs} windows (e.g. --steps {runs} --profile-steps {})",
                self.schedule.0.len(),
                (0..runs).map(|s| s.to_string()).collect::<Vec<_>>().join(",")
            )));
        }
        self.window_groups = groups;
        Ok(())
    }

    fn window_outputs(&self, index: usize) -> Vec<Output> {
        self.outputs.iter().map(|o| o.window(index)).collect()
    }

    /// Every file the run writes.
    fn files(&self) -> Vec<Output> {
        if self.trace_per_window {
            (0..self.schedule.0.len())
                .flat_map(|w| self.window_outputs(w))
                .collect()
        } else {
            self.outputs.clone()
        }
    }
}

fn names(outputs: &[Output]) -> String {
    let names: Vec<String> = outputs
        .iter()
        .map(|o| o.path.display().to_string())
        .collect();
    names.join(", ")
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
            // A window counts or traces, never both (seed 004: the trace
            // perturbs counters).
            match plan.window_groups.get(window) {
                Some(Some(group)) => {
                    progress(&format!("window {window}: counting {}", group.join(",")));
                    session.set_thread_trace(false)?;
                    session.request_counters(group)?;
                }
                Some(None) => {
                    progress(&format!("window {window}: thread trace"));
                    session.release_counters()?;
                    session.set_thread_trace(true)?;
                }
                None => {}
            }
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
            if !plan.window_groups.is_empty() {
                session.release_counters()?;
                session.set_thread_trace(false)?;
            }
            if plan.trace_per_window {
                let files = plan.window_outputs(window);
                progress(&format!(
                    "window {window} stopped; writing {}",
                    names(&files)
                ));
                session.write_traces(&files, plan.gzip_level)?;
            }
            window += 1;
        }
    }
    if !plan.trace_per_window {
        progress(&format!(
            "workload done in {:.2?}; waiting for in-flight records and writing {}",
            started.elapsed(),
            names(&plan.outputs)
        ));
        session.write_traces(&plan.outputs, plan.gzip_level)?;
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
    let session = profile(
        &workload,
        &Plan::single(options, Output::new(out, Some(Format::Json))),
    )?;
    session.shutdown()?;
    let trace = trace::read(out)?;
    let kernels = trace
        .events
        .iter()
        .filter(|e| e.category == trace::GpuCategory::Kernel);
    let (total, attributed) =
        kernels.fold((0, 0), |(n, a), e| (n + 1, a + e.graph.is_some() as usize));
    let summary = trace.summary.clone();
    report::print(&report::build(&[(out.display().to_string(), trace)]));
    println!(
        "\n{total} kernel events, {attributed} carrying graph id and graph node id; trace: {}",
        out.display()
    );
    for line in &summary {
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

fn run(args: &RunArgs, outputs: Vec<Output>, gzip_level: u32) -> Result<(), Stop> {
    let collect = check_jobs(args, |line| println!("{line}"))?;
    let counters = collect.counts();
    let kernel_mode = matches!(collect, Collect::KernelReplay);
    let traces = collect.traces();
    let workload = args.workload()?;
    args.model.export_tool_settings();
    let mut plan = args.plan(outputs, gzip_level);
    plan.collect_per_window(collect, args)?;
    if let (true, Some(first)) = (traces, plan.files().first()) {
        let _ = jobs::thread_trace_next_to(&first.path);
    }
    // Nothing here compares with the ground truth; do not keep it.
    plan.options.record_truth = false;
    let session = profile(&workload, &plan)?;
    session.shutdown()?;
    for file in plan.files() {
        let counts = match file.format {
            Format::Json => trace::count_gpu_events(&file.path)?,
            Format::Pftrace => trace::EventCounts::of(&trace::read(&file.path)?),
        };
        println!(
            "{}: {} kernels ({} with graph fields), {} memory copies",
            file.path.display(),
            counts.kernels,
            counts.graphed,
            counts.copies
        );
        if kernel_mode {
            let events = trace::read(&file.path)?.events;
            let passes = events.iter().filter(|e| e.replay_pass.is_some()).count();
            let dispatches: std::collections::HashSet<u64> = events
                .iter()
                .filter(|e| e.replay_pass.is_some())
                .filter_map(|e| e.dispatch_id)
                .collect();
            println!(
                "kernel replay: {passes} kernel events are passes of {} replayed dispatches",
                dispatches.len()
            );
        } else if counters {
            let rows = counter_table::node_rows(&trace::read(&file.path)?.events);
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

fn convert(input: &Path, output: &Path) -> Result<(), String> {
    let decoded = match trace_file::load(input)? {
        trace_file::Contents::Json(_) => return Err(format!("{}: already JSON", input.display())),
        trace_file::Contents::Pftrace(bytes) => {
            progress::watch(&format!("reading {}", input.display()), "events", |read| {
                pftrace::decode(&bytes, read)
            })
            .map_err(|e| format!("{}: not a valid Perfetto trace: {e}", input.display()))?
        }
    };
    let file = std::fs::File::create(output)
        .map_err(|e| format!("{}: cannot create: {e}", output.display()))?;
    let mut out = std::io::BufWriter::new(file);
    pftrace::write_json(&decoded, &mut out)
        .and_then(|_| std::io::Write::flush(&mut out))
        .map_err(|e| format!("{}: cannot write: {e}", output.display()))?;
    println!(
        "{}: {} events from {}",
        output.display(),
        decoded.events.len(),
        input.display()
    );
    Ok(())
}

fn report_command(
    traces: &[PathBuf],
    html: Option<&Path>,
    svg: Option<&Path>,
    choice: report::PlotChoice,
    json: bool,
) -> Result<(), String> {
    let mut read = Vec::with_capacity(traces.len());
    for path in traces {
        read.push((path.display().to_string(), trace::read(path)?));
    }
    let report = report::build(&read);
    if report.nodes.is_empty() {
        return Err(format!(
            "no kernel with graph id and graph node id in {}",
            traces
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).expect("report serialises")
        );
    } else {
        report::print(&report);
    }
    let write = |path: &Path, text: String| {
        std::fs::write(path, text).map_err(|e| format!("{}: cannot write: {e}", path.display()))
    };
    if let Some(path) = svg {
        write(path, report::svg(&report, choice)?)?;
        progress(&format!("plots written to {}", path.display()));
    }
    if let Some(path) = html {
        write(path, report::html(&report, choice)?)?;
        progress(&format!("report written to {}", path.display()));
    }
    Ok(())
}

fn validate_command(
    args: &RunArgs,
    json: bool,
    out: Option<&Path>,
    truth_out: Option<&Path>,
) -> Result<bool, Stop> {
    let collect = check_jobs(args, |line| eprintln!("{line}"))?;
    let traces = collect.traces();
    let workload = args.workload()?;
    args.model.export_tool_settings();
    let default_out =
        std::env::temp_dir().join(format!("kineto-rocm-validate-{}.json", std::process::id()));
    let keep = out.is_some();
    let out = out.unwrap_or(&default_out);
    let mut plan = args.plan(vec![Output::new(out, Some(Format::Json))], 1);
    plan.collect_per_window(collect, args)?;
    // A thread trace next to a trace not kept goes with it.
    let thread_trace_dir = traces
        .then(|| jobs::thread_trace_next_to(out))
        .flatten()
        .filter(|_| !keep);
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
            .map(|(w, range)| (plan.outputs[0].window(w).path, vec![steps_of(range)]))
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
        .with_graphs(&parsed.graphs)
        .with_counter_dimensions(jobs::dimensions_asked());
    for (file, windows) in &files {
        let trace = trace::read(file)?;
        validator.add_trace(&trace, windows);
        if !keep {
            let _ = std::fs::remove_file(file);
        }
    }
    let report = validator.finish();
    if let Some(dir) = thread_trace_dir {
        let _ = std::fs::remove_dir_all(dir);
    }
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

/// Exit status of `validate`: 2 when the trace is not clean.
fn validation_status(clean: bool) -> ExitCode {
    if clean {
        return ExitCode::SUCCESS;
    }
    eprintln!(
        "kineto-rocm: validation failed: wrong claims, missing or extra events, or nothing shown"
    );
    ExitCode::from(2)
}

fn record_command(args: &RecordArgs) -> Result<ExitCode, String> {
    let mut tool_env: Vec<(&'static str, String)> = Vec::new();
    if args.no_graph_attribution {
        tool_env.push(("KINETO_ROCM_DISABLE_GRAPH_ATTRIBUTION", "1".into()));
    }
    if let Some(method) = args.attribution_method {
        tool_env.push(("KINETO_ROCM_ATTRIBUTION_METHOD", method.env_value().into()));
    }
    if let Some(ms) = args.flush_deadline_ms {
        tool_env.push(("KINETO_ROCM_FLUSH_DEADLINE_MS", ms.to_string()));
    }
    if let Some(bytes) = args.buffer_bytes {
        tool_env.push(("KINETO_ROCM_BUFFER_BYTES", bytes.to_string()));
    }
    record::record(&record::Recording {
        out: args.out.clone(),
        format: args.format.format,
        gzip_level: args.format.gzip_level,
        delay_ms: args.delay_ms,
        duration_ms: args.duration_ms,
        roctx_range: args.roctx_range.clone(),
        tool_env,
        program: args.program.clone(),
    })
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let done = |result: Result<(), String>| result.map(|_| ExitCode::SUCCESS).map_err(Stop::from);
    let outcome = match &cli.command {
        Command::Demo { out, model } => done(demo(out, model)),
        Command::Run {
            run: args,
            out,
            format,
        } => run(args, format.outputs(out), format.gzip_level).map(|_| ExitCode::SUCCESS),
        Command::Record(args) => record_command(args).map_err(Stop::from),
        Command::Convert { input, output } => done(convert(input, output)),
        Command::Report {
            traces,
            html,
            svg,
            node,
            json,
        } => done(report_command(
            traces,
            html.as_deref(),
            svg.as_deref(),
            report::PlotChoice { node: *node },
            *json,
        )),
        Command::Validate {
            run: args,
            json,
            out,
            truth_out,
        } => validate_command(args, *json, out.as_deref(), truth_out.as_deref())
            .map(validation_status),
    };
    match outcome {
        Ok(code) => code,
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
