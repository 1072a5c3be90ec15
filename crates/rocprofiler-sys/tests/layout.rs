//! Layout of our declarations: fixed facts always, and a field-by-field
//! comparison with bindgen's view of the real headers when
//! ROCPROFILER_SDK_INCLUDE_DIR was set at build time.
use rocprofiler_sys::*;
use std::mem::{align_of, size_of};

#[test]
fn sizes_the_sdk_fixes() {
    // fwd.h: static_assert(sizeof(rocprofiler_kernel_dispatch_info_t) == 128).
    assert_eq!(size_of::<rocprofiler_kernel_dispatch_info_t>(), 128);
    assert_eq!(size_of::<rocprofiler_hip_api_args_t>(), 88);
    assert_eq!(size_of::<rocprofiler_hip_api_retval_t>(), 24);
    assert_eq!(
        size_of::<rocprofiler_callback_tracing_hip_api_data_t>(),
        8 + 88 + 24
    );
    assert_eq!(size_of::<rocprofiler_correlation_id_t>(), 24);
    assert_eq!(size_of::<rocprofiler_async_correlation_id_t>(), 16);
    assert_eq!(size_of::<rocprofiler_callback_tracing_record_t>(), 64);
    assert_eq!(size_of::<rocprofiler_record_header_t>(), 16);
    assert_eq!(
        size_of::<rocprofiler_buffer_tracing_kernel_dispatch_record_t>(),
        8 + 8 + 16 + 24 + 128
    );
    assert_eq!(align_of::<rocprofiler_user_data_t>(), 8);
}

#[cfg(has_sdk_headers)]
#[allow(
    non_upper_case_globals,
    non_camel_case_types,
    non_snake_case,
    dead_code,
    clippy::all
)]
mod sdk {
    include!(concat!(env!("OUT_DIR"), "/sdk_bindings.rs"));
}

#[cfg(has_sdk_headers)]
macro_rules! same_layout {
    ($ours:ty, $theirs:ty $(, $field:ident)*) => {{
        assert_eq!(size_of::<$ours>(), size_of::<$theirs>(), "size of {}", stringify!($ours));
        assert_eq!(align_of::<$ours>(), align_of::<$theirs>(), "alignment of {}", stringify!($ours));
        $(assert_eq!(
            std::mem::offset_of!($ours, $field),
            std::mem::offset_of!($theirs, $field),
            "offset of {}::{}", stringify!($ours), stringify!($field)
        );)*
    }};
}

#[test]
#[cfg_attr(
    not(has_sdk_headers),
    ignore = "skipped: set ROCPROFILER_SDK_INCLUDE_DIR to the rocprofiler-sdk (and HIP/HSA) include dirs to compare layouts"
)]
fn layout_matches_the_sdk_headers() {
    #[cfg(has_sdk_headers)]
    {
        same_layout!(
            rocprofiler_context_id_t,
            sdk::rocprofiler_context_id_t,
            handle
        );
        same_layout!(
            rocprofiler_correlation_id_t,
            sdk::rocprofiler_correlation_id_t,
            internal,
            external,
            ancestor
        );
        same_layout!(
            rocprofiler_async_correlation_id_t,
            sdk::rocprofiler_async_correlation_id_t,
            internal,
            external
        );
        same_layout!(
            rocprofiler_callback_tracing_record_t,
            sdk::rocprofiler_callback_tracing_record_t,
            context_id,
            thread_id,
            correlation_id,
            kind,
            operation,
            phase,
            payload
        );
        same_layout!(
            rocprofiler_record_header_t,
            sdk::rocprofiler_record_header_t,
            payload
        );
        same_layout!(
            rocprofiler_kernel_dispatch_info_t,
            sdk::rocprofiler_kernel_dispatch_info_t,
            size,
            agent_id,
            queue_id,
            kernel_id,
            dispatch_id,
            private_segment_size,
            group_segment_size,
            workgroup_size,
            grid_size,
            reserved_padding
        );
        same_layout!(
            rocprofiler_buffer_tracing_hip_api_record_t,
            sdk::rocprofiler_buffer_tracing_hip_api_record_t,
            size,
            kind,
            operation,
            correlation_id,
            start_timestamp,
            end_timestamp,
            thread_id
        );
        assert!(
            size_of::<rocprofiler_buffer_tracing_kernel_dispatch_record_t>()
                <= size_of::<sdk::rocprofiler_buffer_tracing_kernel_dispatch_record_t>()
        );
        {
            type O = rocprofiler_buffer_tracing_kernel_dispatch_record_t;
            type T = sdk::rocprofiler_buffer_tracing_kernel_dispatch_record_t;
            for (ours, theirs) in [
                (
                    std::mem::offset_of!(O, correlation_id),
                    std::mem::offset_of!(T, correlation_id),
                ),
                (
                    std::mem::offset_of!(O, thread_id),
                    std::mem::offset_of!(T, thread_id),
                ),
                (
                    std::mem::offset_of!(O, start_timestamp),
                    std::mem::offset_of!(T, start_timestamp),
                ),
                (
                    std::mem::offset_of!(O, end_timestamp),
                    std::mem::offset_of!(T, end_timestamp),
                ),
                (
                    std::mem::offset_of!(O, dispatch_info),
                    std::mem::offset_of!(T, dispatch_info),
                ),
            ] {
                assert_eq!(ours, theirs, "kernel dispatch record offsets");
            }
        }
        same_layout!(
            rocprofiler_buffer_tracing_memory_copy_record_t,
            sdk::rocprofiler_buffer_tracing_memory_copy_record_t,
            size,
            kind,
            operation,
            correlation_id,
            thread_id,
            start_timestamp,
            end_timestamp,
            dst_agent_id,
            src_agent_id,
            bytes,
            dst_address,
            src_address
        );
        same_layout!(
            rocprofiler_buffer_tracing_correlation_id_retirement_record_t,
            sdk::rocprofiler_buffer_tracing_correlation_id_retirement_record_t,
            size,
            kind,
            timestamp,
            internal_correlation_id
        );
        same_layout!(
            rocprofiler_callback_tracing_code_object_kernel_symbol_register_data_t,
            sdk::rocprofiler_callback_tracing_code_object_kernel_symbol_register_data_t,
            size,
            kernel_id,
            code_object_id,
            kernel_name,
            kernel_object,
            group_segment_size,
            private_segment_size,
            kernel_address
        );
        same_layout!(
            rocprofiler_callback_tracing_hip_stream_data_t,
            sdk::rocprofiler_callback_tracing_hip_stream_data_t,
            size,
            stream_id,
            stream_value
        );
        same_layout!(
            rocprofiler_callback_tracing_hip_api_data_t,
            sdk::rocprofiler_callback_tracing_hip_api_data_t,
            size,
            args,
            retval
        );
        same_layout!(rocprofiler_hip_api_args_t, sdk::rocprofiler_hip_api_args_t);
        same_layout!(
            rocprofiler_hip_api_retval_t,
            sdk::rocprofiler_hip_api_retval_t
        );
        same_layout!(
            rocprofiler_tool_configure_result_t,
            sdk::rocprofiler_tool_configure_result_t,
            size,
            initialize,
            finalize,
            tool_data
        );
        same_layout!(
            rocprofiler_client_id_t,
            sdk::rocprofiler_client_id_t,
            name,
            handle
        );
        same_layout!(
            rocprofiler_agent_v0_t,
            sdk::rocprofiler_agent_v0_t,
            size,
            id,
            type_,
            gfx_target_version,
            location_id,
            local_mem_size,
            gpu_id,
            name,
            product_name,
            model_name,
            node_id,
            logical_node_id,
            logical_node_type_id
        );
        assert_eq!(
            rocprofiler_status_t::ERROR_CONFIGURATION_LOCKED.0,
            sdk::rocprofiler_status_t_ROCPROFILER_STATUS_ERROR_CONFIGURATION_LOCKED as u32
        );
        assert_eq!(
            rocprofiler_status_t::ERROR_KIND_NOT_FOUND.0,
            sdk::rocprofiler_status_t_ROCPROFILER_STATUS_ERROR_KIND_NOT_FOUND as u32
        );
        assert_eq!(
            rocprofiler_callback_tracing_kind_t::HIP_STREAM.0,
            sdk::rocprofiler_callback_tracing_kind_t_ROCPROFILER_CALLBACK_TRACING_HIP_STREAM as u32
        );
        assert_eq!(rocprofiler_buffer_tracing_kind_t::CORRELATION_ID_RETIREMENT.0, sdk::rocprofiler_buffer_tracing_kind_t_ROCPROFILER_BUFFER_TRACING_CORRELATION_ID_RETIREMENT as u32);
        assert_eq!(
            rocprofiler_external_correlation_id_request_kind_t::KERNEL_DISPATCH.0,
            sdk::rocprofiler_external_correlation_id_request_kind_t_ROCPROFILER_EXTERNAL_CORRELATION_REQUEST_KERNEL_DISPATCH as u32
        );
        assert_eq!(
            rocprofiler_external_correlation_id_request_kind_t::MEMORY_COPY.0,
            sdk::rocprofiler_external_correlation_id_request_kind_t_ROCPROFILER_EXTERNAL_CORRELATION_REQUEST_MEMORY_COPY as u32
        );
        assert_eq!(
            hip_runtime_api_id::hipGraphLaunch,
            sdk::rocprofiler_hip_runtime_api_id_t_ROCPROFILER_HIP_RUNTIME_API_ID_hipGraphLaunch
                as i32
        );
        assert_eq!(
            hip_runtime_api_id::hipGraphExecUpdate,
            sdk::rocprofiler_hip_runtime_api_id_t_ROCPROFILER_HIP_RUNTIME_API_ID_hipGraphExecUpdate
                as i32
        );
        assert_eq!(
            hip_runtime_api_id::hipGraphInstantiate,
            sdk::rocprofiler_hip_runtime_api_id_t_ROCPROFILER_HIP_RUNTIME_API_ID_hipGraphInstantiate
                as i32
        );
        assert_eq!(
            hip_runtime_api_id::hipGraphExecDestroy,
            sdk::rocprofiler_hip_runtime_api_id_t_ROCPROFILER_HIP_RUNTIME_API_ID_hipGraphExecDestroy
                as i32
        );
        assert_eq!(
            hip_runtime_api_id::hipLaunchKernel,
            sdk::rocprofiler_hip_runtime_api_id_t_ROCPROFILER_HIP_RUNTIME_API_ID_hipLaunchKernel
                as i32
        );
        assert_eq!(
            hip_runtime_api_id::hipMemcpyAsync,
            sdk::rocprofiler_hip_runtime_api_id_t_ROCPROFILER_HIP_RUNTIME_API_ID_hipMemcpyAsync
                as i32
        );
    }
}
