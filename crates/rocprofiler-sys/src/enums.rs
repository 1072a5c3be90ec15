//! C enumerations, numbered as the SDK numbers them (fwd.h,
//! external_correlation.h, agent.h). New SDK values are appended, so the
//! numbers below hold from 1.0 through 1.3.

macro_rules! c_enum {
    ($(#[$doc:meta])* $name:ident($repr:ty) { $($(#[$vdoc:meta])* $variant:ident = $value:expr),* $(,)? }) => {
        $(#[$doc])*
        #[repr(transparent)]
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
        pub struct $name(pub $repr);
        impl $name {
            $($(#[$vdoc])* pub const $variant: $name = $name($value);)*
        }
    };
}

c_enum! {
    /// `rocprofiler_status_t`.
    rocprofiler_status_t(u32) {
        SUCCESS = 0,
        ERROR = 1,
        ERROR_CONTEXT_NOT_FOUND = 2,
        ERROR_BUFFER_NOT_FOUND = 3,
        ERROR_KIND_NOT_FOUND = 4,
        ERROR_OPERATION_NOT_FOUND = 5,
        ERROR_THREAD_NOT_FOUND = 6,
        ERROR_AGENT_NOT_FOUND = 7,
        ERROR_COUNTER_NOT_FOUND = 8,
        ERROR_CONTEXT_ERROR = 9,
        ERROR_CONTEXT_INVALID = 10,
        ERROR_CONTEXT_NOT_STARTED = 11,
        ERROR_CONTEXT_CONFLICT = 12,
        ERROR_CONTEXT_ID_NOT_ZERO = 13,
        ERROR_BUFFER_BUSY = 14,
        ERROR_SERVICE_ALREADY_CONFIGURED = 15,
        ERROR_CONFIGURATION_LOCKED = 16,
        ERROR_NOT_IMPLEMENTED = 17,
        ERROR_INCOMPATIBLE_ABI = 18,
        ERROR_INVALID_ARGUMENT = 19,
        ERROR_METRIC_NOT_VALID_FOR_AGENT = 20,
        ERROR_FINALIZED = 21,
        ERROR_HSA_NOT_LOADED = 22,
        /// The agent's architecture has no counter definitions.
        ERROR_AGENT_ARCH_NOT_SUPPORTED = 39,
    }
}

c_enum! {
    /// `rocprofiler_counter_info_version_id_t`.
    rocprofiler_counter_info_version_id_t(u32) {
        NONE = 0,
        V0 = 1,
        V1 = 2,
    }
}

impl rocprofiler_status_t {
    pub fn is_success(self) -> bool {
        self == Self::SUCCESS
    }
}

c_enum! {
    /// `rocprofiler_buffer_category_t`.
    rocprofiler_buffer_category_t(u32) {
        NONE = 0,
        TRACING = 1,
        PC_SAMPLING = 2,
        COUNTERS = 3,
    }
}

c_enum! {
    /// `rocprofiler_agent_type_t`.
    rocprofiler_agent_type_t(u32) {
        NONE = 0,
        CPU = 1,
        GPU = 2,
    }
}

c_enum! {
    /// `rocprofiler_callback_phase_t`.
    rocprofiler_callback_phase_t(u32) {
        NONE = 0,
        ENTER = 1,
        EXIT = 2,
    }
}

c_enum! {
    /// `rocprofiler_callback_tracing_kind_t`.
    rocprofiler_callback_tracing_kind_t(u32) {
        NONE = 0,
        HSA_CORE_API = 1,
        HSA_AMD_EXT_API = 2,
        HSA_IMAGE_EXT_API = 3,
        HSA_FINALIZE_EXT_API = 4,
        HIP_RUNTIME_API = 5,
        HIP_COMPILER_API = 6,
        MARKER_CORE_API = 7,
        MARKER_CONTROL_API = 8,
        MARKER_NAME_API = 9,
        CODE_OBJECT = 10,
        SCRATCH_MEMORY = 11,
        KERNEL_DISPATCH = 12,
        MEMORY_COPY = 13,
        RCCL_API = 14,
        OMPT = 15,
        MEMORY_ALLOCATION = 16,
        RUNTIME_INITIALIZATION = 17,
        ROCDECODE_API = 18,
        ROCJPEG_API = 19,
        HIP_STREAM = 20,
        MARKER_CORE_RANGE_API = 21,
        /// SDK 1.3 and later only.
        HIP_GRAPH = 22,
        /// Experimental kernel replay (experimental/kernel_replay.h, on the
        /// SDK's kernel-replay branch, in no release yet). Its number is
        /// the next after HIP_GRAPH, ROCSHMEM_API (23) and HIPFILE_API (24)
        /// in fwd.h; not confirmed against a released header, so
        /// `tests/layout.rs` cannot check it until one exists.
        KERNEL_REPLAY = 25,
    }
}

c_enum! {
    /// `rocprofiler_kernel_replay_operation_t` (experimental/kernel_replay.h).
    rocprofiler_kernel_replay_operation_t(u32) {
        NONE = 0,
        /// Once per candidate dispatch: the tool sets the pass count.
        CONFIG = 1,
        /// Once per pass, ENTER before the dispatch runs, EXIT after.
        PASS = 2,
    }
}

c_enum! {
    /// `rocprofiler_buffer_tracing_kind_t`.
    rocprofiler_buffer_tracing_kind_t(u32) {
        NONE = 0,
        HSA_CORE_API = 1,
        HSA_AMD_EXT_API = 2,
        HSA_IMAGE_EXT_API = 3,
        HSA_FINALIZE_EXT_API = 4,
        HIP_RUNTIME_API = 5,
        HIP_COMPILER_API = 6,
        MARKER_CORE_API = 7,
        MARKER_CONTROL_API = 8,
        MARKER_NAME_API = 9,
        MEMORY_COPY = 10,
        KERNEL_DISPATCH = 11,
        SCRATCH_MEMORY = 12,
        CORRELATION_ID_RETIREMENT = 13,
        RCCL_API = 14,
        OMPT = 15,
        MEMORY_ALLOCATION = 16,
        RUNTIME_INITIALIZATION = 17,
        ROCDECODE_API = 18,
        ROCJPEG_API = 19,
        HIP_STREAM = 20,
        HIP_RUNTIME_API_EXT = 21,
        HIP_COMPILER_API_EXT = 22,
        ROCDECODE_API_EXT = 23,
        KFD_EVENT_PAGE_MIGRATE = 24,
        KFD_EVENT_PAGE_FAULT = 25,
        KFD_EVENT_QUEUE = 26,
        KFD_EVENT_UNMAP_FROM_GPU = 27,
        KFD_EVENT_DROPPED_EVENTS = 28,
        KFD_PAGE_MIGRATE = 29,
        KFD_PAGE_FAULT = 30,
        KFD_QUEUE = 31,
        MARKER_CORE_RANGE_API = 32,
        /// SDK 1.3 and later only: one record per hipGraphLaunch.
        HIP_GRAPH = 33,
    }
}

c_enum! {
    /// `rocprofiler_code_object_operation_t`.
    rocprofiler_code_object_operation_t(u32) {
        NONE = 0,
        LOAD = 1,
        DEVICE_KERNEL_SYMBOL_REGISTER = 2,
        HOST_KERNEL_SYMBOL_REGISTER = 3,
    }
}

c_enum! {
    /// `rocprofiler_hip_stream_operation_t`.
    rocprofiler_hip_stream_operation_t(u32) {
        NONE = 0,
        CREATE = 1,
        DESTROY = 2,
        /// Fires before and after an API call, kernel dispatch or memory copy
        /// that has a stream.
        SET = 3,
    }
}

c_enum! {
    /// `rocprofiler_hip_graph_operation_t` (SDK 1.3+).
    rocprofiler_hip_graph_operation_t(u32) {
        NONE = 0,
        /// Phase NONE, after a successful hipGraphInstantiate*.
        EXEC_CREATE = 1,
        /// Phase NONE, after a successful hipGraphExecDestroy.
        EXEC_DESTROY = 2,
        /// ENTER and EXIT around hipGraphLaunch / hipGraphLaunch_spt.
        EXEC_LAUNCH = 3,
    }
}

c_enum! {
    /// `rocprofiler_memory_copy_operation_t`: the copy direction.
    rocprofiler_memory_copy_operation_t(u32) {
        NONE = 0,
        HOST_TO_HOST = 1,
        HOST_TO_DEVICE = 2,
        DEVICE_TO_HOST = 3,
        DEVICE_TO_DEVICE = 4,
    }
}

c_enum! {
    /// `rocprofiler_kernel_dispatch_operation_t`.
    rocprofiler_kernel_dispatch_operation_t(u32) {
        NONE = 0,
        ENQUEUE = 1,
        COMPLETE = 2,
    }
}

c_enum! {
    /// `rocprofiler_buffer_policy_t`.
    rocprofiler_buffer_policy_t(u32) {
        NONE = 0,
        /// Drop records when the buffer is full; the callback reports drop_count.
        DISCARD = 1,
        /// Block the producer when the buffer is full.
        LOSSLESS = 2,
    }
}

c_enum! {
    /// `rocprofiler_external_correlation_id_request_kind_t` (external_correlation.h):
    /// NONE = 0, then one value per tracing domain in header order. The SDK
    /// rejects NONE and anything >= LAST with ERROR_KIND_NOT_FOUND
    /// (external_correlation.cpp, `configure_request`).
    rocprofiler_external_correlation_id_request_kind_t(u32) {
        NONE = 0,
        HSA_CORE_API = 1,
        HSA_AMD_EXT_API = 2,
        HSA_IMAGE_EXT_API = 3,
        HSA_FINALIZE_EXT_API = 4,
        HIP_RUNTIME_API = 5,
        HIP_COMPILER_API = 6,
        MARKER_CORE_API = 7,
        MARKER_CONTROL_API = 8,
        MARKER_NAME_API = 9,
        MEMORY_COPY = 10,
        KERNEL_DISPATCH = 11,
        SCRATCH_MEMORY = 12,
        RCCL_API = 13,
        OMPT = 14,
        MEMORY_ALLOCATION = 15,
        ROCDECODE_API = 16,
        ROCJPEG_API = 17,
        MARKER_CORE_RANGE_API = 18,
    }
}

c_enum! {
    /// `rocprofiler_agent_version_t`.
    rocprofiler_agent_version_t(u32) {
        NONE = 0,
        V0 = 1,
    }
}

c_enum! {
    /// `rocprofiler_marker_core_api_id_t` (marker/api_id.h:28-38): the
    /// operations of MARKER_CORE_API, the ROCTX calls.
    rocprofiler_marker_core_api_id_t(i32) {
        roctxMarkA = 0,
        roctxRangePushA = 1,
        roctxRangePop = 2,
        roctxRangeStartA = 3,
        roctxRangeStop = 4,
        roctxGetThreadId = 5,
    }
}
