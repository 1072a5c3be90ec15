//! Writers for finished windows.
pub mod chrome_trace;
mod kineto_json;

pub use kineto_json::write_windows;

use crate::api::{self, ToolError};
use std::path::Path;

/// Finishes every stopped window and writes them as one kineto-format trace.
/// Returns how many kernel events were written.
pub fn write_trace_file(path: &Path) -> Result<usize, ToolError> {
    let windows = api::take_finished_windows()?;
    let file = std::fs::File::create(path)
        .map_err(|e| ToolError::Io(format!("cannot create {}: {e}", path.display())))?;
    write_windows(&windows, std::io::BufWriter::new(file))
        .map_err(|e| ToolError::Io(format!("cannot write {}: {e}", path.display())))
}
