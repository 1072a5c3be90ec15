//! The HIP calls of the timeline beyond kernels and copies: events, waits,
//! synchronisation, host functions and peer copies. Each is traced like any
//! HIP call (ENTER/EXIT, buffer record, HIP_STREAM SET when it takes a
//! stream); what it does on the device is the submission model's
//! (`Submission::record_mark` and friends; the `rocm` model cites its
//! sources there).
use super::api::eager_origin;
use super::calls::HipCall;
use super::context::Ctx;
use super::graphs::{DST_ADDRESS, HOST_FN_ADDRESS, SRC_ADDRESS};
use super::rng::Rng;
use super::submission::{Eager, Submission};
use crate::sdk::os::{advance_to, lock, now_ns};
use crate::truth::EventTruth;
use rocprofiler_sys as sys;
use rocprofiler_sys::hip_runtime_api_id as api;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A hipEvent_t and its last record.
pub(crate) struct Event<M> {
    pub handle: u64,
    /// (hipEventRecord's correlation id, its marker).
    last: Option<(u64, Option<M>)>,
}

fn op(name: &str) -> i32 {
    api::by_name(name).expect("a HIP runtime function of the table")
}

/// The longest a synchronising call waits (a bug, not a workload, would
/// need more).
const SYNC_LIMIT: Duration = Duration::from_secs(30);

/// Blocks the calling thread until every mark has completed (a
/// synchronising HIP call), and returns no earlier than the last one's end:
/// the call returns once the awaited command has ended (hip_stream.cpp
/// `hipStreamSynchronize_common` -> `finish()`; events and the device
/// likewise wait for their commands), so under virtual time, where a
/// command completes as soon as its times are known, the clock skips to
/// that end (`os::advance_to`).
fn block_until<M: Submission>(model: &M, marks: &[M::Mark]) {
    let began = Instant::now();
    loop {
        let now = now_ns();
        let ends: Option<Vec<u64>> = marks.iter().map(|m| model.mark_done(m, now)).collect();
        if let Some(ends) = ends {
            if let Some(&last) = ends.iter().max() {
                advance_to(last);
            }
            return;
        }
        if began.elapsed() > SYNC_LIMIT {
            eprintln!("rocprofiler-sim: a synchronising call gave up after {SYNC_LIMIT:?}");
            return;
        }
        std::thread::sleep(Duration::from_micros(5));
    }
}

/// hipEventCreate.
pub(crate) fn event_create<M: Submission>(ctx: &Ctx) -> Event<M::Mark> {
    Event {
        handle: hip_event_create(ctx),
        last: None,
    }
}

/// The hipEventCreate call; returns the event's handle.
pub(crate) fn hip_event_create(ctx: &Ctx) -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(0x5e00_0000);
    let mut out: sys::hipEvent_t = std::ptr::null_mut();
    let p_out: *mut sys::hipEvent_t = &mut out;
    let mut args = sys::rocprofiler_hip_api_args_t::default();
    args.hipEventCreate = sys::hip_event_create_args { event: p_out };
    let mut call = HipCall::enter(&ctx.shared, op("hipEventCreate"), args, None);
    let handle = NEXT.fetch_add(0x40, Ordering::Relaxed);
    // SAFETY: `p_out` points to `out`, live across the call.
    unsafe { p_out.write(handle as sys::hipEvent_t) };
    call.event = Some(handle);
    call.exit(sys::HIP_SUCCESS);
    handle
}

/// hipEventRecord(event, stream).
pub(crate) fn event_record<M: Submission>(
    ctx: &Ctx,
    model: &M,
    ev: &mut Event<M::Mark>,
    s: &M::Stream,
    rng: &mut Rng,
) {
    let r = M::stream_ref(s);
    let mut args = sys::rocprofiler_hip_api_args_t::default();
    args.hipEventRecord = sys::hip_event_record_args {
        event: ev.handle as sys::hipEvent_t,
        stream: r.value as sys::hipStream_t,
    };
    let mut call = HipCall::enter(&ctx.shared, api::hipEventRecord, args, Some(r));
    call.event = Some(ev.handle);
    let (corr, enter_ns, handle) = (call.corr(), call.api.start_ns, ev.handle);
    let device = M::stream_device(s);
    let run = ctx.shared.clone();
    let done = Box::new(move |end: u64| {
        if run.record_truth {
            lock(&run.truth).events.push(EventTruth {
                event: handle,
                record_correlation_id: corr,
                stream_id: r.id,
                device,
                enter_ns,
                completed_ns: end,
            });
        }
    });
    let mark = model.record_mark(ctx, s, done, rng);
    ev.last = Some((corr, mark));
    call.exit(sys::HIP_SUCCESS);
}

/// hipStreamWaitEvent(stream, event, 0).
pub(crate) fn stream_wait_event<M: Submission>(
    ctx: &Ctx,
    model: &M,
    s: &M::Stream,
    ev: &Event<M::Mark>,
    rng: &mut Rng,
) {
    let r = M::stream_ref(s);
    let mut args = sys::rocprofiler_hip_api_args_t::default();
    args.hipStreamWaitEvent = sys::hip_stream_wait_event_args {
        stream: r.value as sys::hipStream_t,
        event: ev.handle as sys::hipEvent_t,
        flags: 0,
    };
    let mut call = HipCall::enter(&ctx.shared, api::hipStreamWaitEvent, args, Some(r));
    call.event = Some(ev.handle);
    if let Some((corr, mark)) = &ev.last {
        call.waited_record = Some(*corr);
        if let Some(m) = mark {
            model.wait_mark(ctx, s, m, rng);
        }
    }
    call.exit(sys::HIP_SUCCESS);
}

/// hipEventSynchronize(event): hip_event.cpp `hipEventSynchronize` ->
/// `Event::synchronize`, the calling thread waits for the marker of the
/// event's last record (none recorded: returns at once).
pub(crate) fn event_synchronize<M: Submission>(ctx: &Ctx, model: &M, ev: &Event<M::Mark>) {
    let mut args = sys::rocprofiler_hip_api_args_t::default();
    args.hipEventSynchronize = sys::hip_event_synchronize_args {
        event: ev.handle as sys::hipEvent_t,
    };
    let mut call = HipCall::enter(&ctx.shared, op("hipEventSynchronize"), args, None);
    call.event = Some(ev.handle);
    if let Some((corr, mark)) = &ev.last {
        call.waited_record = Some(*corr);
        if let Some(m) = mark {
            block_until(model, std::slice::from_ref(m));
        }
    }
    call.exit(sys::HIP_SUCCESS);
}

/// hipStreamSynchronize(stream): hip_stream.cpp
/// `hipStreamSynchronize_common` -> `hip_stream->finish()`, the calling
/// thread waits for the stream's last command.
pub(crate) fn stream_synchronize<M: Submission>(ctx: &Ctx, model: &M, s: &M::Stream) {
    let r = M::stream_ref(s);
    let mut args = sys::rocprofiler_hip_api_args_t::default();
    args.hipStreamSynchronize = sys::hip_stream_synchronize_args {
        stream: r.value as sys::hipStream_t,
    };
    let call = HipCall::enter(&ctx.shared, api::hipStreamSynchronize, args, Some(r));
    let tail: Vec<M::Mark> = model.stream_tail(s).into_iter().collect();
    block_until(model, &tail);
    call.exit(sys::HIP_SUCCESS);
}

/// hipSetDevice(device), then hipDeviceSynchronize(): hip_device_runtime.cpp
/// `hipDeviceSynchronize` -> `getCurrentDevice()->SyncAllStreams`, the
/// calling thread waits for every stream of its current device.
pub(crate) fn device_synchronize<M: Submission>(ctx: &Ctx, model: &M, device: u32) {
    let mut args = sys::rocprofiler_hip_api_args_t::default();
    args.hipSetDevice = sys::hip_set_device_args {
        deviceId: device as i32,
    };
    HipCall::enter(&ctx.shared, op("hipSetDevice"), args, None).exit(sys::HIP_SUCCESS);
    let args = sys::rocprofiler_hip_api_args_t::default();
    let mut call = HipCall::enter(&ctx.shared, api::hipDeviceSynchronize, args, None);
    call.device = Some(device);
    block_until(model, &model.device_tails(device));
    call.exit(sys::HIP_SUCCESS);
}

/// hipLaunchHostFunc(stream, fn, userData): a host function of `us`
/// microseconds the stream waits for.
pub(crate) fn host_func<M: Submission>(
    ctx: &Ctx,
    model: &M,
    s: &M::Stream,
    us: u64,
    rng: &mut Rng,
) {
    let r = M::stream_ref(s);
    let mut args = sys::rocprofiler_hip_api_args_t::default();
    args.hipLaunchHostFunc = sys::hip_launch_host_func_args {
        stream: r.value as sys::hipStream_t,
        fn_: HOST_FN_ADDRESS as sys::hipHostFn_t,
        userData: std::ptr::null_mut(),
    };
    let call = HipCall::enter(&ctx.shared, op("hipLaunchHostFunc"), args, Some(r));
    let origin = eager_origin(call.corr(), r.id);
    model.host_func(ctx, s, us.saturating_mul(1000), origin, rng);
    call.exit(sys::HIP_SUCCESS);
}

/// hipMemcpyPeerAsync(dst, dst_device, src, src_device, bytes, stream):
/// hip_peer.cpp `hipMemcpyPeerAsync` -> `ihipMemcpy(..,
/// hipMemcpyDeviceToDevice, *hip_stream, ..)`, a device-to-device copy on
/// the issuing stream whose source and destination agents differ.
pub(crate) fn memcpy_peer<M: Submission>(
    ctx: &Ctx,
    model: &M,
    s: &M::Stream,
    bytes: u64,
    src_device: u32,
    dst_device: u32,
    rng: &mut Rng,
) {
    let r = M::stream_ref(s);
    let mut args = sys::rocprofiler_hip_api_args_t::default();
    args.hipMemcpyPeerAsync = sys::hip_memcpy_peer_async_args {
        dst: DST_ADDRESS as *mut c_void,
        dstDeviceId: dst_device as i32,
        src: SRC_ADDRESS as *const c_void,
        srcDevice: src_device as i32,
        sizeBytes: bytes as usize,
        stream: r.value as sys::hipStream_t,
    };
    let call = HipCall::enter(&ctx.shared, op("hipMemcpyPeerAsync"), args, Some(r));
    let origin = eager_origin(call.corr(), r.id);
    let work = Eager::PeerCopy {
        bytes,
        src_device,
        dst_device,
    };
    model.eager(ctx, s, work, origin, rng);
    call.exit(sys::HIP_SUCCESS);
}
