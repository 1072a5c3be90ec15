//! A HIP stream under the `rocm` model, and how work is written to its HW
//! queue (ROCm/clr rocclr/device/rocm/rocvirtual.cpp).
//!
//! - Direct dispatch (on by default on Linux; CLR-2024 `Command::enqueue`):
//!   the calling thread writes its own packets while holding the stream's
//!   `execution()` lock, the per-VirtualGPU monitor; streams sharing a
//!   queue coordinate only through the slot reservation. One packet:
//!   reserve 1 slot, write the body, publish the header, ring the doorbell.
//! - Graph batches (RV-MID `dispatchAqlPacketBatch` /
//!   `dispatchGenericAqlPacketBatch`): chunks of 1, 2, 4, ... up to
//!   DEBUG_HIP_GRAPH_BATCH_SIZE, straight to the maximum once 16 packets
//!   (`kGpuLagPackets`) are in flight on the queue; one reservation per
//!   chunk, the chunk's first header published last, one doorbell per
//!   chunk. (The drop to 1 when the queue is nearly full is not modelled:
//!   the simulated rings never fill.)
//! - Waits (`dispatchBlockingWait`, `amd::Marker` with a wait list): a
//!   barrier-AND packet on the stream's queue; it produces no record and
//!   requests nothing.
//! - SDMA copies (rocblit.cpp `DmaBlitManager` -> hsa_amd_memory_async_copy):
//!   issued by the calling thread inside its call, intercepted there
//!   (MEMORY_COPY request, correlation id); the copy starts after the
//!   stream's previous work and runs on the device's copy engine in order;
//!   the stream's next packet waits for it behind a barrier.
//! - Dynamic queues (DEBUG_HIP_DYNAMIC_QUEUES != 0; RV-MID
//!   `ReleaseHwQueue`, DEV-NEW `ReleaseActiveQueue`, `profilingBegin`): a
//!   stream that is idle (all its work complete) gives its queue back when
//!   the device has more streams than queues, and takes the least loaded
//!   one at its next submission. Pinned streams (an exec's parallel streams,
//!   RV-NEW `PinQueue`) keep theirs. Here both happen at the submission.
use super::gpu::Cmd;
use super::hwqueue::{HwQueue, Packet};
use super::pool::Pool;
use crate::runtime::graphs::{DST_ADDRESS, SRC_ADDRESS};
use crate::runtime::handles::new_copy_id;
use crate::runtime::record::{Captured, Processed, RunShared};
use crate::runtime::rng::Rng;
use crate::runtime::work::{copy_agents_of, copy_operation, DeviceOp, OpWork};
use crate::sdk::agents::agent_handle;
use crate::sdk::buffer::Rec;
use crate::sdk::completion::expect;
use crate::sdk::correlation::current_corr;
use crate::sdk::dispatch_counting::Counting;
use crate::sdk::intercept::{copy_record, intercept_copy, CopyInfo};
use crate::sdk::os::{lock, now_ns, tid};
use crate::sdk::thread_trace::Traced;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// `kGpuLagPackets`: in flight on the queue, a batch goes out in full.
const GPU_LAG_PACKETS: u64 = 16;

/// How a run writes packets.
pub(crate) struct Writer<'a> {
    pub run: &'a Arc<RunShared>,
    pub jitter_ns: u64,
    pub hw_queue_slots: u64,
    pub batch_max: u32,
    pub dynamic_queues: u32,
}

struct State {
    queue: Arc<HwQueue>,
    /// The last command enqueued on the stream.
    last: Option<Arc<Cmd>>,
    /// An SDMA copy the stream's next packet must wait for.
    pending: Option<Arc<Cmd>>,
}

pub(crate) struct Stream {
    /// The SDK's stream id, or the ground truth's for an internal stream.
    pub id: u64,
    pub device: u32,
    pinned: bool,
    pool: Arc<Mutex<Pool>>,
    released: AtomicBool,
    /// The VirtualGPU's `execution()` lock.
    state: Mutex<State>,
}

/// The last SDMA copy of each device's copy engine.
fn copy_engine(device: u32) -> Arc<Mutex<Option<Arc<Cmd>>>> {
    type Engines = Mutex<HashMap<u32, Arc<Mutex<Option<Arc<Cmd>>>>>>;
    static ENGINES: OnceLock<Engines> = OnceLock::new();
    lock(ENGINES.get_or_init(|| Mutex::new(HashMap::new())))
        .entry(device)
        .or_default()
        .clone()
}

impl Stream {
    /// A stream taking a queue from `pool` (avoiding `exclude` if it can).
    pub fn new(
        pool: Arc<Mutex<Pool>>,
        id: u64,
        device: u32,
        pinned: bool,
        dynamic_queues: u32,
        exclude: &[u64],
    ) -> Stream {
        let queue = {
            let mut p = lock(&pool);
            p.streams += 1;
            p.acquire(dynamic_queues, exclude)
        };
        Stream {
            id,
            device,
            pinned,
            pool,
            released: AtomicBool::new(false),
            state: Mutex::new(State {
                queue,
                last: None,
                pending: None,
            }),
        }
    }

    /// Gives the stream's queue back to the pool (once).
    pub fn release(&self) {
        if self.released.swap(true, Ordering::AcqRel) {
            return;
        }
        let st = lock(&self.state);
        let mut p = lock(&self.pool);
        p.release(&st.queue);
        p.streams = p.streams.saturating_sub(1);
    }

    pub fn queue_id(&self) -> u64 {
        lock(&self.state).queue.id
    }

    /// The last command enqueued on the stream.
    pub fn last(&self) -> Option<Arc<Cmd>> {
        lock(&self.state).last.clone()
    }

    /// Takes the stream's execution lock to submit work.
    pub fn submit<'s>(&'s self, w: &'s Writer<'s>) -> Submit<'s> {
        let mut st = lock(&self.state);
        if !self.pinned && w.dynamic_queues != 0 {
            let idle = st.last.as_ref().is_none_or(|c| c.completed(now_ns()));
            if idle {
                let mut p = lock(&self.pool);
                if p.streams > p.max {
                    p.release(&st.queue);
                    st.queue = p.acquire(w.dynamic_queues, &[]);
                }
            }
        }
        Submit {
            stream: self,
            st,
            w,
        }
    }
}

/// A stream's execution lock, held while its work is written.
pub(crate) struct Submit<'s> {
    stream: &'s Stream,
    st: MutexGuard<'s, State>,
    w: &'s Writer<'s>,
}

impl Submit<'_> {
    fn kernel_packet(&self, op: DeviceOp) -> Packet {
        expect();
        Packet {
            cmd: Cmd::new(op.duration.max(1), 2, self.w.run.virtual_time),
            run: self.w.run.clone(),
            slots_limit: self.w.hw_queue_slots,
            publish_ns: 0,
            kernel: Some(Box::new(op)),
        }
    }

    /// Writes the packet's body (the jitter) and publishes its header.
    fn publish(&self, q: &HwQueue, index: u64, mut p: Packet, rng: &mut Rng) {
        rng.jitter(self.w.jitter_ns);
        p.publish_ns = now_ns();
        q.publish(index, p);
    }

    /// One packet: reserve, write, publish, ring.
    fn single(&mut self, p: Packet, rng: &mut Rng) {
        let q = self.st.queue.clone();
        self.st.last = Some(p.cmd.clone());
        let index = q.reserve(1);
        self.publish(&q, index, p, rng);
        q.ring_doorbell();
    }

    /// A barrier-AND packet waiting for `waits` (and a pending SDMA copy).
    pub fn barrier(&mut self, waits: Vec<Arc<Cmd>>, rng: &mut Rng) -> Arc<Cmd> {
        self.barrier_for(waits, 0, None, rng)
    }

    /// A barrier-AND packet after `waits` that holds the queue for
    /// `duration` once it starts (a host function the stream waits for),
    /// calling `done(start, end)` when its times are known.
    pub fn barrier_for(
        &mut self,
        mut waits: Vec<Arc<Cmd>>,
        duration: u64,
        done: Option<Box<dyn FnOnce(u64, u64) + Send>>,
        rng: &mut Rng,
    ) -> Arc<Cmd> {
        waits.extend(self.st.pending.take());
        let cmd = Cmd::new(duration, 2 + waits.len() as u32, self.w.run.virtual_time);
        if let Some(done) = done {
            cmd.on_done(done);
        }
        for dep in &waits {
            cmd.after(dep);
        }
        let p = Packet {
            cmd,
            run: self.w.run.clone(),
            slots_limit: self.w.hw_queue_slots,
            publish_ns: 0,
            kernel: None,
        };
        let cmd = p.cmd.clone();
        self.single(p, rng);
        cmd
    }

    fn wait_for_pending(&mut self, rng: &mut Rng) {
        if self.st.pending.is_some() {
            self.barrier(Vec::new(), rng);
        }
    }

    /// One kernel packet: reserve, write, publish, ring.
    pub fn dispatch(&mut self, op: DeviceOp, rng: &mut Rng) {
        self.wait_for_pending(rng);
        let p = self.kernel_packet(op);
        self.single(p, rng);
    }

    /// Kernel packets through dispatchAqlPacketBatch.
    pub fn dispatch_batch(&mut self, ops: Vec<DeviceOp>, rng: &mut Rng) {
        if ops.is_empty() {
            return;
        }
        self.wait_for_pending(rng);
        let max = self.w.batch_max.max(1) as usize;
        let mut chunk = 1usize;
        let mut ops = ops.into_iter().peekable();
        while ops.peek().is_some() {
            let q = self.st.queue.clone();
            let size = if q.depth() >= GPU_LAG_PACKETS {
                max
            } else {
                chunk
            };
            let packets: Vec<Packet> = ops
                .by_ref()
                .take(size)
                .map(|op| self.kernel_packet(op))
                .collect();
            self.st.last = packets.last().map(|p| p.cmd.clone());
            let base = q.reserve(packets.len());
            let mut packets = packets.into_iter();
            let first = packets.next().expect("a chunk has packets");
            for (j, p) in packets.enumerate() {
                self.publish(&q, base + 1 + j as u64, p, rng);
            }
            self.publish(&q, base, first, rng);
            q.ring_doorbell();
            chunk = (chunk * 2).min(max);
        }
    }

    /// An SDMA copy, issued now on this thread.
    pub fn copy(&mut self, op: DeviceOp) {
        let OpWork::Copy {
            bytes,
            direction,
            peer,
        } = op.work
        else {
            unreachable!("an SDMA op is a copy")
        };
        let issue = now_ns();
        let corr = current_corr();
        let thread = tid();
        let operation = copy_operation(direction);
        let deliveries = intercept_copy(corr, operation);
        let gpu = agent_handle(self.stream.device + 1);
        let (src_agent, dst_agent) = copy_agents_of(direction, gpu, peer);
        let info = CopyInfo {
            corr,
            thread,
            op: operation,
            src_agent,
            dst_agent,
            bytes,
            src_address: SRC_ADDRESS,
            dst_address: DST_ADDRESS,
        };
        let processed = Processed {
            dispatch_id: 0,
            copy_id: new_copy_id(),
            corr,
            thread,
            agent: gpu,
            queue_id: 0,
            queue_index: 0,
            publish_ns: issue,
            process_ns: issue,
            async_processed: false,
            replay_pass: None,
        };
        expect();
        let cmd = Cmd::new(op.duration.max(1), 3, self.w.run.virtual_time);
        let run = self.w.run.clone();
        cmd.on_done(move |start, end| {
            let rec = Rec::Copy(copy_record(&info, start, end));
            run.finish(
                &op,
                &processed,
                rec,
                Captured {
                    deliveries,
                    counting: Counting::default(),
                    traced: Traced::default(),
                },
                start,
                end,
            );
        });
        match &self.st.last {
            Some(prev) => cmd.after(prev),
            None => cmd.input(0),
        }
        let engine = copy_engine(self.stream.device);
        let prev = lock(&engine).replace(cmd.clone());
        match prev {
            Some(prev) => cmd.after(&prev),
            None => cmd.input(0),
        }
        self.st.last = Some(cmd.clone());
        self.st.pending = Some(cmd.clone());
        cmd.input(issue);
    }
}
