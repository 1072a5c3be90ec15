//! What the evidence method is given about one trace window: every
//! completed record, every HIP call, what each call may put on the device,
//! and where the window's edges leave calls unseen.

use std::sync::Arc;

use crate::ids::AttributionId;
use crate::structure::ExecContents;
use crate::work::{FillParts, HostKernel, KernelLookup, Observed, Output};

/// One completed kernel dispatch or memory copy record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Observation {
    /// The record's correlation id: the HIP call in progress on the thread
    /// that processed its packet (ROCr's intercept runs on whichever thread
    /// rings the doorbell), not necessarily the call that launched it.
    pub correlation_id: u64,
    pub observed: Observed,
    /// The hardware queue (0 for copy-engine transfers).
    pub queue_id: u64,
    /// The SDK's dispatch id: a process-wide counter taken as packets are
    /// processed, so per queue it follows the queue's slot order. `None`
    /// for copies.
    pub dispatch_id: Option<u64>,
    pub start_ns: u64,
    pub end_ns: u64,
}

/// What one HIP call may put on the device.
#[derive(Clone, Debug)]
pub enum CallWork {
    /// Cannot write an AQL packet (getters, allocation, graph building).
    NoDevice,
    /// May write packets that produce no record (markers, barriers): it can
    /// hold up other threads' packets or process them, but produces nothing.
    Barrier,
    /// An eager kernel launched through a host stub.
    Kernel(HostKernel),
    /// An eager blit or copy.
    Output(Output),
    /// An eager memset: this many fill blits.
    Fill(FillParts),
    /// A graph launch: its exec's attribution id at launch time (`None`
    /// when it has none) and what the exec ran then.
    Graph {
        graph_id: Option<AttributionId>,
        exec: Arc<ExecContents>,
    },
    /// May write anything (an API the tool does not model).
    Unknown,
}

impl CallWork {
    /// Can this call write a packet (and so hold up or process others')?
    pub fn writes_packets(&self) -> bool {
        !matches!(self, CallWork::NoDevice)
    }
}

/// One HIP API call, as its HIP_RUNTIME_API record and callbacks give it.
#[derive(Clone, Debug)]
pub struct Call {
    pub correlation_id: u64,
    pub thread_id: u64,
    /// ENTER and EXIT, on the clock of every other timestamp.
    pub enter_ns: u64,
    pub exit_ns: u64,
    /// The stream it names (HIP_STREAM SET), if any.
    pub stream: Option<u64>,
    pub work: CallWork,
}

/// A packet-writing HIP call the window's records do not describe: one in
/// flight when the window opened, or one still in flight when it was
/// finished. The tool saw its thread enter it, but not what it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub thread_id: u64,
    pub enter_ns: u64,
    /// `None`: still in flight when the window was finished.
    pub exit_ns: Option<u64>,
}

/// Everything known about one window.
#[derive(Clone, Copy)]
pub struct WindowEvidence<'a> {
    pub observations: &'a [Observation],
    /// The HIP calls issued while the window was open.
    pub calls: &'a [Call],
    /// Calls in flight when the window opened, or when it was finished
    /// (their work is unknown).
    pub open_edge: &'a [Span],
    /// When the window stopped collecting: calls issued after it are not in
    /// `calls`, so a call still in flight then may have met unseen ones.
    pub close_ns: u64,
    /// Every record of the window's calls has been delivered (every
    /// correlation id retired) and none was dropped.
    pub complete: bool,
    /// Every HIP call of the window has its record (none was dropped): the
    /// neighbourhoods the rules bound are whole. Without it nothing is
    /// attributed or linked.
    pub calls_complete: bool,
    /// Host stub -> kernel id.
    pub kernels: &'a dyn KernelLookup,
    /// Packets a hardware queue holds (`ROC_AQL_QUEUE_SIZE`, 16384 by
    /// default): see `rules::backlog`.
    pub queue_slots: u64,
}

impl<'a> WindowEvidence<'a> {
    /// A window seen whole: no call crossed its edges, it closed at
    /// `close_ns`, every record and every call's record arrived, and its
    /// queues hold rocclr's default number of packets. Anything else is a
    /// field changed with struct update syntax.
    pub fn whole(
        observations: &'a [Observation],
        calls: &'a [Call],
        kernels: &'a dyn KernelLookup,
        close_ns: u64,
    ) -> WindowEvidence<'a> {
        WindowEvidence {
            observations,
            calls,
            open_edge: &[],
            close_ns,
            complete: true,
            calls_complete: true,
            kernels,
            queue_slots: DEFAULT_QUEUE_SLOTS,
        }
    }
}

/// rocclr's AQL queue size when `ROC_AQL_QUEUE_SIZE` is not set.
pub const DEFAULT_QUEUE_SLOTS: u64 = 16384;
