//! Writers for finished windows. They are handed the windows: taking them
//! from the session is the caller's business, so a writer only writes.
pub mod chrome_trace;
mod counter_tracks;
mod event;
mod event_shapes;
pub mod kineto_json;
pub mod pftrace;
mod room;
mod sink;

pub use kineto_json::write_windows;

use crate::error::ToolError;
use crate::window::FinishedWindow;
use std::path::Path;

/// Which file a trace is written as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceFormat {
    /// kineto's chrome-trace JSON.
    Json,
    /// Perfetto's protobuf trace, gzip-compressed at this level.
    Pftrace(pftrace::GzipLevel),
}

/// Writes `windows` as one trace at `path`. Returns how many kernel events
/// were written. The file appears whole or not at all: it is written next to
/// `path` and renamed, so a reader (or a crash mid-write) never sees half a
/// trace.
pub fn write_trace_file(
    path: &Path,
    windows: &[FinishedWindow],
    format: TraceFormat,
) -> Result<usize, ToolError> {
    let partial = path.with_file_name(format!(
        ".{}.partial",
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "trace".into())
    ));
    let started = std::time::Instant::now();
    let file = std::fs::File::create(&partial)
        .map_err(|e| ToolError::Io(format!("cannot create {}: {e}", partial.display())))?;
    // A trace is hundreds of megabytes: write it a megabyte at a time (the
    // JSON writer keeps its own megabyte, which its events are written
    // into, so a buffer here would only copy them once more).
    let written = match format {
        TraceFormat::Json => write_windows(windows, file),
        TraceFormat::Pftrace(level) => pftrace::write_windows(
            windows,
            std::io::BufWriter::with_capacity(1 << 20, file),
            level,
        ),
    };
    let kernels = written.map_err(|e| {
        let _ = std::fs::remove_file(&partial);
        ToolError::Io(format!("cannot write {}: {e}", path.display()))
    })?;
    std::fs::rename(&partial, path).map_err(|e| {
        ToolError::Io(format!(
            "cannot move {} to {}: {e}",
            partial.display(),
            path.display()
        ))
    })?;
    let bytes = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    log::info!(
        "kineto-rocm: wrote {} ({format:?}): {bytes} bytes, {kernels} kernels, in {:.3} s",
        path.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(kernels)
}
