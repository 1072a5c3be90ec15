//! A HW queue behind rocprofiler-sdk's intercept queue, as the `rocm`
//! model runs it.
//!
//! - Slots are claimed (`reserve`, hsa_queue_add_write_index_screlease)
//!   and later published (the header store); claims are in index order,
//!   publications in any order.
//! - A doorbell ring processes on the RINGING thread (ROCr
//!   intercept_queue.cpp `InterceptQueue::StoreRelaxed`, ROCR-2025/NEW):
//!   under the queue's processing lock (blocking), every published slot
//!   from the next unprocessed one up to the first slot claimed but not yet
//!   published. So a thread's ring can process other threads' packets, and
//!   its own packets can be processed by another thread's later ring, after
//!   its own call returned.
//! - Per kernel packet, on that thread (rocprofiler-sdk hsa/queue.cpp
//!   `WriteInterceptor`, SDK-1.0): the SDK's interception (see
//!   `sdk::intercept`) under the correlation id of the call in progress on
//!   the thread; a thread with none (ROCr's async thread) gets one the SDK
//!   constructs for the pass (SDK-NEW takes one per WriteInterceptor call),
//!   retired like any other. Barrier packets take their place in the queue
//!   and request nothing.
//! - When the queue holds `hw_queue_slots` packets in flight (processed,
//!   not complete), processing stops (ROCr `Submit` is all-or-nothing; the
//!   rest waits in `overflow_`); the rest is processed on ROCr's async
//!   thread as completions free space (`HandleAsyncDoorbell`), or by the
//!   next ring once space has freed.
use super::gpu::Cmd;
use super::overflow::wait_for_space;
use crate::runtime::record::{Captured, Processed, RunShared};
use crate::runtime::work::{DeviceOp, OpWork};
use crate::sdk::completion::expect;
use crate::sdk::correlation::{
    corr_api_done, corr_begin, current_corr, next_corr, pop_corr, push_corr, retirement_mask,
};
use crate::sdk::graph_trace::graph_launch_active;
use crate::sdk::intercept::{reserve_dispatch, DispatchInfo};
use crate::sdk::kernel_replay::{self, Replay};
use crate::sdk::os::{lock, now_ns, tid};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// A packet written into a slot.
pub(crate) struct Packet {
    pub cmd: Arc<Cmd>,
    pub run: Arc<RunShared>,
    /// The run's `hw_queue_slots`.
    pub slots_limit: u64,
    pub publish_ns: u64,
    /// The kernel a dispatch packet runs; None for a barrier-AND packet.
    pub kernel: Option<Box<DeviceOp>>,
}

/// What a queue's next slot needs.
pub(crate) enum Waiting {
    /// Not published yet (its writer will ring), or no slot claimed.
    Nothing,
    /// Published, but the queue is full.
    Full,
    /// Published, with room to process it.
    Ready,
}

struct Ring {
    /// Index of `slots[0]`: the next slot to process.
    base: u64,
    /// Claimed slots from `base` on; None until published.
    slots: VecDeque<Option<Packet>>,
}

pub(crate) struct HwQueue {
    pub id: u64,
    pub index: u32,
    pub agent: u64,
    ring: Mutex<Ring>,
    /// The intercept queue's lock; holds the last processed command (the
    /// next one's predecessor on the queue).
    proc: Mutex<Option<Arc<Cmd>>>,
    /// Processed commands not known complete, in queue order.
    in_flight: Mutex<VecDeque<Arc<Cmd>>>,
}

impl HwQueue {
    pub fn new(id: u64, index: u32, agent: u64) -> HwQueue {
        HwQueue {
            id,
            index,
            agent,
            ring: Mutex::new(Ring {
                base: 0,
                slots: VecDeque::new(),
            }),
            proc: Mutex::new(None),
            in_flight: Mutex::new(VecDeque::new()),
        }
    }

    /// Claims `n` consecutive slots; returns the first index.
    pub fn reserve(&self, n: usize) -> u64 {
        let mut r = lock(&self.ring);
        let index = r.base + r.slots.len() as u64;
        r.slots.extend((0..n).map(|_| None));
        index
    }

    /// Writes a claimed slot's packet and publishes its header.
    pub fn publish(&self, index: u64, p: Packet) {
        let mut r = lock(&self.ring);
        let i = (index - r.base) as usize;
        r.slots[i] = Some(p);
    }

    /// Processed commands still in flight, after dropping completed ones
    /// (and adding `cmd`, just processed, if given).
    fn in_flight_now(&self, cmd: Option<Arc<Cmd>>) -> usize {
        let now = now_ns();
        let mut f = lock(&self.in_flight);
        while f.front().is_some_and(|c| c.completed(now)) {
            f.pop_front();
        }
        f.extend(cmd);
        f.len()
    }

    /// Slots claimed minus packets completed (the write index minus the
    /// read index, as the queue-load metric and batch sizing read it).
    pub fn depth(&self) -> u64 {
        let claimed = lock(&self.ring).slots.len();
        (claimed + self.in_flight_now(None)) as u64
    }

    /// When the oldest in-flight command ends, if known.
    pub fn next_completion_ns(&self) -> Option<u64> {
        lock(&self.in_flight).front().and_then(|c| c.end())
    }

    /// Is a published packet waiting, and is there room to process it?
    pub fn waiting(&self) -> Waiting {
        let head = {
            let r = lock(&self.ring);
            match r.slots.front() {
                Some(Some(p)) => Some((p.slots_limit, p.run.virtual_time)),
                _ => None,
            }
        };
        match head {
            None => Waiting::Nothing,
            Some((limit, virtual_time)) => {
                if virtual_time || (self.in_flight_now(None) as u64) < limit {
                    Waiting::Ready
                } else {
                    Waiting::Full
                }
            }
        }
    }

    /// The doorbell: processes on this thread what is ready.
    pub fn ring_doorbell(self: &Arc<Self>) {
        self.process(false);
    }

    /// One processing pass (`on_async`: on ROCr's async thread).
    pub fn process(self: &Arc<Self>, on_async: bool) {
        let mut last = lock(&self.proc);
        let mut constructed: Option<u64> = None;
        loop {
            let head = {
                let r = lock(&self.ring);
                match r.slots.front() {
                    Some(Some(p)) => (p.slots_limit, p.run.virtual_time),
                    _ => break,
                }
            };
            let (limit, virtual_time) = head;
            // Virtual time: work completes as soon as it is processed.
            if !virtual_time && self.in_flight_now(None) as u64 >= limit {
                wait_for_space(self.clone());
                break;
            }
            let p = {
                let mut r = lock(&self.ring);
                r.base += 1;
                r.slots
                    .pop_front()
                    .flatten()
                    .expect("the head slot was published")
            };
            self.handle(p, &mut last, &mut constructed, on_async);
        }
        if let Some(c) = constructed {
            pop_corr();
            corr_api_done(c);
        }
    }

    fn handle(
        &self,
        p: Packet,
        last: &mut Option<Arc<Cmd>>,
        constructed: &mut Option<u64>,
        on_async: bool,
    ) {
        let process_ns = now_ns();
        self.in_flight_now(Some(p.cmd.clone()));
        let prev = last.replace(p.cmd.clone());
        let Some(op) = p.kernel else {
            follow(&p.cmd, prev.as_ref());
            p.cmd.input(process_ns);
            return;
        };
        {
            let mut corr = current_corr();
            if corr == 0 {
                corr = *constructed.get_or_insert_with(|| {
                    let c = next_corr();
                    push_corr(c);
                    corr_begin(c, retirement_mask());
                    c
                });
            }
            let thread = tid();
            let dispatch_id = reserve_dispatch();
            let OpWork::Kernel {
                kernel_id,
                grid,
                workgroup,
                ..
            } = op.work
            else {
                unreachable!("a dispatch packet runs a kernel")
            };
            let info = DispatchInfo {
                corr,
                thread,
                agent: self.agent,
                queue: self.id,
                kernel_id,
                dispatch_id,
                grid,
                workgroup,
            };
            let processed = Processed {
                dispatch_id,
                copy_id: 0,
                corr,
                thread,
                agent: self.agent,
                queue_id: self.id,
                queue_index: self.index,
                publish_ns: p.publish_ns,
                process_ns,
                async_processed: on_async,
                replay_pass: None,
            };
            if let Some(replay) = kernel_replay::config(&info, graph_launch_active()) {
                let op = Arc::from(op);
                let last_pass = replay_passes(replay, &p.run, &op, &info, &processed, prev);
                p.cmd.take_no_time();
                p.cmd.after(&last_pass);
                p.cmd.input(process_ns);
                return;
            }
            follow(&p.cmd, prev.as_ref());
            let captured = Captured::kernel_submission(&info, 0);
            let run = p.run;
            p.cmd.on_done(move |start, end| {
                run.finish_kernel(&op, &processed, &info, captured, start, end);
            });
        }
        p.cmd.input(process_ns);
    }
}

/// A command's place on its queue: after the one processed before it.
fn follow(cmd: &Arc<Cmd>, prev: Option<&Arc<Cmd>>) {
    match prev {
        Some(prev) => cmd.after(prev),
        None => cmd.input(0),
    }
}

/// How long the replaying thread waits for one pass before it gives up
/// waiting (the SDK aborts the process after 60 s; the simulator goes on).
const PASS_WAIT_NS: u64 = 10_000_000_000;

/// Kernel replay on the processing thread: each pass is the packet again,
/// behind the previous one, waited for before the next (the SDK runs the
/// loop synchronously: `queue.sync()` after each pass); each is its own
/// record under the one dispatch id. Returns the last pass, which the
/// application's completion follows.
fn replay_passes(
    mut replay: Replay,
    run: &Arc<RunShared>,
    op: &Arc<DeviceOp>,
    info: &DispatchInfo,
    processed: &Processed,
    prev: Option<Arc<Cmd>>,
) -> Arc<Cmd> {
    let mut before = prev;
    loop {
        let pass = replay.begin_pass();
        let cmd = Cmd::new(op.duration.max(1), 2, run.virtual_time);
        let captured = Captured::kernel_submission(info, pass as u32);
        let info = *info;
        let (run2, op2) = (run.clone(), op.clone());
        let processed = Processed {
            replay_pass: Some(pass as u32),
            ..processed.clone()
        };
        cmd.on_done(move |start, end| {
            run2.finish_kernel(&op2, &processed, &info, captured, start, end);
        });
        // The packet's own completion was announced when it was written;
        // each further pass is one more.
        if pass > 0 {
            expect();
        }
        follow(&cmd, before.as_ref());
        cmd.input(now_ns());
        wait_for(&cmd);
        before = Some(cmd);
        if !replay.end_pass() {
            break;
        }
    }
    replay.finish();
    before.expect("a replay runs at least one pass")
}

fn wait_for(cmd: &Cmd) {
    let deadline = now_ns().saturating_add(PASS_WAIT_NS);
    while !cmd.completed(now_ns()) {
        if now_ns() >= deadline {
            eprintln!("rocprofiler-sim: kernel replay: a pass did not complete in 10 s; going on");
            return;
        }
        std::thread::sleep(std::time::Duration::from_micros(20));
    }
}
