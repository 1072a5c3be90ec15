//! Synchronous SDK callbacks and the buffer callback. Each catches panics: no
//! unwind reaches the SDK.
use super::decode;
use super::graph_calls;
use super::hip_calls;
use super::lifecycle;
use super::tool::{self, Tool};
use crate::tool::finish::timeline::{timeline_call, MarkerPhase};
use crate::tool::session::collector::Batch;
use activity_store::{GraphLaunch, HipApiCall, KernelDispatch, MemoryCopy};
use graph_attribution::LaunchCall;
use rocprofiler_sys::*;
use std::cell::{Cell, RefCell};
use std::ffi::{c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

pub unsafe extern "C" fn on_callback(
    record: rocprofiler_callback_tracing_record_t,
    _user_data: *mut rocprofiler_user_data_t,
    _data: *mut c_void,
) {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let Some(tool) = tool::get() else { return };
        match record.kind {
            rocprofiler_callback_tracing_kind_t::HIP_RUNTIME_API => on_hip_api(tool, &record),
            rocprofiler_callback_tracing_kind_t::HIP_GRAPH => on_hip_graph(tool, &record),
            rocprofiler_callback_tracing_kind_t::HIP_STREAM => on_hip_stream(tool, &record),
            rocprofiler_callback_tracing_kind_t::CODE_OBJECT => on_code_object(tool, &record),
            rocprofiler_callback_tracing_kind_t::MARKER_CORE_RANGE_API => on_marker(tool, &record),
            _ => {}
        }
    }));
    if outcome.is_err() {
        log::error!(
            "kineto-rocm: panic in a tracing callback (kind {}); record ignored",
            record.kind.0
        );
    }
}

/// A ROCTX range pushed or popped (the ranges context's callback): told to
/// the lifecycle observer at ENTER, before the call runs.
pub unsafe extern "C" fn on_roctx_window_range(
    record: rocprofiler_callback_tracing_record_t,
    _user_data: *mut rocprofiler_user_data_t,
    _data: *mut c_void,
) {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let Some(observer) = lifecycle::lifecycle() else {
            return;
        };
        if record.phase != rocprofiler_callback_phase_t::ENTER {
            return;
        }
        let op = rocprofiler_marker_core_api_id_t(record.operation);
        if op == rocprofiler_marker_core_api_id_t::roctxRangePop {
            observer.range(record.thread_id, None);
        } else if op == rocprofiler_marker_core_api_id_t::roctxRangePushA {
            // SAFETY: MARKER_CORE_API payloads are marker API data.
            let Some(data) =
                (unsafe { payload::<rocprofiler_callback_tracing_marker_api_data_t>(&record) })
            else {
                return;
            };
            // SAFETY: roctxRangePushA's arguments are its message.
            let message = unsafe { data.args.message };
            if message.is_null() {
                return;
            }
            // SAFETY: a NUL-terminated message, valid during the call.
            let text = unsafe { CStr::from_ptr(message) }.to_string_lossy();
            observer.range(record.thread_id, Some(&text));
        }
    }));
    if outcome.is_err() {
        log::error!("kineto-rocm: panic in the ROCTX range callback; range ignored");
    }
}

/// Reads a payload the SDK passed, if present.
///
/// # Safety
/// `record.payload` is null or points to a `T` valid for the callback.
unsafe fn payload<T: Copy>(record: &rocprofiler_callback_tracing_record_t) -> Option<T> {
    let ptr = record.payload as *const T;
    // SAFETY: per this function's contract.
    (!ptr.is_null()).then(|| unsafe { std::ptr::read_unaligned(ptr) })
}

/// A HIP runtime call's ENTER or EXIT (these callbacks run for the whole
/// session when attribution is on, only inside windows otherwise).
fn on_hip_api(tool: &Tool, record: &rocprofiler_callback_tracing_record_t) {
    let correlation_id = record.correlation_id.internal;
    // Joined once per call: at ENTER when SET wraps the call, at EXIT when
    // it fired inside it.
    let stream = CURRENT_STREAM.take();
    if let Some(stream) = stream {
        tool.collector.on_stream_of(correlation_id, stream);
    }
    let now_ns = tool.now();
    let collecting = tool.collector.collecting();
    if collecting && record.phase == rocprofiler_callback_phase_t::ENTER {
        tool.collector.on_call_issued(correlation_id, now_ns);
    }
    if record.phase == rocprofiler_callback_phase_t::ENTER {
        if let Some(call) = timeline_call(record.operation) {
            // SAFETY: HIP_RUNTIME_API callbacks carry a hip_api_data payload.
            let data = unsafe { payload::<rocprofiler_callback_tracing_hip_api_data_t>(record) };
            if let Some(data) = data {
                // SAFETY: the payload of a call of `call`'s operation.
                if let Some(args) = unsafe { hip_calls::timeline_args(call, &data.args) } {
                    tool.collector.timeline().call_entered(
                        record.thread_id,
                        correlation_id,
                        stream,
                        args,
                        collecting,
                    );
                }
            }
        }
    }
    let Some(attribution) = tool.collector.attribution() else {
        return;
    };
    // SAFETY: HIP_RUNTIME_API callbacks carry a hip_api_data payload.
    let Some(data) = (unsafe { payload::<rocprofiler_callback_tracing_hip_api_data_t>(record) })
    else {
        return;
    };
    let call = LaunchCall {
        correlation_id,
        thread_id: record.thread_id,
    };
    graph_calls::on_hip_api(
        attribution,
        record.operation,
        record.phase,
        call,
        &data,
        now_ns,
        collecting,
    );
}

/// A roctx range's ENTER (push or start, with its message) or EXIT (pop or
/// stop), or a mark, from the SDK's marker range domain.
fn on_marker(tool: &Tool, record: &rocprofiler_callback_tracing_record_t) {
    let phase = if record.phase == rocprofiler_callback_phase_t::ENTER {
        // SAFETY: marker callbacks carry a marker_api_data payload.
        let data = unsafe { payload::<rocprofiler_callback_tracing_marker_api_data_t>(record) };
        MarkerPhase::Enter {
            // SAFETY: at ENTER of a mark or range the first argument is the
            // message, a NUL-terminated string valid during the callback.
            message: data.and_then(|data| unsafe { c_str_lossy(data.args.message) }),
        }
    } else {
        MarkerPhase::Exit
    };
    tool.collector.timeline().marker(
        record.correlation_id.internal,
        record.operation,
        phase,
        record.thread_id,
        tool.now(),
        tool.collector.collecting(),
    );
}

fn on_hip_graph(tool: &Tool, record: &rocprofiler_callback_tracing_record_t) {
    let Some(attribution) = tool.collector.attribution() else {
        return;
    };
    // SAFETY: HIP_GRAPH callbacks carry a hip_graph_data payload.
    let Some(data) = (unsafe { payload::<rocprofiler_callback_tracing_hip_graph_data_t>(record) })
    else {
        return;
    };
    graph_calls::on_graph_domain(
        attribution,
        rocprofiler_hip_graph_operation_t(record.operation as u32),
        record.phase,
        LaunchCall {
            correlation_id: record.correlation_id.internal,
            thread_id: record.thread_id,
        },
        data.graph_exec_id.handle,
        data.graph_exec_value.value(),
    );
}

thread_local! {
    /// The stream of the HIP call this thread is in, from HIP_STREAM SET:
    /// SET wraps each call that has a stream, and its own record may carry no
    /// correlation id, so the call's correlation id is joined to the stream
    /// from the HIP API callbacks on the same thread.
    static CURRENT_STREAM: Cell<Option<u64>> = const { Cell::new(None) };
}

fn on_hip_stream(tool: &Tool, record: &rocprofiler_callback_tracing_record_t) {
    if record.operation as u32 != rocprofiler_hip_stream_operation_t::SET.0 {
        return;
    }
    if record.phase == rocprofiler_callback_phase_t::EXIT {
        CURRENT_STREAM.set(None);
        return;
    }
    // SAFETY: HIP_STREAM callbacks carry a hip_stream_data payload.
    if let Some(data) = unsafe { payload::<rocprofiler_callback_tracing_hip_stream_data_t>(record) }
    {
        match record.correlation_id.internal {
            0 => CURRENT_STREAM.set(Some(data.stream_id.handle)),
            correlation_id => tool
                .collector
                .on_stream_of(correlation_id, data.stream_id.handle),
        }
    }
}

fn on_code_object(tool: &Tool, record: &rocprofiler_callback_tracing_record_t) {
    if record.phase != rocprofiler_callback_phase_t::ENTER {
        return;
    }
    if record.operation as u32 == rocprofiler_code_object_operation_t::HOST_KERNEL_SYMBOL_REGISTER.0
    {
        // SAFETY: HOST_KERNEL_SYMBOL_REGISTER carries the host symbol payload.
        if let Some(symbol) = unsafe {
            payload::<rocprofiler_callback_tracing_code_object_host_kernel_symbol_register_data_t>(
                record,
            )
        } {
            if let Some(attribution) = tool.collector.attribution() {
                attribution.on_host_kernel(symbol.host_function.value(), symbol.kernel_id);
            }
        }
        return;
    }
    if record.operation as u32
        != rocprofiler_code_object_operation_t::DEVICE_KERNEL_SYMBOL_REGISTER.0
    {
        return;
    }
    // SAFETY: DEVICE_KERNEL_SYMBOL_REGISTER carries the kernel symbol payload.
    let Some(symbol) = (unsafe {
        payload::<rocprofiler_callback_tracing_code_object_kernel_symbol_register_data_t>(record)
    }) else {
        return;
    };
    // SAFETY: the SDK's kernel_name is a NUL-terminated string valid during the callback.
    if let Some(name) = unsafe { c_str_lossy(symbol.kernel_name) } {
        tool.collector.on_kernel_symbol(symbol.kernel_id, name);
    }
}

thread_local! {
    /// The buffer thread's scratch space for one buffer's records.
    static BATCH: RefCell<Batch> = RefCell::new(Batch::default());
}

pub unsafe extern "C" fn on_buffer(
    _context: rocprofiler_context_id_t,
    _buffer: rocprofiler_buffer_id_t,
    headers: *mut *mut rocprofiler_record_header_t,
    num_headers: usize,
    _data: *mut c_void,
    drop_count: u64,
) {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let Some(tool) = tool::get() else { return };
        let began_ns = tool.now();
        if drop_count > 0 {
            tool.collector.on_sdk_dropped(drop_count);
            tool.collector.timeline().sdk_dropped(began_ns, drop_count);
        }
        if headers.is_null() {
            return;
        }
        BATCH.with_borrow_mut(|batch| {
            for i in 0..num_headers {
                // SAFETY: the SDK passes `num_headers` valid header pointers.
                let header = unsafe { *headers.add(i) };
                if header.is_null() {
                    continue;
                }
                // SAFETY: a non-null header the SDK owns for this callback.
                let header = unsafe { *header };
                if header.payload.is_null() {
                    continue;
                }
                // SAFETY: every tracing record begins with its u64 size; the SDK
                // keeps `size` bytes readable at `payload` during the callback.
                // The slice never exceeds the largest record the decoder reads,
                // so a size that lies cannot make it reach further than that.
                let bytes = unsafe {
                    let size = std::ptr::read_unaligned(header.payload as *const u64) as usize;
                    std::slice::from_raw_parts(
                        header.payload as *const u8,
                        size.clamp(8, decode::LARGEST_RECORD),
                    )
                };
                match decode::decode_into(header.category, header.kind, bytes, batch) {
                    Ok(()) => {
                        if batch.kernels_full() {
                            tool.collector.on_kernels(batch);
                        }
                    }
                    Err(defect) => {
                        tool.malformed.note(defect);
                        tool.collector.count_malformed();
                    }
                }
            }
            tool.collector.on_records(batch);
        });
        tool.collector
            .timeline()
            .buffer_processed(began_ns, tool.now(), num_headers as u64);
    }));
    if outcome.is_err() {
        log::error!(
            "kineto-rocm: panic while reading an SDK buffer; the rest of that batch was skipped"
        );
    }
}

impl decode::Records for Batch {
    #[inline(always)]
    fn kernel(&mut self, record: KernelDispatch) {
        self.kernels.push(record);
    }
    #[inline(always)]
    fn copy(&mut self, record: MemoryCopy) {
        self.copies.push(record);
    }
    #[inline(always)]
    fn api_call(&mut self, record: HipApiCall) {
        self.api_calls.push(record);
    }
    #[inline(always)]
    fn graph_launch(&mut self, record: GraphLaunch) {
        self.graph_launches.push(record);
    }
    #[inline(always)]
    fn retired(&mut self, correlation_id: u64) {
        self.retired.push(correlation_id);
    }
}
