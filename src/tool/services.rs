//! Which SDK services the tool asks for, configured once inside `initialize`.
//!
//! Buffered: kernel dispatches, memory copies, HIP API calls, correlation-id
//! retirement and (SDK 1.3+, attribution on) one record per graph launch.
//! Callbacks: HIP API (graph lifecycle on every SDK, CPU linkage and
//! completeness at ENTER), HIP_STREAM (the stream a dispatch has),
//! CODE_OBJECT (kernel names), HIP_GRAPH (1.3+). The external-correlation
//! request service is configured only when graph attribution is on.
use super::callbacks;
use super::external_correlation;
use rocprofiler_sys::*;

/// What `configure_all` set up.
pub struct Services {
    pub context: rocprofiler_context_id_t,
    pub buffer: rocprofiler_buffer_id_t,
}

/// Buffer sizing; `KINETO_ROCM_BUFFER_BYTES` overrides the size.
pub const DEFAULT_BUFFER_BYTES: usize = 16 << 20;

fn check(call: &'static str, status: rocprofiler_status_t) -> Result<(), String> {
    if status.is_success() {
        Ok(())
    } else {
        Err(format!("{call} returned rocprofiler status {}", status.0))
    }
}

pub fn configure_all(sdk: &Sdk, graph_domain: bool, attribution: bool) -> Result<Services, String> {
    let mut context = rocprofiler_context_id_t::default();
    // SAFETY: create_context writes one context id through a valid pointer.
    check("rocprofiler_create_context", unsafe {
        (sdk.create_context)(&mut context)
    })?;

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

    let mut buffered = vec![
        rocprofiler_buffer_tracing_kind_t::KERNEL_DISPATCH,
        rocprofiler_buffer_tracing_kind_t::MEMORY_COPY,
        rocprofiler_buffer_tracing_kind_t::HIP_RUNTIME_API,
        rocprofiler_buffer_tracing_kind_t::CORRELATION_ID_RETIREMENT,
    ];
    if graph_domain && attribution {
        buffered.push(rocprofiler_buffer_tracing_kind_t::HIP_GRAPH);
    }
    for kind in buffered {
        // SAFETY: valid context and buffer; no operation filter.
        check("rocprofiler_configure_buffer_tracing_service", unsafe {
            (sdk.configure_buffer_tracing_service)(context, kind, std::ptr::null(), 0, buffer)
        })?;
    }

    let mut callback_kinds = vec![
        rocprofiler_callback_tracing_kind_t::HIP_RUNTIME_API,
        rocprofiler_callback_tracing_kind_t::HIP_STREAM,
        rocprofiler_callback_tracing_kind_t::CODE_OBJECT,
    ];
    if graph_domain && attribution {
        callback_kinds.push(rocprofiler_callback_tracing_kind_t::HIP_GRAPH);
    }
    for kind in callback_kinds {
        // SAFETY: valid context; the callback is a static function taking no data.
        check("rocprofiler_configure_callback_tracing_service", unsafe {
            (sdk.configure_callback_tracing_service)(
                context,
                kind,
                std::ptr::null(),
                0,
                Some(callbacks::on_callback),
                std::ptr::null_mut(),
            )
        })?;
    }

    if attribution {
        let kinds = [
            rocprofiler_external_correlation_id_request_kind_t::KERNEL_DISPATCH,
            rocprofiler_external_correlation_id_request_kind_t::MEMORY_COPY,
        ];
        // SAFETY: valid context; `kinds` outlives the call; static callback.
        check(
            "rocprofiler_configure_external_correlation_id_request_service",
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
    Ok(Services { context, buffer })
}
