//! What the verifier is given about one window: the dispatches that ran,
//! the launches that were tracked, and (SDK 1.3) what the SDK says each
//! launch should have produced.

use std::collections::HashMap;

use crate::launch_log::LaunchRecord;

/// Whether a dispatch was a kernel or a memory copy. Both are credited
/// ordinals; the SDK's per-launch count covers kernels only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DispatchKind {
    Kernel,
    Copy,
}

/// What ran, as far as identity goes: the verifier's only evidence that is
/// independent of the tracker's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeSignature {
    pub kind: DispatchKind,
    /// The caller's hash of the kernel id, or of a copy's bytes and
    /// direction. Equal signatures are indistinguishable to the verifier.
    pub signature: u64,
}

/// One completed kernel dispatch or memory copy record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DispatchObservation {
    /// The record's internal correlation id: the API call the SDK credited
    /// the dispatch to (for a graph dispatch, normally the launch's).
    pub correlation_id: u64,
    /// The record's external correlation slot: what the tracker answered,
    /// 0 for "not graphed".
    pub external: u64,
    pub signature: u64,
    pub kind: DispatchKind,
    /// The hardware queue it ran on.
    pub queue_id: u64,
    /// The thread that wrote its packet (the record's thread id).
    pub thread_id: u64,
    pub start_ns: u64,
}

impl DispatchObservation {
    pub fn node_signature(&self) -> NodeSignature {
        NodeSignature {
            kind: self.kind,
            signature: self.signature,
        }
    }
}

/// What the SDK's HIP_GRAPH launch record (1.3+) says about one launch:
/// where its packets went and how many kernels it produced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SdkLaunch {
    /// The hipGraphLaunch call's correlation id.
    pub correlation_id: u64,
    /// The hardware queue of the launch's stream (the record's `queue_id`).
    pub queue_id: u64,
    pub kernel_dispatch_count: u32,
}

/// One HIP API call as its HIP_RUNTIME_API record gives it: the thread and
/// the ENTER and EXIT timestamps (the same clock for every call).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ApiSpan {
    pub correlation_id: u64,
    pub thread_id: u64,
    pub enter_ns: u64,
    pub exit_ns: u64,
}

/// Everything known about one window's graph dispatches.
#[derive(Clone, Copy, Debug)]
pub struct WindowEvidence<'a> {
    /// Every dispatch and copy record of the window (graphed or not: the
    /// ungraphed ones are evidence too).
    pub observations: &'a [DispatchObservation],
    /// The tracked launches whose dispatches landed in this window,
    /// including launches that were credited no dispatch.
    pub launches: &'a [LaunchRecord],
    /// SDK 1.3 HIP_GRAPH records: launch correlation id -> kernel dispatches
    /// the SDK says the launch produced. `None` on SDK < 1.3.
    pub sdk_kernel_counts: Option<&'a HashMap<u64, u32>>,
    /// Launch records lost before they reached this window (launch log or
    /// ledger overflow). Nonzero means a missing launch may explain what
    /// looks clean, so nothing new is learned from this window.
    pub launches_lost: u64,
    /// SDK 1.3 HIP_GRAPH records of the window's launches (queue and kernel
    /// count). `None` on SDK < 1.3. Needed, with `api_spans`, by the
    /// contended-window rules (rule 6, `contended.rs`).
    pub sdk_launches: Option<&'a [SdkLaunch]>,
    /// The window's HIP API calls: every graph launch's ENTER/EXIT, and the
    /// call each dispatch record's correlation id names (the call during
    /// which its packet was written). Calls missing here only weaken what
    /// the contended rules can conclude.
    pub api_spans: &'a [ApiSpan],
    /// The caller knows every dispatch record of the window's launches is
    /// here: the window is complete (every correlation id retired) and no
    /// record was dropped. Without it the contended rules do nothing.
    pub dispatches_complete: bool,
    /// The caller vouches for the submission model the time-aware
    /// contention rule needs (verifier.rs, "Turns"): a launch call appends
    /// all its packets to its queue's pending list before it writes any
    /// packet, and a thread that writes to a queue writes every packet
    /// pending there, its own or not (it holds the queue until the list is
    /// empty). This is the seed's hazard as rocprofiler-sim's `submit`
    /// models it (append, then try-lock; the holder drains everything).
    /// With it and the window's API spans, another thread can only have
    /// written a launch's packets in a call that overlapped the launch's.
    /// Off: any other thread's dispatch on the queue counts, whenever it
    /// ran. Wrong when set: a launch that writes others' packets before
    /// appending its own can be vouched for with their key (the faithful
    /// interleavings model without this ordering finds such cases).
    pub holder_writes_pending: bool,
}

impl<'a> WindowEvidence<'a> {
    pub fn new(
        observations: &'a [DispatchObservation],
        launches: &'a [LaunchRecord],
    ) -> WindowEvidence<'a> {
        WindowEvidence {
            observations,
            launches,
            sdk_kernel_counts: None,
            launches_lost: 0,
            sdk_launches: None,
            api_spans: &[],
            dispatches_complete: false,
            holder_writes_pending: false,
        }
    }
}
