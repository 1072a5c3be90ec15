//! Writers for finished windows. They are handed the windows: taking them
//! from the session is the caller's business, so a writer only writes.
pub mod chrome_trace;
mod kineto_json;

pub use kineto_json::write_windows;

use crate::error::ToolError;
use crate::window::FinishedWindow;
use std::path::Path;

/// Writes `windows` as one kineto-format trace at `path`. Returns how many
/// kernel events were written.
pub fn write_trace_file(path: &Path, windows: &[FinishedWindow]) -> Result<usize, ToolError> {
    let file = std::fs::File::create(path)
        .map_err(|e| ToolError::Io(format!("cannot create {}: {e}", path.display())))?;
    // A trace is hundreds of megabytes: write it a megabyte at a time.
    write_windows(windows, std::io::BufWriter::with_capacity(1 << 20, file))
        .map_err(|e| ToolError::Io(format!("cannot write {}: {e}", path.display())))
}
