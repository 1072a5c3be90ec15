//! kineto-rocm: runs a workload on the simulated ROCm runtime with the real
//! tool library attached, writes a kineto-format trace, and checks it.
//!
//!   kineto-rocm demo                         the built-in 32-node graph x 200
//!   kineto-rocm run --workload W --out T     any workload file
//!   kineto-rocm validate --workload W        compare with the ground truth
mod markers;
mod session;
mod table;
mod trace;
mod validate;

use clap::{Args, Parser, Subcommand};
use rocprofiler_sim::options::RunOptions;
use session::{Session, WorkloadSource};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The seed's 32-node graph replayed 200 times.
const DEMO_WORKLOAD: &str = include_str!("../../../tests/workloads/graph-32x200.json");

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
    },
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
}

impl RunArgs {
    fn options(&self) -> RunOptions {
        let mut options = RunOptions {
            hw_queues: self.hw_queues,
            virtual_time: self.virtual_time,
            ..RunOptions::default()
        };
        if let Some(seed) = self.seed {
            options.seed = seed;
        }
        options
    }
}

fn progress(message: &str) {
    eprintln!("kineto-rocm: {message}");
}

/// Loads, starts, runs, stops, writes: one window around the whole workload.
fn profile(workload: &WorkloadSource, options: &RunOptions, out: &Path) -> Result<Session, String> {
    let session = Session::load(workload)?;
    session.start()?;
    progress(&format!("running {}", workload.name));
    let started = std::time::Instant::now();
    session.run(workload, options)?;
    session.stop()?;
    progress(&format!(
        "workload done in {:.2?}; waiting for in-flight records and writing {}",
        started.elapsed(),
        out.display()
    ));
    session.write_trace(out)?;
    Ok(session)
}

fn demo(out: &Path) -> Result<(), String> {
    let workload = WorkloadSource {
        name: "built-in graph-32x200".into(),
        text: DEMO_WORKLOAD.into(),
    };
    let session = profile(&workload, &RunOptions::default(), out)?;
    session.shutdown()?;
    let trace = trace::read(out)?;
    table::print(&table::node_rows(&trace.events));
    let attributed = trace.events.iter().filter(|e| e.graph.is_some()).count();
    println!(
        "\n{} kernel events, {attributed} carrying graph id and graph node id; trace: {}",
        trace.events.len(),
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

fn run(args: &RunArgs, out: &Path) -> Result<(), String> {
    let workload = args.workload()?;
    let session = profile(&workload, &args.options(), out)?;
    session.shutdown()?;
    let trace = trace::read(out)?;
    let attributed = trace.events.iter().filter(|e| e.graph.is_some()).count();
    println!(
        "{} GPU events ({attributed} with graph fields) written to {}",
        trace.events.len(),
        out.display()
    );
    Ok(())
}

fn validate_command(args: &RunArgs, json: bool, out: Option<&Path>) -> Result<bool, String> {
    let workload = args.workload()?;
    let default_out =
        std::env::temp_dir().join(format!("kineto-rocm-validate-{}.json", std::process::id()));
    let out = out.unwrap_or(&default_out);
    let session = profile(&workload, &args.options(), out)?;
    session.shutdown()?;
    let truth = session.ground_truth()?;
    let run = truth.runs.last().ok_or("the simulator recorded no run")?;
    let trace = trace::read(out)?;
    let report = validate::validate(&trace.events, run);
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).expect("report serialises")
        );
    } else {
        validate::print(&report, &trace.summary);
    }
    if out == default_out {
        let _ = std::fs::remove_file(out);
    }
    Ok(report.is_clean())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match &cli.command {
        Command::Demo { out } => demo(out).map(|_| true),
        Command::Run { run: args, out } => run(args, out).map(|_| true),
        Command::Validate {
            run: args,
            json,
            out,
        } => validate_command(args, *json, out.as_deref()),
    };
    match outcome {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!("kineto-rocm: validation found wrong pairs");
            ExitCode::from(2)
        }
        Err(message) => {
            eprintln!("kineto-rocm: {message}");
            ExitCode::FAILURE
        }
    }
}
