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

use std::collections::{HashMap, HashSet};

use crate::calls::CallIndex;
use crate::evidence::Observation;

/// Queues whose records may have reached a quarter of `slots` in flight.
pub(crate) fn possibly_full(
    index: &CallIndex<'_>,
    observations: &[Observation],
    slots: u64,
) -> HashSet<u64> {
    let limit = (slots / 4).max(1) as usize;
    let mut events: HashMap<u64, Vec<(u64, i32)>> = HashMap::new();
    for o in observations {
        if o.dispatch_id.is_none() {
            continue; // engine copies take no queue slot
        }
        let from = index
            .call_of(o.correlation_id)
            .map_or(0, |c| index.call(c).enter_ns);
        let e = events.entry(o.queue_id).or_default();
        e.push((from.min(o.end_ns), 1));
        e.push((o.end_ns, -1));
    }
    events
        .into_iter()
        .filter_map(|(queue, mut e)| {
            // At equal times, count arrivals first: touching spans overlap.
            e.sort_unstable_by_key(|&(t, d)| (t, -d));
            let mut depth = 0i64;
            let mut deepest = 0i64;
            for (_, d) in e {
                depth += d as i64;
                deepest = deepest.max(depth);
            }
            (deepest as usize >= limit).then_some(queue)
        })
        .collect()
}
