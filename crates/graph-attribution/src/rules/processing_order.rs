//! Rule 8: a packet is processed after its writer entered its call, and
//! dispatch ids follow processing.
//!
//! HIP writes a call's packets inside the call (direct dispatch), so a
//! packet's header is published after its writer's ENTER. ROCr processes a
//! published packet later, inside some call on the thread that rings the
//! doorbell (intercept_queue.cpp `StoreRelaxed`), and rocprofiler-sdk's
//! `WriteInterceptor` takes the record's dispatch id there from one
//! process-wide counter (`++sequence_counter`, hsa/queue.cpp), in the
//! processing call's correlation. An atomic increment is ordered in real
//! time, so a record with a larger dispatch id was processed later, before
//! its own processing call returned. Hence, for record r:
//!
//!   writer's ENTER <= r's processing <= min over records s with
//!   dispatch id >= r's of EXIT(s's processing call)
//!
//! and a candidate whose call entered after that bound cannot have written
//! r. Host timestamps only: no GPU clock is compared with the host's.
//! Records processed outside a recorded call (ROCr's async thread) bound
//! nothing; equal dispatch ids (SDK kernel-replay passes reuse one) bound
//! only themselves.

use crate::calls::CallIndex;
use crate::evidence::{Observation, Observations};
use crate::joint::Joint;

/// Removes every candidate whose call entered after the record was
/// processed at the latest.
pub(crate) fn prune(index: &CallIndex<'_>, observations: &Observations, joint: &mut Joint) {
    let bounds = latest_processing(index, observations);
    for (r, bound) in bounds.into_iter().enumerate() {
        let Some(bound) = bound else { continue };
        let late: Vec<u32> = joint
            .record_edges(r as u32)
            .filter(|&e| {
                let slot = joint.slots[joint.slot_of(e) as usize];
                index.call(slot.call).enter_ns > bound
            })
            .collect();
        for e in late {
            joint.remove(e);
        }
    }
}

/// Per record, the latest time it can have been processed: `None` for
/// records without a dispatch id.
pub(crate) fn latest_processing(
    index: &CallIndex<'_>,
    observations: &Observations,
) -> Vec<Option<u64>> {
    let exit_of = |o: &Observation| {
        index.call_of(o.correlation_id).map(|c| {
            let call = index.call(c);
            call.exit_ns.max(call.enter_ns)
        })
    };
    let mut order: Vec<usize> = (0..observations.len())
        .filter(|&i| observations.dispatch_id(i).is_some())
        .collect();
    order.sort_unstable_by_key(|&i| std::cmp::Reverse(observations.dispatch_id(i)));
    let mut out = vec![None; observations.len()];
    // Running minimum over strictly larger dispatch ids.
    let mut later = u64::MAX;
    let mut i = 0;
    while i < order.len() {
        let id = observations.dispatch_id(order[i]);
        let mut j = i;
        while j < order.len() && observations.dispatch_id(order[j]) == id {
            j += 1;
        }
        let mut group_min = u64::MAX;
        for &r in &order[i..j] {
            let own = exit_of(&observations.get(r)).unwrap_or(u64::MAX);
            out[r] = Some(later.min(own));
            group_min = group_min.min(own);
        }
        later = later.min(group_min);
        i = j;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calls::CallIndex;
    use crate::evidence::testing::{kernel_shown, KERNELS_SHOWN};
    use crate::evidence::{Call, CallWork, WindowEvidence};
    use crate::rules::candidates::Slot;
    use crate::verdict::{KeyVerdict, LinkVerdict, Reason};
    use crate::work::HostKernel;
    use std::collections::HashMap;

    fn call(corr: u64, thread: u64, enter: u64, exit: u64) -> Call {
        Call {
            correlation_id: corr,
            thread_id: thread,
            enter_ns: enter,
            exit_ns: exit,
            stream: Some(thread),
            work: CallWork::Kernel(HostKernel::from_blocks(0xa0, [1, 1, 1], [64, 1, 1])),
        }
    }

    fn record(corr: u64, dispatch_id: Option<u64>) -> Observation {
        Observation {
            correlation_id: corr,
            observed: kernel_shown(7),
            queue_id: 1,
            dispatch_id,
            start_ns: 1_000,
            end_ns: 1_001,
        }
    }

    fn evidence<'a>(
        calls: &'a [Call],
        observations: &'a Observations,
        kernels: &'a HashMap<u64, u64>,
    ) -> WindowEvidence<'a> {
        WindowEvidence::whole(observations, &KERNELS_SHOWN, calls, kernels, 10_000)
    }

    #[test]
    fn a_later_dispatch_bounds_an_earlier_ones_processing() {
        // Call 1 [0, 100] processed dispatch 1, call 2 [50, 60] dispatch 2,
        // call 3 [200, 300] dispatch 3: dispatch 1 was processed by 60.
        let calls = [call(1, 1, 0, 100), call(2, 2, 50, 60), call(3, 3, 200, 300)];
        let obs: Observations = [
            record(1, Some(1)),
            record(2, Some(2)),
            record(3, Some(3)),
            record(1, None),
        ]
        .into_iter()
        .collect();
        let kernels: HashMap<u64, u64> = [(0xa0, 7)].into_iter().collect();
        let ev = evidence(&calls, &obs, &kernels);
        let index = CallIndex::new(&ev, &|_| false);
        assert_eq!(
            latest_processing(&index, &obs),
            [Some(60), Some(60), Some(300), None]
        );
    }

    #[test]
    fn equal_dispatch_ids_bound_only_themselves_and_unknown_processors_nothing() {
        let calls = [call(1, 1, 0, 100), call(2, 2, 50, 60)];
        // Dispatch 5 twice (a replay pass), one processed by call 2; dispatch
        // 6 processed outside any recorded call.
        let obs: Observations = [record(1, Some(5)), record(2, Some(5)), record(99, Some(6))]
            .into_iter()
            .collect();
        let kernels: HashMap<u64, u64> = [(0xa0, 7)].into_iter().collect();
        let ev = evidence(&calls, &obs, &kernels);
        let index = CallIndex::new(&ev, &|_| false);
        assert_eq!(
            latest_processing(&index, &obs),
            [Some(100), Some(60), Some(u64::MAX)]
        );
    }

    #[test]
    fn a_call_that_entered_after_the_processing_is_no_candidate() {
        // Three threads launch the same kernel. Dispatch 1 was processed in
        // call 1, which returned at 100; call 2 entered at 150, so it cannot
        // have written dispatch 1 (but may have written the later ones).
        let calls = [
            call(1, 1, 0, 100),
            call(2, 2, 150, 400),
            call(3, 3, 90, 500),
        ];
        let obs: Observations = [record(1, Some(1)), record(3, Some(2)), record(3, Some(3))]
            .into_iter()
            .collect();
        let kernels: HashMap<u64, u64> = [(0xa0, 7)].into_iter().collect();
        let ev = evidence(&calls, &obs, &kernels);
        let index = CallIndex::new(&ev, &|_| false);
        let candidates: Vec<Result<Vec<Slot>, Reason>> = vec![
            Ok(vec![(0, 0), (1, 0), (2, 0)]),
            Ok(vec![(0, 0), (1, 0), (2, 0)]),
            Ok(vec![(0, 0), (1, 0), (2, 0)]),
        ];
        let keys = [KeyVerdict::Withheld(Reason::Ambiguous); 3];
        let links = [LinkVerdict::Unlinked(Reason::SeveralCalls); 3];
        let candidates = crate::rules::candidates::Candidates::from_lists(&candidates);
        let mut joint = Joint::new(&index, &obs, &candidates, &keys, &links);
        prune(&index, &obs, &mut joint);
        let calls_of = |r: u32| -> Vec<u32> {
            joint
                .record_edges(r)
                .map(|e| joint.slots[joint.slot_of(e) as usize].call)
                .collect()
        };
        assert_eq!(
            calls_of(0),
            [0, 2],
            "call 2 entered after dispatch 1 was processed"
        );
        assert_eq!(calls_of(1), [0, 1, 2]);
        assert_eq!(calls_of(2), [0, 1, 2]);
    }
}
