//! Operation names for the kinds the simulator produces, as the SDK's
//! `rocprofiler_query_*_tracing_kind_operation_name` report them.
use rocprofiler_sys as sys;
use std::ffi::CStr;

fn hip_api(op: i32) -> Option<&'static CStr> {
    use sys::hip_runtime_api_id as id;
    Some(match op {
        id::hipGraphExecDestroy => c"hipGraphExecDestroy",
        id::hipGraphExecUpdate => c"hipGraphExecUpdate",
        id::hipGraphInstantiate => c"hipGraphInstantiate",
        id::hipGraphInstantiateWithFlags => c"hipGraphInstantiateWithFlags",
        id::hipGraphLaunch => c"hipGraphLaunch",
        id::hipLaunchKernel => c"hipLaunchKernel",
        id::hipMemcpy => c"hipMemcpy",
        id::hipMemcpyAsync => c"hipMemcpyAsync",
        id::hipStreamCreate => c"hipStreamCreate",
        id::hipStreamCreateWithFlags => c"hipStreamCreateWithFlags",
        id::hipStreamDestroy => c"hipStreamDestroy",
        id::hipGraphLaunch_spt => c"hipGraphLaunch_spt",
        id::hipGraphInstantiateWithParams => c"hipGraphInstantiateWithParams",
        _ => return None,
    })
}

fn memcpy(op: i32) -> Option<&'static CStr> {
    Some(match op {
        0 => c"MEMORY_COPY_NONE",
        1 => c"MEMORY_COPY_HOST_TO_HOST",
        2 => c"MEMORY_COPY_HOST_TO_DEVICE",
        3 => c"MEMORY_COPY_DEVICE_TO_HOST",
        4 => c"MEMORY_COPY_DEVICE_TO_DEVICE",
        _ => return None,
    })
}

fn dispatch(op: i32) -> Option<&'static CStr> {
    Some(match op {
        0 => c"KERNEL_DISPATCH_NONE",
        1 => c"KERNEL_DISPATCH_ENQUEUE",
        2 => c"KERNEL_DISPATCH_COMPLETE",
        _ => return None,
    })
}

fn graph(op: i32) -> Option<&'static CStr> {
    Some(match op {
        0 => c"HIP_GRAPH_OPERATION_NONE",
        1 => c"HIP_GRAPH_OPERATION_EXEC_CREATE",
        2 => c"HIP_GRAPH_OPERATION_EXEC_DESTROY",
        3 => c"HIP_GRAPH_OPERATION_EXEC_LAUNCH",
        _ => return None,
    })
}

pub(crate) fn callback_op(kind: u32, op: i32) -> Option<&'static CStr> {
    use sys::rocprofiler_callback_tracing_kind_t as K;
    match sys::rocprofiler_callback_tracing_kind_t(kind) {
        K::HIP_RUNTIME_API => hip_api(op),
        K::MEMORY_COPY => memcpy(op),
        K::KERNEL_DISPATCH => dispatch(op),
        K::HIP_GRAPH => graph(op),
        K::CODE_OBJECT => match op {
            0 => Some(c"CODE_OBJECT_NONE"),
            1 => Some(c"CODE_OBJECT_LOAD"),
            2 => Some(c"CODE_OBJECT_DEVICE_KERNEL_SYMBOL_REGISTER"),
            3 => Some(c"CODE_OBJECT_HOST_KERNEL_SYMBOL_REGISTER"),
            _ => None,
        },
        K::HIP_STREAM => match op {
            0 => Some(c"HIP_STREAM_NONE"),
            1 => Some(c"HIP_STREAM_CREATE"),
            2 => Some(c"HIP_STREAM_DESTROY"),
            3 => Some(c"HIP_STREAM_SET"),
            _ => None,
        },
        _ => None,
    }
}

pub(crate) fn buffer_op(kind: u32, op: i32) -> Option<&'static CStr> {
    use sys::rocprofiler_buffer_tracing_kind_t as K;
    match sys::rocprofiler_buffer_tracing_kind_t(kind) {
        K::HIP_RUNTIME_API => hip_api(op),
        K::MEMORY_COPY => memcpy(op),
        K::KERNEL_DISPATCH => dispatch(op),
        K::HIP_GRAPH => graph(op),
        K::CORRELATION_ID_RETIREMENT => (op == 0).then_some(c"CORRELATION_ID_RETIREMENT_NONE"),
        _ => None,
    }
}
