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
    // Per queue, when each record may have entered and when it left.
    let mut spans: FxHashMap<u64, (Vec<u64>, Vec<u64>)> = FxHashMap::default();
    for (r, o) in observations.iter().enumerate() {
        if o.dispatch_id.is_none() {
            continue; // engine copies take no queue slot
        }
        let from = index.processed_by(r).map_or(0, |c| index.call(c).enter_ns);
        let (arrivals, departures) = spans.entry(o.queue_id).or_default();
        arrivals.push(from.min(o.end_ns));
        departures.push(o.end_ns);
    }
    spans
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
    fn the_deepest_point_is_what_a_sweep_finds() {
        let mut seed = 7u64;
        let mut next = |m: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % m
        };
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
