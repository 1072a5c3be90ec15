//! Queues that may have overflowed: where the two-hop rule does not hold.
//!
//! When a hardware queue holds as many packets in flight as it has slots,
//! ROCr's intercept layer stops processing and keeps the rest for later:
//! ROCr's async thread, or the next doorbell rung on that queue, processes
//! them (intercept_queue.cpp `Submit`, `HandleAsyncDoorbell`). A packet can
//! then be processed by a call that met neither its writer nor anything in
//! between, which is what the candidate rule assumes cannot happen. So on a
//! queue that may have come near its capacity, no record is attributed or
//! linked through that rule.
//!
//! The tool knows the capacity (`ROC_AQL_QUEUE_SIZE`, rocclr's AQL queue
//! size, 16384 packets by default) but not every packet: barrier and marker
//! packets leave no record. A queue counts as possibly full when the
//! records that may have been in flight at one time reach a quarter of it,
//! leaving room for as many barriers as records and a factor of two more.
//! A record was in flight from no earlier than its processing call's ENTER
//! (the window's opening when that call is unknown) until its end.

use std::ops::Range;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::calls::CallIndex;
use crate::evidence::{Observation, Observations, NO_DISPATCH_ID};

/// Queues whose records may have reached a quarter of `slots` in flight.
pub(crate) fn possibly_full(
    index: &CallIndex<'_>,
    observations: &Observations,
    slots: u64,
) -> FxHashSet<u64> {
    let limit = (slots / 4).max(1) as usize;
    let mut sweep = InOrder::new(limit);
    let in_order = index.processed_runs().all(|(records, call)| {
        let from = call.map_or(0, |c| index.call(c).enter_ns);
        sweep.add_run(from, observations, records)
    });
    if in_order {
        return sweep.full();
    }
    let mut spans = Vec::new();
    for (records, call) in index.processed_runs() {
        let from = call.map_or(0, |c| index.call(c).enter_ns);
        for o in observations.range(records) {
            if let Some(span) = span(from, &o) {
                spans.push(span);
            }
        }
    }
    sorted(&spans, limit)
}

/// A record's queue, when it may have entered (its processing call's
/// ENTER, `from`, or the window's opening) and when it left; `None` for an
/// engine copy, which takes no queue slot.
fn span(from: u64, o: &Observation) -> Option<(u64, u64, u64)> {
    o.dispatch_id
        .is_some()
        .then_some((o.queue_id, from.min(o.end_ns), o.end_ns))
}

/// One queue's records so far, while they arrive and leave in order.
struct InFlight {
    queue: u64,
    last_arrival: u64,
    /// Departures, in order: those from `left` on may still be in flight.
    departures: Vec<u64>,
    left: usize,
    /// `limit` were in flight at once.
    full: bool,
}

/// [`sorted`] in one pass and no sorting, for spans whose arrivals and
/// departures each come in time order on their queue (a window's records
/// mostly do: calls in order, a queue processed in slot order): the
/// records in flight are then a queue of their own, the oldest leaving
/// first.
struct InOrder {
    limit: usize,
    /// A window uses a few queues; a launch's records mostly share one,
    /// so the last one (`at`) is tried first.
    queues: Vec<InFlight>,
    at: usize,
}

impl InOrder {
    fn new(limit: usize) -> InOrder {
        InOrder {
            limit,
            queues: Vec::new(),
            at: 0,
        }
    }

    /// Adds the spans of one processed run of records, all of whose queued
    /// ones entered no earlier than `from`; false when one is out of order
    /// on its queue. Records of one queue that left after `from` share
    /// their arrival, so they go in a stretch at a time.
    fn add_run(&mut self, from: u64, observations: &Observations, records: Range<usize>) -> bool {
        // The three columns the spans need (`span`), not whole records.
        let queues = &observations.queue_ids()[records.clone()];
        let dispatched = &observations.dispatch_ids()[records.clone()];
        let ends = &observations.end_ns()[records.clone()];
        let mut r = 0;
        while r < queues.len() {
            let queue = queues[r];
            let same = queues[r..]
                .iter()
                .zip(&dispatched[r..])
                .zip(&ends[r..])
                .take_while(|((&q, &d), &end)| q == queue && d != NO_DISPATCH_ID && end >= from)
                .count();
            if same > 0 {
                if !self.add_all(queue, from, &ends[r..r + same]) {
                    return false;
                }
                r += same;
            } else {
                if let Some((queue, arrival, departure)) =
                    span(from, &observations.get(records.start + r))
                {
                    if !self.add_all(queue, arrival, &[departure]) {
                        return false;
                    }
                }
                r += 1;
            }
        }
        true
    }

    /// Adds spans on `queue` that all arrive at `arrival`, leaving at
    /// `departures`; false when one is out of order on its queue (the
    /// answer is then [`sorted`]'s to give).
    #[inline]
    fn add_all(&mut self, queue: u64, arrival: u64, departures: &[u64]) -> bool {
        if self.queues.get(self.at).is_none_or(|q| q.queue != queue) {
            self.at = match self.queues.iter().position(|q| q.queue == queue) {
                Some(i) => i,
                None => {
                    self.queues.push(InFlight {
                        queue,
                        last_arrival: 0,
                        departures: Vec::new(),
                        left: 0,
                        full: false,
                    });
                    self.queues.len() - 1
                }
            };
        }
        let q = &mut self.queues[self.at];
        if q.full {
            // More spans only add depth: the queue stays full whatever
            // their order.
            return true;
        }
        if arrival < q.last_arrival {
            return false;
        }
        q.last_arrival = arrival;
        // Spans touching at one instant overlap: only those that left
        // before this one arrived are out (departures are kept in order).
        // The spans added below leave no earlier than the last one, so
        // none of them is out before the next arrival, and the depth only
        // grows while they are added: it is checked once, after them.
        q.left += q.departures[q.left..].partition_point(|&d| d < arrival);
        if q.departures.len() + departures.len() > q.departures.capacity()
            && q.left * 2 > q.departures.len()
        {
            // What left is never read again: rather than grow, keep
            // memory to what may be in flight.
            q.departures.drain(..q.left);
            q.left = 0;
        }
        // A stretch out of order gives the answer to [`sorted`], even one
        // that would have filled the queue before its disorder.
        let last = q.departures.last().copied().unwrap_or(0);
        if departures.first().is_some_and(|&first| first < last) || !departures.is_sorted() {
            return false;
        }
        q.departures.extend_from_slice(departures);
        if q.departures.len() - q.left >= self.limit {
            q.full = true;
            q.departures = Vec::new();
        }
        true
    }

    fn full(self) -> FxHashSet<u64> {
        self.queues
            .into_iter()
            .filter(|q| q.full)
            .map(|q| q.queue)
            .collect()
    }
}

/// The queues [`InOrder`] finds full, or `None` if a span is out of order:
/// spans given one at a time, or in stretches of equal queue and arrival.
#[cfg(test)]
fn in_order(
    spans: impl Iterator<Item = (u64, u64, u64)>,
    limit: usize,
    stretches: bool,
) -> Option<FxHashSet<u64>> {
    let spans: Vec<_> = spans.collect();
    let mut sweep = InOrder::new(limit);
    let mut rest = &spans[..];
    while let Some(&(queue, arrival, _)) = rest.first() {
        let n = match stretches {
            true => rest
                .iter()
                .take_while(|s| (s.0, s.1) == (queue, arrival))
                .count(),
            false => 1,
        };
        let departures: Vec<u64> = rest[..n].iter().map(|s| s.2).collect();
        if !sweep.add_all(queue, arrival, &departures) {
            return None;
        }
        rest = &rest[n..];
    }
    Some(sweep.full())
}

/// Queues on which `limit` spans were in flight at once, from spans in any
/// order.
fn sorted(spans: &[(u64, u64, u64)], limit: usize) -> FxHashSet<u64> {
    let mut by_queue: FxHashMap<u64, (Vec<u64>, Vec<u64>)> = FxHashMap::default();
    for &(queue, arrival, departure) in spans {
        let (arrivals, departures) = by_queue.entry(queue).or_default();
        arrivals.push(arrival);
        departures.push(departure);
    }
    by_queue
        .into_iter()
        .filter(|(_, (arrivals, _))| arrivals.len() >= limit)
        .filter_map(|(queue, (arrivals, departures))| {
            (deepest(arrivals, departures) >= limit).then_some(queue)
        })
        .collect()
}

/// The most spans in flight at once. Spans touching at one instant overlap,
/// so just after the arrivals at time t the depth is the arrivals at or
/// before t less the departures before t, and it peaks at an arrival.
fn deepest(mut arrivals: Vec<u64>, mut departures: Vec<u64>) -> usize {
    arrivals.sort_unstable();
    departures.sort_unstable();
    let mut left = 0;
    let mut deepest = 0;
    for (i, &t) in arrivals.iter().enumerate() {
        if arrivals.get(i + 1) == Some(&t) {
            continue;
        }
        while left < departures.len() && departures[left] < t {
            left += 1;
        }
        deepest = deepest.max(i + 1 - left);
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::testing::{kernel_shown, KERNELS_SHOWN};

    /// The sweep it replaces: arrivals before departures at equal times.
    fn swept(spans: &[(u64, u64)]) -> usize {
        let mut events: Vec<(u64, i32)> =
            spans.iter().flat_map(|&(a, b)| [(a, 1), (b, -1)]).collect();
        events.sort_unstable_by_key(|&(t, d)| (t, -d));
        let (mut depth, mut deepest) = (0i64, 0i64);
        for (_, d) in events {
            depth += d as i64;
            deepest = deepest.max(depth);
        }
        deepest as usize
    }

    #[test]
    fn spans_in_order_give_the_queues_sorting_gives() {
        let mut next = crate::test_rng::below(3);
        let mut compared = 0;
        for round in 0..2_000 {
            let n = next(60) as usize;
            let queues = 1 + next(3);
            // Mostly in order per queue (times that only grow), sometimes
            // not, or only the departures not: then the one-pass check must
            // give up.
            let shuffled = round % 4 == 0;
            let departures_shuffled = round % 4 == 1;
            let mut clock = vec![(0u64, 0u64); queues as usize];
            let spans: Vec<(u64, u64, u64)> = (0..n)
                .map(|_| {
                    let q = next(queues);
                    let c = &mut clock[q as usize];
                    let arrival = if shuffled { next(50) } else { c.0 + next(4) };
                    let departure = if shuffled || departures_shuffled {
                        arrival + next(20)
                    } else {
                        (c.1 + next(3)).max(arrival + next(6))
                    };
                    *c = (arrival, departure);
                    (0x100 + q, arrival, departure)
                })
                .collect();
            let limit = 1 + next(8) as usize;
            let want = sorted(&spans, limit);
            let one_at_a_time = in_order(spans.iter().copied(), limit, false);
            let in_stretches = in_order(spans.iter().copied(), limit, true);
            // Either way the one pass answers as sorting does, or leaves the
            // answer to it (a stretch out of order may have filled its
            // queue before its disorder: spans one at a time see that, a
            // stretch gives up).
            for answer in [one_at_a_time, in_stretches] {
                match answer {
                    Some(got) => {
                        assert_eq!(got, want, "limit {limit}: {spans:?}");
                        compared += 1;
                    }
                    None => assert!(
                        shuffled || departures_shuffled,
                        "in-order spans refused: {spans:?}"
                    ),
                }
            }
        }
        assert!(compared > 2_000);
    }

    #[test]
    fn a_windows_runs_give_the_queues_its_records_one_by_one_give() {
        use crate::evidence::{Call, CallWork, WindowEvidence};

        use std::collections::HashMap;
        let mut next = crate::test_rng::below(11);
        let kernels: HashMap<u64, u64> = HashMap::new();
        let mut compared = [0; 2];
        for round in 0..1_500 {
            // Calls in time order; each processes a run of records on a
            // few queues, some of them copies (no queue slot), some ending
            // before their call entered; sometimes out of order.
            let calls: Vec<Call> = (0..1 + next(6))
                .map(|c| Call {
                    correlation_id: c + 1,
                    thread_id: 1,
                    enter_ns: 100 * c + next(30),
                    exit_ns: 100 * c + 60,
                    stream: None,
                    work: CallWork::Unknown,
                })
                .collect();
            let mut end = 0;
            let observations: Observations = (0..next(40))
                .map(|_| {
                    let correlation_id = 1 + next(calls.len() as u64 + 1);
                    end = match round % 3 {
                        0 => next(700),
                        _ => (end + next(20)).max(100 * correlation_id - 100),
                    };
                    Observation {
                        correlation_id,
                        observed: kernel_shown(1),
                        queue_id: 0x10 + next(2),
                        dispatch_id: (next(8) > 0).then_some(0),
                        start_ns: 0,
                        end_ns: end.saturating_sub(next(4) * 10),
                    }
                })
                .collect();
            let slots = 4 * (1 + next(6));
            let evidence = WindowEvidence {
                queue_slots: slots,
                ..WindowEvidence::whole(&observations, &KERNELS_SHOWN, &calls, &kernels, u64::MAX)
            };
            let index = CallIndex::new(&evidence, &|_| false);
            let spans: Vec<_> = index
                .processed_runs()
                .flat_map(|(records, call)| {
                    let from = call.map_or(0, |c| index.call(c).enter_ns);
                    observations
                        .range(records)
                        .filter_map(move |o| span(from, &o))
                })
                .collect();
            let want = sorted(&spans, (slots / 4) as usize);
            assert_eq!(
                possibly_full(&index, &observations, slots),
                want,
                "{spans:?}"
            );
            compared[want.is_empty() as usize] += 1;
        }
        assert!(compared.iter().all(|&n| n > 100), "{compared:?}");
    }

    #[test]
    fn the_deepest_point_is_what_a_sweep_finds() {
        let mut next = crate::test_rng::below(7);
        for _ in 0..500 {
            let n = 1 + next(40) as usize;
            let spans: Vec<(u64, u64)> = (0..n)
                .map(|_| {
                    let a = next(50);
                    (a, a + next(20))
                })
                .collect();
            let (arrivals, departures) = spans.iter().copied().unzip();
            assert_eq!(deepest(arrivals, departures), swept(&spans), "{spans:?}");
        }
    }
}
