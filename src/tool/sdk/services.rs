//! Which SDK services the tool asks for, configured once inside `initialize`.
//!
//! Two contexts. The collection context, started and stopped with each trace
//! window, buffers kernel dispatches, memory copies, HIP API calls and
//! correlation-id retirement (and, for the launch-stack attribution method, asks for
//! external correlation ids); with a counter group asked for, it also counts
//! each dispatch's hardware counters (`counting`), and in kernel mode runs each
//! selected dispatch once per pass (`kernel_replay`). The callback context takes HIP API (CPU
//! linkage and completeness at ENTER, graph building and exec lifecycle),
//! HIP_STREAM (the stream a call has), CODE_OBJECT (kernel names and host
//! stubs) and HIP_GRAPH (1.3+). With graph attribution on, the callback
//! context stays active for the whole session: graphs are usually built, and
//! calls may be in flight, before a window opens. With it off, the callbacks
//! run only inside windows, in the collection context. When the recorder
//! follows ROCTX ranges, a third context takes their push and pop.
use super::callbacks;
use super::counting;
use super::external_correlation;
use super::kernel_filter;
use super::kernel_replay;
use super::thread_trace;
use super::tool::{check, Services};
use crate::error::ToolError;
use crate::tool::finish::attribution::Method;
use rocprofiler_sys::*;

/// Buffer sizing; `KINETO_ROCM_BUFFER_BYTES` overrides the size.
pub const DEFAULT_BUFFER_BYTES: usize = 16 << 20;

fn create_context(sdk: &Sdk) -> Result<rocprofiler_context_id_t, ToolError> {
    let mut context = rocprofiler_context_id_t::default();
    // SAFETY: create_context writes one context id through a valid pointer.
    check("rocprofiler_create_context", unsafe {
        (sdk.create_context)(&mut context)
    })?;
    Ok(context)
}

/// What to configure: the SDK's graph domain, how graph keys are found
/// (`None`: attribution off), and whether ROCTX ranges are followed.
pub fn configure_all(
    sdk: &Sdk,
    graph_domain: bool,
    attribution: Option<Method>,
    ranges: bool,
) -> Result<Services, ToolError> {
    let context = create_context(sdk)?;
    let session = attribution.map(|_| create_context(sdk)).transpose()?;

    let size = std::env::var("KINETO_ROCM_BUFFER_BYTES")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|v| *v >= 4096)
        .unwrap_or(DEFAULT_BUFFER_BYTES);
    let mut buffer = rocprofiler_buffer_id_t::default();
    // SAFETY: valid context; the callback is a static function; buffer id is written through a valid pointer.
    check("rocprofiler_create_buffer", unsafe {
        (sdk.create_buffer)(
            context,
            size,
            size - size / 8,
            rocprofiler_buffer_policy_t::LOSSLESS,
            Some(callbacks::on_buffer),
            std::ptr::null_mut(),
            &mut buffer,
        )
    })?;

    let buffered = [
        rocprofiler_buffer_tracing_kind_t::KERNEL_DISPATCH,
        rocprofiler_buffer_tracing_kind_t::MEMORY_COPY,
        rocprofiler_buffer_tracing_kind_t::HIP_RUNTIME_API,
        rocprofiler_buffer_tracing_kind_t::CORRELATION_ID_RETIREMENT,
    ];
    for kind in buffered {
        // SAFETY: valid context and buffer; no operation filter.
        check("rocprofiler_configure_buffer_tracing_service", unsafe {
            (sdk.configure_buffer_tracing_service)(context, kind, std::ptr::null(), 0, buffer)
        })?;
    }

    kernel_filter::configure()?;
    counting::configure(sdk, context)?;
    // Replay runs inside windows only, like the counting it serves.
    kernel_replay::configure(sdk, context)?;
    let thread_trace = if kernel_replay::has_thread_trace_pass() {
        thread_trace::configure(sdk)?
    } else if !kernel_replay::asked() && thread_trace::wanted_without_replay() {
        let context = thread_trace::configure(sdk)?;
        thread_trace::request_unless_released();
        context
    } else {
        None
    };

    let mut callback_kinds = vec![
        rocprofiler_callback_tracing_kind_t::HIP_RUNTIME_API,
        rocprofiler_callback_tracing_kind_t::HIP_STREAM,
        rocprofiler_callback_tracing_kind_t::CODE_OBJECT,
    ];
    if graph_domain && attribution.is_some() {
        callback_kinds.push(rocprofiler_callback_tracing_kind_t::HIP_GRAPH);
    }
    for kind in callback_kinds {
        // SAFETY: valid context; the callback is a static function taking no data.
        check("rocprofiler_configure_callback_tracing_service", unsafe {
            (sdk.configure_callback_tracing_service)(
                session.unwrap_or(context),
                kind,
                std::ptr::null(),
                0,
                Some(callbacks::on_callback),
                std::ptr::null_mut(),
            )
        })?;
    }

    // roctx marks and ranges: the marker range domain reports a push..pop
    // or start..stop as one ENTER/EXIT pair (SDK 1.0 and later). An SDK
    // without it leaves markers out; nothing else depends on them.
    // SAFETY: valid context; the callback is a static function taking no data.
    let status = unsafe {
        (sdk.configure_callback_tracing_service)(
            session.unwrap_or(context),
            rocprofiler_callback_tracing_kind_t::MARKER_CORE_RANGE_API,
            std::ptr::null(),
            0,
            Some(callbacks::on_callback),
            std::ptr::null_mut(),
        )
    };
    if !status.is_success() {
        log::info!(
            "kineto-rocm: the SDK has no marker range domain (status {}); roctx ranges are left out",
            status.0
        );
    }

    if attribution == Some(Method::LaunchStack) {
        let kinds = [
            rocprofiler_external_correlation_id_request_kind_t::KERNEL_DISPATCH,
            rocprofiler_external_correlation_id_request_kind_t::MEMORY_COPY,
        ];
        check(
            "rocprofiler_configure_external_correlation_id_request_service",
            // SAFETY: valid context; `kinds` outlives the call; static callback.
            unsafe {
                (sdk.configure_external_correlation_id_request_service)(
                    context,
                    kinds.as_ptr(),
                    kinds.len(),
                    Some(external_correlation::on_request),
                    std::ptr::null_mut(),
                )
            },
        )?;
    }
    let markers = ranges.then(|| configure_ranges(sdk)).transpose()?;
    Ok(Services {
        context,
        thread_trace,
        session,
        markers,
        buffer,
    })
}

/// A context of its own for the program's ROCTX ranges (push and pop), on
/// for the whole session: a range opens a window while none is open.
fn configure_ranges(sdk: &Sdk) -> Result<rocprofiler_context_id_t, ToolError> {
    let context = create_context(sdk)?;
    let operations = [
        rocprofiler_marker_core_api_id_t::roctxRangePushA.0,
        rocprofiler_marker_core_api_id_t::roctxRangePop.0,
    ];
    // SAFETY: valid context; `operations` outlives the call; static callback.
    check("rocprofiler_configure_callback_tracing_service", unsafe {
        (sdk.configure_callback_tracing_service)(
            context,
            rocprofiler_callback_tracing_kind_t::MARKER_CORE_API,
            operations.as_ptr(),
            operations.len(),
            Some(callbacks::on_roctx_window_range),
            std::ptr::null_mut(),
        )
    })?;
    Ok(context)
}
