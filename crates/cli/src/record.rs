//! `kineto-rocm record -- PROGRAM ARGS...`: runs any HIP program with the
//! tool library loaded by the SDK (listed in `ROCP_TOOL_LIBRARIES`, as
//! rocprofv3 does) and the recording's settings in its environment
//! (src/recorder/ in the tool library), waits for it, and says where the
//! trace went and whether it is whole. SIGINT and SIGTERM sent to `record`
//! go on to the program (forward_signals.rs); `record` exits with the
//! program's status.
use crate::forward_signals;
use crate::output::{Format, Output};
use crate::session;
use crate::trace;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::SystemTime;

/// The recording's settings, as `record` takes them.
pub struct Recording {
    pub out: PathBuf,
    pub format: Option<Format>,
    pub gzip_level: u32,
    pub delay_ms: u64,
    pub duration_ms: Option<u64>,
    /// A ROCTX range whose pushes open the window and pops close it
    /// (instead of the delay and duration).
    pub roctx_range: Option<String>,
    /// The tool's own settings (graph attribution, flush deadline, buffer).
    pub tool_env: Vec<(&'static str, String)>,
    pub program: Vec<OsString>,
}

fn absolute(path: &Path) -> Result<PathBuf, String> {
    std::path::absolute(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// The status `record` exits with: the program's, or 128 + its signal.
fn status_of(status: std::process::ExitStatus) -> (u8, String) {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => (code as u8, format!("exited with status {code}")),
        (None, Some(signal)) => (
            (128 + signal) as u8,
            format!("was ended by signal {signal}"),
        ),
        _ => (1, "ended".into()),
    }
}

pub fn record(recording: &Recording) -> Result<ExitCode, String> {
    let (program, args) = recording
        .program
        .split_first()
        .ok_or("record needs a program to run: kineto-rocm record [OPTIONS] -- PROGRAM ARGS...")?;
    let output = Output::new(&absolute(&recording.out)?, recording.format);
    let tool = absolute(&session::tool_path()?)?;
    let mut tools = OsString::from(&tool);
    if let Some(others) = std::env::var_os("ROCP_TOOL_LIBRARIES").filter(|v| !v.is_empty()) {
        tools.push(":");
        tools.push(others);
    }
    let mut command = Command::new(program);
    command
        .args(args)
        .env("ROCP_TOOL_LIBRARIES", tools)
        .env("KINETO_ROCM_RECORD_OUT", &output.path)
        .env(
            "KINETO_ROCM_RECORD_FORMAT",
            match output.format {
                Format::Json => "json",
                Format::Pftrace => "pftrace",
            },
        )
        .env(
            "KINETO_ROCM_RECORD_GZIP_LEVEL",
            recording.gzip_level.to_string(),
        )
        .env_remove("KINETO_ROCM_RECORD_DELAY_MS")
        .env_remove("KINETO_ROCM_RECORD_DURATION_MS")
        .env_remove("KINETO_ROCM_RECORD_ROCTX_RANGE");
    match &recording.roctx_range {
        Some(range) => {
            command.env("KINETO_ROCM_RECORD_ROCTX_RANGE", range);
        }
        None => {
            command.env(
                "KINETO_ROCM_RECORD_DELAY_MS",
                recording.delay_ms.to_string(),
            );
            if let Some(ms) = recording.duration_ms {
                command.env("KINETO_ROCM_RECORD_DURATION_MS", ms.to_string());
            }
        }
    }
    for (key, value) in &recording.tool_env {
        command.env(key, value);
    }
    let started = SystemTime::now();
    forward_signals::install();
    let mut child = command
        .spawn()
        .map_err(|e| format!("{}: cannot start: {e}", Path::new(program).display()))?;
    forward_signals::to(child.id());
    // The recorder puts the process id where the path says `%p`.
    let output = Output {
        path: PathBuf::from(
            output
                .path
                .to_string_lossy()
                .replace("%p", &child.id().to_string()),
        ),
        format: output.format,
    };
    let status = child
        .wait()
        .map_err(|e| format!("waiting for the program: {e}"))?;
    forward_signals::to(0);
    let (code, how) = status_of(status);
    let written = std::fs::metadata(&output.path)
        .and_then(|m| m.modified())
        .is_ok_and(|modified| modified >= started);
    if !written {
        return Err(format!(
            "the program {how} and wrote no trace to {}: it never initialised the HIP runtime, or was killed by a signal that cannot be caught (SIGKILL)",
            output.path.display()
        ));
    }
    let trace = trace::read(&output.path)?;
    let counts = trace::EventCounts::of(&trace);
    let recording_line = trace
        .summary
        .iter()
        .find_map(|l| l.split_once("recording=").map(|(_, r)| r.to_string()))
        .unwrap_or_else(|| "no recording line".into());
    println!(
        "{}: {} kernels ({} with graph fields), {} memory copies; the program {how}; {recording_line}",
        output.path.display(),
        counts.kernels,
        counts.graphed,
        counts.copies
    );
    Ok(ExitCode::from(code))
}
