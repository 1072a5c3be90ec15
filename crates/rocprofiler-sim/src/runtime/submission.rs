//! What a submission model decides: which HW queue a stream's work goes
//! to, and how a graph launch's and an eager call's packets get written,
//! processed and timed. The HIP API side (calls, graphs, execs, truth of
//! calls) is the same under both models.
use super::context::Ctx;
use super::graphs::Exec;
use super::rng::Rng;
use super::work::{Fill, OpWork, Origin};
use crate::sdk::trace::StreamRef;
use crate::workload::Memcpy;
use std::sync::Arc;

/// The device work of an eager call.
pub(crate) enum Eager {
    /// hipLaunchKernel.
    Kernel(OpWork, u64),
    /// hipMemsetAsync.
    Memset(Fill),
    /// hipMemcpyAsync.
    Memcpy(Memcpy),
    /// hipMemcpyPeerAsync.
    PeerCopy {
        bytes: u64,
        src_device: u32,
        dst_device: u32,
    },
}

/// What a launch submitted, and what the SDK's HIP_GRAPH record says.
pub(crate) struct Launched {
    /// Kernel and copy packets (barriers excluded).
    pub packets: u32,
    /// Kernels really dispatched (blit kernels included).
    pub kernels: u64,
    /// The launch stream's HW queue when the launch began.
    pub queue_id: u64,
    /// The record's queue id.
    pub record_queue_id: u64,
    /// The record's kernel_dispatch_count; None: the SDK's own count
    /// (dispatches intercepted on the launching thread during the launch).
    pub record_count: Option<u64>,
}

pub(crate) trait Submission: Sync {
    type Stream: Send + Sync;
    type Exec: Send + Sync;

    /// Inside hipStreamCreate: the new stream on `device`.
    fn create_stream(&self, ctx: &Ctx, r: StreamRef, device: u32) -> Self::Stream;
    /// Inside hipStreamDestroy.
    fn destroy_stream(&self, s: &Self::Stream);
    fn stream_ref(s: &Self::Stream) -> StreamRef;
    fn stream_device(s: &Self::Stream) -> u32;
    /// Inside hipGraphInstantiate of graph `gi` on `device`.
    fn instantiate(&self, ctx: &Ctx, gi: usize, device: u32) -> Self::Exec;
    /// Inside hipGraphExecDestroy.
    fn destroy_exec(&self, e: Self::Exec);
    /// Inside hipGraphLaunch, between the SDK's EXEC_LAUNCH ENTER and EXIT.
    fn launch(
        &self,
        ctx: &Ctx,
        e: &Exec<Self::Exec>,
        s: &Self::Stream,
        origin: Arc<Origin>,
        rng: &mut Rng,
    ) -> Launched;
    /// Inside an eager call (hipLaunchKernel, hipMemsetAsync, hipMemcpyAsync).
    fn eager(&self, ctx: &Ctx, s: &Self::Stream, work: Eager, origin: Arc<Origin>, rng: &mut Rng);
    /// After every thread finished: what the run's streams and execs held
    /// goes back (each run stands for one program).
    fn end_run(&self);

    /// A point on a stream's timeline a thread or another stream can wait
    /// for (an event's marker, a stream's last command).
    type Mark: Send + Sync + Clone;
    /// Inside hipEventRecord: a marker on `s` after its work so far;
    /// `done(end)` is called when it completes.
    fn record_mark(
        &self,
        ctx: &Ctx,
        s: &Self::Stream,
        done: Box<dyn FnOnce(u64) + Send>,
        rng: &mut Rng,
    ) -> Option<Self::Mark>;
    /// Inside hipStreamWaitEvent: `s`'s later work waits for `m`.
    fn wait_mark(&self, ctx: &Ctx, s: &Self::Stream, m: &Self::Mark, rng: &mut Rng);
    /// `m`'s end, once it has completed by `now`.
    fn mark_done(&self, m: &Self::Mark, now: u64) -> Option<u64>;
    /// The last command of a stream, of every stream of a device.
    fn stream_tail(&self, s: &Self::Stream) -> Option<Self::Mark>;
    fn device_tails(&self, device: u32) -> Vec<Self::Mark>;
    /// Inside hipLaunchHostFunc: the stream waits for a host function of
    /// `duration` ns.
    fn host_func(
        &self,
        ctx: &Ctx,
        s: &Self::Stream,
        duration: u64,
        origin: Arc<Origin>,
        rng: &mut Rng,
    );
}
