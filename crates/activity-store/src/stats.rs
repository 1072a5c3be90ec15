//! A window's summary, for the trace metadata and the log.
//!
//! A reader of a trace should be able to tell from the trace alone whether
//! it is whole: how many records of each kind it holds, how many were
//! refused and why, and whether the deadline cut the wait short.

use std::fmt;

use crate::completeness::Completeness;
use crate::drops::DropCounts;
use crate::windows::WindowId;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowStats {
    pub window: WindowId,
    pub kernels: usize,
    pub copies: usize,
    pub api_calls: usize,
    pub graph_launches: usize,
    /// Records this window refused because it was full.
    pub over_limit: u64,
    pub completeness: Completeness,
    /// Everything the store had refused, all windows together, when this
    /// window was finalised. Records outside every window and late ones
    /// belong to no window, so only the session total can say them.
    pub session_drops: DropCounts,
}

impl WindowStats {
    pub fn records(&self) -> usize {
        self.kernels + self.copies + self.api_calls + self.graph_launches
    }
}

impl fmt::Display for WindowStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} kernels, {} copies, {} API calls, {} graph launches; \
             {} over the window's limit; {}; session: {}",
            self.window,
            self.kernels,
            self.copies,
            self.api_calls,
            self.graph_launches,
            self.over_limit,
            self.completeness,
            self.session_drops
        )
    }
}
