//! Layout of our declarations: fixed facts always, and a field-by-field
//! comparison with bindgen's view of the real headers when
//! ROCPROFILER_SDK_INCLUDE_DIR was set at build time.
//!
//! Header lines cited below are those of rocprofiler-sdk 1.0.0
//! (ROCm/rocm-systems 1b1610fc, projects/rocprofiler-sdk/source/include/
//! rocprofiler-sdk/), the headers `scripts/rocm-headers.sh` assembles; the
//! structs asserted here kept their layout through 1.3.
use rocprofiler_sys::*;
use std::mem::{align_of, size_of};

/// Sizes that follow from the declarations alone, on LP64.
#[test]
fn sizes_the_sdk_fixes() {
    // fwd.h:870: static_assert(sizeof(rocprofiler_kernel_dispatch_info_t) == 128).
    assert_eq!(size_of::<rocprofiler_kernel_dispatch_info_t>(), 128);
    // hip/api_args.h:66-3150, a union; its largest member is
    // hipExtModuleLaunchKernel (api_args.h:2483-2498): a pointer, six
    // uint32_t, size_t, five pointers and a uint32_t = 84, padded to 88.
    assert_eq!(size_of::<rocprofiler_hip_api_args_t>(), 88);
    // hip/api_args.h:49-62, a union; its largest member is
    // hipChannelFormatDesc_retval (five ints = 20), padded to uint64_t's 8.
    assert_eq!(size_of::<rocprofiler_hip_api_retval_t>(), 24);
    // callback_tracing.h:77-87: uint64_t size, the args, the retval.
    assert_eq!(
        size_of::<rocprofiler_callback_tracing_hip_api_data_t>(),
        8 + 88 + 24
    );
    // callback_tracing.h:101-106: uint64_t size, the args (marker/
    // api_args.h:49-113, at most two pointers), the retval (42-47, 8 bytes).
    assert_eq!(size_of::<rocprofiler_marker_api_args_t>(), 16);
    assert_eq!(
        size_of::<rocprofiler_callback_tracing_marker_api_data_t>(),
        8 + 16 + 8
    );
    // fwd.h:623-637: uint64_t internal, rocprofiler_user_data_t external
    // (fwd.h:554-558, 8 bytes), uint64_t ancestor.
    assert_eq!(size_of::<rocprofiler_correlation_id_t>(), 24);
    // fwd.h:642-652: internal and external.
    assert_eq!(size_of::<rocprofiler_async_correlation_id_t>(), 16);
    // fwd.h:712-721: context id 8, thread id 8, correlation id 24, kind,
    // operation and phase 4 each (+4 padding), payload pointer 8.
    assert_eq!(size_of::<rocprofiler_callback_tracing_record_t>(), 64);
    // fwd.h:752-769: a union of {uint32_t category, kind} and uint64_t
    // hash, then the payload pointer.
    assert_eq!(size_of::<rocprofiler_record_header_t>(), 16);
    // buffer_tracing.h:324-339: size 8; kind and operation 4 each;
    // correlation id 16; thread id, start and end 8 each; dispatch info 128.
    assert_eq!(
        size_of::<rocprofiler_buffer_tracing_kernel_dispatch_record_t>(),
        8 + 8 + 16 + 24 + 128
    );
    // fwd.h:554-558: a union of uint64_t and void*.
    assert_eq!(align_of::<rocprofiler_user_data_t>(), 8);
    // counters.h: rocprofiler_counter_info_v0_t is the counter id, four
    // string pointers and one uint8_t of bit-fields (41), padded to 48.
    assert_eq!(size_of::<rocprofiler_counter_info_v0_t>(), 48);
    assert_eq!(
        std::mem::offset_of!(rocprofiler_counter_info_v0_t, flags),
        40
    );
    // counters.h: rocprofiler_counter_info_v1_t is a size, v0's fields up
    // to the bit-field byte (48), padded to 56, then two (count, pointer)
    // pairs.
    assert_eq!(size_of::<rocprofiler_counter_info_v1_t>(), 88);
    assert_eq!(
        std::mem::offset_of!(rocprofiler_counter_info_v1_t, dimensions_count),
        56
    );
    assert_eq!(
        std::mem::offset_of!(rocprofiler_counter_info_v1_t, dimensions_instances),
        80
    );
    // fwd.h: a name pointer, a size_t and a dimension id.
    assert_eq!(size_of::<rocprofiler_counter_record_dimension_info_t>(), 24);
    // counters.h: a size, a name pointer and a size_t index.
    assert_eq!(size_of::<rocprofiler_counter_dimension_info_t>(), 24);
    // counters.h: four uint64_t and a pointer.
    assert_eq!(
        size_of::<rocprofiler_counter_record_dimension_instance_info_t>(),
        40
    );
    // fwd.h: rocprofiler_counter_record_t is an instance id, a double, a
    // dispatch id, user data and an agent id, 8 bytes each.
    assert_eq!(size_of::<rocprofiler_counter_record_t>(), 40);
    // dispatch_counting_service.h: size, the async correlation id (16), two
    // timestamps, then the 128-byte dispatch info.
    assert_eq!(
        size_of::<rocprofiler_dispatch_counting_service_data_t>(),
        168
    );
    assert_eq!(
        std::mem::offset_of!(rocprofiler_dispatch_counting_service_data_t, dispatch_info),
        40
    );
}

#[cfg(has_sdk_headers)]
#[allow(
    non_upper_case_globals,
    non_camel_case_types,
    non_snake_case,
    dead_code,
    unsafe_op_in_unsafe_fn,
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
        // fwd.h:599-602
        same_layout!(
            rocprofiler_context_id_t,
            sdk::rocprofiler_context_id_t,
            handle
        );
        // fwd.h:623-637
        same_layout!(
            rocprofiler_correlation_id_t,
            sdk::rocprofiler_correlation_id_t,
            internal,
            external,
            ancestor
        );
        // fwd.h:642-652
        same_layout!(
            rocprofiler_async_correlation_id_t,
            sdk::rocprofiler_async_correlation_id_t,
            internal,
            external
        );
        // fwd.h:712-721
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
        // fwd.h:752-769
        same_layout!(
            rocprofiler_record_header_t,
            sdk::rocprofiler_record_header_t,
            payload
        );
        // fwd.h:792-812
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
        // buffer_tracing.h:71-87
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
        // buffer_tracing.h:324-339; ours is a prefix of it.
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
        // buffer_tracing.h:276-296
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
        // buffer_tracing.h:518-534
        same_layout!(
            rocprofiler_buffer_tracing_correlation_id_retirement_record_t,
            sdk::rocprofiler_buffer_tracing_correlation_id_retirement_record_t,
            size,
            kind,
            timestamp,
            internal_correlation_id
        );
        // callback_tracing.h:204-245
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
        // callback_tracing.h:342-347
        same_layout!(
            rocprofiler_callback_tracing_hip_stream_data_t,
            sdk::rocprofiler_callback_tracing_hip_stream_data_t,
            size,
            stream_id,
            stream_value
        );
        // callback_tracing.h:77-87
        same_layout!(
            rocprofiler_callback_tracing_hip_api_data_t,
            sdk::rocprofiler_callback_tracing_hip_api_data_t,
            size,
            args,
            retval
        );
        // callback_tracing.h:101-106, marker/api_args.h:49-113 and 42-47.
        same_layout!(
            rocprofiler_callback_tracing_marker_api_data_t,
            sdk::rocprofiler_callback_tracing_marker_api_data_t,
            size,
            args,
            retval
        );
        same_layout!(
            rocprofiler_marker_api_args_t,
            sdk::rocprofiler_marker_api_args_t
        );
        // hip/api_args.h:66-3150 and 49-62.
        same_layout!(rocprofiler_hip_api_args_t, sdk::rocprofiler_hip_api_args_t);
        // counters.h: the VERSION_1 info and its dimension structs.
        same_layout!(
            rocprofiler_counter_info_v1_t,
            sdk::rocprofiler_counter_info_v1_t,
            size,
            id,
            name,
            description,
            block,
            expression,
            dimensions_count,
            dimensions,
            dimensions_instances_count,
            dimensions_instances
        );
        same_layout!(
            rocprofiler_counter_record_dimension_info_t,
            sdk::rocprofiler_counter_record_dimension_info_t,
            name,
            instance_size,
            id
        );
        same_layout!(
            rocprofiler_counter_dimension_info_t,
            sdk::rocprofiler_counter_dimension_info_t,
            size,
            dimension_name,
            index
        );
        same_layout!(
            rocprofiler_counter_record_dimension_instance_info_t,
            sdk::rocprofiler_counter_record_dimension_instance_info_t,
            size,
            instance_id,
            counter_id,
            dimensions_count,
            dimensions
        );
        same_layout!(
            rocprofiler_hip_api_retval_t,
            sdk::rocprofiler_hip_api_retval_t
        );
        // registration.h:96-102
        same_layout!(
            rocprofiler_tool_configure_result_t,
            sdk::rocprofiler_tool_configure_result_t,
            size,
            initialize,
            finalize,
            tool_data
        );
        // registration.h:47-52
        same_layout!(
            rocprofiler_client_id_t,
            sdk::rocprofiler_client_id_t,
            name,
            handle
        );
        // agent.h:130-256
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
        // Enumerators: fwd.h:70, fwd.h:54, fwd.h:177, fwd.h:202,
        // external_correlation.h:68 and 67, hip/runtime_api_id.h:199, 186,
        // 192, 176, 247 and 301.
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
