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

use rustc_hash::{FxHashMap, FxHashSet};

use crate::calls::CallIndex;
use crate::evidence::Observation;

/// Queues whose records may have reached a quarter of `slots` in flight.
pub(crate) fn possibly_full(
    index: &CallIndex<'_>,
    observations: &[Observation],
    slots: u64,
) -> FxHashSet<u64> {
    let limit = (slots / 4).max(1) as usize;
    let mut sweep = InOrder::new(limit);
    if each_span(index, observations, |queue, arrival, departure| {
        sweep.add(queue, arrival, departure)
    }) {
        return sweep.full();
    }
    let mut spans = Vec::new();
    each_span(index, observations, |queue, arrival, departure| {
        spans.push((queue, arrival, departure));
        true
    });
    sorted(&spans, limit)
}

/// Calls `f` with each queued record's queue, when it may have entered (its
/// processing call's ENTER, or the window's opening) and when it left,
/// until `f` returns false; returns whether it never did.
fn each_span(
    index: &CallIndex<'_>,
    observations: &[Observation],
    mut f: impl FnMut(u64, u64, u64) -> bool,
) -> bool {
    for (records, call) in index.processed_runs() {
        let from = call.map_or(0, |c| index.call(c).enter_ns);
        for o in &observations[records] {
            // Engine copies take no queue slot.
            if o.dispatch_id.is_some() && !f(o.queue_id, from.min(o.end_ns), o.end_ns) {
                return false;
            }
        }
    }
    true
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

    /// Adds one span; false when it is out of order on its queue (the
    /// answer is then [`sorted`]'s to give).
    #[inline]
    fn add(&mut self, queue: u64, arrival: u64, departure: u64) -> bool {
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
        if arrival < q.last_arrival || q.departures.last().is_some_and(|&d| departure < d) {
            return false;
        }
        q.last_arrival = arrival;
        // Spans touching at one instant overlap: only those that left
        // before this one arrived are out.
        while q.departures.get(q.left).is_some_and(|&d| d < arrival) {
            q.left += 1;
        }
        if q.departures.len() == q.departures.capacity() && q.left * 2 > q.departures.len() {
            // What left is never read again: rather than grow, keep memory
            // to what may be in flight.
            q.departures.drain(..q.left);
            q.left = 0;
        }
        q.departures.push(departure);
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

/// The queues [`InOrder`] finds full, or `None` if a span is out of order.
#[cfg(test)]
fn in_order(spans: impl Iterator<Item = (u64, u64, u64)>, limit: usize) -> Option<FxHashSet<u64>> {
    let mut sweep = InOrder::new(limit);
    for (queue, arrival, departure) in spans {
        if !sweep.add(queue, arrival, departure) {
            return None;
        }
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
            // not: then the one-pass check must give up.
            let shuffled = round % 4 == 0;
            let mut clock = vec![(0u64, 0u64); queues as usize];
            let spans: Vec<(u64, u64, u64)> = (0..n)
                .map(|_| {
                    let q = next(queues);
                    let c = &mut clock[q as usize];
                    let arrival = if shuffled { next(50) } else { c.0 + next(4) };
                    let departure = if shuffled {
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
            match in_order(spans.iter().copied(), limit) {
                Some(got) => {
                    assert_eq!(got, want, "limit {limit}: {spans:?}");
                    compared += 1;
                }
                None => assert!(shuffled, "in-order spans refused: {spans:?}"),
            }
        }
        assert!(compared > 1_000);
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
