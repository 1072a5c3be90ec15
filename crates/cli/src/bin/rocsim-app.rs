//! rocsim-app: a HIP application on the simulated runtime, for
//! `kineto-rocm record` to profile from the outside. It knows nothing of
//! kineto-rocm: it loads the runtime (the simulator, as an application
//! links libamdhip64) and runs a workload file as the steps of a loop; any
//! tool comes in through ROCP_TOOL_LIBRARIES, and is finalised at exit, as
//! the real SDK does. It can end as real programs do: normally, by calling
//! exit() in the middle with device work in flight, or by a signal. Like
//! many programs, it marks its work with ROCTX ranges (libroctx64's
//! roctxRangePushA/Pop): one named `rocsim-app` around the whole loop and,
//! with --roctx-range NAME, one named NAME around each step chosen by
//! --roctx-steps (default every step); exit() comes inside the step's range.
//!
//!   rocsim-app --workload W [--steps N] [--exit-after-step K [--exit-code C]]
//!              [--roctx-range NAME [--roctx-steps 1,2,4]]
use rocprofiler_sim::host::Simulator;
use rocprofiler_sim::options::RunOptions;
use rocprofiler_sim::workload::Workload;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage: rocsim-app --workload FILE [--steps N (0: until stopped)] [--exit-after-step K [--exit-code C]] [--virtual-time] [--roctx-range NAME [--roctx-steps K,L,...]]";

struct Args {
    workload: PathBuf,
    steps: u64,
    exit_after: Option<(u64, i32)>,
    virtual_time: bool,
    /// The range around chosen steps, and those steps (None: every step).
    roctx: Option<(String, Option<Vec<u64>>)>,
}

fn step_list(text: &str) -> Result<Vec<u64>, String> {
    text.split(',')
        .map(|s| {
            s.trim()
                .parse()
                .map_err(|e| format!("--roctx-steps {text}: {e}"))
        })
        .collect()
}

fn parse() -> Result<Args, String> {
    let mut args = std::env::args().skip(1);
    let (mut workload, mut steps, mut exit_after, mut exit_code, mut virtual_time) =
        (None, 1, None, 1, false);
    let (mut roctx_range, mut roctx_steps) = (None, None);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--workload" => workload = Some(PathBuf::from(value("--workload")?)),
            "--steps" => {
                steps = value("--steps")?
                    .parse()
                    .map_err(|e| format!("--steps: {e}"))?
            }
            "--exit-after-step" => {
                exit_after = Some(
                    value("--exit-after-step")?
                        .parse()
                        .map_err(|e| format!("--exit-after-step: {e}"))?,
                )
            }
            "--exit-code" => {
                exit_code = value("--exit-code")?
                    .parse()
                    .map_err(|e| format!("--exit-code: {e}"))?
            }
            "--virtual-time" => virtual_time = true,
            "--roctx-range" => roctx_range = Some(value("--roctx-range")?),
            "--roctx-steps" => roctx_steps = Some(step_list(&value("--roctx-steps")?)?),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(Args {
        workload: workload.ok_or("--workload is required")?,
        steps,
        exit_after: exit_after.map(|step| (step, exit_code)),
        virtual_time,
        roctx: match (roctx_range, roctx_steps) {
            (None, Some(_)) => return Err("--roctx-steps needs --roctx-range".into()),
            (range, steps) => range.map(|r| (r, steps)),
        },
    })
}

fn run(args: &Args) -> Result<(), String> {
    let text = std::fs::read_to_string(&args.workload)
        .map_err(|e| format!("{}: cannot read: {e}", args.workload.display()))?;
    let name = args.workload.display().to_string();
    let workload = Workload::parse(&text, &name).map_err(|e| e.to_string())?;
    // The runtime's SDK is the version the workload names.
    std::env::set_var("ROCSIM_SDK_VERSION", workload.sdk_version.to_string());
    let runtime = Simulator::load_default().map_err(|e| e.to_string())?;
    let options = RunOptions {
        source_name: Some(name),
        virtual_time: args.virtual_time,
        record_truth: false,
        ..RunOptions::default()
    };
    let roctx = |result: Result<i32, _>| result.map(drop).map_err(|e| format!("roctx: {e}"));
    roctx(runtime.roctx_range_push("rocsim-app"))?;
    let mut step = 0;
    while args.steps == 0 || step < args.steps {
        let ranged = args
            .roctx
            .as_ref()
            .filter(|(_, steps)| steps.as_ref().is_none_or(|steps| steps.contains(&step)));
        if let Some((name, _)) = ranged {
            roctx(runtime.roctx_range_push(name))?;
        }
        runtime
            .run_workload(&text, &options)
            .map_err(|e| e.to_string())?;
        println!("rocsim-app: step {step} done");
        let _ = std::io::stdout().flush();
        if let Some((after, code)) = args.exit_after {
            if step == after {
                // No synchronisation: device work may still be in flight.
                std::process::exit(code);
            }
        }
        if ranged.is_some() {
            roctx(runtime.roctx_range_pop())?;
        }
        step += 1;
    }
    roctx(runtime.roctx_range_pop())?;
    Ok(())
}

fn main() -> ExitCode {
    match parse().and_then(|args| run(&args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("rocsim-app: {message}\n{USAGE}");
            ExitCode::FAILURE
        }
    }
}
