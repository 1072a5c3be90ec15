//! A test tool written only against rocprofiler-sys: it exports
//! `rocprofiler_configure`, configures services in initialize, answers
//! external-correlation requests and records everything it receives. Tests
//! read it back through `rocsim_test_tool_results_json`.
//!
//! Configuration (environment, read in rocprofiler_configure):
//! ROCSIM_TOOL_POLICY = lossless (default) | discard;
//! ROCSIM_TOOL_BUFFER_BYTES (default 1 MiB); ROCSIM_TOOL_WATERMARK (default
//! half the size); ROCSIM_TOOL_SLOW_CALLBACK_US (sleep per buffer callback);
//! ROCSIM_TOOL_COUNTER_IDS (comma-separated counter ids: configures the
//! callback dispatch counting service, one config per agent made at the
//! agent's first dispatch); ROCSIM_TOOL_REPLAY_PASSES (configures kernel
//! replay on a context of its own: that many passes per dispatch, with
//! per-dispatch-id variations the kernel-replay test checks, see
//! `replay_pass_count`).
#![allow(clippy::missing_safety_doc)]
use rocprofiler_sys as sys;
use serde_json::{json, Value};
use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{c_char, c_void, CString};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

#[derive(Default)]
struct Log {
    probes: Vec<(String, u32)>,
    /// [dispatch_id, corr, external, thread, start, end, queue, agent, kernel_id, seq, after_stop]
    dispatches: Vec<[u64; 11]>,
    /// [corr, external, thread, start, end, bytes, seq]
    copies: Vec<[u64; 7]>,
    /// [corr, seq]
    retirements: Vec<[u64; 2]>,
    /// [corr, thread, graph_exec_id, kernel_dispatch_count, queue_id]
    graph_records: Vec<[u64; 5]>,
    /// Arguments of some HIP calls at EXIT, as
    /// rocprofiler_iterate_callback_tracing_kind_operation_args reports
    /// them: (operation, number, indirection, type, name, value, derefs).
    args: Vec<(i32, u32, i32, String, String, String, i32)>,
    api_records: u64,
    /// [seq, thread, corr, kind, op, graph_exec_id (0 = none), ordinal]
    requests: Vec<[u64; 7]>,
    /// [kind, op, phase, thread, corr, a, b] — HIP_GRAPH: a = exec id, b = handle;
    /// HIP_RUNTIME_API: a = first arg, b = retval; HIP_STREAM: a = stream id, b = value.
    callbacks: Vec<[u64; 7]>,
    kernel_names: HashMap<u64, String>,
    /// kernel id -> host stub (HOST_KERNEL_SYMBOL_REGISTER).
    host_functions: HashMap<u64, u64>,
    max_drop_count: u64,
    buffer_callbacks: u64,
    finalized: bool,
    /// [dispatch_id, counter id, value bits, start, end, user data, corr,
    /// agent, instance id]
    counter_records: Vec<[u64; 9]>,
    /// [operation, phase, dispatch_id, current_pass, total_passes, thread, corr]
    replay: Vec<[u64; 7]>,
}

struct Tool {
    sdk: sys::Sdk,
    ctx: sys::rocprofiler_context_id_t,
    buffer: sys::rocprofiler_buffer_id_t,
    log: Mutex<Log>,
    seq: AtomicU64,
    stopped: AtomicBool,
    slow_us: u64,
    version: u32,
    iterate_args: Option<sys::rocprofiler_iterate_callback_tracing_kind_operation_args_fn>,
    /// The counters asked for, and the config made for each agent.
    counter_ids: Vec<u64>,
    counter_configs: Mutex<HashMap<u64, u64>>,
    replay_passes: u64,
}

static TOOL: OnceLock<Tool> = OnceLock::new();
static VERSION: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// The SDK's documented recipe: (graph_exec_id, node counter) per launch.
    static GRAPH_STACK: RefCell<Vec<(u64, u64)>> = const { RefCell::new(Vec::new()) };
}

fn log() -> Option<MutexGuard<'static, Log>> {
    TOOL.get()
        .map(|t| t.log.lock().unwrap_or_else(|p| p.into_inner()))
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

unsafe extern "C" fn arg_cb(
    _kind: sys::rocprofiler_callback_tracing_kind_t,
    operation: sys::rocprofiler_tracing_operation_t,
    number: u32,
    _addr: *const c_void,
    indirection: i32,
    ty: *const c_char,
    name: *const c_char,
    value: *const c_char,
    derefs: i32,
    _data: *mut c_void,
) -> i32 {
    // SAFETY: the SDK passes NUL-terminated strings valid for the call.
    let text = |p| unsafe { sys::c_str_lossy(p) }.unwrap_or_default();
    if let Some(mut l) = log() {
        l.args.push((
            operation,
            number,
            indirection,
            text(ty),
            text(name),
            text(value),
            derefs,
        ));
    }
    0
}

/// Calls whose arguments the tool logs at EXIT.
fn logs_args(op: i32) -> bool {
    use sys::hip_runtime_api_id as id;
    [
        id::hipLaunchKernel,
        id::hipMemsetAsync,
        id::hipMemcpyAsync,
        id::hipGraphAddKernelNode,
        id::hipGraphAddMemsetNode,
        id::hipGraphInstantiate,
        id::hipStreamCreate,
    ]
    .contains(&op)
}

unsafe extern "C" fn callback(
    record: sys::rocprofiler_callback_tracing_record_t,
    _user: *mut sys::rocprofiler_user_data_t,
    _data: *mut c_void,
) {
    use sys::rocprofiler_callback_tracing_kind_t as K;
    let (mut a, mut b) = (0u64, 0u64);
    match record.kind {
        K::HIP_GRAPH => {
            // SAFETY: HIP_GRAPH payloads are rocprofiler_callback_tracing_hip_graph_data_t.
            let p = unsafe {
                &*(record.payload as *const sys::rocprofiler_callback_tracing_hip_graph_data_t)
            };
            a = p.graph_exec_id.handle;
            b = p.graph_exec_value.value();
            if record.operation == sys::rocprofiler_hip_graph_operation_t::EXEC_LAUNCH.0 as i32 {
                GRAPH_STACK.with(|s| {
                    let mut s = s.borrow_mut();
                    if record.phase == sys::rocprofiler_callback_phase_t::ENTER {
                        s.push((a, 0));
                    } else {
                        s.pop();
                    }
                });
            }
        }
        K::HIP_RUNTIME_API => {
            // SAFETY: HIP_RUNTIME_API payloads are rocprofiler_callback_tracing_hip_api_data_t.
            let p = unsafe {
                &*(record.payload as *const sys::rocprofiler_callback_tracing_hip_api_data_t)
            };
            // SAFETY: the args/retval unions are plain data.
            unsafe {
                a = p.args.raw[0];
                if record.operation == sys::hip_runtime_api_id::hipGraphInstantiate
                    && record.phase == sys::rocprofiler_callback_phase_t::EXIT
                {
                    // The exec handle written through pGraphExec.
                    a = *(p.args.hipGraphInstantiate.pGraphExec) as u64;
                }
                b = p.retval.hipError_t_retval as u32 as u64;
            }
            if record.phase == sys::rocprofiler_callback_phase_t::EXIT
                && logs_args(record.operation)
            {
                if let Some(iterate) = TOOL.get().and_then(|t| t.iterate_args) {
                    // SAFETY: the record this callback received, still live.
                    unsafe { iterate(record, Some(arg_cb), 1, std::ptr::null_mut()) };
                }
            }
        }
        K::HIP_STREAM => {
            // SAFETY: HIP_STREAM payloads are rocprofiler_callback_tracing_hip_stream_data_t.
            let p = unsafe {
                &*(record.payload as *const sys::rocprofiler_callback_tracing_hip_stream_data_t)
            };
            a = p.stream_id.handle;
            b = p.stream_value.value();
        }
        K::CODE_OBJECT
            if record.operation
                == sys::rocprofiler_code_object_operation_t::DEVICE_KERNEL_SYMBOL_REGISTER.0
                    as i32 =>
        {
            {
                // SAFETY: the kernel-symbol payload type for this operation.
                let p = unsafe {
                    &*(record.payload
                        as *const sys::rocprofiler_callback_tracing_code_object_kernel_symbol_register_data_t)
                };
                // SAFETY: the SDK's NUL-terminated kernel name.
                let name = unsafe { sys::c_str_lossy(p.kernel_name) }.unwrap_or_default();
                a = p.kernel_id;
                if let Some(mut l) = log() {
                    l.kernel_names.insert(p.kernel_id, name);
                }
            }
        }
        K::CODE_OBJECT
            if record.operation
                == sys::rocprofiler_code_object_operation_t::HOST_KERNEL_SYMBOL_REGISTER.0
                    as i32 =>
        {
            // SAFETY: the host-symbol payload type for this operation.
            let p = unsafe {
                &*(record.payload
                    as *const sys::rocprofiler_callback_tracing_code_object_host_kernel_symbol_register_data_t)
            };
            a = p.kernel_id;
            b = p.host_function.value();
            if let Some(mut l) = log() {
                l.host_functions.insert(a, b);
            }
        }
        _ => {}
    }
    if let Some(mut l) = log() {
        l.callbacks.push([
            record.kind.0 as u64,
            record.operation as u32 as u64,
            record.phase.0 as u64,
            record.thread_id,
            record.correlation_id.internal,
            a,
            b,
        ]);
    }
}

unsafe extern "C" fn request(
    thread_id: sys::rocprofiler_thread_id_t,
    _ctx: sys::rocprofiler_context_id_t,
    kind: sys::rocprofiler_external_correlation_id_request_kind_t,
    operation: sys::rocprofiler_tracing_operation_t,
    corr: u64,
    external: *mut sys::rocprofiler_user_data_t,
    _data: *mut c_void,
) -> i32 {
    let Some(t) = TOOL.get() else { return 1 };
    let seq = t.seq.fetch_add(1, Ordering::Relaxed) + 1;
    let (exec, ordinal) = GRAPH_STACK.with(|s| match s.borrow_mut().last_mut() {
        Some((e, n)) => {
            *n += 1;
            (*e, *n - 1)
        }
        None => (0, 0),
    });
    if let Some(mut l) = log() {
        l.requests.push([
            seq,
            thread_id,
            corr,
            kind.0 as u64,
            operation as u32 as u64,
            exec,
            ordinal,
        ]);
    }
    // SAFETY: the SDK's external slot for this request.
    unsafe { *external = sys::rocprofiler_user_data_t::from_value(seq) };
    0
}

unsafe extern "C" fn buffer_cb(
    _ctx: sys::rocprofiler_context_id_t,
    _buffer: sys::rocprofiler_buffer_id_t,
    headers: *mut *mut sys::rocprofiler_record_header_t,
    n: usize,
    _data: *mut c_void,
    drop_count: u64,
) {
    let Some(t) = TOOL.get() else { return };
    if t.slow_us > 0 {
        std::thread::sleep(std::time::Duration::from_micros(t.slow_us));
    }
    let after_stop = t.stopped.load(Ordering::Acquire) as u64;
    let mut l = t.log.lock().unwrap_or_else(|p| p.into_inner());
    l.buffer_callbacks += 1;
    l.max_drop_count = l.max_drop_count.max(drop_count);
    // SAFETY: the SDK passes `n` valid header pointers.
    let headers = unsafe { std::slice::from_raw_parts(headers, n) };
    for &h in headers {
        // SAFETY: each header is valid for the callback.
        let h = unsafe { &*h };
        if h.category != sys::rocprofiler_buffer_category_t::TRACING.0 {
            continue;
        }
        let seq = t.seq.fetch_add(1, Ordering::Relaxed) + 1;
        use sys::rocprofiler_buffer_tracing_kind_t as K;
        match sys::rocprofiler_buffer_tracing_kind_t(h.kind) {
            K::KERNEL_DISPATCH => {
                // SAFETY: payload type for this kind.
                let r = unsafe {
                    &*(h.payload as *const sys::rocprofiler_buffer_tracing_kernel_dispatch_record_t)
                };
                l.dispatches.push([
                    r.dispatch_info.dispatch_id,
                    r.correlation_id.internal,
                    r.correlation_id.external.value(),
                    r.thread_id,
                    r.start_timestamp,
                    r.end_timestamp,
                    r.dispatch_info.queue_id.handle,
                    r.dispatch_info.agent_id.handle,
                    r.dispatch_info.kernel_id,
                    seq,
                    after_stop,
                ]);
            }
            K::MEMORY_COPY => {
                // SAFETY: payload type for this kind.
                let r = unsafe {
                    &*(h.payload as *const sys::rocprofiler_buffer_tracing_memory_copy_record_t)
                };
                l.copies.push([
                    r.correlation_id.internal,
                    r.correlation_id.external.value(),
                    r.thread_id,
                    r.start_timestamp,
                    r.end_timestamp,
                    r.bytes,
                    seq,
                ]);
            }
            K::CORRELATION_ID_RETIREMENT => {
                // SAFETY: payload type for this kind.
                let r = unsafe {
                    &*(h.payload as *const sys::rocprofiler_buffer_tracing_correlation_id_retirement_record_t)
                };
                l.retirements.push([r.internal_correlation_id, seq]);
            }
            K::HIP_GRAPH => {
                // SAFETY: payload type for this kind.
                let r = unsafe {
                    &*(h.payload as *const sys::rocprofiler_buffer_tracing_hip_graph_record_t)
                };
                l.graph_records.push([
                    r.correlation_id.internal,
                    r.thread_id,
                    r.graph_exec_id.handle,
                    r.kernel_dispatch_count,
                    r.queue_id.handle,
                ]);
            }
            K::HIP_RUNTIME_API => l.api_records += 1,
            _ => {}
        }
    }
}

/// The SDK's argument iterator, looked up in the process (the rocprofiler-sys
/// resolver does not carry it).
fn resolve_iterate_args() -> Option<sys::rocprofiler_iterate_callback_tracing_kind_operation_args_fn>
{
    // SAFETY: dlsym of a NUL-terminated name in the global scope.
    let f = unsafe {
        libc::dlsym(
            libc::RTLD_DEFAULT,
            c"rocprofiler_iterate_callback_tracing_kind_operation_args".as_ptr(),
        )
    };
    // SAFETY: a non-null address of that entry point, which has this type.
    (!f.is_null()).then(|| unsafe {
        std::mem::transmute::<
            *mut c_void,
            sys::rocprofiler_iterate_callback_tracing_kind_operation_args_fn,
        >(f)
    })
}

/// Picks the agent's config (made at its first dispatch); the user data
/// carries the dispatch id + 1000, to show it comes back.
unsafe extern "C" fn counting_dispatch(
    data: sys::rocprofiler_dispatch_counting_service_data_t,
    config: *mut sys::rocprofiler_counter_config_id_t,
    user_data: *mut sys::rocprofiler_user_data_t,
    _args: *mut c_void,
) {
    let Some(t) = TOOL.get() else { return };
    let agent = data.dispatch_info.agent_id;
    let mut configs = t.counter_configs.lock().unwrap_or_else(|p| p.into_inner());
    let id = *configs.entry(agent.handle).or_insert_with(|| {
        let mut ids: Vec<sys::rocprofiler_counter_id_t> = t
            .counter_ids
            .iter()
            .map(|&handle| sys::rocprofiler_counter_id_t { handle })
            .collect();
        let mut made = sys::rocprofiler_counter_config_id_t::default();
        // SAFETY: `ids` and `made` outlive the call.
        unsafe { (t.sdk.create_counter_config)(agent, ids.as_mut_ptr(), ids.len(), &mut made) };
        made.handle
    });
    // SAFETY: the SDK's out-pointers, valid for the call.
    unsafe {
        (*config).handle = id;
        *user_data =
            sys::rocprofiler_user_data_t::from_value(data.dispatch_info.dispatch_id + 1000);
    }
}

unsafe extern "C" fn counting_record(
    data: sys::rocprofiler_dispatch_counting_service_data_t,
    records: *mut sys::rocprofiler_counter_record_t,
    count: usize,
    user_data: sys::rocprofiler_user_data_t,
    _args: *mut c_void,
) {
    let Some(t) = TOOL.get() else { return };
    // SAFETY: the SDK passes `count` records.
    let records = unsafe { std::slice::from_raw_parts(records, count) };
    let mut rows = Vec::new();
    for r in records {
        let mut counter = sys::rocprofiler_counter_id_t::default();
        // SAFETY: a valid out-pointer.
        unsafe { (t.sdk.query_record_counter_id)(r.id, &mut counter) };
        rows.push([
            r.dispatch_id,
            counter.handle,
            r.counter_value.to_bits(),
            data.start_timestamp,
            data.end_timestamp,
            user_data.value(),
            data.correlation_id.internal,
            r.agent_id.handle,
            r.id,
        ]);
    }
    if let Some(mut l) = log() {
        l.counter_records.extend(rows);
    }
}

/// Kernel replay's pass count, by dispatch id: id % 5 == 0 returns 1 (not
/// replayed), id % 7 == 0 returns 0 without a continue callback (refused),
/// otherwise ROCSIM_TOOL_REPLAY_PASSES.
unsafe extern "C" fn replay_pass_count(
    info: sys::rocprofiler_kernel_dispatch_info_t,
    _user_data: sys::rocprofiler_user_data_t,
) -> u64 {
    let Some(t) = TOOL.get() else { return 1 };
    match info.dispatch_id {
        d if d.is_multiple_of(5) => 1,
        d if d.is_multiple_of(7) => 0,
        _ => t.replay_passes,
    }
}

/// Stops after pass 0 for dispatch ids divisible by 3.
unsafe extern "C" fn replay_continue(
    info: sys::rocprofiler_kernel_dispatch_info_t,
    current_pass: u64,
    _total: u64,
    _user_data: sys::rocprofiler_user_data_t,
) -> i32 {
    i32::from(!(info.dispatch_id.is_multiple_of(3) && current_pass == 0))
}

thread_local! {
    /// The last PASS ENTER's stop-context switch, tried again at PASS EXIT
    /// (where the SDK must refuse it).
    static STOP_SWITCH: std::cell::Cell<sys::rocprofiler_kernel_replay_context_cb_t> =
        const { std::cell::Cell::new(None) };
}

/// Logs every kernel-replay callback; at CONFIG ENTER sets the callbacks;
/// at PASS ENTER of pass 1 of an odd dispatch id switches the main context
/// off for the rest of the loop.
unsafe extern "C" fn replay_callback(
    record: sys::rocprofiler_callback_tracing_record_t,
    _user_data: *mut sys::rocprofiler_user_data_t,
    _args: *mut c_void,
) {
    let Some(t) = TOOL.get() else { return };
    let payload = record.payload as *mut sys::rocprofiler_callback_tracing_kernel_replay_data_t;
    // SAFETY: the SDK's payload for this callback, writable during it.
    let p = unsafe { &mut *payload };
    let op = sys::rocprofiler_kernel_replay_operation_t(record.operation as u32);
    let enter = record.phase == sys::rocprofiler_callback_phase_t::ENTER;
    if op == sys::rocprofiler_kernel_replay_operation_t::CONFIG && enter {
        p.replay_pass_count = Some(replay_pass_count);
        if !p.dispatch_info.dispatch_id.is_multiple_of(7) {
            p.replay_continue = Some(replay_continue);
        }
    }
    let mut probe = None;
    if op == sys::rocprofiler_kernel_replay_operation_t::PASS {
        if enter {
            STOP_SWITCH.with(|s| s.set(p.replay_stop_context));
            if p.current_pass == 1 && !p.dispatch_info.dispatch_id.is_multiple_of(2) {
                if let Some(stop) = p.replay_stop_context {
                    // SAFETY: the SDK's switch, called during PASS ENTER.
                    probe = Some(("replay stop in pass enter", unsafe { stop(t.ctx) }.0));
                }
            }
        } else if let Some(stop) = STOP_SWITCH.with(|s| s.get()) {
            // SAFETY: the SDK's switch, called where it must refuse.
            probe = Some(("replay stop in pass exit", unsafe { stop(t.ctx) }.0));
        }
    }
    if let Some(mut l) = log() {
        if let Some((name, status)) = probe {
            if !l.probes.iter().any(|(n, _)| n == name) {
                l.probes.push((name.into(), status));
            }
        }
        l.replay.push([
            u64::from(op.0),
            u64::from(record.phase.0),
            p.dispatch_info.dispatch_id,
            p.current_pass,
            p.total_passes,
            record.thread_id,
            record.correlation_id.internal,
        ]);
    }
}

unsafe extern "C" fn initialize(
    _fini: sys::rocprofiler_client_finalize_t,
    _data: *mut c_void,
) -> i32 {
    let sdk = match sys::Sdk::resolve() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("rocsim_test_tool: {e}");
            return 1;
        }
    };
    let mut probes = Vec::new();
    let mut ctx = sys::rocprofiler_context_id_t::default();
    // SAFETY: every call below passes valid pointers or deliberately bad
    // ones the SDK must reject (the probes).
    unsafe {
        probes.push(("create_context".into(), (sdk.create_context)(&mut ctx).0));
        let version = sdk.version();
        VERSION.store(version as u64, Ordering::Relaxed);
        use sys::rocprofiler_callback_tracing_kind_t as C;
        for kind in [C::HIP_RUNTIME_API, C::HIP_STREAM, C::CODE_OBJECT] {
            let s = (sdk.configure_callback_tracing_service)(
                ctx,
                kind,
                std::ptr::null(),
                0,
                Some(callback),
                std::ptr::null_mut(),
            );
            probes.push((format!("callback kind {}", kind.0), s.0));
        }
        // Always try HIP_GRAPH: 1.0 must refuse it with the SDK's status.
        let s = (sdk.configure_callback_tracing_service)(
            ctx,
            C::HIP_GRAPH,
            std::ptr::null(),
            0,
            Some(callback),
            std::ptr::null_mut(),
        );
        probes.push(("callback HIP_GRAPH".into(), s.0));
        let s = (sdk.configure_callback_tracing_service)(
            ctx,
            C::HIP_STREAM,
            std::ptr::null(),
            0,
            Some(callback),
            std::ptr::null_mut(),
        );
        probes.push(("callback HIP_STREAM again".into(), s.0));
        let s = (sdk.configure_callback_tracing_service)(
            ctx,
            sys::rocprofiler_callback_tracing_kind_t(999),
            std::ptr::null(),
            0,
            Some(callback),
            std::ptr::null_mut(),
        );
        probes.push(("callback kind 999".into(), s.0));
        let s = (sdk.configure_callback_tracing_service)(
            sys::rocprofiler_context_id_t { handle: 0xdead },
            C::HIP_RUNTIME_API,
            std::ptr::null(),
            0,
            Some(callback),
            std::ptr::null_mut(),
        );
        probes.push(("callback unknown context".into(), s.0));

        let size = env_u64("ROCSIM_TOOL_BUFFER_BYTES", 1 << 20) as usize;
        let watermark = env_u64("ROCSIM_TOOL_WATERMARK", (size / 2) as u64) as usize;
        let policy = match std::env::var("ROCSIM_TOOL_POLICY").as_deref() {
            Ok("discard") => sys::rocprofiler_buffer_policy_t::DISCARD,
            _ => sys::rocprofiler_buffer_policy_t::LOSSLESS,
        };
        let s = (sdk.create_buffer)(
            ctx,
            size,
            watermark,
            policy,
            Some(buffer_cb),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        );
        probes.push(("create_buffer null id".into(), s.0));
        let mut buffer = sys::rocprofiler_buffer_id_t::default();
        let s = (sdk.create_buffer)(
            ctx,
            size,
            watermark,
            policy,
            Some(buffer_cb),
            std::ptr::null_mut(),
            &mut buffer,
        );
        probes.push(("create_buffer".into(), s.0));
        use sys::rocprofiler_buffer_tracing_kind_t as B;
        for kind in [
            B::KERNEL_DISPATCH,
            B::MEMORY_COPY,
            B::HIP_RUNTIME_API,
            B::CORRELATION_ID_RETIREMENT,
            B::HIP_GRAPH,
        ] {
            let s = (sdk.configure_buffer_tracing_service)(ctx, kind, std::ptr::null(), 0, buffer);
            probes.push((format!("buffer kind {}", kind.0), s.0));
        }
        let kinds = [
            sys::rocprofiler_external_correlation_id_request_kind_t::KERNEL_DISPATCH,
            sys::rocprofiler_external_correlation_id_request_kind_t::MEMORY_COPY,
        ];
        let s = (sdk.configure_external_correlation_id_request_service)(
            ctx,
            kinds.as_ptr(),
            0,
            Some(request),
            std::ptr::null_mut(),
        );
        probes.push(("external request count 0".into(), s.0));
        let s = (sdk.configure_external_correlation_id_request_service)(
            ctx,
            kinds.as_ptr(),
            kinds.len(),
            Some(request),
            std::ptr::null_mut(),
        );
        probes.push(("external request".into(), s.0));
        let counter_ids: Vec<u64> = std::env::var("ROCSIM_TOOL_COUNTER_IDS")
            .unwrap_or_default()
            .split(',')
            .filter_map(|v| v.trim().parse().ok())
            .collect();
        if !counter_ids.is_empty() {
            let s = (sdk.configure_callback_dispatch_counting_service)(
                ctx,
                Some(counting_dispatch),
                std::ptr::null_mut(),
                Some(counting_record),
                std::ptr::null_mut(),
            );
            probes.push(("dispatch counting".into(), s.0));
            let s = (sdk.configure_callback_dispatch_counting_service)(
                sys::rocprofiler_context_id_t { handle: 0xdead },
                Some(counting_dispatch),
                std::ptr::null_mut(),
                Some(counting_record),
                std::ptr::null_mut(),
            );
            probes.push(("dispatch counting unknown context".into(), s.0));
        }
        let replay_passes = env_u64("ROCSIM_TOOL_REPLAY_PASSES", 0);
        if replay_passes > 0 {
            let mut replay_ctx = sys::rocprofiler_context_id_t::default();
            (sdk.create_context)(&mut replay_ctx);
            let mut other = sys::rocprofiler_context_id_t::default();
            (sdk.create_context)(&mut other);
            for (name, context) in [
                ("kernel replay", replay_ctx),
                ("kernel replay again", replay_ctx),
                ("kernel replay second context", other),
            ] {
                let s = (sdk.configure_callback_tracing_service)(
                    context,
                    sys::rocprofiler_callback_tracing_kind_t::KERNEL_REPLAY,
                    std::ptr::null(),
                    0,
                    Some(replay_callback),
                    std::ptr::null_mut(),
                );
                probes.push((name.into(), s.0));
            }
            (sdk.start_context)(replay_ctx);
        }
        let s = (sdk.start_context)(ctx);
        probes.push(("start_context".into(), s.0));
        let _ = TOOL.set(Tool {
            sdk,
            ctx,
            buffer,
            log: Mutex::new(Log {
                probes,
                ..Default::default()
            }),
            seq: AtomicU64::new(0),
            stopped: AtomicBool::new(false),
            slow_us: env_u64("ROCSIM_TOOL_SLOW_CALLBACK_US", 0),
            version,
            iterate_args: resolve_iterate_args(),
            counter_ids,
            counter_configs: Mutex::new(HashMap::new()),
            replay_passes,
        });
    }
    0
}

unsafe extern "C" fn finalize(_data: *mut c_void) {
    if let Some(t) = TOOL.get() {
        // SAFETY: SDK entry points with valid ids.
        unsafe {
            (t.sdk.flush_buffer)(t.buffer);
            (t.sdk.stop_context)(t.ctx);
        }
        if let Some(mut l) = log() {
            l.finalized = true;
        }
    }
}

struct SyncResult(sys::rocprofiler_tool_configure_result_t);
// SAFETY: the configure result is immutable after construction; tool_data is null.
unsafe impl Sync for SyncResult {}

static RESULT: SyncResult = SyncResult(sys::rocprofiler_tool_configure_result_t {
    size: std::mem::size_of::<sys::rocprofiler_tool_configure_result_t>(),
    initialize: Some(initialize),
    finalize: Some(finalize),
    tool_data: std::ptr::null_mut(),
});

#[no_mangle]
pub extern "C" fn rocprofiler_configure(
    _version: u32,
    _runtime_version: *const c_char,
    _priority: u32,
    _client: *mut sys::rocprofiler_client_id_t,
) -> *mut sys::rocprofiler_tool_configure_result_t {
    &RESULT.0 as *const _ as *mut _
}

/// Stops the context (records keep arriving: they are marked after_stop).
#[no_mangle]
pub extern "C" fn rocsim_test_tool_stop() -> u32 {
    let Some(t) = TOOL.get() else { return u32::MAX };
    t.stopped.store(true, Ordering::Release);
    // SAFETY: SDK entry point with our context.
    unsafe { (t.sdk.stop_context)(t.ctx) }.0
}

/// Forgets everything logged so far (not the kernel symbols).
#[no_mangle]
pub extern "C" fn rocsim_test_tool_clear() {
    if let Some(mut l) = log() {
        let names = std::mem::take(&mut l.kernel_names);
        let hosts = std::mem::take(&mut l.host_functions);
        let probes = std::mem::take(&mut l.probes);
        *l = Log {
            kernel_names: names,
            host_functions: hosts,
            probes,
            ..Default::default()
        };
    }
}

#[no_mangle]
pub extern "C" fn rocsim_test_tool_results_json() -> *mut c_char {
    let v: Value = match log() {
        None => json!({ "initialized": false }),
        Some(l) => json!({
            "initialized": true,
            "version": VERSION.load(Ordering::Relaxed),
            "sdk_version_seen": TOOL.get().map(|t| t.version),
            "probes": l.probes,
            "dispatches": l.dispatches,
            "copies": l.copies,
            "retirements": l.retirements,
            "graph_records": l.graph_records,
            "args": l.args,
            "api_records": l.api_records,
            "requests": l.requests,
            "callbacks": l.callbacks,
            "kernel_names": l.kernel_names.iter().map(|(k, v)| (k.to_string(), v.clone())).collect::<HashMap<_, _>>(),
            "host_functions": l.host_functions.iter().map(|(k, v)| (k.to_string(), *v)).collect::<HashMap<_, _>>(),
            "max_drop_count": l.max_drop_count,
            "buffer_callbacks": l.buffer_callbacks,
            "finalized": l.finalized,
            "counter_records": l.counter_records,
            "replay": l.replay,
        }),
    };
    CString::new(v.to_string()).unwrap_or_default().into_raw()
}

#[no_mangle]
pub unsafe extern "C" fn rocsim_test_tool_free(s: *mut c_char) {
    if !s.is_null() {
        // SAFETY: a string from rocsim_test_tool_results_json.
        drop(unsafe { CString::from_raw(s) });
    }
}
