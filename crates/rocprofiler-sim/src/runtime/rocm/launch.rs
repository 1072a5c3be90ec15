//! hipGraphLaunch under the `rocm` model (ROCm/clr hipamd/src/
//! hip_graph_internal.cpp, CLR-SEG 004f1770: `GraphExec::Run`,
//! `UpdateStreams`, `EnqueueSegmentedGraph`, `EnqueueSegment`).
//!
//! - `UpdateStreams` (run when the launch stream differs from the exec's
//!   last one): streams[0] is the launch stream, then the exec's parallel
//!   streams whose HW queue differs from the launch stream's (and from each
//!   other's), then the ones that collide.
//! - Levels in order; at each level a snapshot of every stream's last
//!   command; the segment at position idx of the level runs on
//!   streams[idx % n] (so the first segment of every level runs on the
//!   launch stream). Before a segment whose dependencies ran on other
//!   streams, a marker waits for those streams' snapshot commands (a
//!   barrier-AND packet; over-synchronising as the source does). A root
//!   segment on a parallel stream waits for the launch stream's last
//!   command: the classic path's start marker (`RunNodes`); the sources
//!   read do not show the segmented path's, and a launch must not overtake
//!   earlier work on its stream.
//! - Within a segment, runs of captured nodes go out through
//!   dispatchAqlPacketBatch; other nodes through the command path. Without
//!   segment scheduling nothing is captured (`GraphCaptureEnabled` needs
//!   it): every node goes through the command path, on the launch stream, in
//!   Kahn FIFO order (the classic scheduler's parallel streams are not
//!   modelled; the spec accepts this fallback).
//! - At the end, a marker on the launch stream waits for the last command
//!   of every other stream that had work, then the trailing marker whose
//!   callback releases the exec (a barrier packet here).
//! - Concurrent launches of one exec share its parallel streams; nothing
//!   else serialises them (the sources read name no exec-wide lock).
//! - Event nodes are commands of their own on the segment's stream, no
//!   dispatch (hip_graph_internal.hpp `GraphEventRecordNode::CreateCommand`
//!   / `EnqueueCommands`: `Event::recordCommand` + `enqueueRecordCommand`,
//!   the marker hipEventRecord enqueues; `GraphEventWaitNode`:
//!   `streamWaitCommand` + `enqueueStreamWaitCommand`, hipStreamWaitEvent's
//!   marker waiting for the event's last record, none: no wait).
use super::engine::{copy_engine, copy_node_captured, Engine};
use super::gpu::Cmd;
use super::stream::{Stream, Submit, Writer};
use super::RocmExec;
use crate::runtime::context::Ctx;
use crate::runtime::graphs::{DST_ADDRESS, HOST_FN_ADDRESS};
use crate::runtime::plan::SegmentPlan;
use crate::runtime::rng::Rng;
use crate::runtime::submission::Launched;
use crate::runtime::work::{self, DeviceOp, Fill, OpWork, Origin, COPY_KERNEL};
use crate::sdk::os::lock;
use crate::truth::{GraphEventTruth, HostFnTruth};
use crate::workload::{Graph, NodeWork};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// How one node goes out.
enum NodeOut {
    /// Packets captured at instantiate (a memset node's fill can be
    /// several: `work::fill`).
    Captured(Vec<DeviceOp>),
    /// One command whose packets are written when it is submitted.
    Command(Vec<DeviceOp>),
    Sdma(DeviceOp),
    /// Nothing on the device (a host-to-host copy, an empty node).
    Host,
    /// A host node: the stream waits for a host function of this many ns.
    HostFn(u64),
    /// An event-record node of this hipEvent_t.
    EventRecord(u64),
    /// An event-wait node of this hipEvent_t.
    EventWait(u64),
}

/// The marker of each graph event's last record (event-record nodes of any
/// exec), by hipEvent_t.
pub(crate) type LastRecords = Mutex<HashMap<u64, Arc<Cmd>>>;

struct Builder<'a> {
    ctx: &'a Ctx<'a>,
    /// Segment scheduling on: captured nodes go out in batches.
    capture: bool,
    graph: &'a Graph,
    /// The graph's events, by name.
    events: &'a HashMap<String, u64>,
    last_records: &'a LastRecords,
    origin: Arc<Origin>,
    ordinal: u32,
    packets: u32,
    kernels: u64,
}

impl Builder<'_> {
    fn op(&mut self, ni: usize, s: &Stream, (w, duration): (OpWork, u64)) -> DeviceOp {
        if matches!(w, OpWork::Kernel { .. }) {
            self.kernels += 1;
        }
        self.packets += 1;
        self.ordinal += 1;
        DeviceOp {
            origin: self.origin.clone(),
            node_index: Some(ni as u32),
            ordinal: self.ordinal - 1,
            exec_stream_id: s.id,
            device: s.device,
            work: w,
            duration,
        }
    }

    fn node(&mut self, ni: usize, s: &Stream) -> NodeOut {
        let (kernels, durations) = (&self.ctx.kernels, &self.ctx.w.durations);
        let capture = self.capture;
        let captured = move |ops| {
            if capture {
                NodeOut::Captured(ops)
            } else {
                NodeOut::Command(ops)
            }
        };
        match self.graph.nodes[ni].work() {
            NodeWork::Kernel { name, grid, block } => {
                let w = work::kernel(kernels, durations, name, grid, block);
                captured(vec![self.op(ni, s, w)])
            }
            NodeWork::Memset(m) => {
                let fill = Fill {
                    dst: DST_ADDRESS + m.offset,
                    bytes: m.bytes,
                    value: m.value,
                };
                let ops = work::fill(kernels, durations, fill)
                    .into_iter()
                    .map(|w| self.op(ni, s, w))
                    .collect();
                captured(ops)
            }
            // hip_graph_internal.cpp: a host node is a command of its own
            // (`GraphHostNode` enqueues a marker whose callback runs the
            // function and blocks the stream until it returns); an empty
            // node only orders.
            NodeWork::Host(h) => NodeOut::HostFn(h.us.saturating_mul(1000).max(1)),
            NodeWork::Empty => NodeOut::Host,
            NodeWork::EventRecord(e) => NodeOut::EventRecord(self.events[e]),
            NodeWork::EventWait(e) => NodeOut::EventWait(self.events[e]),
            NodeWork::Memcpy(m) => match copy_engine(m.direction, m.bytes) {
                Engine::Host => NodeOut::Host,
                Engine::Sdma => {
                    let w = work::copy(durations, m.bytes, m.direction);
                    NodeOut::Sdma(self.op(ni, s, w))
                }
                Engine::Blit => {
                    let w = work::blit(
                        kernels,
                        durations,
                        COPY_KERNEL,
                        m.bytes,
                        Some(m.direction),
                        None,
                    );
                    let op = vec![self.op(ni, s, w)];
                    if copy_node_captured(m.direction) {
                        captured(op)
                    } else {
                        NodeOut::Command(op)
                    }
                }
            },
        }
    }

    /// `EnqueueSegment`: the segment's nodes on `s`, after `waits`.
    fn segment(
        &mut self,
        s: &Stream,
        w: &Writer,
        waits: Vec<Arc<Cmd>>,
        nodes: &[usize],
        rng: &mut Rng,
    ) {
        let mut g: Submit = s.submit(w);
        if !waits.is_empty() {
            g.barrier(waits, rng);
        }
        let mut batch = Vec::new();
        for &ni in nodes {
            match self.node(ni, s) {
                NodeOut::Captured(ops) => batch.extend(ops),
                NodeOut::Command(ops) => {
                    g.dispatch_batch(std::mem::take(&mut batch), rng);
                    for op in ops {
                        g.dispatch(op, rng);
                    }
                }
                NodeOut::Sdma(op) => {
                    g.dispatch_batch(std::mem::take(&mut batch), rng);
                    g.copy(op);
                }
                NodeOut::Host => g.dispatch_batch(std::mem::take(&mut batch), rng),
                NodeOut::HostFn(duration) => {
                    g.dispatch_batch(std::mem::take(&mut batch), rng);
                    let done = host_fn_truth(self.ctx, &self.origin, s, Some(ni as u32));
                    g.barrier_for(Vec::new(), duration, done, rng);
                }
                NodeOut::EventRecord(event) => {
                    g.dispatch_batch(std::mem::take(&mut batch), rng);
                    let done = self.record_truth(s, event, ni as u32);
                    let mark = g.barrier_for(Vec::new(), 0, done, rng);
                    lock(self.last_records).insert(event, mark);
                }
                NodeOut::EventWait(event) => {
                    g.dispatch_batch(std::mem::take(&mut batch), rng);
                    let last = lock(self.last_records).get(&event).cloned();
                    if let Some(mark) = last {
                        g.barrier(vec![mark], rng);
                    }
                }
            }
        }
        g.dispatch_batch(batch, rng);
    }

    /// Records an event-record node's record in the ground truth when its
    /// marker completes (None when the run keeps no truth).
    fn record_truth(
        &self,
        s: &Stream,
        event: u64,
        node_index: u32,
    ) -> Option<Box<dyn FnOnce(u64, u64) + Send>> {
        if !self.ctx.shared.record_truth {
            return None;
        }
        let run = self.ctx.shared.clone();
        let origin = self.origin.clone();
        let (exec_stream_id, device) = (s.id, s.device);
        Some(Box::new(move |_, end| {
            lock(&run.truth).graph_events.push(GraphEventTruth {
                event,
                launch_correlation_id: origin.launch_corr,
                launching_thread: origin.launching_thread,
                stream_id: origin.stream_id,
                exec_stream_id,
                device,
                graph_exec_id: origin.graph_exec_id,
                node_index,
                completed_ns: end,
            });
        }))
    }
}

/// Records a host function's run in the ground truth when its times are
/// known (None when the run keeps no truth).
pub(crate) fn host_fn_truth(
    ctx: &Ctx,
    origin: &Arc<Origin>,
    s: &Stream,
    node_index: Option<u32>,
) -> Option<Box<dyn FnOnce(u64, u64) + Send>> {
    if !ctx.shared.record_truth {
        return None;
    }
    let run = ctx.shared.clone();
    let origin = origin.clone();
    let (exec_stream_id, device) = (s.id, s.device);
    Some(Box::new(move |start, end| {
        lock(&run.truth).host_functions.push(HostFnTruth {
            launch_correlation_id: origin.launch_corr,
            launching_thread: origin.launching_thread,
            stream_id: origin.stream_id,
            exec_stream_id,
            device,
            graph_exec_id: origin.graph_exec_id,
            node_index,
            function: HOST_FN_ADDRESS,
            start_ns: start,
            end_ns: end,
        });
    }))
}

/// `UpdateStreams`: the launch stream, then parallel streams on queues of
/// their own, then the rest; kept while the exec is launched on the same
/// stream.
fn launch_streams<'a>(launch: &'a Stream, exec: &'a RocmExec) -> Vec<&'a Stream> {
    let mut last = lock(&exec.order);
    let order = match &*last {
        Some((stream, order)) if *stream == launch.id => order.clone(),
        _ => {
            let mut used = vec![launch.queue_id()];
            let (mut own, mut collided) = (Vec::new(), Vec::new());
            for (i, p) in exec.parallel.iter().enumerate() {
                let q = p.queue_id();
                if used.contains(&q) {
                    collided.push(i);
                } else {
                    used.push(q);
                    own.push(i);
                }
            }
            own.extend(collided);
            *last = Some((launch.id, own.clone()));
            own
        }
    };
    let mut streams = vec![launch];
    streams.extend(order.iter().map(|&i| exec.parallel[i].as_ref()));
    streams
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn launch(
    ctx: &Ctx,
    graph: &Graph,
    events: &HashMap<String, u64>,
    last_records: &LastRecords,
    exec: &RocmExec,
    launch_stream: &Stream,
    origin: Arc<Origin>,
    w: &Writer,
    rng: &mut Rng,
) -> Launched {
    let queue_id = launch_stream.queue_id();
    let streams = launch_streams(launch_stream, exec);
    let plan: &SegmentPlan = &exec.plan;
    let mut b = Builder {
        ctx,
        capture: ctx.rocm.segment_scheduling != 0,
        graph,
        events,
        last_records,
        origin,
        ordinal: 0,
        packets: 0,
        kernels: 0,
    };
    let mut on_stream = vec![0usize; plan.segments.len()];
    let mut had_work = vec![false; streams.len()];
    for (li, level) in plan.levels.iter().enumerate() {
        let snapshot: Vec<Option<Arc<Cmd>>> = streams.iter().map(|s| s.last()).collect();
        for (idx, &seg) in level.iter().enumerate() {
            let si = idx % streams.len();
            let mut from: Vec<usize> = Vec::new();
            for &d in &plan.deps[seg] {
                if on_stream[d] != si && !from.contains(&on_stream[d]) {
                    from.push(on_stream[d]);
                }
            }
            if li == 0 && si != 0 {
                from.push(0);
            }
            let waits: Vec<Arc<Cmd>> = from.iter().filter_map(|&ds| snapshot[ds].clone()).collect();
            on_stream[seg] = si;
            had_work[si] = true;
            b.segment(streams[si], w, waits, &plan.segments[seg], rng);
        }
    }
    let joins: Vec<Arc<Cmd>> = (1..streams.len())
        .filter(|&i| had_work[i])
        .filter_map(|i| streams[i].last())
        .collect();
    let mut g = launch_stream.submit(w);
    if !joins.is_empty() {
        g.barrier(joins, rng);
    }
    g.barrier(Vec::new(), rng);
    Launched {
        packets: b.packets,
        kernels: b.kernels,
        queue_id,
        record_queue_id: 0,
        record_count: None,
    }
}
