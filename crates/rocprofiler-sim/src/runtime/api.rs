//! The HIP calls of application threads that reach the submission model:
//! stream creation and destruction, hipGraphLaunch and the eager calls.
use super::calls::HipCall;
use super::context::Ctx;
use super::graphs::{Exec, DST_ADDRESS, SRC_ADDRESS};
use super::handles;
use super::rng::Rng;
use super::submission::{Eager, Submission};
use super::work::{self, Fill, Origin};
use crate::sdk::agents::agent_handle;
use crate::sdk::graph_trace::{graph_launch_record, GraphLaunchTrace};
use crate::sdk::kernels::host_stub;
use crate::sdk::os::{lock, tid};
use crate::sdk::trace::{stream_event, StreamRef};
use crate::truth::LaunchTruth;
use crate::workload::Direction;
use rocprofiler_sys as sys;
use rocprofiler_sys::hip_runtime_api_id as api;
use std::ffi::c_void;
use std::sync::Arc;

pub(crate) fn stream_create<M: Submission>(ctx: &Ctx, model: &M, device: u32) -> M::Stream {
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

pub(crate) fn stream_destroy<M: Submission>(ctx: &Ctx, model: &M, s: &M::Stream) {
    let r = M::stream_ref(s);
    let mut raw = [0u64; 11];
    raw[0] = r.value;
    let args = sys::rocprofiler_hip_api_args_t { raw };
    let call = HipCall::enter(&ctx.shared, api::hipStreamDestroy, args, Some(r));
    model.destroy_stream(s);
    call.exit(sys::HIP_SUCCESS);
    stream_event(sys::rocprofiler_hip_stream_operation_t::DESTROY, r);
}

pub(crate) fn eager_origin(corr: u64, stream_id: u64) -> Arc<Origin> {
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

pub(crate) fn graph_launch<M: Submission>(
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
    let agent = agent_handle(M::stream_device(s) + 1);
    graph_launch_record(&call.api, agent, launched.record_queue_id, e.exec_id, count);
    // Kept for the session like every run's truth, so only when asked for
    // (as ops and calls are): a long session would otherwise grow by a
    // launch's truth per launch.
    if ctx.shared.record_truth {
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
    }
    call.exit(sys::HIP_SUCCESS);
}

fn dim(v: [u32; 3]) -> sys::rocprofiler_dim3_t {
    sys::rocprofiler_dim3_t {
        x: v[0],
        y: v[1],
        z: v[2],
    }
}

pub(crate) fn launch_kernel<M: Submission>(
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

pub(crate) fn memcpy_async<M: Submission>(
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

pub(crate) fn memset_async<M: Submission>(
    ctx: &Ctx,
    model: &M,
    s: &M::Stream,
    fill: Fill,
    rng: &mut Rng,
) {
    let r = M::stream_ref(s);
    let mut args = sys::rocprofiler_hip_api_args_t::default();
    args.hipMemsetAsync = sys::hip_memset_async_args {
        dst: fill.dst as *mut c_void,
        value: fill.value as i32,
        sizeBytes: fill.bytes as usize,
        stream: r.value as sys::hipStream_t,
    };
    let call = HipCall::enter(&ctx.shared, api::hipMemsetAsync, args, Some(r));
    let origin = eager_origin(call.corr(), r.id);
    model.eager(ctx, s, Eager::Memset(fill), origin, rng);
    call.exit(sys::HIP_SUCCESS);
}
