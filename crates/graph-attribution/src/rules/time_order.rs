//! Rule 10: what ran after what, on the GPU's clock.
//!
//! Two orders hold on the device whatever thread wrote or processed the
//! packets:
//!
//! - **Dependencies.** A node starts after every node it waits for has
//!   ended (hip_graph_internal.cpp: one stream runs in order, and a node
//!   that waits for a node on another stream gets a barrier packet).
//! - **Stream order** (the assumption `STREAM_ORDER` in
//!   docs/attribution.md). Work on one stream runs in the order it was
//!   enqueued: a call's work starts after the work of every call enqueued
//!   earlier on the stream has ended, a graph launch's as a whole (HIP's
//!   stream semantics, which hipGraphLaunch keeps: `EnqueueSegmentedGraph`
//!   starts on the launch stream and joins every other stream back to it).
//!   Two calls naming one stream were enqueued in call order when the first
//!   returned before the second entered. The stream is the SDK's HIP_STREAM
//!   id, which names one stream for the session (rocprofiler-sdk
//!   hip/stream.cpp gives a re-created `hipStream_t` a new id); id 0, the
//!   null stream of whichever device is current, is left out.
//!
//! So if record r is output o of a call, r started after the end of
//! whichever record each output o waits for is, and so after the earliest
//! end among that output's remaining candidates; and symmetrically before
//! the latest start among the candidates of every output that waits for o.
//! Only outputs certainly some record's bound others: mandatory ones, an
//! optional one (a fill or a copy, which may run where no record shows
//! it) that rule 9 finds every matching gives a record, or one that is a
//! record's only candidate left. Only
//! records with a dispatch id (kernels and blits, timed by one device's
//! packet processor) are compared; copy-engine copies are left alone. One
//! pass in ENTER order and one in reverse EXIT order carry the bounds along
//! whole chains of launches.

use std::collections::HashMap;
use std::sync::Arc;

use crate::assumptions::Assumptions;
use crate::calls::{CallIndex, Produces, ResolvedExec};
use crate::evidence::{Observation, Observations};
use crate::joint::Joint;

/// Per output of an exec, the outputs it waits for (or that wait for it)
/// nearest, shared by the exec's launches.
type Nearest = Arc<Vec<Vec<u32>>>;

/// What the passes need, computed once per window.
pub(crate) struct Plan {
    by_enter: Vec<u32>,
    by_exit_desc: Vec<u32>,
    /// Per call, per output: the outputs it waits for nearest, and those
    /// that wait for it nearest (`None`: eager, waits for nothing).
    pub(crate) preds: Vec<Option<Nearest>>,
    pub(crate) succs: Vec<Option<Nearest>>,
    /// Per call: (its stream's index in `streams`, its rank there by EXIT,
    /// its rank there by ENTER).
    pub(crate) on_stream: Vec<Option<(u32, u32, u32)>>,
    pub(crate) streams: Vec<StreamCalls>,
}

/// The calls of one stream, their EXITs and ENTERs sorted.
pub(crate) struct StreamCalls {
    pub(crate) exits: Vec<u64>,
    pub(crate) enters: Vec<u64>,
}

impl Plan {
    /// Without `dependency_order` no node bounds another; without
    /// `stream_order` no call bounds another.
    pub(crate) fn new(index: &CallIndex<'_>, joint: &Joint, assumptions: Assumptions) -> Plan {
        let calls = index.evidence.calls.len();
        let producing: Vec<u32> = (0..calls as u32)
            .filter(|&c| joint.first_slot[c as usize] < joint.first_slot[c as usize + 1])
            .collect();
        let span = |c: u32| {
            let call = index.call(c);
            (call.enter_ns, call.exit_ns.max(call.enter_ns))
        };
        let mut by_enter = producing.clone();
        by_enter.sort_unstable_by_key(|&c| (span(c).0, c));
        let mut by_exit_desc = producing.clone();
        by_exit_desc.sort_unstable_by_key(|&c| std::cmp::Reverse((span(c).1, c)));

        let mut shared: HashMap<*const ResolvedExec, (Nearest, Nearest)> = HashMap::new();
        let mut preds = vec![None; calls];
        let mut succs = vec![None; calls];
        for &c in producing.iter().filter(|_| assumptions.dependency_order) {
            if let Produces::Graph { exec, .. } = &index.produces[c as usize] {
                let (p, s) = shared
                    .entry(Arc::as_ptr(exec))
                    .or_insert_with(|| {
                        let p = exec.nearest_producing_ancestors();
                        let mut s = vec![Vec::new(); p.len()];
                        for (k, ps) in p.iter().enumerate() {
                            for &q in ps {
                                s[q as usize].push(k as u32);
                            }
                        }
                        (Arc::new(p), Arc::new(s))
                    })
                    .clone();
                preds[c as usize] = Some(p);
                succs[c as usize] = Some(s);
            }
        }

        let mut by_stream: HashMap<u64, Vec<u32>> = HashMap::new();
        for &c in producing.iter().filter(|_| assumptions.stream_order) {
            if let Some(s) = index.call(c).stream.filter(|&s| s != 0) {
                by_stream.entry(s).or_default().push(c);
            }
        }
        let mut on_stream = vec![None; calls];
        let mut streams = Vec::new();
        let mut ids: Vec<u64> = by_stream.keys().copied().collect();
        ids.sort_unstable();
        for id in ids {
            let members = &by_stream[&id];
            let si = streams.len() as u32;
            let mut exits: Vec<(u64, u32)> = members.iter().map(|&c| (span(c).1, c)).collect();
            let mut enters: Vec<(u64, u32)> = members.iter().map(|&c| (span(c).0, c)).collect();
            exits.sort_unstable();
            enters.sort_unstable();
            let mut rank: HashMap<u32, (u32, u32)> = HashMap::new();
            for (i, &(_, c)) in exits.iter().enumerate() {
                rank.entry(c).or_default().0 = i as u32;
            }
            for (i, &(_, c)) in enters.iter().enumerate() {
                rank.entry(c).or_default().1 = i as u32;
            }
            for (c, (x, e)) in rank {
                on_stream[c as usize] = Some((si, x, e));
            }
            streams.push(StreamCalls {
                exits: exits.into_iter().map(|(t, _)| t).collect(),
                enters: enters.into_iter().map(|(t, _)| t).collect(),
            });
        }
        Plan {
            by_enter,
            by_exit_desc,
            preds,
            succs,
            on_stream,
            streams,
        }
    }
}

/// Rule 10: one forward and one backward pass.
pub(crate) fn prune(
    index: &CallIndex<'_>,
    observations: &Observations,
    joint: &mut Joint,
    plan: &Plan,
) {
    let timed = |r: u32| observations.dispatch_id(r as usize).is_some();
    // Forward: lower bounds on starts.
    let mut ends: Vec<Fenwick> = plan
        .streams
        .iter()
        .map(|s| Fenwick::new(s.exits.len(), 0, u64::max))
        .collect();
    for &c in &plan.by_enter {
        let enter = index.call(c).enter_ns;
        let after_stream = plan.on_stream[c as usize].map_or(0, |(si, _, _)| {
            let s = &plan.streams[si as usize];
            ends[si as usize].prefix(s.exits.partition_point(|&x| x < enter))
        });
        let first = joint.first_slot[c as usize];
        let n = (joint.first_slot[c as usize + 1] - first) as usize;
        let mut min_end: Vec<Option<u64>> = vec![None; n];
        let mut latest = None::<u64>;
        for k in 0..n {
            let mut bound = after_stream;
            if let Some(p) = &plan.preds[c as usize] {
                for &q in &p[k] {
                    if let Some(e) = min_end[q as usize] {
                        bound = bound.max(e);
                    }
                }
            }
            let s = first + k as u32;
            if bound > 0 {
                let early: Vec<u32> = joint
                    .slot_edges(s)
                    .filter(|&e| {
                        let r = joint.record_of(e);
                        timed(r) && observations.start_ns()[r as usize] < bound
                    })
                    .collect();
                for e in early {
                    joint.remove(e);
                }
            }
            min_end[k] = certain(joint, observations, s, |o| o.end_ns, u64::min);
            latest = match (latest, min_end[k]) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            };
        }
        if let (Some((si, rank, _)), Some(latest)) = (plan.on_stream[c as usize], latest) {
            ends[si as usize].put(rank as usize, latest);
        }
    }
    // Backward: upper bounds on ends.
    let mut starts: Vec<Fenwick> = plan
        .streams
        .iter()
        .map(|s| Fenwick::new(s.enters.len(), u64::MAX, u64::min))
        .collect();
    for &c in &plan.by_exit_desc {
        let call = index.call(c);
        let exit = call.exit_ns.max(call.enter_ns);
        let before_stream = plan.on_stream[c as usize].map_or(u64::MAX, |(si, _, _)| {
            let s = &plan.streams[si as usize];
            // Calls that entered after this one returned: the suffix.
            let from = s.enters.partition_point(|&x| x <= exit);
            starts[si as usize].prefix(s.enters.len() - from)
        });
        let first = joint.first_slot[c as usize];
        let n = (joint.first_slot[c as usize + 1] - first) as usize;
        let mut max_start: Vec<Option<u64>> = vec![None; n];
        let mut earliest = None::<u64>;
        for k in (0..n).rev() {
            let mut bound = before_stream;
            if let Some(s) = &plan.succs[c as usize] {
                for &q in &s[k] {
                    if let Some(t) = max_start[q as usize] {
                        bound = bound.min(t);
                    }
                }
            }
            let s = first + k as u32;
            if bound < u64::MAX {
                let late: Vec<u32> = joint
                    .slot_edges(s)
                    .filter(|&e| {
                        let r = joint.record_of(e);
                        timed(r) && observations.end_ns()[r as usize] > bound
                    })
                    .collect();
                for e in late {
                    joint.remove(e);
                }
            }
            max_start[k] = certain(joint, observations, s, |o| o.start_ns, u64::max);
            earliest = match (earliest, max_start[k]) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        if let (Some((si, _, rank)), Some(earliest)) = (plan.on_stream[c as usize], earliest) {
            // Indexed from the latest ENTER, so a prefix is a suffix in time.
            let len = plan.streams[si as usize].enters.len();
            starts[si as usize].put(len - 1 - rank as usize, earliest);
        }
    }
}

/// For a slot certainly some record's (mandatory, or found taken by rule
/// 9) whose every remaining candidate has a dispatch id: the `pick` (min or
/// max) of `time` over them, which its record certainly reaches. For
/// another optional one (a fill or a copy, which may have run where no
/// record shows it): the time of a record whose only remaining candidate
/// it is, since that record is certainly this output's. `None` otherwise.
fn certain(
    joint: &Joint,
    observations: &Observations,
    s: u32,
    time: impl Fn(&Observation) -> u64,
    pick: fn(u64, u64) -> u64,
) -> Option<u64> {
    if !joint.certainly_taken(s) {
        let only = joint
            .slot_edges(s)
            .map(|e| joint.record_of(e))
            .find(|&r| joint.bounded[r as usize] && joint.record_edges(r).nth(1).is_none())?;
        let o = observations.get(only as usize);
        o.dispatch_id?;
        return Some(time(&o));
    }
    let mut out: Option<u64> = None;
    for e in joint.slot_edges(s) {
        let o = &observations.get(joint.record_of(e) as usize);
        o.dispatch_id?;
        out = Some(out.map_or(time(o), |v| pick(v, time(o))));
    }
    out
}

/// A Fenwick tree of prefix maxima (or minima): `put` raises (lowers) one
/// position, `prefix(n)` combines the first n.
struct Fenwick {
    tree: Vec<u64>,
    zero: u64,
    join: fn(u64, u64) -> u64,
}

impl Fenwick {
    fn new(n: usize, zero: u64, join: fn(u64, u64) -> u64) -> Fenwick {
        Fenwick {
            tree: vec![zero; n + 1],
            zero,
            join,
        }
    }

    fn put(&mut self, at: usize, value: u64) {
        let mut i = at + 1;
        while i < self.tree.len() {
            self.tree[i] = (self.join)(self.tree[i], value);
            i += i & i.wrapping_neg();
        }
    }

    fn prefix(&self, n: usize) -> u64 {
        let mut out = self.zero;
        let mut i = n;
        while i > 0 {
            out = (self.join)(out, self.tree[i]);
            i -= i & i.wrapping_neg();
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::joint::testing::*;

    fn pruned(
        calls: &[crate::evidence::Call],
        obs: &[crate::evidence::Observation],
        cands: &[Vec<(u32, u32)>],
        closed: bool,
    ) -> Vec<Vec<u32>> {
        pruned_assuming(calls, obs, cands, closed, Assumptions::ALL)
    }

    fn pruned_assuming(
        calls: &[crate::evidence::Call],
        obs: &[crate::evidence::Observation],
        cands: &[Vec<(u32, u32)>],
        closed: bool,
        assumptions: Assumptions,
    ) -> Vec<Vec<u32>> {
        with_joint(calls, obs, cands, closed, |index, joint| {
            let plan = Plan::new(index, joint, assumptions);
            prune(index, index.evidence.observations, joint, &plan);
            (0..obs.len() as u32).map(|r| calls_of(joint, r)).collect()
        })
    }

    #[test]
    fn a_node_starts_after_the_nodes_it_waits_for_ended() {
        // A launch runs kernel 1 then kernel 2; another thread launches
        // kernel 2 eagerly. The kernel-2 record that started before the
        // launch's kernel 1 ended is the eager one.
        let calls = [
            launch(1, 1, (0, 50), 1, 1, &[(1, &[]), (2, &[0])]),
            eager(2, 2, (0, 50), 2, 2),
        ];
        let obs = [
            record(1, 1, 1, (0, 10)),
            record(1, 2, 2, (5, 15)),
            record(2, 2, 3, (20, 30)),
        ];
        let cands = [vec![(0, 0)], vec![(0, 1), (1, 0)], vec![(0, 1), (1, 0)]];
        let distrusted = Assumptions {
            dependency_order: false,
            ..Assumptions::ALL
        };
        assert_eq!(
            pruned_assuming(&calls, &obs, &cands, true, distrusted),
            [vec![0], vec![0, 1], vec![0, 1]]
        );
        assert_eq!(
            pruned(&calls, &obs, &cands, true),
            [vec![0], vec![1], vec![0, 1]]
        );
    }

    #[test]
    fn the_work_of_a_later_call_on_a_stream_runs_after_the_earlier_calls() {
        // Two eager launches on stream 5, one after the other on the host;
        // the record that ran first on the GPU is the first call's.
        let calls = [eager(1, 1, (0, 10), 5, 3), eager(2, 1, (20, 30), 5, 3)];
        let obs = [record(2, 3, 2, (100, 110)), record(1, 3, 1, (50, 60))];
        let both = vec![(0, 0), (1, 0)];
        let cands = [both.clone(), both.clone()];
        assert_eq!(pruned(&calls, &obs, &cands, true), [vec![1], vec![0]]);
        let distrusted = Assumptions {
            stream_order: false,
            ..Assumptions::ALL
        };
        assert_eq!(
            pruned_assuming(&calls, &obs, &cands, true, distrusted),
            [vec![0, 1], vec![0, 1]]
        );
        // The null stream (id 0) is each device's: no order.
        let null = [eager(1, 1, (0, 10), 0, 3), eager(2, 1, (20, 30), 0, 3)];
        assert_eq!(pruned(&null, &obs, &cands, true), [vec![0, 1], vec![0, 1]]);
        // Calls that overlap on the host were enqueued in either order.
        let overlapping = [eager(1, 1, (0, 25), 5, 3), eager(2, 2, (20, 30), 5, 3)];
        assert_eq!(
            pruned(&overlapping, &obs, &cands, true),
            [vec![0, 1], vec![0, 1]]
        );
        // Outputs that may be missing from the window bound nothing.
        assert_eq!(
            pruned(&calls, &obs, &cands, false),
            [vec![0, 1], vec![0, 1]]
        );
    }

    #[test]
    fn records_without_a_dispatch_id_are_not_compared() {
        let calls = [eager(1, 1, (0, 10), 5, 3), eager(2, 1, (20, 30), 5, 3)];
        let mut obs = [record(2, 3, 2, (100, 110)), record(1, 3, 1, (50, 60))];
        obs[1].dispatch_id = None;
        let both = vec![(0, 0), (1, 0)];
        assert_eq!(
            pruned(&calls, &obs, &[both.clone(), both], true),
            [vec![0, 1], vec![0, 1]]
        );
    }

    #[test]
    fn the_tree_combines_prefixes() {
        let mut f = Fenwick::new(5, 0, u64::max);
        f.put(2, 7);
        f.put(0, 3);
        assert_eq!(
            (
                f.prefix(0),
                f.prefix(1),
                f.prefix(2),
                f.prefix(3),
                f.prefix(5)
            ),
            (0, 3, 3, 7, 7)
        );
        let mut g = Fenwick::new(3, u64::MAX, u64::min);
        g.put(1, 4);
        assert_eq!((g.prefix(1), g.prefix(2)), (u64::MAX, 4));
    }
}
