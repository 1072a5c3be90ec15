//! Record builders shared by the integration tests.
#![allow(dead_code)]

use activity_store::{AgentId, CopyDirection, GraphLaunch, HipApiCall, KernelDispatch, MemoryCopy};

pub fn kernel(correlation_id: u64, start_ns: u64) -> KernelDispatch {
    KernelDispatch {
        agent: AgentId(7),
        queue: 3,
        correlation_id,
        external_slot: 0,
        thread_id: 11,
        kernel_id: 42,
        dispatch_id: correlation_id,
        grid: [256, 1, 1],
        workgroup: [64, 1, 1],
        lds_bytes: 0,
        scratch_bytes: 0,
        start_ns,
        end_ns: start_ns + 10,
    }
}

pub fn copy(correlation_id: u64, start_ns: u64) -> MemoryCopy {
    MemoryCopy {
        direction: CopyDirection::HostToDevice,
        src_agent: AgentId(1),
        dst_agent: AgentId(7),
        bytes: 4096,
        correlation_id,
        external_slot: 0,
        thread_id: 11,
        start_ns,
        end_ns: start_ns + 5,
    }
}

pub fn api_call(correlation_id: u64, start_ns: u64) -> HipApiCall {
    HipApiCall {
        operation: 3,
        correlation_id,
        thread_id: 11,
        start_ns,
        end_ns: start_ns + 2,
    }
}

pub fn graph_launch(correlation_id: u64, start_ns: u64, dispatches: u64) -> GraphLaunch {
    GraphLaunch {
        correlation_id,
        graph_exec_id: 1,
        kernel_dispatch_count: dispatches,
        thread_id: 11,
        agent: AgentId(7),
        queue: 3,
        start_ns,
        end_ns: start_ns + 100,
    }
}
