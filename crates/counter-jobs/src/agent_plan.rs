//! One agent's share of a kernel-replay run: the configured groups it can
//! collect, in order, where its thread-trace pass goes, and the groups it
//! skips, with the counters it lacks, so the user is told rather than left
//! with silently missing values.
//!
//! Seed 004 (rocprofv3's tool): an agent skips the configured groups it
//! cannot collect, each of its profiles records the configured group it was
//! built from, and its thread-trace pass follows exactly the groups
//! configured ahead of the trace job, not a fixed count of its own groups.
use crate::fold::Replay;
use crate::plan::{thread_trace_pass_index, PassKind, PassLayout};
use std::fmt;

/// A configured group an agent cannot collect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkippedGroup {
    /// Its index among the run's configured groups.
    pub group: u64,
    /// Its counters the agent does not support, in the group's order.
    pub missing: Vec<String>,
}

impl fmt::Display for SkippedGroup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "counter group {} skipped: not supported here: {}",
            self.group,
            self.missing.join(", ")
        )
    }
}

/// What one agent does for each selected dispatch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentPlan {
    /// The configured group behind each of the agent's counter passes.
    pub sources: Vec<u64>,
    /// Its passes. No pass at all (no collectable group, no trace) means
    /// its dispatches are not replayed: they run once, collecting nothing.
    pub layout: PassLayout,
    pub skipped: Vec<SkippedGroup>,
}

impl AgentPlan {
    /// The configured group a counter pass collects; `None` for the trace
    /// pass or past the last pass.
    pub fn group_of_pass(&self, pass: u64) -> Option<u64> {
        match self.layout.pass(pass)? {
            PassKind::Counters(i) => self.sources.get(i as usize).copied(),
            PassKind::ThreadTrace => None,
        }
    }
}

impl Replay {
    /// This run on an agent that supports the counters `supports` accepts.
    pub fn for_agent(&self, supports: impl Fn(&str) -> bool) -> AgentPlan {
        let mut sources = Vec::new();
        let mut skipped = Vec::new();
        for (g, group) in self.groups().iter().enumerate() {
            let missing: Vec<String> = group.iter().filter(|c| !supports(c)).cloned().collect();
            if missing.is_empty() {
                sources.push(g as u64);
            } else {
                skipped.push(SkippedGroup {
                    group: g as u64,
                    missing,
                });
            }
        }
        let groups = sources.len() as u64;
        let layout = match self.att_after_groups() {
            Some(after) => {
                PassLayout::with_thread_trace(groups, thread_trace_pass_index(&sources, after))
                    .expect("the index counts the agent's own groups")
            }
            None => PassLayout::counters(groups),
        };
        AgentPlan {
            sources,
            layout,
            skipped,
        }
    }
}
