//! Writers for finished windows.
pub mod chrome_trace;
