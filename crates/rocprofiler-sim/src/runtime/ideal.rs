//! The `ideal` submission model: the simulator's earlier, kinder model,
//! kept unchanged for regression.
//!
//! - HW queues per device: GPU_MAX_HW_QUEUES; a stream is mapped to the
//!   least-used queue (round-robin for streams created in turn); queues
//!   persist for the process.
//! - A graph launch's packets go, in one fixed order (`plan::flatten`), to
//!   the launch stream's queue: appended to its pending FIFO; whichever
//!   thread gets the queue's submission lock writes ALL pending packets,
//!   and the SDK's per-packet work (external-correlation request, record
//!   capture, record thread id) happens on that writing thread with its own
//!   API call's correlation id (the first round's report, shared/seeds/000,
//!   "Known limitation").
//! - Per HW queue, work runs in order without overlap:
//!   start = max(written, previous end on the queue). Copies run on the
//!   queue like kernels; memsets as blit kernels.
//! - The HIP_GRAPH record carries the launch stream's queue and the
//!   launch's true kernel count.
use super::context::Ctx;
use super::graphs::Exec;
use super::graphs::DST_ADDRESS;
use super::handles::new_copy_id;
use super::plan;
use super::record::{Captured, Processed, RunShared};
use super::rng::Rng;
use super::submission::{Eager, Launched, Submission};
use super::work::{self, copy_agents_of, copy_operation, DeviceOp, Fill, OpWork, Origin};
use crate::sdk::agents::agent_handle;
use crate::sdk::buffer::Rec;
use crate::sdk::completion::expect;
use crate::sdk::correlation::current_corr;
use crate::sdk::dispatch_counting::Counting;
use crate::sdk::graph_trace::graph_launch_active;
use crate::sdk::intercept::{
    copy_record, dispatch_record, intercept_copy, reserve_dispatch, CopyInfo, DispatchInfo,
};
use crate::sdk::kernel_replay::{self, Replay};
use crate::sdk::os::{lock, now_ns, tid};
use crate::sdk::thread_trace::Traced;
use crate::sdk::trace::StreamRef;
use crate::workload::NodeWork;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, OnceLock};

struct Packet {
    op: DeviceOp,
    run: Arc<RunShared>,
    publish_ns: u64,
}

struct Queue {
    id: u64,
    index: u32,
    agent: u64,
    fifo: Mutex<VecDeque<Packet>>,
    /// The submission lock; guards the queue's clock.
    submit: Mutex<u64>,
}

type Queues = Mutex<HashMap<(u32, u32), Arc<Queue>>>;

/// The process's queue `index` of device `device`, created on first use.
fn queue(device: u32, index: u32) -> Arc<Queue> {
    static QUEUES: OnceLock<Queues> = OnceLock::new();
    let mut queues = lock(QUEUES.get_or_init(|| Mutex::new(HashMap::new())));
    queues
        .entry((device, index))
        .or_insert_with(|| {
            Arc::new(Queue {
                id: 0x7f00_0000_0000 + ((device as u64) << 24) + ((index as u64) << 12),
                index,
                agent: agent_handle(device + 1),
                fifo: Mutex::new(VecDeque::new()),
                submit: Mutex::new(0),
            })
        })
        .clone()
}

struct Device {
    queues: Vec<Arc<Queue>>,
    streams_per_queue: Mutex<Vec<u32>>,
}

pub(crate) struct Ideal {
    devices: Vec<Device>,
    orders: Vec<Vec<usize>>,
}

pub(crate) struct Stream {
    r: StreamRef,
    device: u32,
    queue: Arc<Queue>,
}

impl Ideal {
    pub fn new(ctx: &Ctx) -> Ideal {
        let nq = ctx.hw_queues;
        Ideal {
            devices: (0..ctx.w.devices)
                .map(|d| Device {
                    queues: (0..nq).map(|q| queue(d, q)).collect(),
                    streams_per_queue: Mutex::new(vec![0; nq as usize]),
                })
                .collect(),
            orders: ctx.w.graphs.iter().map(plan::flatten).collect(),
        }
    }
}

impl Submission for Ideal {
    type Stream = Stream;
    type Exec = ();

    fn create_stream(&self, _ctx: &Ctx, r: StreamRef, device: u32) -> Stream {
        let dev = &self.devices[device as usize];
        let mut use_count = lock(&dev.streams_per_queue);
        let (qi, _) = use_count
            .iter()
            .enumerate()
            .min_by_key(|(i, n)| (**n, *i))
            .expect("at least one queue");
        use_count[qi] += 1;
        Stream {
            r,
            device,
            queue: dev.queues[qi].clone(),
        }
    }

    fn destroy_stream(&self, s: &Stream) {
        let dev = &self.devices[s.device as usize];
        let mut use_count = lock(&dev.streams_per_queue);
        let n = &mut use_count[s.queue.index as usize];
        *n = n.saturating_sub(1);
    }

    fn stream_ref(s: &Stream) -> StreamRef {
        s.r
    }

    fn stream_device(s: &Stream) -> u32 {
        s.device
    }

    fn instantiate(&self, _ctx: &Ctx, _gi: usize, _device: u32) {}

    fn destroy_exec(&self, _e: ()) {}

    fn launch(
        &self,
        ctx: &Ctx,
        e: &Exec<()>,
        s: &Stream,
        origin: Arc<Origin>,
        rng: &mut Rng,
    ) -> Launched {
        let graph = &ctx.w.graphs[e.graph];
        let mut kernels = 0u64;
        let ops: Vec<DeviceOp> = self.orders[e.graph]
            .iter()
            .flat_map(|&ni| {
                let parts = match graph.nodes[ni].work() {
                    NodeWork::Kernel { name, grid, block } => vec![work::kernel(
                        &ctx.kernels,
                        &ctx.w.durations,
                        name,
                        grid,
                        block,
                    )],
                    NodeWork::Memset(m) => work::fill(
                        &ctx.kernels,
                        &ctx.w.durations,
                        Fill {
                            dst: DST_ADDRESS + m.offset,
                            bytes: m.bytes,
                            value: m.value,
                        },
                    ),
                    NodeWork::Memcpy(m) => vec![work::copy(&ctx.w.durations, m.bytes, m.direction)],
                    // Host, empty and event nodes run nothing on the device
                    // here: the ideal model models neither host functions
                    // nor markers.
                    NodeWork::Host(_)
                    | NodeWork::Empty
                    | NodeWork::EventRecord(_)
                    | NodeWork::EventWait(_) => Vec::new(),
                };
                parts.into_iter().map(move |part| (ni, part))
            })
            .enumerate()
            .map(|(ordinal, (ni, (w, duration)))| {
                if matches!(w, OpWork::Kernel { .. }) {
                    kernels += 1;
                }
                DeviceOp {
                    origin: origin.clone(),
                    node_index: Some(ni as u32),
                    ordinal: ordinal as u32,
                    exec_stream_id: s.r.id,
                    device: s.device,
                    work: w,
                    duration,
                }
            })
            .collect();
        let packets = ops.len() as u32;
        submit(ctx, &s.queue, ops, rng);
        Launched {
            packets,
            kernels,
            queue_id: s.queue.id,
            record_queue_id: s.queue.id,
            record_count: Some(kernels),
        }
    }

    fn eager(&self, ctx: &Ctx, s: &Stream, w: Eager, origin: Arc<Origin>, rng: &mut Rng) {
        let parts = match w {
            Eager::Kernel(work, duration) => vec![(work, duration)],
            Eager::Memset(fill) => work::fill(&ctx.kernels, &ctx.w.durations, fill),
            Eager::Memcpy(m) => vec![work::copy(&ctx.w.durations, m.bytes, m.direction)],
            Eager::PeerCopy {
                bytes,
                src_device,
                dst_device,
            } => vec![work::peer_copy(
                &ctx.w.durations,
                bytes,
                src_device,
                dst_device,
            )],
        };
        let ops = parts
            .into_iter()
            .enumerate()
            .map(|(ordinal, (work, duration))| DeviceOp {
                origin: origin.clone(),
                node_index: None,
                ordinal: ordinal as u32,
                exec_stream_id: s.r.id,
                device: s.device,
                work,
                duration,
            })
            .collect();
        submit(ctx, &s.queue, ops, rng);
    }

    fn end_run(&self) {}

    // Events, waits, synchronisation and host functions are modelled under
    // `rocm` only: here the calls are made and traced, and submit nothing.
    type Mark = ();

    fn record_mark(
        &self,
        _ctx: &Ctx,
        _s: &Stream,
        _done: Box<dyn FnOnce(u64) + Send>,
        _rng: &mut Rng,
    ) -> Option<()> {
        None
    }

    fn wait_mark(&self, _ctx: &Ctx, _s: &Stream, _m: &(), _rng: &mut Rng) {}

    fn mark_done(&self, _m: &(), now: u64) -> Option<u64> {
        Some(now)
    }

    fn stream_tail(&self, _s: &Stream) -> Option<()> {
        None
    }

    fn device_tails(&self, _device: u32) -> Vec<()> {
        Vec::new()
    }

    fn host_func(
        &self,
        _ctx: &Ctx,
        _s: &Stream,
        _duration: u64,
        _origin: Arc<Origin>,
        _rng: &mut Rng,
    ) {
    }
}

/// Queue the packets, then write every pending packet if this thread gets
/// the queue; otherwise the holder writes them. The holder looks at the
/// FIFO again after releasing the lock, so no packet is left behind.
fn submit(ctx: &Ctx, q: &Queue, ops: Vec<DeviceOp>, rng: &mut Rng) {
    let publish_ns = now_ns();
    lock(&q.fifo).extend(ops.into_iter().map(|op| Packet {
        op,
        run: ctx.shared.clone(),
        publish_ns,
    }));
    let jitter = ctx.opts.jitter_ns;
    rng.jitter(jitter);
    loop {
        let mut clock = match q.submit.try_lock() {
            Ok(g) => g,
            Err(std::sync::TryLockError::WouldBlock) => return,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
        };
        loop {
            let batch: Vec<Packet> = lock(&q.fifo).drain(..).collect();
            if batch.is_empty() {
                break;
            }
            for p in batch {
                write_packet(q, &mut clock, p);
                rng.jitter(jitter);
            }
        }
        drop(clock);
        if lock(&q.fifo).is_empty() {
            return;
        }
    }
}

/// The SDK's queue intercept: runs on the WRITING thread, inside that
/// thread's own API call.
fn write_packet(q: &Queue, clock: &mut u64, p: Packet) {
    let writer = tid();
    let corr = current_corr();
    let process_ns = now_ns();
    let start = process_ns.max(*clock);
    let end = start + p.op.duration.max(1);
    *clock = end;
    let mut processed = Processed {
        dispatch_id: 0,
        copy_id: 0,
        corr,
        thread: writer,
        agent: q.agent,
        queue_id: q.id,
        queue_index: q.index,
        publish_ns: p.publish_ns,
        process_ns,
        async_processed: false,
        replay_pass: None,
    };
    let (rec, deliveries, counting, traced) = match &p.op.work {
        OpWork::Kernel {
            kernel_id,
            grid,
            workgroup,
            ..
        } => {
            let dispatch_id = reserve_dispatch();
            processed.dispatch_id = dispatch_id;
            let info = DispatchInfo {
                corr,
                thread: writer,
                agent: q.agent,
                queue: q.id,
                kernel_id: *kernel_id,
                dispatch_id,
                grid: *grid,
                workgroup: *workgroup,
            };
            if let Some(replay) = kernel_replay::config(&info, graph_launch_active()) {
                replay_passes(replay, &p, &info, &processed, start, clock);
                return;
            }
            let Captured {
                deliveries,
                counting,
                traced,
            } = Captured::kernel_submission(&info, 0);
            (
                Rec::Kernel(dispatch_record(&info, start, end)),
                deliveries,
                counting,
                traced,
            )
        }
        OpWork::Copy {
            bytes,
            direction,
            peer,
        } => {
            let op = copy_operation(*direction);
            let deliveries = intercept_copy(corr, op);
            processed.copy_id = new_copy_id();
            let (src_agent, dst_agent) = copy_agents_of(*direction, q.agent, *peer);
            let info = CopyInfo {
                corr,
                thread: writer,
                op,
                src_agent,
                dst_agent,
                bytes: *bytes,
                src_address: super::graphs::SRC_ADDRESS,
                dst_address: super::graphs::DST_ADDRESS,
            };
            (
                Rec::Copy(copy_record(&info, start, end)),
                deliveries,
                Counting::default(),
                Traced::default(),
            )
        }
    };
    expect();
    p.run.finish(
        &p.op,
        &processed,
        rec,
        Captured {
            deliveries,
            counting,
            traced,
        },
        start,
        end,
    );
}

/// Kernel replay: the passes run back to back on the queue, each its own
/// record under the one dispatch id; the application's completion (the
/// queue's clock) follows the last.
fn replay_passes(
    mut replay: Replay,
    p: &Packet,
    info: &DispatchInfo,
    processed: &Processed,
    first_start: u64,
    clock: &mut u64,
) {
    let mut start = first_start;
    loop {
        let pass = replay.begin_pass() as u32;
        let captured = Captured::kernel_submission(info, pass);
        let end = start + p.op.duration.max(1);
        *clock = end;
        expect();
        let processed = Processed {
            replay_pass: Some(pass),
            ..processed.clone()
        };
        p.run
            .finish_kernel(&p.op, &processed, info, captured, start, end);
        if !replay.end_pass() {
            break;
        }
        start = now_ns().max(end);
    }
    replay.finish();
}
