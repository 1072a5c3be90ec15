//! The simulated HIP runtime (crate-private): application threads making
//! HIP calls, graphs and execs, and the device work those calls submit
//! under one of two submission models (`ideal`, `rocm`).
//!
//! A run is one program: its threads run the workload's ops; graphs it
//! built are destroyed when they finish; HW queues and the work queued on
//! them belong to the process and persist across runs.
use crate::model::{resolve, RocmSettings, SubmissionModel};
use crate::options::RunOptions;
use crate::sdk::code_object::{device_symbol_registered, host_symbol_registered};
use crate::sdk::graph_trace::{graph_launch_record, GraphLaunchTrace};
use crate::sdk::kernels::{host_stub, register};
use crate::sdk::os::{lock, tid};
use crate::sdk::trace::{stream_event, StreamRef};
use crate::truth::{LaunchTruth, RunTruth};
use crate::workload::{Direction, Op, Workload, DEFAULT_DIM};
use calls::HipCall;
use graphs::{Built, Exec, DST_ADDRESS, SRC_ADDRESS};

use rng::Rng;
use rocprofiler_sys as sys;
use rocprofiler_sys::hip_runtime_api_id as api;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Arc, Barrier, Mutex, OnceLock};
use submission::{Eager, Submission};
use work::{KernelTable, Origin, COPY_KERNEL, FILL_KERNEL};

mod calls;
mod graphs;
mod handles;
mod ideal;
mod plan;
mod record;
mod rng;
mod rocm;
mod submission;
mod work;

pub(crate) use record::RunShared;

/// What every part of a run reads.
pub(crate) struct Ctx<'w> {
    pub w: &'w Workload,
    pub opts: RunOptions,
    pub shared: Arc<RunShared>,
    pub kernels: KernelTable,
    pub graph_names: Vec<Arc<str>>,
    built: Vec<OnceLock<Built>>,
    /// GPU_MAX_HW_QUEUES of this run.
    pub hw_queues: u32,
    pub rocm: RocmSettings,
}

impl Ctx<'_> {
    /// Graph `gi`, built through the HIP graph API by the first thread that
    /// needs it (others wait until it is built).
    pub fn built(&self, gi: usize) -> &Built {
        self.built[gi].get_or_init(|| graphs::build(self, gi))
    }
}

/// Resolves the HW queue count: run option, then GPU_MAX_HW_QUEUES, then the
/// workload, then 4 (rocclr/utils/flags.hpp `GPU_MAX_HW_QUEUES`, 4: "The
/// maximum number of HW queues allocated per device").
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

/// Registers every kernel's symbols (code objects load before any launch):
/// the workload's kernels, then rocclr's blit kernels (device symbols only:
/// rocclr launches them without a host stub).
fn load_code_objects(w: &Workload) -> KernelTable {
    let mut table = KernelTable::new();
    for name in w.kernel_names() {
        let k = register(&name);
        if k.fresh {
            device_symbol_registered(k);
            host_symbol_registered(k);
        }
        table.insert(name.clone(), (k.id, Arc::from(name.as_str())));
    }
    for name in [FILL_KERNEL, COPY_KERNEL] {
        let k = register(name);
        if k.fresh {
            device_symbol_registered(k);
        }
        table.insert(name.to_string(), (k.id, Arc::from(name)));
    }
    table
}

/// The host's CPU-op marker hook: (1 push | 2 pop, name).
pub(crate) type MarkerHook<'a> = &'a (dyn Fn(i32, &str) + Sync);

/// Runs every thread of the workload to completion and returns what the
/// run records (device work may still be in flight).
pub(crate) fn run(
    w: &Workload,
    opts: &RunOptions,
    agents: &[u64],
    markers: MarkerHook,
) -> Result<Arc<RunShared>, String> {
    let model = opts.submission_model.unwrap_or(w.submission_model);
    let rocm = resolve(&opts.rocm, &w.rocm)?;
    let nq = hw_queues(w, opts);
    let shared = Arc::new(RunShared {
        truth: Mutex::new(RunTruth {
            source: opts.source_name.clone().unwrap_or_default(),
            submission_model: model.name().into(),
            hw_queues_per_device: nq,
            devices: w.devices,
            agents: agents.to_vec(),
            threads: vec![0; w.threads.len()],
            setup_thread: tid(),
            ..Default::default()
        }),
        record_truth: opts.record_truth,
        virtual_time: opts.virtual_time,
        delivery_lag_ns: match model {
            SubmissionModel::Rocm => rocm.delivery_lag_ns,
            SubmissionModel::Ideal => 0,
        },
        seed: opts.seed,
    });
    let ctx = Ctx {
        w,
        opts: opts.clone(),
        shared: shared.clone(),
        kernels: load_code_objects(w),
        graph_names: w
            .graphs
            .iter()
            .map(|g| Arc::from(g.name.as_str()))
            .collect(),
        built: (0..w.graphs.len()).map(|_| OnceLock::new()).collect(),
        hw_queues: nq,
        rocm,
    };
    match model {
        SubmissionModel::Ideal => run_with(&ctx, &ideal::Ideal::new(&ctx), markers),
        SubmissionModel::Rocm => run_with(&ctx, &rocm::Rocm::new(&ctx), markers),
    }
    Ok(shared)
}

fn run_with<M: Submission>(ctx: &Ctx, model: &M, markers: MarkerHook) {
    // Shared execs: instantiated on this (setup) thread before the
    // application threads start.
    let shared_execs: HashMap<&str, Exec<M::Exec>> = ctx
        .w
        .shared_execs
        .iter()
        .map(|e| {
            let gi = ctx.w.graph_index(&e.graph).expect("validated");
            let exec = graphs::instantiate(ctx, gi, || model.instantiate(ctx, gi, e.device));
            (e.name.as_str(), exec)
        })
        .collect();
    let barrier = Barrier::new(if ctx.w.start_barrier {
        ctx.w.threads.len()
    } else {
        1
    });
    std::thread::scope(|scope| {
        for ti in 0..ctx.w.threads.len() {
            let (barrier, shared_execs) = (&barrier, &shared_execs);
            std::thread::Builder::new()
                .name(format!("rocsim-app-{ti}"))
                .spawn_scoped(scope, move || {
                    thread_main(ctx, model, ti, barrier, shared_execs, markers)
                })
                .expect("spawn an application thread");
        }
    });
    for b in ctx.built.iter().filter_map(OnceLock::get) {
        graphs::destroy_graph(ctx, b);
    }
    model.end_run();
}

fn thread_main<M: Submission>(
    ctx: &Ctx,
    model: &M,
    ti: usize,
    barrier: &Barrier,
    shared_execs: &HashMap<&str, Exec<M::Exec>>,
    markers: MarkerHook,
) {
    lock(&ctx.shared.truth).threads[ti] = tid();
    let mut rng = Rng::for_thread(ctx.opts.seed, ti);
    let mut streams: HashMap<&str, M::Stream> = HashMap::new();
    let mut execs: HashMap<&str, Exec<M::Exec>> = HashMap::new();
    barrier.wait();
    for op in &ctx.w.threads[ti].ops {
        match op {
            Op::CreateStream { name, device } => {
                let s = stream_create(ctx, model, *device);
                streams.insert(name, s);
            }
            Op::DestroyStream { name } => {
                if let Some(s) = streams.remove(name.as_str()) {
                    stream_destroy(ctx, model, &s);
                }
            }
            Op::Instantiate {
                graph,
                exec,
                device,
            } => {
                let gi = ctx.w.graph_index(graph).expect("validated");
                let e = graphs::instantiate(ctx, gi, || model.instantiate(ctx, gi, *device));
                execs.insert(exec, e);
            }
            Op::Launch {
                exec,
                stream,
                times,
            } => {
                let e = execs
                    .get(exec.as_str())
                    .or_else(|| shared_execs.get(exec.as_str()))
                    .expect("validated");
                let s = &streams[stream.as_str()];
                for _ in 0..*times {
                    graph_launch(ctx, model, e, s, &mut rng);
                }
            }
            Op::Update { exec, graph } => {
                let gi = ctx.w.graph_index(graph).expect("validated");
                if let Some(e) = execs.get_mut(exec.as_str()) {
                    graphs::update(ctx, e, gi);
                }
            }
            Op::Destroy { exec } => {
                if let Some(e) = execs.remove(exec.as_str()) {
                    graphs::destroy(ctx, e, |m| model.destroy_exec(m));
                }
            }
            Op::Kernel {
                name,
                stream,
                times,
                grid,
                block,
            } => {
                let s = &streams[stream.as_str()];
                let (grid, block) = (grid.unwrap_or(DEFAULT_DIM), block.unwrap_or(DEFAULT_DIM));
                for _ in 0..*times {
                    launch_kernel(ctx, model, s, name, grid, block, &mut rng);
                }
            }
            Op::Memcpy {
                bytes,
                direction,
                stream,
                times,
            } => {
                let s = &streams[stream.as_str()];
                for _ in 0..*times {
                    memcpy_async(ctx, model, s, *bytes, *direction, &mut rng);
                }
            }
            Op::Memset {
                bytes,
                value,
                stream,
                times,
            } => {
                let s = &streams[stream.as_str()];
                for _ in 0..*times {
                    memset_async(ctx, model, s, *bytes, *value, &mut rng);
                }
            }
            Op::Sleep { us } => std::thread::sleep(std::time::Duration::from_micros(*us)),
            Op::PushMarker { name } => {
                calls::push_marker(name);
                markers(1, name);
            }
            Op::PopMarker {} => {
                calls::pop_marker();
                markers(2, "");
            }
        }
    }
}

fn stream_create<M: Submission>(ctx: &Ctx, model: &M, device: u32) -> M::Stream {
    let mut out: sys::hipStream_t = std::ptr::null_mut();
    let p_out: *mut sys::hipStream_t = &mut out;
    let mut args = sys::rocprofiler_hip_api_args_t::default();
    args.hipStreamCreate = sys::hip_stream_create_args { stream: p_out };
    let call = HipCall::enter(&ctx.shared, api::hipStreamCreate, args, None);
    let (id, value) = handles::new_user_stream();
    let r = StreamRef { id, value };
    let s = model.create_stream(ctx, r, device);
    // SAFETY: `p_out` points to `out`, live across the call.
    unsafe { p_out.write(value as sys::hipStream_t) };
    call.exit(sys::HIP_SUCCESS);
    // stream.cpp create_write_functor: CREATE fires after the call returns.
    stream_event(sys::rocprofiler_hip_stream_operation_t::CREATE, r);
    s
}

fn stream_destroy<M: Submission>(ctx: &Ctx, model: &M, s: &M::Stream) {
    let r = M::stream_ref(s);
    let mut raw = [0u64; 11];
    raw[0] = r.value;
    let args = sys::rocprofiler_hip_api_args_t { raw };
    let call = HipCall::enter(&ctx.shared, api::hipStreamDestroy, args, Some(r));
    model.destroy_stream(s);
    call.exit(sys::HIP_SUCCESS);
    stream_event(sys::rocprofiler_hip_stream_operation_t::DESTROY, r);
}

fn eager_origin(corr: u64, stream_id: u64) -> Arc<Origin> {
    Arc::new(Origin {
        launch_corr: corr,
        launching_thread: tid(),
        exec_handle: 0,
        graph_exec_id: 0,
        exec_epoch: 0,
        graph: None,
        stream_id,
    })
}

fn graph_launch<M: Submission>(
    ctx: &Ctx,
    model: &M,
    e: &Exec<M::Exec>,
    s: &M::Stream,
    rng: &mut Rng,
) {
    let r = M::stream_ref(s);
    let mut args = sys::rocprofiler_hip_api_args_t::default();
    args.hipGraphLaunch = sys::hip_graph_launch_args {
        graphExec: e.handle as sys::hipGraphExec_t,
        stream: r.value as sys::hipStream_t,
    };
    let call = HipCall::enter(&ctx.shared, api::hipGraphLaunch, args, Some(r));
    let trace = GraphLaunchTrace::enter(call.corr(), e.exec_id, e.handle);
    let origin = Arc::new(Origin {
        launch_corr: call.corr(),
        launching_thread: tid(),
        exec_handle: e.handle,
        graph_exec_id: e.exec_id,
        exec_epoch: e.epoch,
        graph: Some(ctx.graph_names[e.graph].clone()),
        stream_id: r.id,
    });
    let launched = model.launch(ctx, e, s, origin, rng);
    let sdk_count = trace.map_or(0, GraphLaunchTrace::exit);
    let count = launched.record_count.unwrap_or(sdk_count);
    let agent = crate::sdk::agents::agent_handle(M::stream_device(s) + 1);
    graph_launch_record(&call.api, agent, launched.record_queue_id, e.exec_id, count);
    lock(&ctx.shared.truth).launches.push(LaunchTruth {
        correlation_id: call.corr(),
        thread: tid(),
        exec_handle: e.handle,
        graph_exec_id: e.exec_id,
        exec_epoch: e.epoch,
        graph: ctx.w.graphs[e.graph].name.clone(),
        packets: launched.packets,
        kernel_dispatch_count: launched.kernels,
        record_kernel_dispatch_count: count,
        stream_id: r.id,
        queue_id: launched.queue_id,
    });
    call.exit(sys::HIP_SUCCESS);
}

fn dim(v: [u32; 3]) -> sys::rocprofiler_dim3_t {
    sys::rocprofiler_dim3_t {
        x: v[0],
        y: v[1],
        z: v[2],
    }
}

fn launch_kernel<M: Submission>(
    ctx: &Ctx,
    model: &M,
    s: &M::Stream,
    name: &str,
    grid: [u32; 3],
    block: [u32; 3],
    rng: &mut Rng,
) {
    let r = M::stream_ref(s);
    let (work, duration) = work::kernel(&ctx.kernels, &ctx.w.durations, name, grid, block);
    let mut args = sys::rocprofiler_hip_api_args_t::default();
    args.hipLaunchKernel = sys::hip_launch_kernel_args {
        function_address: host_stub(ctx.kernels[name].0) as *const c_void,
        numBlocks: dim(grid),
        dimBlocks: dim(block),
        args: std::ptr::null_mut(),
        sharedMemBytes: 0,
        stream: r.value as sys::hipStream_t,
    };
    let call = HipCall::enter(&ctx.shared, api::hipLaunchKernel, args, Some(r));
    let origin = eager_origin(call.corr(), r.id);
    model.eager(ctx, s, Eager::Kernel(work, duration), origin, rng);
    call.exit(sys::HIP_SUCCESS);
}

fn memcpy_async<M: Submission>(
    ctx: &Ctx,
    model: &M,
    s: &M::Stream,
    bytes: u64,
    direction: Direction,
    rng: &mut Rng,
) {
    let r = M::stream_ref(s);
    let mut args = sys::rocprofiler_hip_api_args_t::default();
    args.hipMemcpyAsync = sys::hip_memcpy_async_args {
        dst: DST_ADDRESS as *mut c_void,
        src: SRC_ADDRESS as *const c_void,
        sizeBytes: bytes as usize,
        kind: direction.hip_kind(),
        stream: r.value as sys::hipStream_t,
    };
    let call = HipCall::enter(&ctx.shared, api::hipMemcpyAsync, args, Some(r));
    let origin = eager_origin(call.corr(), r.id);
    let m = crate::workload::Memcpy { bytes, direction };
    model.eager(ctx, s, Eager::Memcpy(m), origin, rng);
    call.exit(sys::HIP_SUCCESS);
}

fn memset_async<M: Submission>(
    ctx: &Ctx,
    model: &M,
    s: &M::Stream,
    bytes: u64,
    value: u32,
    rng: &mut Rng,
) {
    let r = M::stream_ref(s);
    let mut args = sys::rocprofiler_hip_api_args_t::default();
    args.hipMemsetAsync = sys::hip_memset_async_args {
        dst: DST_ADDRESS as *mut c_void,
        value: value as i32,
        sizeBytes: bytes as usize,
        stream: r.value as sys::hipStream_t,
    };
    let call = HipCall::enter(&ctx.shared, api::hipMemsetAsync, args, Some(r));
    let origin = eager_origin(call.corr(), r.id);
    model.eager(ctx, s, Eager::Memset(bytes), origin, rng);
    call.exit(sys::HIP_SUCCESS);
}
