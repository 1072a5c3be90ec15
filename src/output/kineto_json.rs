//! Finished windows as kineto's chrome trace: GPU kernels, memsets and
//! copies on device lanes (pid = device, tid = stream, or a graph branch
//! lane of the launching stream), sync spans, event records and host
//! functions on the lanes of what they wait on, HIP runtime calls, roctx
//! ranges and the backend's overhead on the CPU process, ac2g flow arrows
//! from each call to the work it launched, graph dependency arrows when
//! asked for, and the attribution and completeness summary as trace
//! metadata.
//!
//! Keys, value types and fixed strings come from src/vocabulary.rs, which
//! the C++ face reads through the bridge: both writers put the same args on
//! the same events (tests/ctest compares them event by event).
use super::chrome_trace::{Arg, ArgKey, ChromeTraceWriter, CompleteEvent, FlowEnd, ShapeKey};
use super::counter_tracks::{step_samples, CounterSpan};
use super::sink::TraceSink;
use crate::vocabulary::{self as vocab, MetadataKey as K};
use crate::window::{
    Blit, CopyActivity, FinishedWindow, GpuRef, GraphNode, KernelActivity, SyncKind,
};
use activity_store::{CopyDirection, FastMap, FastSet};
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::sync::atomic::{AtomicU64, Ordering};

/// CPU threads are drawn in one process lane, after the devices.
const HOST_PID: u64 = 1_000_000;
/// kineto's own key for the CPU op's external correlation id (not one of
/// the vocabulary's: the C++ face leaves it to kineto).
const EXTERNAL_ID: ArgKey<'static> = ArgKey::Named("External id");

/// Dependency arrows take flow ids from here up (clear of ac2g's).
const DEPENDENCY_FLOW_BASE: u64 = 0x2000_0000;

/// A (pid, tid) row: a stream, a graph branch of a stream, a stream-less
/// kernel's HSA queue, a device's stream-less copies or device-wide syncs,
/// or a CPU thread.
#[derive(Clone, Copy)]
struct Lane {
    pid: u64,
    tid: u64,
    name: LaneName,
}

/// A lane's name, formatted only when the lane is first named: every event
/// finds its lane, but a trace names each lane once.
#[derive(Clone, Copy)]
enum LaneName {
    Unnamed,
    Stream(u64),
    Queue(u64),
    Branch { stream: u64, queue: u64 },
    Fixed(&'static str),
}

impl LaneName {
    fn text(self) -> String {
        match self {
            LaneName::Unnamed => String::new(),
            LaneName::Stream(stream) => vocab::stream_lane_name(stream),
            LaneName::Queue(queue) => vocab::queue_lane_name(queue),
            LaneName::Branch { stream, queue } => vocab::branch_lane_name(stream, queue),
            LaneName::Fixed(name) => name.to_string(),
        }
    }
}

/// Lane ids and names, stable across the windows of one trace.
#[derive(Default)]
struct Lanes {
    /// (device, queue) -> tid.
    queues: FastMap<(u64, u64), u64>,
    /// (device, stream, queue) -> tid.
    branches: FastMap<(u64, u64, u64), u64>,
}

impl Lanes {
    fn stream(device: u64, stream: u64) -> Lane {
        Lane {
            pid: device,
            tid: stream,
            name: LaneName::Stream(stream),
        }
    }

    fn queue(&mut self, device: u64, queue: u64) -> Lane {
        let tid = match self.queues.get(&(device, queue)) {
            Some(&tid) => tid,
            None => {
                let next = self.queues.keys().filter(|(d, _)| *d == device).count() as u64;
                let tid = u64::from(vocab::QUEUE_LANE_BASE) + next;
                self.queues.insert((device, queue), tid);
                tid
            }
        };
        Lane {
            pid: device,
            tid,
            name: LaneName::Queue(queue),
        }
    }

    fn branch(&mut self, device: u64, stream: u64, queue: u64) -> Lane {
        let tid = match self.branches.get(&(device, stream, queue)) {
            Some(&tid) => tid,
            None => {
                let next = self.branches.keys().filter(|(d, ..)| *d == device).count() as u64;
                let tid = u64::from(vocab::BRANCH_LANE_BASE) + next;
                self.branches.insert((device, stream, queue), tid);
                tid
            }
        };
        Lane {
            pid: device,
            tid,
            name: LaneName::Branch { stream, queue },
        }
    }

    fn kernel(&mut self, k: &KernelActivity) -> Lane {
        let device = u64::from(k.device);
        match (k.stream(), k.branch()) {
            (Some(s), Some(q)) => self.branch(device, s, q),
            (Some(s), None) => Lanes::stream(device, s),
            (None, _) => self.queue(device, k.queue),
        }
    }

    fn copy(c: &CopyActivity) -> Lane {
        let device = u64::from(c.device);
        match c.stream {
            Some(s) => Lanes::stream(device, s),
            None => Lane {
                pid: device,
                tid: vocab::COPY_LANE_ID.into(),
                name: LaneName::Fixed(vocab::COPY_LANE_NAME),
            },
        }
    }

    fn on_device(&mut self, device: u32, stream: Option<u64>, branch: Option<u64>) -> Lane {
        let device = u64::from(device);
        match (stream, branch) {
            (Some(s), Some(q)) => self.branch(device, s, q),
            (Some(s), None) => Lanes::stream(device, s),
            (None, _) => Lane {
                pid: device,
                tid: vocab::SYNC_LANE_ID.into(),
                name: LaneName::Fixed(vocab::SYNC_LANE_NAME),
            },
        }
    }

    fn thread(thread_id: u64) -> Lane {
        Lane {
            pid: HOST_PID,
            tid: thread_id,
            name: LaneName::Unnamed,
        }
    }
}

/// What one correlation id launched in a window.
#[derive(Default)]
struct Launched {
    kernels: u32,
    copies: u32,
    /// The first kernel's index in `window.kernels`.
    first_kernel: usize,
}

/// Launches by correlation id: flow arrows and the kernel-launch args of
/// runtime calls. Work whose launching call is unknown is left out; a blit
/// kernel shown as a memset or copy is not a kernel launch.
fn launches_of(window: &FinishedWindow) -> FastMap<u64, Launched> {
    // Launches are runtime calls: sized once for them, not grown.
    let mut out: FastMap<u64, Launched> =
        FastMap::with_capacity_and_hasher(window.runtime.len(), Default::default());
    for (index, kernel) in window.kernels.iter().enumerate() {
        if let Some(correlation) = kernel.correlation() {
            let entry = out.entry(correlation).or_default();
            if kernel.blit().is_some() {
                entry.copies += 1;
                continue;
            }
            if entry.kernels == 0 {
                entry.first_kernel = index;
            }
            entry.kernels += 1;
        }
    }
    for correlation in window.copies.iter().filter_map(|c| c.correlation) {
        out.entry(correlation).or_default().copies += 1;
    }
    out
}

fn graph_args<'a>(args: &mut Vec<(ArgKey<'a>, Arg<'a>)>, graph: Option<GraphNode>) {
    if let Some(graph) = graph {
        args.push((K::GraphId.into(), Arg::Int(graph.graph_id.get())));
        args.push((K::GraphNodeId.into(), Arg::Int(graph.graph_node_id)));
    }
}

/// A kernel's args, pushed into `args`; returns its category and name.
fn kernel_args<'a>(
    args: &mut Vec<(ArgKey<'a>, Arg<'a>)>,
    kernel: &'a KernelActivity,
    name_of_kernel: &'a str,
    symbol: &'a str,
) -> (&'static str, &'a str) {
    args.push((K::Device.into(), Arg::Int(kernel.device.into())));
    if let Some(stream) = kernel.stream() {
        args.push((K::Stream.into(), Arg::Int(stream)));
    }
    args.push((K::HsaQueue.into(), Arg::Int(kernel.queue)));
    if let Some(correlation) = kernel.correlation() {
        args.push((K::Correlation.into(), Arg::Int(correlation)));
    }
    args.push((K::DispatchId.into(), Arg::Int(kernel.dispatch_id)));
    let (category, event_name) = match kernel.blit() {
        None => {
            args.extend([
                (K::Kind.into(), Arg::Str(vocab::KERNEL_KIND)),
                (K::Kernel.into(), Arg::Str(name_of_kernel)),
                (K::Grid.into(), Arg::Dim3(kernel.grid)),
                (K::Block.into(), Arg::Dim3(kernel.block)),
                (K::SharedMemory.into(), Arg::Int(kernel.lds_bytes.into())),
                (
                    K::ScratchMemory.into(),
                    Arg::Int(kernel.scratch_bytes.into()),
                ),
            ]);
            if symbol != name_of_kernel {
                args.push((K::MangledName.into(), Arg::Str(symbol)));
            }
            ("kernel", name_of_kernel)
        }
        Some(Blit::Memset { bytes, value }) => {
            args.extend([
                (K::Kind.into(), Arg::Str(vocab::MEMSET_KIND)),
                (K::Kernel.into(), Arg::Str(symbol)),
                (K::Bytes.into(), Arg::Int(bytes)),
                (K::Value.into(), Arg::Int(value.into())),
            ]);
            bandwidth(args, bytes, kernel.start_ns, kernel.end_ns);
            ("gpu_memset", vocab::MEMSET_NAME)
        }
        Some(Blit::Copy { bytes, direction }) => {
            let (src, dst) = copy_ends(direction, kernel.device);
            args.extend([
                (K::Kind.into(), Arg::Str(vocab::copy_kind(direction))),
                (K::Kernel.into(), Arg::Str(symbol)),
                (K::Bytes.into(), Arg::Int(bytes)),
            ]);
            bandwidth(args, bytes, kernel.start_ns, kernel.end_ns);
            args.extend([
                (K::SrcDevice.into(), Arg::Signed(src)),
                (K::DstDevice.into(), Arg::Signed(dst)),
            ]);
            ("gpu_memcpy", vocab::copy_event_name(direction))
        }
    };
    if let (Some(_), Some(external_id)) = (kernel.correlation(), kernel.external_id()) {
        args.push((EXTERNAL_ID, Arg::Int(external_id)));
    }
    graph_args(args, kernel.graph);
    if let Some(replay) = kernel.replay() {
        args.push((K::ReplayPass.into(), Arg::Int(replay.pass.into())));
    }
    if let Some(files) = kernel.thread_trace() {
        args.push((K::ThreadTrace.into(), Arg::Str(files)));
    }
    for (counter, value) in kernel.counters().iter().chain(kernel.counter_instances()) {
        args.push((ArgKey::Named(counter), Arg::Float(*value)));
    }
    (category, event_name)
}

/// Where each emit_windows call's shape keys start: kernel names are
/// indices into their own window's table, so a key names its call and
/// window.
static NEXT_SHAPE_SCOPE: AtomicU64 = AtomicU64::new(0);

/// The shape key of a kernel with no extras (no counters, blit, replay or
/// thread trace), from everything its event is written from except its
/// times, correlation, dispatch id, External id and graph node id, which
/// it returns as the varying values, in args order (`kernel_args`).
fn plain_kernel_shape(
    scope: u64,
    window: usize,
    tid: u64,
    kernel: &KernelActivity,
) -> (ShapeKey, Varying) {
    let external = kernel.correlation().and(kernel.external_id());
    let present = u64::from(kernel.stream().is_some())
        | u64::from(kernel.correlation().is_some()) << 1
        | u64::from(external.is_some()) << 2
        | u64::from(kernel.graph.is_some()) << 3;
    let pair = |a: u32, b: u32| u64::from(a) | u64::from(b) << 32;
    let key = ShapeKey([
        scope,
        window as u64,
        pair(kernel.name_index, kernel.device),
        present,
        tid,
        kernel.stream().unwrap_or(0),
        kernel.queue,
        pair(kernel.grid[0], kernel.grid[1]),
        pair(kernel.grid[2], kernel.block[0]),
        pair(kernel.block[1], kernel.block[2]),
        pair(kernel.lds_bytes, kernel.scratch_bytes),
        kernel.graph.map_or(0, |g| g.graph_id.get()),
    ]);
    let mut values = Varying::default();
    if let Some(correlation) = kernel.correlation() {
        values.push(correlation);
    }
    values.push(kernel.dispatch_id);
    if let Some(external) = external {
        values.push(external);
    }
    if let Some(graph) = kernel.graph {
        values.push(graph.graph_node_id);
    }
    (key, values)
}

/// A plain kernel's varying values: up to four.
#[derive(Default)]
struct Varying {
    values: [u64; 4],
    len: usize,
}

impl Varying {
    fn push(&mut self, value: u64) {
        self.values[self.len] = value;
        self.len += 1;
    }

    fn as_slice(&self) -> &[u64] {
        &self.values[..self.len]
    }
}

/// A copy's source and destination devices; -1 is the host.
fn copy_ends(direction: CopyDirection, device: u32) -> (i64, i64) {
    let d = i64::from(device);
    match direction {
        CopyDirection::HostToHost => (-1, -1),
        CopyDirection::HostToDevice => (-1, d),
        CopyDirection::DeviceToHost => (d, -1),
        CopyDirection::DeviceToDevice => (d, d),
        CopyDirection::Unknown => (-1, -1),
    }
}

/// Writes `windows` as JSON and returns the number of kernel events written.
pub fn write_windows<W: Write>(windows: &[FinishedWindow], out: W) -> io::Result<usize> {
    let mut writer = ChromeTraceWriter::begin(out)?;
    let emitted = emit_windows(windows, &mut writer)?;
    writer.finish(&emitted.metadata)?;
    Ok(emitted.kernels)
}

/// What [`emit_windows`] handed over besides the events.
pub struct Emitted {
    pub kernels: usize,
    /// Top-level trace metadata: (key, JSON value).
    pub metadata: Vec<(&'static str, String)>,
}

/// Hands every event of `windows` to `writer`, in the JSON trace's order.
pub fn emit_windows<S: TraceSink>(
    windows: &[FinishedWindow],
    writer: &mut S,
) -> io::Result<Emitted> {
    let mut kernels_written = 0;
    let mut lanes_named: FastSet<(u64, Option<u64>)> = FastSet::default();
    let mut lanes = Lanes::default();
    let mut summary_lines: Vec<String> = Vec::new();
    let mut next_dependency = DEPENDENCY_FLOW_BASE;
    let scope = NEXT_SHAPE_SCOPE.fetch_add(1, Ordering::Relaxed);
    for (index, window) in windows.iter().enumerate() {
        for lane in &window.devices {
            if lanes_named.insert((lane.device as u64, None)) {
                writer.lane_name(
                    lane.device as u64,
                    None,
                    &format!("GPU {} ({})", lane.device, lane.name),
                )?;
            }
        }
        if lanes_named.insert((HOST_PID, None)) {
            writer.lane_name(HOST_PID, None, "CPU (HIP runtime)")?;
        }
        // Most events are on the lane of the one before: that lane is in
        // `lanes_named` already.
        let mut last_named = None;
        let mut name_lane = |writer: &mut S, lane: &Lane| -> io::Result<()> {
            if matches!(lane.name, LaneName::Unnamed) || last_named == Some((lane.pid, lane.tid)) {
                return Ok(());
            }
            if lanes_named.insert((lane.pid, Some(lane.tid))) {
                writer.lane_name(lane.pid, Some(lane.tid), &lane.name.text())?;
            }
            last_named = Some((lane.pid, lane.tid));
            Ok(())
        };
        let launched = launches_of(window);
        let kernel_name = |index: u32| {
            window
                .kernel_names
                .get(index as usize)
                .map(String::as_str)
                .unwrap_or("kernel")
        };
        let kernel_symbol = |index: u32| {
            window
                .kernel_symbols
                .get(index as usize)
                .map(String::as_str)
                .unwrap_or("kernel")
        };
        // One args list for every call and kernel, cleared each time, not
        // one allocation per event.
        let mut args: Vec<(ArgKey, Arg)> = Vec::new();
        for call in &window.runtime {
            args.clear();
            args.extend([
                (K::Cid.into(), Arg::Int(call.cid.into())),
                (K::Correlation.into(), Arg::Int(call.correlation)),
            ]);
            if let Some(external_id) = call.external_id {
                args.push((EXTERNAL_ID, Arg::Int(external_id)));
            }
            let launch = launched.get(&call.correlation);
            // A call that launched exactly one kernel and nothing else is a
            // kernel launch: it names the kernel and its shape.
            if let Some(l) = launch.filter(|l| l.kernels == 1 && l.copies == 0) {
                let kernel = &window.kernels[l.first_kernel];
                args.extend([
                    (K::Kernel.into(), Arg::Str(kernel_name(kernel.name_index))),
                    (K::Grid.into(), Arg::Dim3(kernel.grid)),
                    (K::Block.into(), Arg::Dim3(kernel.block)),
                    (K::SharedMemory.into(), Arg::Int(kernel.lds_bytes.into())),
                ]);
            }
            writer.complete(&CompleteEvent {
                name: call.name,
                category: "cuda_runtime",
                pid: HOST_PID,
                tid: call.thread_id,
                start_ns: call.start_ns,
                end_ns: call.end_ns,
                args: &args,
            })?;
            if launch.is_some() {
                writer.flow(
                    FlowEnd::Start,
                    call.correlation,
                    HOST_PID,
                    call.thread_id,
                    call.start_ns,
                )?;
            }
        }
        // At most a flow per runtime call: sized once, not grown (an eager
        // window has a call per kernel).
        let mut flows_finished: FastSet<u64> =
            FastSet::with_capacity_and_hasher(window.runtime.len(), Default::default());
        let mut last_flow = None;
        for kernel in &window.kernels {
            let device = kernel.device as u64;
            let lane = lanes.kernel(kernel);
            name_lane(writer, &lane)?;
            let name_of_kernel = kernel_name(kernel.name_index);
            let symbol = kernel_symbol(kernel.name_index);
            let head = CompleteEvent {
                name: name_of_kernel,
                category: "kernel",
                pid: device,
                tid: lane.tid,
                start_ns: kernel.start_ns,
                end_ns: kernel.end_ns,
                args: &[],
            };
            if kernel.extras.is_none() {
                let (key, values) = plain_kernel_shape(scope, index, lane.tid, kernel);
                writer.complete_shaped(&key, &head, values.as_slice(), &mut args, |args| {
                    kernel_args(args, kernel, name_of_kernel, symbol);
                })?;
            } else {
                args.clear();
                let (category, event_name) = kernel_args(&mut args, kernel, name_of_kernel, symbol);
                writer.complete(&CompleteEvent {
                    name: event_name,
                    category,
                    args: &args,
                    ..head
                })?;
            }
            // A launch's kernels mostly follow one another: the one before
            // finished its flow already.
            if let Some(correlation) = kernel
                .correlation()
                .filter(|c| Some(*c) != last_flow && flows_finished.insert(*c))
            {
                writer.flow(
                    FlowEnd::Finish,
                    correlation,
                    device,
                    lane.tid,
                    kernel.start_ns,
                )?;
            }
            last_flow = kernel.correlation().or(last_flow);
            if kernel.blit().is_none() {
                kernels_written += 1;
            }
        }
        for copy in &window.copies {
            let device = copy.device as u64;
            let lane = Lanes::copy(copy);
            name_lane(writer, &lane)?;
            let peer =
                copy.src_device >= 0 && copy.dst_device >= 0 && copy.src_device != copy.dst_device;
            let mut args: Vec<(ArgKey, Arg)> = vec![(K::Device.into(), Arg::Int(device))];
            if let Some(stream) = copy.stream {
                args.push((K::Stream.into(), Arg::Int(stream)));
            }
            // Copies run on no HSA queue the SDK reports: 0, as kineto writes.
            args.push((K::HsaQueue.into(), Arg::Int(0)));
            if let Some(correlation) = copy.correlation {
                args.push((K::Correlation.into(), Arg::Int(correlation)));
            }
            let kind = if peer {
                vocab::PEER_COPY_KIND
            } else {
                vocab::copy_kind(copy.direction)
            };
            args.extend([
                (K::Kind.into(), Arg::Str(kind)),
                (K::Bytes.into(), Arg::Int(copy.bytes)),
            ]);
            bandwidth(&mut args, copy.bytes, copy.start_ns, copy.end_ns);
            args.extend([
                (K::SrcDevice.into(), Arg::Signed(copy.src_device)),
                (K::DstDevice.into(), Arg::Signed(copy.dst_device)),
            ]);
            if let (Some(_), Some(external_id)) = (copy.correlation, copy.external_id) {
                args.push((EXTERNAL_ID, Arg::Int(external_id)));
            }
            graph_args(&mut args, copy.graph);
            writer.complete(&CompleteEvent {
                name: if peer {
                    vocab::PEER_COPY_NAME
                } else {
                    vocab::copy_event_name(copy.direction)
                },
                category: "gpu_memcpy",
                pid: device,
                tid: lane.tid,
                start_ns: copy.start_ns,
                end_ns: copy.end_ns,
                args: &args,
            })?;
            if let Some(correlation) = copy.correlation.filter(|c| flows_finished.insert(*c)) {
                writer.flow(
                    FlowEnd::Finish,
                    correlation,
                    device,
                    lane.tid,
                    copy.start_ns,
                )?;
            }
        }
        for sync in &window.syncs {
            let lane = match sync.device {
                Some(d) => lanes.on_device(d, sync.stream, None),
                None => Lanes::thread(sync.thread_id),
            };
            name_lane(writer, &lane)?;
            let mut args: Vec<(ArgKey, Arg)> = vec![
                (
                    K::CudaSyncKind.into(),
                    Arg::Str(vocab::sync_name(sync.kind)),
                ),
                (K::Correlation.into(), Arg::Int(sync.correlation)),
            ];
            if let Some(d) = sync.device {
                args.push((K::Device.into(), Arg::Int(d.into())));
            }
            if let Some(s) = sync.stream {
                args.push((K::Stream.into(), Arg::Int(s)));
            }
            if matches!(sync.kind, SyncKind::Event | SyncKind::StreamWaitEvent) {
                args.extend([
                    (
                        K::WaitOnStream.into(),
                        Arg::Signed(sync.wait_on_stream.map_or(-1, |s| s as i64)),
                    ),
                    (
                        K::WaitOnEventRecordCorrelation.into(),
                        Arg::Signed(sync.wait_on_record_correlation.map_or(-1, |c| c as i64)),
                    ),
                    (K::WaitOnEventId.into(), Arg::Int(sync.event.unwrap_or(0))),
                ]);
            }
            if let Some(external_id) = sync.external_id {
                args.push((EXTERNAL_ID, Arg::Int(external_id)));
            }
            writer.complete(&CompleteEvent {
                name: vocab::sync_name(sync.kind),
                category: "cuda_sync",
                pid: lane.pid,
                tid: lane.tid,
                start_ns: sync.start_ns,
                end_ns: sync.end_ns,
                args: &args,
            })?;
        }
        for event in &window.events {
            let lane = match (event.device, event.stream) {
                (Some(d), Some(s)) => Lanes::stream(d.into(), s),
                _ => Lanes::thread(event.thread_id),
            };
            name_lane(writer, &lane)?;
            let mut args: Vec<(ArgKey, Arg)> = vec![
                (K::EventId.into(), Arg::Int(event.event)),
                (K::Correlation.into(), Arg::Int(event.correlation)),
            ];
            if let Some(d) = event.device {
                args.push((K::Device.into(), Arg::Int(d.into())));
            }
            if let Some(s) = event.stream {
                args.push((K::Stream.into(), Arg::Int(s)));
            }
            args.push((K::Timing.into(), Arg::Str(vocab::TIMING_EVENT)));
            if let Some(external_id) = event.external_id {
                args.push((EXTERNAL_ID, Arg::Int(external_id)));
            }
            graph_args(&mut args, event.graph);
            writer.complete(&CompleteEvent {
                name: vocab::EVENT_RECORD_NAME,
                category: "cuda_event",
                pid: lane.pid,
                tid: lane.tid,
                start_ns: event.ts_ns,
                end_ns: event.ts_ns,
                args: &args,
            })?;
        }
        let mut host_lanes: Vec<Lane> = Vec::with_capacity(window.host_functions.len());
        for host in &window.host_functions {
            let lane = lanes.on_device(host.device, Some(host.stream), host.branch);
            name_lane(writer, &lane)?;
            let mut args: Vec<(ArgKey, Arg)> = vec![
                (K::CudaSyncKind.into(), Arg::Str(vocab::HOST_FN_NAME)),
                (K::Device.into(), Arg::Int(host.device.into())),
                (K::Stream.into(), Arg::Int(host.stream)),
                (K::Correlation.into(), Arg::Int(host.correlation)),
                (K::HostFunction.into(), Arg::Int(host.function)),
                (K::Timing.into(), Arg::Str(vocab::TIMING_BOUNDS)),
            ];
            if let Some(external_id) = host.external_id {
                args.push((EXTERNAL_ID, Arg::Int(external_id)));
            }
            graph_args(&mut args, host.graph);
            writer.complete(&CompleteEvent {
                name: vocab::HOST_FN_NAME,
                category: "cuda_sync",
                pid: lane.pid,
                tid: lane.tid,
                start_ns: host.start_ns,
                end_ns: host.end_ns,
                args: &args,
            })?;
            host_lanes.push(lane);
        }
        for a in &window.annotations {
            writer.complete(&CompleteEvent {
                name: &a.name,
                category: "user_annotation",
                pid: HOST_PID,
                tid: a.thread_id,
                start_ns: a.start_ns,
                end_ns: a.end_ns,
                args: &[],
            })?;
        }
        for g in &window.gpu_annotations {
            let lane = lanes.on_device(g.device, Some(g.stream), g.branch);
            name_lane(writer, &lane)?;
            writer.complete(&CompleteEvent {
                name: &g.name,
                category: "gpu_user_annotation",
                pid: lane.pid,
                tid: lane.tid,
                start_ns: g.start_ns,
                end_ns: g.end_ns,
                args: &[],
            })?;
        }
        // Dependency arrows: one zero-length carrier event at each end (a
        // kineto activity carries one flow), fwdbwd flows as kineto writes.
        for dep in &window.dependencies {
            // A kernel's lane is found again, not kept per kernel: `Lanes`
            // numbers each lane once, and a row of lanes would be 40 bytes a
            // kernel for the few windows with dependency arrows.
            let mut end_of = |r: GpuRef, source: bool| -> Option<(Lane, u64)> {
                let (lane, start, end) = match r {
                    GpuRef::Kernel(i) => {
                        let k = window.kernels.get(i)?;
                        (lanes.kernel(k), k.start_ns, k.end_ns)
                    }
                    GpuRef::Copy(i) => {
                        let c = window.copies.get(i)?;
                        (Lanes::copy(c), c.start_ns, c.end_ns)
                    }
                    GpuRef::HostFn(i) => (
                        *host_lanes.get(i)?,
                        window.host_functions[i].start_ns,
                        window.host_functions[i].end_ns,
                    ),
                };
                Some((lane, dependency_carrier_ns(start, end, source)))
            };
            let (Some((from, from_ns)), Some((to, to_ns))) =
                (end_of(dep.from, true), end_of(dep.to, false))
            else {
                continue;
            };
            let id = next_dependency;
            next_dependency += 1;
            for (lane, ts, end) in [
                (from, from_ns, FlowEnd::Start),
                (to, to_ns, FlowEnd::Finish),
            ] {
                writer.complete(&CompleteEvent {
                    name: vocab::DEPENDENCY_NAME,
                    category: "gpu_user_annotation",
                    pid: lane.pid,
                    tid: lane.tid,
                    start_ns: ts,
                    end_ns: ts,
                    args: &[],
                })?;
                writer.flow_of(vocab::DEPENDENCY_FLOW, end, id, lane.pid, lane.tid, ts)?;
            }
        }
        if !window.overheads.is_empty() {
            let lane = Lane {
                pid: HOST_PID,
                tid: vocab::OVERHEAD_TID.into(),
                name: LaneName::Fixed(vocab::OVERHEAD_LANE_NAME),
            };
            name_lane(writer, &lane)?;
            for o in &window.overheads {
                let args = [(K::OverheadCount.into(), Arg::Int(o.count))];
                writer.complete(&CompleteEvent {
                    name: o.name,
                    category: "overhead",
                    pid: lane.pid,
                    tid: lane.tid,
                    start_ns: o.start_ns,
                    end_ns: o.end_ns,
                    args: &args,
                })?;
            }
        }
        summary_lines.extend(
            window
                .summary
                .iter()
                .map(|line| format!("window {index}: {line}")),
        );
    }
    counter_tracks(writer, windows)?;
    let metadata = serde_json::to_string(&summary_lines).expect("strings serialise");
    Ok(Emitted {
        kernels: kernels_written,
        metadata: vec![("kineto_rocm", metadata)],
    })
}

/// The kernels' counters as counter tracks on their device's process
/// (`counter_tracks::step_samples`), over every window at once (a kernel
/// of one window may still run in the next), by device then counter name.
fn counter_tracks<S: TraceSink>(writer: &mut S, windows: &[FinishedWindow]) -> io::Result<()> {
    let mut tracks: BTreeMap<(u32, &str), Vec<CounterSpan>> = BTreeMap::new();
    for kernel in windows.iter().flat_map(|w| &w.kernels) {
        for (counter, value) in kernel.counters() {
            tracks
                .entry((kernel.device, counter.as_str()))
                .or_default()
                .push(CounterSpan {
                    start_ns: kernel.start_ns,
                    end_ns: kernel.end_ns,
                    value: *value,
                });
        }
    }
    for ((device, counter), spans) in tracks {
        for (ts, value) in step_samples(&spans) {
            writer.counter(u64::from(device), counter, ts, value)?;
        }
    }
    Ok(())
}

/// Where a dependency arrow's carrier sits on its event: just inside its
/// end (the arrow's source) or its start (its destination), so kineto's
/// 2 ns widening of gpu_user_annotation spans stays inside the event.
pub fn dependency_carrier_ns(start: u64, end: u64, source: bool) -> u64 {
    if source {
        end.saturating_sub(1).max(start)
    } else {
        (start + 1).min(end.max(start))
    }
}

fn bandwidth<'a>(args: &mut Vec<(ArgKey<'a>, Arg<'a>)>, bytes: u64, start: u64, end: u64) {
    if end > start {
        // bytes per ns = GB/s
        args.push((
            K::MemoryBandwidth.into(),
            Arg::Float(bytes as f64 / (end - start) as f64),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::window::{id, CopyDirection, RuntimeActivity};
    use serde_json::Value;

    fn kernel(correlation: u64, stream: Option<u64>, linked: bool) -> KernelActivity {
        KernelActivity {
            name_index: 0,
            device: 1,
            stream: id(stream),
            queue: 0x7f00_0000_1000,
            correlation: id(linked.then_some(correlation)),
            dispatch_id: correlation,
            start_ns: 2_000,
            end_ns: 3_000,
            grid: [256, 1, 1],
            block: [64, 1, 1],
            lds_bytes: 0,
            scratch_bytes: 0,
            external_id: id(Some(42)),
            user_external_id: None,
            graph: None,
            branch: None,
            extras: None,
        }
    }

    fn copy(stream: Option<u64>, linked: bool) -> CopyActivity {
        CopyActivity {
            direction: CopyDirection::HostToDevice,
            device: 1,
            stream,
            correlation: linked.then_some(9),
            bytes: 4096,
            src_device: -1,
            dst_device: 1,
            start_ns: 4_000,
            end_ns: 5_000,
            external_id: Some(42),
            graph: None,
        }
    }

    fn launch(correlation: u64) -> RuntimeActivity {
        RuntimeActivity {
            name: "hipLaunchKernel",
            cid: 7,
            thread_id: 11,
            correlation,
            start_ns: 1_000,
            end_ns: 1_500,
            external_id: Some(42),
        }
    }

    fn trace(window: FinishedWindow) -> Value {
        let mut out = Vec::new();
        write_windows(&[window], &mut out).unwrap();
        serde_json::from_slice(&out).expect("valid JSON")
    }

    fn complete<'a>(doc: &'a Value, cat: &str) -> Vec<&'a Value> {
        doc["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["ph"] == "X" && e["cat"] == cat)
            .collect()
    }

    fn flow_ids(doc: &Value, ph: &str) -> Vec<u64> {
        doc["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["ph"] == ph)
            .map(|e| e["id"].as_u64().unwrap())
            .collect()
    }

    fn lane_names(doc: &Value) -> Vec<(u64, String)> {
        doc["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["name"] == "thread_name" && e["pid"] == 1)
            .map(|e| {
                (
                    e["tid"].as_u64().unwrap(),
                    e["args"]["name"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }

    /// The JSON writer with its keyed shapes unused: every kernel event
    /// goes through `complete`, as a sink without shapes takes it.
    struct Unkeyed(ChromeTraceWriter<Vec<u8>>);

    impl TraceSink for Unkeyed {
        fn complete(&mut self, event: &CompleteEvent) -> io::Result<()> {
            self.0.complete(event)
        }
        fn flow(&mut self, end: FlowEnd, id: u64, pid: u64, tid: u64, ts: u64) -> io::Result<()> {
            self.0.flow(end, id, pid, tid, ts)
        }
        fn flow_of(
            &mut self,
            category: &str,
            end: FlowEnd,
            id: u64,
            pid: u64,
            tid: u64,
            ts: u64,
        ) -> io::Result<()> {
            self.0.flow_of(category, end, id, pid, tid, ts)
        }
        fn lane_name(&mut self, pid: u64, tid: Option<u64>, name: &str) -> io::Result<()> {
            self.0.lane_name(pid, tid, name)
        }
        fn counter(&mut self, pid: u64, name: &str, ts: u64, value: f64) -> io::Result<()> {
            self.0.counter(pid, name, ts, value)
        }
    }

    /// Windows of plain kernels of a few dozen shapes, where one event in
    /// seven differs from its shape in one field (each field in turn), so
    /// that a key missing that field would write it with its shape's
    /// bytes. The two windows index their kernel names the other way round.
    fn mixed_windows() -> Vec<FinishedWindow> {
        let names: Vec<String> = ["k_a", "k_bb", "k_ccc"].map(String::from).to_vec();
        (0..2u64)
            .map(|w| {
                let kernels = (0..3_000u64)
                    .map(|i| {
                        let shape = (i * 7 + w) % 24;
                        let x = shape.wrapping_mul(0x9E37_79B9_7F4A_7C15);
                        let flip = if i % 7 == 3 { (i / 7) % 13 } else { 13 };
                        let pick = |field: u64, n: u64| {
                            ((x >> (field * 5)) + u64::from(flip == field)) % n
                        };
                        let mut k = kernel(
                            i + 1,
                            [None, Some(1), Some(2)][pick(0, 3) as usize],
                            pick(1, 2) > 0,
                        );
                        k.name_index = pick(2, 3) as u32;
                        k.device = pick(3, 2) as u32;
                        k.queue = 0x1000 + pick(4, 2);
                        k.dispatch_id = 7 * i;
                        k.start_ns = 10_000 + i * 1_001;
                        k.end_ns = k.start_ns + (i * 37) % 3_000;
                        k.grid = [256 << pick(5, 2), 1 + pick(6, 2) as u32, 1];
                        k.block = [64, 1, 1 + pick(7, 2) as u32];
                        k.lds_bytes = 512 * pick(8, 2) as u32;
                        k.scratch_bytes = 16 * pick(9, 2) as u32;
                        k.external_id = id((pick(10, 2) > 0).then_some(40 + i % 3));
                        k.graph = GraphNode::new(pick(11, 3), (1 << 60) + i);
                        k.branch = id((pick(12, 4) == 0).then_some(0x2000));
                        k
                    })
                    .collect();
                let kernel_names = if w == 0 {
                    names.clone()
                } else {
                    names.iter().rev().cloned().collect()
                };
                FinishedWindow {
                    kernel_names,
                    kernels,
                    ..Default::default()
                }
            })
            .collect()
    }

    #[test]
    fn kernels_written_by_shape_key_are_the_bytes_formatting_writes() {
        let windows = mixed_windows();
        // Twice into one writer: the second call's keys must not take the
        // first call's shapes, whose windows named their kernels otherwise.
        let mut keyed = ChromeTraceWriter::begin(Vec::new()).unwrap();
        emit_windows(&windows, &mut keyed).unwrap();
        emit_windows(&windows[1..], &mut keyed).unwrap();
        emit_windows(&windows[..1], &mut keyed).unwrap();
        let hits = keyed.events_from_kept_shapes();
        let keyed = keyed.finish(&[]).unwrap();
        let mut unkeyed = Unkeyed(ChromeTraceWriter::begin(Vec::new()).unwrap());
        emit_windows(&windows, &mut unkeyed).unwrap();
        emit_windows(&windows[1..], &mut unkeyed).unwrap();
        emit_windows(&windows[..1], &mut unkeyed).unwrap();
        let unkeyed = unkeyed.0.finish(&[]).unwrap();
        assert!(
            hits > 8_000,
            "{hits} of 12,000 kernel events from kept shapes"
        );
        let (keyed, unkeyed) = (
            String::from_utf8(keyed).unwrap(),
            String::from_utf8(unkeyed).unwrap(),
        );
        for (i, (a, b)) in keyed.split(",\n").zip(unkeyed.split(",\n")).enumerate() {
            assert_eq!(a, b, "event {i}");
        }
        assert_eq!(keyed.len(), unkeyed.len());
    }

    #[test]
    fn known_stream_and_launch_give_stream_lane_correlation_flow_and_external_id() {
        let doc = trace(FinishedWindow {
            kernel_names: vec!["k".into()],
            kernels: vec![kernel(5, Some(3), true)],
            runtime: vec![launch(5)],
            ..Default::default()
        });
        let k = complete(&doc, "kernel")[0];
        assert_eq!(k["tid"], 3);
        assert_eq!(k["args"]["stream"], 3);
        assert_eq!(k["args"]["correlation"], 5);
        assert_eq!(k["args"]["External id"], 42);
        assert_eq!(k["args"]["grid"], serde_json::json!([256, 1, 1]));
        assert_eq!(flow_ids(&doc, "s"), vec![5]);
        assert_eq!(flow_ids(&doc, "f"), vec![5]);
        // The launch call names the one kernel it launched.
        let call = complete(&doc, "cuda_runtime")[0];
        assert_eq!(call["args"]["cid"], 7);
        assert_eq!(call["args"]["kernel"], "k");
        assert_eq!(call["args"]["block"], serde_json::json!([64, 1, 1]));
        assert_eq!(lane_names(&doc), vec![(3, "stream 3".to_string())]);
    }

    #[test]
    fn instance_values_are_args_beside_the_sum_and_draw_no_track_of_their_own() {
        let mut counted = kernel(5, Some(3), true);
        counted.extras_mut().counters = vec![("SQ_WAVES".into(), 7.0)];
        counted.extras_mut().counter_instances = vec![
            ("SQ_WAVES[XCC=0,INSTANCE=0]".into(), 3.0),
            ("SQ_WAVES[XCC=1,INSTANCE=0]".into(), 4.0),
        ];
        let doc = trace(FinishedWindow {
            kernel_names: vec!["k".into()],
            kernels: vec![counted],
            ..Default::default()
        });
        let args = &complete(&doc, "kernel")[0]["args"];
        assert_eq!(args["SQ_WAVES"], 7.0);
        assert_eq!(args["SQ_WAVES[XCC=0,INSTANCE=0]"], 3.0);
        assert_eq!(args["SQ_WAVES[XCC=1,INSTANCE=0]"], 4.0);
        let tracks: std::collections::BTreeSet<&str> = doc["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["ph"] == "C")
            .map(|e| e["name"].as_str().unwrap())
            .collect();
        assert_eq!(tracks, ["SQ_WAVES"].into(), "one track, of the sum");
    }

    #[test]
    fn unknown_launch_gives_no_correlation_flow_or_external_id() {
        let doc = trace(FinishedWindow {
            kernel_names: vec!["k".into()],
            kernels: vec![kernel(5, Some(3), false)],
            copies: vec![copy(Some(3), false)],
            runtime: vec![launch(5)],
            ..Default::default()
        });
        for event in complete(&doc, "kernel")
            .into_iter()
            .chain(complete(&doc, "gpu_memcpy"))
        {
            let args = event["args"].as_object().unwrap();
            assert!(!args.contains_key("correlation"), "{event}");
            assert!(!args.contains_key("External id"), "{event}");
        }
        assert!(flow_ids(&doc, "s").is_empty() && flow_ids(&doc, "f").is_empty());
        let call = complete(&doc, "cuda_runtime")[0];
        assert!(call["args"].get("kernel").is_none(), "{call}");
    }

    #[test]
    fn unknown_stream_puts_kernels_on_their_queue_lane_and_copies_on_the_copy_lane() {
        let mut other_queue = kernel(6, None, true);
        other_queue.queue = 0x7f00_0000_2000;
        let doc = trace(FinishedWindow {
            kernel_names: vec!["k".into()],
            kernels: vec![kernel(5, None, true), other_queue, kernel(7, None, true)],
            copies: vec![copy(None, true)],
            ..Default::default()
        });
        let kernels = complete(&doc, "kernel");
        let base = u64::from(vocab::QUEUE_LANE_BASE);
        let tids: Vec<u64> = kernels.iter().map(|k| k["tid"].as_u64().unwrap()).collect();
        assert_eq!(tids, vec![base, base + 1, base]);
        for k in &kernels {
            assert!(k["args"].get("stream").is_none(), "{k}");
        }
        let c = complete(&doc, "gpu_memcpy")[0];
        assert_eq!(c["tid"], u64::from(vocab::COPY_LANE_ID));
        assert!(c["args"].get("stream").is_none(), "{c}");
        assert_eq!(c["args"]["hsa_queue"], 0);
        let mut names = lane_names(&doc);
        names.sort();
        assert_eq!(
            names,
            vec![
                (u64::from(vocab::COPY_LANE_ID), "copies".to_string()),
                (base, "HW queue 0x7f0000001000".to_string()),
                (base + 1, "HW queue 0x7f0000002000".to_string()),
            ]
        );
    }

    #[test]
    fn every_arg_has_the_catalog_type() {
        let doc = trace(FinishedWindow {
            kernel_names: vec!["k".into()],
            kernels: vec![kernel(5, Some(3), true)],
            copies: vec![copy(Some(3), true)],
            runtime: vec![launch(5)],
            ..Default::default()
        });
        let by_name: std::collections::HashMap<&str, vocab::ValueType> = vocab::CATALOG
            .iter()
            .map(|spec| (spec.name, spec.value))
            .collect();
        let mut checked = 0;
        for event in doc["traceEvents"].as_array().unwrap() {
            if event["ph"] != "X" {
                continue;
            }
            for (key, value) in event["args"].as_object().unwrap() {
                if key == "External id" {
                    continue;
                }
                use vocab::ValueType as T;
                let want = by_name
                    .get(key.as_str())
                    .unwrap_or_else(|| panic!("{key} not in the catalog"));
                let ok = match *want {
                    T::Int => value.is_i64(),
                    T::Uint => value.is_u64(),
                    T::Float => value.is_f64(),
                    T::Str => value.is_string(),
                    T::IntArray => value
                        .as_array()
                        .is_some_and(|a| a.iter().all(Value::is_i64)),
                };
                assert!(ok, "{key} = {value} is not {want:?}");
                checked += 1;
            }
        }
        assert!(checked > 20, "only {checked} args checked");
    }
}
