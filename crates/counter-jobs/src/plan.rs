//! The kernel-replay pass plan: which pass of a replayed dispatch collects
//! which counter group, and which one runs the thread trace.
//!
//! rocprofv3's tool keeps this in `kernel_replay_plan.{hpp,cpp}` (seed 004):
//! the thread-trace pass sits after `att_after_groups` configured groups
//! (`ROCPROF_KERNEL_REPLAY_ATT_AFTER_GROUPS`, 0 keeps it first), the other
//! passes take the counter groups in order, and an agent that cannot
//! collect some configured group places the trace after the groups it does
//! collect that were configured ahead of it.

/// What one pass collects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PassKind {
    /// The agent's counter group at this index.
    Counters(u64),
    ThreadTrace,
}

/// One agent's passes: `counter_passes` groups and, maybe, the trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PassLayout {
    counter_passes: u64,
    thread_trace_pass: Option<u64>,
}

impl PassLayout {
    /// Counter groups only.
    pub fn counters(counter_passes: u64) -> PassLayout {
        PassLayout {
            counter_passes,
            thread_trace_pass: None,
        }
    }

    /// The trace at pass `at`, between the groups; `None` when `at` is past
    /// the last group (there is no pass there to take).
    pub fn with_thread_trace(counter_passes: u64, at: u64) -> Option<PassLayout> {
        (at <= counter_passes).then_some(PassLayout {
            counter_passes,
            thread_trace_pass: Some(at),
        })
    }

    pub fn counter_passes(&self) -> u64 {
        self.counter_passes
    }

    pub fn thread_trace_pass(&self) -> Option<u64> {
        self.thread_trace_pass
    }

    /// Every pass: the groups, plus one for the trace.
    pub fn total_passes(&self) -> u64 {
        self.counter_passes + u64::from(self.thread_trace_pass.is_some())
    }

    /// What pass `pass` collects; `None` past the last pass.
    pub fn pass(&self, pass: u64) -> Option<PassKind> {
        if pass >= self.total_passes() {
            return None;
        }
        Some(match self.thread_trace_pass {
            Some(t) if pass == t => PassKind::ThreadTrace,
            Some(t) if pass > t => PassKind::Counters(pass - 1),
            _ => PassKind::Counters(pass),
        })
    }

    /// The pass that collects counter group `group`.
    pub fn pass_of_group(&self, group: u64) -> Option<u64> {
        if group >= self.counter_passes {
            return None;
        }
        Some(match self.thread_trace_pass {
            Some(t) if group >= t => group + 1,
            _ => group,
        })
    }
}

/// Where the trace goes on one agent: after every counter profile of that
/// agent built from one of the first `att_after_groups` configured groups.
/// `agent_group_sources[i]` is the configured group behind the agent's i-th
/// profile (an agent skips the groups it cannot collect, so the two lists
/// can differ).
pub fn thread_trace_pass_index(agent_group_sources: &[u64], att_after_groups: u64) -> u64 {
    agent_group_sources
        .iter()
        .filter(|&&source| source < att_after_groups)
        .count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each pass as a character: the group's digit, or `T` for the trace.
    fn sequence(layout: &PassLayout) -> String {
        (0..layout.total_passes())
            .map(|p| match layout.pass(p).expect("within total") {
                PassKind::Counters(g) => char::from(b'0' + g as u8),
                PassKind::ThreadTrace => 'T',
            })
            .collect()
    }

    #[test]
    fn counter_groups_only() {
        let layout = PassLayout::counters(3);
        assert_eq!(layout.total_passes(), 3);
        assert_eq!(sequence(&layout), "012");
        assert_eq!(layout.pass(3), None);
    }

    #[test]
    fn thread_trace_first() {
        let layout = PassLayout::with_thread_trace(2, 0).unwrap();
        assert_eq!(layout.total_passes(), 3);
        assert_eq!(sequence(&layout), "T01");
    }

    #[test]
    fn thread_trace_between_counter_groups() {
        let layout = PassLayout::with_thread_trace(3, 1).unwrap();
        assert_eq!(sequence(&layout), "0T12");
    }

    #[test]
    fn thread_trace_last() {
        let layout = PassLayout::with_thread_trace(2, 2).unwrap();
        assert_eq!(sequence(&layout), "01T");
    }

    #[test]
    fn thread_trace_without_counter_groups_is_one_pass() {
        let layout = PassLayout::with_thread_trace(0, 0).unwrap();
        assert_eq!(layout.total_passes(), 1);
        assert_eq!(sequence(&layout), "T");
    }

    #[test]
    fn a_trace_past_the_last_group_has_no_pass() {
        assert_eq!(PassLayout::with_thread_trace(2, 3), None);
    }

    #[test]
    fn thread_trace_index_follows_the_configured_groups() {
        let all = [0, 1, 2];
        assert_eq!(thread_trace_pass_index(&all, 0), 0);
        assert_eq!(thread_trace_pass_index(&all, 1), 1);
        assert_eq!(thread_trace_pass_index(&all, 3), 3);
    }

    /// An agent without configured group 1 has profiles from groups 0 and 2:
    /// a trace configured after two groups still follows group 0 and
    /// precedes group 2 there.
    #[test]
    fn thread_trace_index_skips_groups_the_agent_lacks() {
        let sources = [0, 2];
        assert_eq!(thread_trace_pass_index(&sources, 0), 0);
        assert_eq!(thread_trace_pass_index(&sources, 1), 1);
        assert_eq!(thread_trace_pass_index(&sources, 2), 1);
        assert_eq!(thread_trace_pass_index(&sources, 3), 2);
        let layout =
            PassLayout::with_thread_trace(2, thread_trace_pass_index(&sources, 2)).unwrap();
        assert_eq!(sequence(&layout), "0T1");
    }

    #[test]
    fn each_group_has_exactly_one_pass_and_back() {
        for groups in 0..5 {
            for at in 0..=groups {
                let layout = PassLayout::with_thread_trace(groups, at).unwrap();
                let mut seen = Vec::new();
                for p in 0..layout.total_passes() {
                    if let Some(PassKind::Counters(g)) = layout.pass(p) {
                        assert_eq!(layout.pass_of_group(g), Some(p));
                        seen.push(g);
                    }
                }
                assert_eq!(seen, (0..groups).collect::<Vec<_>>());
                assert_eq!(layout.pass(at), Some(PassKind::ThreadTrace));
            }
        }
    }
}
