//! The simulated HIP runtime: devices, HW queues, streams, graphs and execs,
//! application threads, and packet submission (crate-private).
//!
//! Modelled behaviour and its sources:
//! - HW queues per device: GPU_MAX_HW_QUEUES, default 4 (ROCm/clr
//!   rocclr/utils/flags.hpp: `GPU_MAX_HW_QUEUES, 4, "The maximum number of HW
//!   queues allocated per device"`). Once that many exist, a new stream shares
//!   the least-used queue (clr rocclr/device/rocm/rocdevice.cpp,
//!   Device::acquireQueue), which for streams created one after another is
//!   round-robin.
//! - hipGraphInstantiate flattens the DAG into one fixed submission order
//!   (topological, creation order breaking ties); the seed (kineto PR, shared
//!   seeds/000) measured ordinals following creation order even with four
//!   unordered nodes. See `workload::flatten`.
//! - hipGraphExecUpdate keeps the exec handle and its SDK graph_exec_id and
//!   swaps the nodes; it needs an identical topology, else it returns
//!   hipErrorGraphExecUpdateFailure (910) and leaves the exec unchanged.
//! - hipGraphExecDestroy frees the handle; the allocator hands the most
//!   recently freed address to the next instantiate (LIFO), as the seed saw
//!   ("HIP hands the same address straight back out").
//! - Submission hazard (seed 000, "Known limitation"): packets are appended to
//!   the HW queue's pending FIFO; whichever thread gets the queue's
//!   submission lock writes ALL pending packets, and the SDK's per-packet
//!   work (external-correlation request, record capture, record thread id)
//!   happens on that writing thread with its own API call's correlation id.
//! - Per HW queue, kernels run in order without overlap:
//!   start = max(submit, previous end on the queue).
use crate::options::RunOptions;
use crate::sdk::state::{lock, now_ns, sdk, tid, Completion, Rec};
use crate::sdk::trace::{self, ApiCall, GraphLaunchTrace, StreamRef};
use crate::truth::{ExecEvent, LaunchTruth, OpKind, OpTruth, RunTruth};
use crate::workload::{flatten, Direction, Op, Workload};
use rocprofiler_sys as sys;
use rocprofiler_sys::hip_runtime_api_id as api;
use std::collections::{HashMap, VecDeque};
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier, Mutex};

/// hipErrorGraphExecUpdateFailure.
const HIP_ERROR_GRAPH_EXEC_UPDATE_FAILURE: i32 = 910;
/// hipGraphExecUpdateErrorTopologyChanged.
const HIP_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED: i32 = 2;

// ------------------------------------------------------------ process-wide

struct Process {
    next_exec_id: AtomicU64,
    next_stream_id: AtomicU64,
    next_dispatch_id: AtomicU64,
    exec_alloc: Mutex<(Vec<u64>, u64)>,
    stream_values: AtomicU64,
    /// Hardware queues by (device, index). HIP creates a device's queues
    /// once and hands them to streams for the life of the process (clr
    /// rocclr/device/rocm/rocdevice.cpp, Device::acquireQueue reuses its
    /// queue pool), so work queued in one run is still ahead of the next
    /// run's on the same queue: the packet processor runs a queue in order.
    hw_queues: Mutex<HashMap<(u32, u32), Arc<HwQueue>>>,
}

fn process() -> &'static Process {
    static P: std::sync::OnceLock<Process> = std::sync::OnceLock::new();
    P.get_or_init(|| Process {
        next_exec_id: AtomicU64::new(1),
        // 0 is the null stream, seen first (stream.cpp hands ids out in
        // first-seen order).
        next_stream_id: AtomicU64::new(1),
        next_dispatch_id: AtomicU64::new(1),
        exec_alloc: Mutex::new((Vec::new(), 0)),
        stream_values: AtomicU64::new(0),
        hw_queues: Mutex::new(HashMap::new()),
    })
}

/// The process's hardware queue `index` of device `device`, created on first use.
fn hw_queue(device: u32, index: u32) -> Arc<HwQueue> {
    let mut queues = lock(&process().hw_queues);
    queues
        .entry((device, index))
        .or_insert_with(|| {
            Arc::new(HwQueue {
                id: 0x7f00_0000_0000 + ((device as u64) << 24) + ((index as u64) << 12),
                device,
                index,
                agent: agent_handle(device + 1),
                fifo: Mutex::new(VecDeque::new()),
                submit: Mutex::new(0),
            })
        })
        .clone()
}

fn alloc_exec_handle() -> u64 {
    let mut a = lock(&process().exec_alloc);
    if let Some(h) = a.0.pop() {
        return h;
    }
    a.1 += 1;
    0x7e00_0000_0000 + a.1 * 0x1000
}

fn free_exec_handle(h: u64) {
    lock(&process().exec_alloc).0.push(h);
}

pub(crate) fn agent_handle(node_id: u32) -> u64 {
    0xa6e7_0000 + node_id as u64
}

// ------------------------------------------------------------ per run

struct HwQueue {
    id: u64,
    device: u32,
    index: u32,
    agent: u64,
    fifo: Mutex<VecDeque<Packet>>,
    /// The submission lock; guards the queue's clock.
    submit: Mutex<u64>,
}

struct Device {
    queues: Vec<Arc<HwQueue>>,
    streams_per_queue: Mutex<Vec<u32>>,
}

#[derive(Clone)]
struct Stream {
    r: StreamRef,
    device: u32,
    queue: Arc<HwQueue>,
}

struct Exec {
    handle: u64,
    exec_id: u64,
    graph: usize,
}

struct Packet {
    kind: OpKind,
    launch_corr: u64,
    launching_thread: u64,
    exec_handle: u64,
    graph_exec_id: u64,
    graph: Option<Arc<str>>,
    node_index: Option<u32>,
    ordinal: u32,
    kernel_id: u64,
    kernel_name: Option<Arc<str>>,
    bytes: u64,
    direction: Direction,
    duration: u64,
    stream_id: u64,
    grid: u32,
}

struct Run<'w> {
    w: &'w Workload,
    opts: RunOptions,
    devices: Vec<Device>,
    graph_names: Vec<Arc<str>>,
    orders: Vec<Vec<usize>>,
    kernel_names: HashMap<String, (u64, Arc<str>)>,
    truth: Mutex<RunTruth>,
}

/// Resolves the HW queue count: run option, then GPU_MAX_HW_QUEUES, then the
/// workload, then 4.
pub(crate) fn hw_queues(w: &Workload, opts: &RunOptions) -> u32 {
    opts.hw_queues
        .or_else(|| {
            std::env::var("GPU_MAX_HW_QUEUES")
                .ok()
                .and_then(|v| v.trim().parse::<u32>().ok())
                .filter(|v| *v > 0)
        })
        .or(w.hw_queues_per_device)
        .unwrap_or(4)
        .max(1)
}

/// Runs every thread of the workload to completion (completions may still be
/// in flight) and returns the run's ground truth.
pub(crate) fn run(w: &Workload, opts: &RunOptions) -> RunTruth {
    let nq = hw_queues(w, opts);
    let devices = (0..w.devices)
        .map(|d| Device {
            queues: (0..nq).map(|q| hw_queue(d, q)).collect(),
            streams_per_queue: Mutex::new(vec![0; nq as usize]),
        })
        .collect();
    // Code objects load before any launch: register every kernel symbol now.
    let mut kernel_names = HashMap::new();
    for name in w.kernel_names() {
        let id = sdk().kernel_id(&name);
        kernel_names.insert(name.clone(), (id, Arc::<str>::from(name.as_str())));
    }
    let run = Run {
        w,
        opts: opts.clone(),
        devices,
        graph_names: w
            .graphs
            .iter()
            .map(|g| Arc::from(g.name.as_str()))
            .collect(),
        orders: w.graphs.iter().map(flatten).collect(),
        kernel_names,
        truth: Mutex::new(RunTruth {
            source: opts.source_name.clone().unwrap_or_default(),
            hw_queues_per_device: nq,
            devices: w.devices,
            agents: (0..w.devices).map(|d| agent_handle(d + 1)).collect(),
            threads: vec![0; w.threads.len()],
            ..Default::default()
        }),
    };
    let barrier = Barrier::new(if w.start_barrier { w.threads.len() } else { 1 });
    std::thread::scope(|scope| {
        for ti in 0..w.threads.len() {
            let run = &run;
            let barrier = &barrier;
            std::thread::Builder::new()
                .name(format!("rocsim-app-{ti}"))
                .spawn_scoped(scope, move || thread_main(run, ti, barrier))
                .expect("spawn an application thread");
        }
    });
    run.truth.into_inner().unwrap_or_else(|p| p.into_inner())
}

/// splitmix64: small, seedable, good enough for jitter.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn jitter(&mut self, max_ns: u64) {
        if max_ns == 0 {
            return;
        }
        let r = self.next();
        if r.is_multiple_of(8) {
            std::thread::yield_now();
        }
        let until = now_ns() + (r >> 8) % max_ns;
        while now_ns() < until {
            std::hint::spin_loop();
        }
    }
}

fn thread_main(run: &Run, ti: usize, barrier: &Barrier) {
    let me = tid();
    lock(&run.truth).threads[ti] = me;
    let mut rng = Rng(run.opts.seed ^ ((ti as u64 + 1).wrapping_mul(0xa076_1d64_78bd_642f)));
    let mut streams: HashMap<String, Stream> = HashMap::new();
    let mut execs: HashMap<String, Exec> = HashMap::new();
    barrier.wait();
    for op in &run.w.threads[ti].ops {
        match op {
            Op::CreateStream { name, device } => {
                let s = stream_create(run, *device);
                streams.insert(name.clone(), s);
            }
            Op::DestroyStream { name } => {
                if let Some(s) = streams.remove(name) {
                    stream_destroy(run, &s);
                }
            }
            Op::Instantiate {
                graph,
                exec,
                device: _,
            } => {
                let gi = run.w.graph_index(graph).expect("validated");
                let e = graph_instantiate(run, gi);
                execs.insert(exec.clone(), e);
            }
            Op::Launch {
                exec,
                stream,
                times,
            } => {
                let (e, s) = (&execs[exec], &streams[stream]);
                for _ in 0..*times {
                    graph_launch(run, e, s, &mut rng);
                }
            }
            Op::Update { exec, graph } => {
                let gi = run.w.graph_index(graph).expect("validated");
                if let Some(e) = execs.get_mut(exec) {
                    graph_exec_update(run, e, gi);
                }
            }
            Op::Destroy { exec } => {
                if let Some(e) = execs.remove(exec) {
                    graph_exec_destroy(run, e);
                }
            }
            Op::Kernel {
                name,
                stream,
                times,
            } => {
                let s = &streams[stream];
                for _ in 0..*times {
                    launch_kernel(run, name, s, &mut rng);
                }
            }
            Op::Memcpy {
                bytes,
                direction,
                stream,
                times,
            } => {
                let s = &streams[stream];
                for _ in 0..*times {
                    memcpy_async(run, *bytes, *direction, s, &mut rng);
                }
            }
            Op::PushMarker { name } => crate::driver::call_marker_hook(1, name),
            Op::PopMarker {} => crate::driver::call_marker_hook(2, ""),
        }
    }
}

fn count_api(run: &Run) {
    lock(&run.truth).api_calls += 1;
}

fn stream_create(run: &Run, device: u32) -> Stream {
    let mut out: sys::hipStream_t = std::ptr::null_mut();
    let mut args = sys::rocprofiler_hip_api_args_t::default();
    args.hipStreamCreate = sys::hip_stream_create_args { stream: &mut out };
    let call = ApiCall::enter(api::hipStreamCreate, args, None);
    count_api(run);
    let dev = &run.devices[device as usize];
    let qi = {
        let mut use_count = lock(&dev.streams_per_queue);
        let (qi, _) = use_count
            .iter()
            .enumerate()
            .min_by_key(|(i, n)| (**n, *i))
            .expect("at least one queue");
        use_count[qi] += 1;
        qi
    };
    let n = process().stream_values.fetch_add(1, Ordering::Relaxed) + 1;
    let value = 0x5700_0000 + n * 0x100;
    out = value as sys::hipStream_t;
    let s = Stream {
        r: StreamRef {
            id: process().next_stream_id.fetch_add(1, Ordering::Relaxed),
            value,
        },
        device,
        queue: dev.queues[qi].clone(),
    };
    let _ = out;
    call.exit(sys::HIP_SUCCESS);
    // stream.cpp create_write_functor: CREATE fires after the call returns.
    trace::stream_event(sys::rocprofiler_hip_stream_operation_t::CREATE, s.r);
    s
}

fn stream_destroy(run: &Run, s: &Stream) {
    let mut raw = [0u64; 11];
    raw[0] = s.r.value;
    let args = sys::rocprofiler_hip_api_args_t { raw };
    let call = ApiCall::enter(api::hipStreamDestroy, args, Some(s.r));
    count_api(run);
    let dev = &run.devices[s.device as usize];
    let mut use_count = lock(&dev.streams_per_queue);
    use_count[s.queue.index as usize] = use_count[s.queue.index as usize].saturating_sub(1);
    drop(use_count);
    call.exit(sys::HIP_SUCCESS);
    trace::stream_event(sys::rocprofiler_hip_stream_operation_t::DESTROY, s.r);
}

fn graph_handle(gi: usize) -> u64 {
    0x6700_0000 + gi as u64 * 0x1000
}

fn graph_instantiate(run: &Run, gi: usize) -> Exec {
    let mut out: sys::hipGraphExec_t = std::ptr::null_mut();
    let mut args = sys::rocprofiler_hip_api_args_t::default();
    args.hipGraphInstantiate = sys::hip_graph_instantiate_args {
        pGraphExec: &mut out,
        graph: graph_handle(gi) as sys::hipGraph_t,
        pErrorNode: std::ptr::null_mut(),
        pLogBuffer: std::ptr::null_mut(),
        bufferSize: 0,
    };
    let call = ApiCall::enter(api::hipGraphInstantiate, args, None);
    count_api(run);
    let handle = alloc_exec_handle();
    let exec_id = process().next_exec_id.fetch_add(1, Ordering::Relaxed);
    // The tool reads *pGraphExec at EXIT.
    out = handle as sys::hipGraphExec_t;
    std::hint::black_box(&out);
    trace::graph_event(
        sys::rocprofiler_hip_graph_operation_t::EXEC_CREATE,
        call.corr,
        exec_id,
        handle,
    );
    lock(&run.truth).exec_events.push(ExecEvent {
        event: "instantiate".into(),
        correlation_id: call.corr,
        thread: tid(),
        exec_handle: handle,
        graph_exec_id: exec_id,
        graph: Some(run.w.graphs[gi].name.clone()),
    });
    call.exit(sys::HIP_SUCCESS);
    Exec {
        handle,
        exec_id,
        graph: gi,
    }
}

fn same_topology(run: &Run, a: usize, b: usize) -> bool {
    let (ga, gb) = (&run.w.graphs[a], &run.w.graphs[b]);
    ga.nodes.len() == gb.nodes.len()
        && ga
            .nodes
            .iter()
            .zip(&gb.nodes)
            .all(|(x, y)| x.deps == y.deps && x.kernel.is_some() == y.kernel.is_some())
}

fn graph_exec_update(run: &Run, e: &mut Exec, gi: usize) {
    let mut error_node: *mut c_void = std::ptr::null_mut();
    let mut result: i32 = -1;
    let mut args = sys::rocprofiler_hip_api_args_t::default();
    args.hipGraphExecUpdate = sys::hip_graph_exec_update_args {
        hGraphExec: e.handle as sys::hipGraphExec_t,
        hGraph: graph_handle(gi) as sys::hipGraph_t,
        hErrorNode_out: &mut error_node,
        updateResult_out: &mut result,
    };
    let call = ApiCall::enter(api::hipGraphExecUpdate, args, None);
    count_api(run);
    let ok = same_topology(run, e.graph, gi);
    result = if ok {
        sys::HIP_GRAPH_EXEC_UPDATE_SUCCESS
    } else {
        HIP_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED
    };
    std::hint::black_box(&result);
    if ok {
        e.graph = gi;
    }
    lock(&run.truth).exec_events.push(ExecEvent {
        event: if ok { "update" } else { "update_failed" }.into(),
        correlation_id: call.corr,
        thread: tid(),
        exec_handle: e.handle,
        graph_exec_id: e.exec_id,
        graph: Some(run.w.graphs[gi].name.clone()),
    });
    call.exit(if ok {
        sys::HIP_SUCCESS
    } else {
        HIP_ERROR_GRAPH_EXEC_UPDATE_FAILURE
    });
}

fn graph_exec_destroy(run: &Run, e: Exec) {
    let mut args = sys::rocprofiler_hip_api_args_t::default();
    args.hipGraphExecDestroy = sys::hip_graph_exec_destroy_args {
        graphExec: e.handle as sys::hipGraphExec_t,
    };
    let call = ApiCall::enter(api::hipGraphExecDestroy, args, None);
    count_api(run);
    trace::graph_event(
        sys::rocprofiler_hip_graph_operation_t::EXEC_DESTROY,
        call.corr,
        e.exec_id,
        e.handle,
    );
    free_exec_handle(e.handle);
    lock(&run.truth).exec_events.push(ExecEvent {
        event: "destroy".into(),
        correlation_id: call.corr,
        thread: tid(),
        exec_handle: e.handle,
        graph_exec_id: e.exec_id,
        graph: None,
    });
    call.exit(sys::HIP_SUCCESS);
}

fn graph_launch(run: &Run, e: &Exec, s: &Stream, rng: &mut Rng) {
    let mut args = sys::rocprofiler_hip_api_args_t::default();
    args.hipGraphLaunch = sys::hip_graph_launch_args {
        graphExec: e.handle as sys::hipGraphExec_t,
        stream: s.r.value as sys::hipStream_t,
    };
    let call = ApiCall::enter(api::hipGraphLaunch, args, Some(s.r));
    count_api(run);
    let glt = GraphLaunchTrace::enter(call.corr, e.exec_id, e.handle);
    let graph = &run.w.graphs[e.graph];
    let me = tid();
    let mut kernels = 0u64;
    let packets: Vec<Packet> = run.orders[e.graph]
        .iter()
        .enumerate()
        .map(|(ordinal, &ni)| {
            let node = &graph.nodes[ni];
            let mut p = Packet {
                kind: OpKind::Kernel,
                launch_corr: call.corr,
                launching_thread: me,
                exec_handle: e.handle,
                graph_exec_id: e.exec_id,
                graph: Some(run.graph_names[e.graph].clone()),
                node_index: Some(ni as u32),
                ordinal: ordinal as u32,
                kernel_id: 0,
                kernel_name: None,
                bytes: 0,
                direction: Direction::DeviceToDevice,
                duration: 0,
                stream_id: s.r.id,
                grid: 65536,
            };
            if let Some(k) = &node.kernel {
                let (id, name) = &run.kernel_names[k];
                p.kernel_id = *id;
                p.kernel_name = Some(name.clone());
                p.duration = run.w.durations.kernel(k);
                kernels += 1;
            } else if let Some(m) = &node.memcpy {
                p.kind = OpKind::Memcpy;
                p.bytes = m.bytes;
                p.direction = m.direction;
                p.duration = run.w.durations.memcpy(m.bytes);
            }
            p
        })
        .collect();
    let npackets = packets.len() as u32;
    submit(run, &s.queue, packets, rng);
    if let Some(t) = glt {
        t.exit(call.corr);
    }
    trace::graph_launch_record(&call, s.queue.agent, s.queue.id, e.exec_id, kernels);
    lock(&run.truth).launches.push(LaunchTruth {
        correlation_id: call.corr,
        thread: me,
        exec_handle: e.handle,
        graph_exec_id: e.exec_id,
        graph: graph.name.clone(),
        packets: npackets,
        kernel_dispatch_count: kernels,
        stream_id: s.r.id,
        queue_id: s.queue.id,
        ..Default::default()
    });
    call.exit(sys::HIP_SUCCESS);
}

fn launch_kernel(run: &Run, name: &str, s: &Stream, rng: &mut Rng) {
    let (id, kname) = run.kernel_names[name].clone();
    let mut args = sys::rocprofiler_hip_api_args_t::default();
    args.hipLaunchKernel = sys::hip_launch_kernel_args {
        function_address: (0x4000_0000 + id * 0x40) as *const c_void,
        numBlocks: sys::rocprofiler_dim3_t { x: 256, y: 1, z: 1 },
        dimBlocks: sys::rocprofiler_dim3_t { x: 256, y: 1, z: 1 },
        args: std::ptr::null_mut(),
        sharedMemBytes: 0,
        stream: s.r.value as sys::hipStream_t,
    };
    let call = ApiCall::enter(api::hipLaunchKernel, args, Some(s.r));
    count_api(run);
    let p = Packet {
        kind: OpKind::Kernel,
        launch_corr: call.corr,
        launching_thread: tid(),
        exec_handle: 0,
        graph_exec_id: 0,
        graph: None,
        node_index: None,
        ordinal: 0,
        kernel_id: id,
        kernel_name: Some(kname),
        bytes: 0,
        direction: Direction::DeviceToDevice,
        duration: run.w.durations.kernel(name),
        stream_id: s.r.id,
        grid: 65536,
    };
    submit(run, &s.queue, vec![p], rng);
    call.exit(sys::HIP_SUCCESS);
}

fn memcpy_async(run: &Run, bytes: u64, direction: Direction, s: &Stream, rng: &mut Rng) {
    let mut args = sys::rocprofiler_hip_api_args_t::default();
    args.hipMemcpyAsync = sys::hip_memcpy_async_args {
        dst: 0x9000_0000usize as *mut c_void,
        src: 0x8000_0000usize as *const c_void,
        sizeBytes: bytes as usize,
        kind: direction.hip_kind(),
        stream: s.r.value as sys::hipStream_t,
    };
    let call = ApiCall::enter(api::hipMemcpyAsync, args, Some(s.r));
    count_api(run);
    let p = Packet {
        kind: OpKind::Memcpy,
        launch_corr: call.corr,
        launching_thread: tid(),
        exec_handle: 0,
        graph_exec_id: 0,
        graph: None,
        node_index: None,
        ordinal: 0,
        kernel_id: 0,
        kernel_name: None,
        bytes,
        direction,
        duration: run.w.durations.memcpy(bytes),
        stream_id: s.r.id,
        grid: 0,
    };
    submit(run, &s.queue, vec![p], rng);
    call.exit(sys::HIP_SUCCESS);
}

/// Queue the packets, then write every pending packet if this thread gets the
/// queue; otherwise the holder writes them. The holder looks at the FIFO
/// again after releasing the lock, so no packet is left behind.
fn submit(run: &Run, q: &HwQueue, packets: Vec<Packet>, rng: &mut Rng) {
    lock(&q.fifo).extend(packets);
    rng.jitter(run.opts.jitter_ns);
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
                write_packet(run, q, &mut clock, p);
                rng.jitter(run.opts.jitter_ns);
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
fn write_packet(run: &Run, q: &HwQueue, clock: &mut u64, p: Packet) {
    let s = sdk();
    let writer = tid();
    let corr = crate::sdk::state::current_corr();
    let dispatch_id = process().next_dispatch_id.fetch_add(1, Ordering::Relaxed);
    let submit_ns = now_ns();
    let start = submit_ns.max(*clock);
    let end = start + p.duration.max(1);
    *clock = end;
    let (rec, deliveries) = match p.kind {
        OpKind::Kernel => {
            let deliveries = trace::capture_async(
                sys::rocprofiler_buffer_tracing_kind_t::KERNEL_DISPATCH.0,
                sys::rocprofiler_external_correlation_id_request_kind_t::KERNEL_DISPATCH,
                sys::rocprofiler_kernel_dispatch_operation_t::ENQUEUE.0 as i32,
                corr,
            );
            let info = sys::rocprofiler_kernel_dispatch_info_t {
                agent_id: sys::rocprofiler_agent_id_t { handle: q.agent },
                queue_id: sys::rocprofiler_queue_id_t { handle: q.id },
                kernel_id: p.kernel_id,
                dispatch_id,
                workgroup_size: sys::rocprofiler_dim3_t { x: 256, y: 1, z: 1 },
                grid_size: sys::rocprofiler_dim3_t {
                    x: p.grid,
                    y: 1,
                    z: 1,
                },
                ..Default::default()
            };
            let rec = sys::rocprofiler_buffer_tracing_kernel_dispatch_record_t {
                size: std::mem::size_of::<sys::rocprofiler_buffer_tracing_kernel_dispatch_record_t>(
                ) as u64,
                kind: sys::rocprofiler_buffer_tracing_kind_t::KERNEL_DISPATCH,
                operation: sys::rocprofiler_kernel_dispatch_operation_t::COMPLETE,
                correlation_id: sys::rocprofiler_async_correlation_id_t {
                    internal: corr,
                    external: Default::default(),
                },
                thread_id: writer,
                start_timestamp: start,
                end_timestamp: end,
                dispatch_info: info,
            };
            (Rec::Kernel(rec), deliveries)
        }
        OpKind::Memcpy => {
            let op = p.direction.sdk_operation();
            let deliveries = trace::capture_async(
                sys::rocprofiler_buffer_tracing_kind_t::MEMORY_COPY.0,
                sys::rocprofiler_external_correlation_id_request_kind_t::MEMORY_COPY,
                op as i32,
                corr,
            );
            let cpu = agent_handle(0);
            let (src, dst) = match p.direction {
                Direction::HostToHost => (cpu, cpu),
                Direction::HostToDevice => (cpu, q.agent),
                Direction::DeviceToHost => (q.agent, cpu),
                Direction::DeviceToDevice => (q.agent, q.agent),
            };
            let rec = sys::rocprofiler_buffer_tracing_memory_copy_record_t {
                size: std::mem::size_of::<sys::rocprofiler_buffer_tracing_memory_copy_record_t>()
                    as u64,
                kind: sys::rocprofiler_buffer_tracing_kind_t::MEMORY_COPY,
                operation: sys::rocprofiler_memory_copy_operation_t(op),
                correlation_id: sys::rocprofiler_async_correlation_id_t {
                    internal: corr,
                    external: Default::default(),
                },
                thread_id: writer,
                start_timestamp: start,
                end_timestamp: end,
                dst_agent_id: sys::rocprofiler_agent_id_t { handle: dst },
                src_agent_id: sys::rocprofiler_agent_id_t { handle: src },
                bytes: p.bytes,
                dst_address: sys::rocprofiler_address_t::from_value(0x9000_0000),
                src_address: sys::rocprofiler_address_t::from_value(0x8000_0000),
            };
            (Rec::Copy(rec), deliveries)
        }
    };
    if s.retirement_enabled() {
        s.corr_async_added(corr);
    }
    s.complete_later(Completion {
        end_ns: end,
        seq: s.completion_seq(),
        wait: !run.opts.virtual_time,
        corr,
        rec,
        deliveries,
    });
    if run.opts.record_truth {
        lock(&run.truth).ops.push(OpTruth {
            kind: p.kind,
            dispatch_id,
            record_correlation_id: corr,
            launch_correlation_id: p.launch_corr,
            exec_handle: p.exec_handle,
            graph_exec_id: p.graph_exec_id,
            graph: p.graph.map(|g| g.to_string()),
            node_index: p.node_index,
            ordinal: p.ordinal,
            kernel_name: p.kernel_name.map(|k| k.to_string()),
            kernel_id: p.kernel_id,
            bytes: p.bytes,
            launching_thread: p.launching_thread,
            writing_thread: writer,
            device: q.device,
            agent_id: q.agent,
            queue_index: q.index,
            queue_id: q.id,
            stream_id: p.stream_id,
            submit_ns,
            start_ns: start,
            end_ns: end,
            ..Default::default()
        });
    }
}
