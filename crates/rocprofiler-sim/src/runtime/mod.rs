//! The simulated HIP runtime (crate-private): application threads making
//! HIP calls, graphs and execs, and the device work those calls submit
//! under one of two submission models (`ideal`, `rocm`).
//!
//! A run is one program: its threads run the workload's ops; graphs it
//! built are destroyed when they finish; HW queues and the work queued on
//! them belong to the process and persist across runs.
use crate::model::{resolve, SubmissionModel};
use crate::options::RunOptions;
use crate::sdk::code_object::{device_symbol_registered, host_symbol_registered};
use crate::sdk::kernels::register;
use crate::sdk::os::{lock, tid};
use crate::truth::RunTruth;
use crate::workload::{Op, Workload, DEFAULT_DIM};
use api::{graph_launch, launch_kernel, memcpy_async, memset_async, stream_create, stream_destroy};
use context::{hw_queues, Ctx};
use graphs::Exec;
use rng::Rng;
use std::collections::HashMap;
use std::sync::{Arc, Barrier, Mutex, OnceLock};
use submission::Submission;
use work::{Fill, KernelTable, COPY_KERNEL, FILL_KERNEL};

mod api;
mod calls;
mod context;
mod graphs;
mod handles;
mod ideal;
mod plan;
mod record;
mod rng;
mod rocm;
mod submission;
mod timeline;
mod work;

pub(crate) use record::RunShared;

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
        graphs::destroy_graph(ctx, b.handle);
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
    let mut events: HashMap<&str, timeline::Event<M::Mark>> = HashMap::new();
    let mut ranges: HashMap<&str, u64> = HashMap::new();
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
                offset,
                stream,
                times,
            } => {
                let s = &streams[stream.as_str()];
                let fill = Fill {
                    dst: graphs::DST_ADDRESS + offset,
                    bytes: *bytes,
                    value: *value,
                };
                for _ in 0..*times {
                    memset_async(ctx, model, s, fill, &mut rng);
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
            Op::MemcpyPeer {
                bytes,
                src_device,
                dst_device,
                stream,
                times,
            } => {
                let s = &streams[stream.as_str()];
                for _ in 0..*times {
                    timeline::memcpy_peer(
                        ctx,
                        model,
                        s,
                        *bytes,
                        *src_device,
                        *dst_device,
                        &mut rng,
                    );
                }
            }
            Op::CreateEvent { name } => {
                events.insert(name, timeline::event_create::<M>(ctx));
            }
            Op::RecordEvent { event, stream } => {
                let s = &streams[stream.as_str()];
                let ev = events.get_mut(event.as_str()).expect("validated");
                timeline::event_record(ctx, model, ev, s, &mut rng);
            }
            Op::WaitEvent { stream, event } => {
                let s = &streams[stream.as_str()];
                timeline::stream_wait_event(ctx, model, s, &events[event.as_str()], &mut rng);
            }
            Op::SynchronizeEvent { event } => {
                timeline::event_synchronize(ctx, model, &events[event.as_str()]);
            }
            Op::SynchronizeStream { stream } => {
                timeline::stream_synchronize(ctx, model, &streams[stream.as_str()]);
            }
            Op::SynchronizeDevice { device } => timeline::device_synchronize(ctx, model, *device),
            Op::HostFunc { stream, us, times } => {
                let s = &streams[stream.as_str()];
                for _ in 0..*times {
                    timeline::host_func(ctx, model, s, *us, &mut rng);
                }
            }
            Op::RoctxMark { message } => crate::sdk::markers::mark(&ctx.shared, message),
            Op::RoctxPush { message } => crate::sdk::markers::push(message),
            Op::RoctxPop {} => crate::sdk::markers::pop(&ctx.shared),
            Op::RoctxStart { message, range } => {
                ranges.insert(range, crate::sdk::markers::start(message));
            }
            Op::RoctxStop { range } => {
                if let Some(id) = ranges.remove(range.as_str()) {
                    crate::sdk::markers::stop(&ctx.shared, id);
                }
            }
        }
    }
}
