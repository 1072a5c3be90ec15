//! The `rocm` submission model (the default): work reaches the simulated
//! GPU as HIP (ROCm/clr) and rocprofiler-sdk submit it. Each part cites its
//! source: queue pool (`pool`), streams and packet writing (`stream`),
//! processing on the ringing thread (`hwqueue`), ROCr's async thread
//! (`overflow`), GPU timing (`gpu`), copy engines (`engine`), graph
//! launches (`launch`); the exec's parallel streams are below.
use super::context::Ctx;
use super::graphs::{built_graph, Exec};
use super::handles::new_internal_stream_id;
use super::plan::{kahn_fifo, segments, SegmentPlan};
use super::rng::Rng;
use super::submission::{Eager, Launched, Submission};
use super::work::{self, DeviceOp, Origin, COPY_KERNEL};
use crate::sdk::os::lock;
use crate::sdk::trace::StreamRef;
use engine::{copy_engine, Engine};
use gpu::Cmd;
use pool::{pool, Pool};
use std::sync::{Arc, Mutex};
use stream::{Stream, Writer};

mod engine;
mod gpu;
mod hwqueue;
mod launch;
mod overflow;
mod pool;
mod stream;

pub(crate) struct Rocm {
    pools: Vec<Arc<Mutex<Pool>>>,
    plans: Vec<Arc<SegmentPlan>>,
    /// Streams the run created and has not released.
    live: Mutex<Vec<Arc<Stream>>>,
    last_records: launch::LastRecords,
}

/// A user stream.
pub(crate) struct UserStream {
    r: StreamRef,
    s: Arc<Stream>,
}

/// What an exec holds: its launch plan, its parallel streams, and their
/// order for its last launch stream (`UpdateStreams`).
pub(crate) struct RocmExec {
    plan: Arc<SegmentPlan>,
    parallel: Vec<Arc<Stream>>,
    order: Mutex<Option<(u64, Vec<usize>)>>,
}

impl Rocm {
    pub fn new(ctx: &Ctx) -> Rocm {
        let segmented = ctx.rocm.segment_scheduling != 0;
        Rocm {
            pools: (0..ctx.w.devices).map(|d| pool(d, ctx.hw_queues)).collect(),
            plans: ctx
                .w
                .graphs
                .iter()
                .map(|g| {
                    Arc::new(if segmented {
                        segments(g)
                    } else {
                        SegmentPlan::single(kahn_fifo(g))
                    })
                })
                .collect(),
            live: Mutex::new(Vec::new()),
            last_records: Default::default(),
        }
    }

    fn new_stream(
        &self,
        ctx: &Ctx,
        id: u64,
        device: u32,
        pinned: bool,
        exclude: &[u64],
    ) -> Arc<Stream> {
        let s = Arc::new(Stream::new(
            self.pools[device as usize].clone(),
            id,
            device,
            pinned,
            ctx.rocm.dynamic_queues,
            exclude,
        ));
        lock(&self.live).push(s.clone());
        s
    }
}

fn writer<'a>(ctx: &'a Ctx) -> Writer<'a> {
    Writer {
        run: &ctx.shared,
        jitter_ns: ctx.opts.jitter_ns,
        hw_queue_slots: ctx.rocm.hw_queue_slots,
        batch_max: ctx.rocm.graph_batch_size,
        dynamic_queues: ctx.rocm.dynamic_queues,
    }
}

impl Submission for Rocm {
    type Stream = UserStream;
    type Exec = RocmExec;

    fn create_stream(&self, ctx: &Ctx, r: StreamRef, device: u32) -> UserStream {
        UserStream {
            r,
            s: self.new_stream(ctx, r.id, device, false, &[]),
        }
    }

    fn destroy_stream(&self, s: &UserStream) {
        s.s.release();
    }

    fn stream_ref(s: &UserStream) -> StreamRef {
        s.r
    }

    fn stream_device(s: &UserStream) -> u32 {
        s.s.device
    }

    /// `GraphExec::Init` / `FindStreamsReqPerDevForSegments` /
    /// `CreateStreams` (CLR-SEG): min(the most segments at any level,
    /// DEBUG_HIP_FORCE_GRAPH_QUEUES) - 1 parallel streams (the launch stream
    /// is the other one), created like user streams from the same pool;
    /// newer code pins them and keeps them on distinct queues
    /// (`PinQueue`, `ReacquireQueueExcluding`, RV-NEW). Without segment
    /// scheduling the launch stream runs everything.
    fn instantiate(&self, ctx: &Ctx, gi: usize, device: u32) -> RocmExec {
        let plan = self.plans[gi].clone();
        let n = if ctx.rocm.segment_scheduling != 0 {
            plan.max_streams.min(ctx.rocm.graph_streams as usize) - 1
        } else {
            0
        };
        let mut used: Vec<u64> = Vec::new();
        let mut parallel = Vec::with_capacity(n);
        for _ in 0..n {
            let s = self.new_stream(ctx, new_internal_stream_id(), device, true, &used);
            used.push(s.queue_id());
            parallel.push(s);
        }
        RocmExec {
            plan,
            parallel,
            order: Mutex::new(None),
        }
    }

    fn destroy_exec(&self, e: RocmExec) {
        for s in &e.parallel {
            s.release();
        }
    }

    fn launch(
        &self,
        ctx: &Ctx,
        e: &Exec<RocmExec>,
        s: &UserStream,
        origin: Arc<Origin>,
        rng: &mut Rng,
    ) -> Launched {
        let w = writer(ctx);
        launch::launch(
            ctx,
            &ctx.w.graphs[e.graph],
            &built_graph(ctx, e.graph).events,
            &self.last_records,
            &e.model,
            &s.s,
            origin,
            &w,
            rng,
        )
    }

    /// Eager work (direct dispatch): the calling thread writes its packet
    /// inside its call; memsets and blit copies are kernels on the stream's
    /// queue, large host copies SDMA copies (see `engine`).
    fn eager(&self, ctx: &Ctx, s: &UserStream, w: Eager, origin: Arc<Origin>, rng: &mut Rng) {
        let (kernels, durations) = (&ctx.kernels, &ctx.w.durations);
        let (parts, sdma) = match w {
            Eager::Kernel(work, duration) => (vec![(work, duration)], false),
            Eager::Memset(fill) => (work::fill(kernels, durations, fill), false),
            // rocblit.cpp: a peer copy between devices goes to the SDMA
            // engine (`DmaBlitManager::copyBuffer` -> hsa_amd_memory_async_copy
            // with distinct source and destination agents).
            Eager::PeerCopy {
                bytes,
                src_device,
                dst_device,
            } => (
                vec![work::peer_copy(durations, bytes, src_device, dst_device)],
                true,
            ),
            Eager::Memcpy(m) => match copy_engine(m.direction, m.bytes) {
                Engine::Host => return,
                Engine::Blit => (
                    vec![work::blit(
                        kernels,
                        durations,
                        COPY_KERNEL,
                        m.bytes,
                        Some(m.direction),
                        None,
                    )],
                    false,
                ),
                Engine::Sdma => (vec![work::copy(durations, m.bytes, m.direction)], true),
            },
        };
        let wr = writer(ctx);
        let mut g = s.s.submit(&wr);
        for (ordinal, (work, duration)) in parts.into_iter().enumerate() {
            let op = DeviceOp {
                origin: origin.clone(),
                node_index: None,
                ordinal: ordinal as u32,
                exec_stream_id: s.s.id,
                device: s.s.device,
                work,
                duration,
            };
            if sdma {
                g.copy(op);
            } else {
                g.dispatch(op, rng);
            }
        }
    }

    /// Streams and execs the run left behind stop counting toward queue
    /// load: the run (one program) is over; its queued work stays.
    fn end_run(&self) {
        for s in lock(&self.live).drain(..) {
            s.release();
        }
    }

    type Mark = Arc<Cmd>;

    /// hip_event.cpp `Event::addMarker` / `hipEventRecord`: an `amd::Marker`
    /// on the stream, a barrier packet behind the stream's work whose
    /// completion is the event's.
    fn record_mark(
        &self,
        ctx: &Ctx,
        s: &UserStream,
        done: Box<dyn FnOnce(u64) + Send>,
        rng: &mut Rng,
    ) -> Option<Arc<Cmd>> {
        let wr = writer(ctx);
        let mut g = s.s.submit(&wr);
        Some(g.barrier_for(Vec::new(), 0, Some(Box::new(move |_, end| done(end))), rng))
    }

    /// hip_stream.cpp `hipStreamWaitEvent`: a marker with the event's
    /// command in its wait list (`dispatchBlockingWait`), a barrier-AND
    /// packet on the waiting stream.
    fn wait_mark(&self, ctx: &Ctx, s: &UserStream, m: &Arc<Cmd>, rng: &mut Rng) {
        let wr = writer(ctx);
        let mut g = s.s.submit(&wr);
        g.barrier(vec![m.clone()], rng);
    }

    fn mark_done(&self, m: &Arc<Cmd>, now: u64) -> Option<u64> {
        m.completed(now).then(|| m.end()).flatten()
    }

    fn stream_tail(&self, s: &UserStream) -> Option<Arc<Cmd>> {
        s.s.last()
    }

    fn device_tails(&self, device: u32) -> Vec<Arc<Cmd>> {
        lock(&self.live)
            .iter()
            .filter(|s| s.device == device)
            .filter_map(|s| s.last())
            .collect()
    }

    /// hip_stream.cpp `hipLaunchHostFunc` (`StreamCallback`): a marker
    /// whose completion callback runs the function on the runtime's
    /// callback thread while the stream is held until it returns: here a
    /// barrier packet that occupies the stream's queue for the function's
    /// run time.
    fn host_func(
        &self,
        ctx: &Ctx,
        s: &UserStream,
        duration: u64,
        origin: Arc<Origin>,
        rng: &mut Rng,
    ) {
        let done = launch::host_fn_truth(ctx, &origin, &s.s, None);
        let wr = writer(ctx);
        let mut g = s.s.submit(&wr);
        g.barrier_for(Vec::new(), duration.max(1), done, rng);
    }
}
