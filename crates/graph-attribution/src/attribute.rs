//! The evidence method: decide each record's graph key and its call from
//! what the window shows, never from which thread happened to process it.
//!
//! # Rules, in the order they run
//!
//! 7. **Consistency** (`rules::consistency`). A graph launch that no other
//!    thread's packet-writing call overlapped processed exactly its own
//!    packets; if they differ from what its graph-building calls said, the
//!    exec is distrusted from then on (its launches may produce anything).
//! 0. **Backlog** (`rules::backlog`). On a queue that may have held as
//!    many packets as it has slots, ROCr defers processing and the two-hop
//!    rule fails: its records are withheld.
//! 1. **Candidates** (`rules::candidates`, the two-hop rule). The writer of
//!    a packet processed during call P overlaps the hull of P and of the
//!    other threads' packet-writing calls that overlap P. Every call
//!    overlapping that hull whose work produces such a record is a
//!    candidate. A window edge or a call of unknown work in the hull, or a
//!    record processed outside any recorded call, withholds both fields.
//! 2. **Key.** If every candidate is the same node of the same exec, that
//!    node is the key; if every candidate is eager work, the record is not
//!    graphed; anything else is withheld.
//! 3. **Link.** If exactly one call is a candidate, it is the record's call.
//! 5. **Queue order** (`rules::queue_order`). In a window whose calls all
//!    began and ended while it was open and whose records all arrived, the
//!    records of a kind produced by one thread only, on one queue, match
//!    that thread's producing calls in dispatch-id order.
//! 4. **Dependency order** (`rules::dependency_order`). An exec's nodes that
//!    run the same kernel and are ordered by dependencies are matched, in
//!    one launch, by start time.
//! 8. **Joint assignment, rules 8 to 10** (`crate::joint`): every record's
//!    candidates, narrowed by rules 2 to 5, are a domain;
//!    `rules::processing_order` (a writer entered before its record was
//!    processed), `rules::exact_cover` (records and outputs match one to
//!    one) and `rules::time_order` (dependencies and stream order on the
//!    device's clock) remove what no consistent assignment contains; what
//!    is left names one node or one call, or the record stays withheld.
//! 6. **One kernel per key** (`rules::one_kernel_per_key`), across the
//!    session: the safety net.
//!
//! What every rule rests on, and where the real stack says it holds:
//! - ROCr processes a queue's packets in slot order, on the thread that
//!   rings its doorbell, up to the first claimed-but-unwritten slot
//!   (intercept_queue.cpp `StoreRelaxed`); rocprofiler-sdk stamps a record
//!   with the correlation id of the call in progress on that thread and
//!   takes dispatch ids from one process-wide counter as it processes
//!   (hsa/queue.cpp `WriteInterceptor`); HIP writes a call's packets and
//!   rings inside the call (rocclr direct dispatch, the Linux default).
//! - A graph launch runs its exec's nodes, each once; a node waits for its
//!   dependencies to end (hip_graph_internal.cpp: in-order queues and
//!   barrier packets); nodes are created after their dependencies.
//! - The graph-building calls the tool follows say what each node runs; a
//!   call it cannot follow makes the exec's work unknown.
//! - Rules 4, 5 and 8 to 10 also rest on named assumptions a user can
//!   withdraw (`crate::assumptions`): processing order, one dispatch per
//!   kernel, dependency order and stream order.
//!
//! Withholding is always acceptable; a wrong pair or a wrong link is not.

use crate::calls::CallIndex;
use crate::evidence::WindowEvidence;
use crate::joint;
use crate::rules;
use crate::rules::candidates::{Candidates, Runs};
use crate::session::SessionMemory;
use crate::verdict::{KeyVerdict, LinkVerdict, Summary};

/// The decisions for one window, in the order of its observations.
#[derive(Clone, Debug, Default)]
pub struct AttributedWindow {
    pub keys: Vec<KeyVerdict>,
    pub links: Vec<LinkVerdict>,
    pub summary: Summary,
}

/// Attribute one window, remembering into `memory` what later windows must
/// agree with.
pub fn attribute_window(
    evidence: &WindowEvidence<'_>,
    memory: &mut SessionMemory,
) -> AttributedWindow {
    attribute(evidence, memory, Runs::Found)
}

/// [`attribute_window`] deciding every record on its own, never a launch
/// run at a time: the same verdicts, more slowly. Only for the tests that
/// prove the runs change nothing.
#[doc(hidden)]
pub fn attribute_window_record_by_record(
    evidence: &WindowEvidence<'_>,
    memory: &mut SessionMemory,
) -> AttributedWindow {
    attribute(evidence, memory, Runs::Ignored)
}

fn attribute(
    evidence: &WindowEvidence<'_>,
    memory: &mut SessionMemory,
    runs: Runs,
) -> AttributedWindow {
    let observations = evidence.observations;
    let mut summary = Summary::default();
    // Rule 7 first, so a contradicted exec is distrusted in this window too.
    let mut index = CallIndex::new(evidence, &|exec| memory.distrusts(exec));
    let contradicted = rules::consistency::contradicted(&mut index, observations);
    let mut newly_distrusted = false;
    for exec in contradicted {
        if memory.distrust(exec) {
            newly_distrusted = true;
            summary.execs_contradicted += 1;
            log::warn!(
                "kineto-rocm: graph exec {exec} ran something its graph-building calls did not say; its keys are withheld from now on"
            );
        }
    }
    if newly_distrusted {
        index = CallIndex::new(evidence, &|exec| memory.distrusts(exec));
    }
    let overflowing = rules::backlog::possibly_full(&index, observations, evidence.queue_slots);
    summary.queues_may_have_overflowed = overflowing.len() as u64;
    let candidates = Candidates::of_window(&mut index, observations, &overflowing, runs);
    let decided = rules::candidates::decide_all(&index, &candidates);
    let (mut keys, mut links) = (decided.keys, decided.links);
    // Rules 4, 5 and 8 to 10 only ever settle open verdicts: in a window
    // rules 1 to 3 decided whole (one launch at a time, as most are), they
    // have nothing to do.
    if decided.any_open {
        let assumptions = memory.assumptions();
        rules::queue_order::apply(&index, observations, &mut keys, &mut links, assumptions);
        if assumptions.dependency_order {
            rules::dependency_order::apply(&index, observations, &mut keys, &links);
        }
        let joint = joint::apply(
            &index,
            observations,
            &candidates,
            &mut keys,
            &mut links,
            assumptions,
        );
        if joint.contradicted > 0 {
            log::warn!(
                "kineto-rocm: the evidence of {} records contradicts the assignment rules' assumptions; they are withheld",
                joint.contradicted
            );
        }
    }
    rules::one_kernel_per_key::apply(
        &index,
        observations,
        candidates.runs(),
        &mut keys,
        &mut links,
        memory,
    );
    summary.count_all(&keys, &links);
    AttributedWindow {
        keys,
        links,
        summary,
    }
}
