//! Names of tracing kinds and operations, and the operations each kind has,
//! as callback_tracing.cpp / buffer_tracing.cpp report them: a kind's name
//! is its enumerator without the prefix ("HIP_RUNTIME_API"); HIP runtime
//! operations are named by the runtime's API table (all of
//! `hip_api_names::RUNTIME_API_NAMES`). Domains the simulator never produces
//! (HSA, markers, RCCL, ...) have names but no operations here.
use rocprofiler_sys as sys;
use rocprofiler_sys::hip_api_names::RUNTIME_API_NAMES;
use std::ffi::{CStr, CString};
use std::sync::OnceLock;

const CALLBACK_KINDS: [&CStr; 23] = [
    c"NONE",
    c"HSA_CORE_API",
    c"HSA_AMD_EXT_API",
    c"HSA_IMAGE_EXT_API",
    c"HSA_FINALIZE_EXT_API",
    c"HIP_RUNTIME_API",
    c"HIP_COMPILER_API",
    c"MARKER_CORE_API",
    c"MARKER_CONTROL_API",
    c"MARKER_NAME_API",
    c"CODE_OBJECT",
    c"SCRATCH_MEMORY",
    c"KERNEL_DISPATCH",
    c"MEMORY_COPY",
    c"RCCL_API",
    c"OMPT",
    c"MEMORY_ALLOCATION",
    c"RUNTIME_INITIALIZATION",
    c"ROCDECODE_API",
    c"ROCJPEG_API",
    c"HIP_STREAM",
    c"MARKER_CORE_RANGE_API",
    c"HIP_GRAPH",
];

const BUFFER_KINDS: [&CStr; 34] = [
    c"NONE",
    c"HSA_CORE_API",
    c"HSA_AMD_EXT_API",
    c"HSA_IMAGE_EXT_API",
    c"HSA_FINALIZE_EXT_API",
    c"HIP_RUNTIME_API",
    c"HIP_COMPILER_API",
    c"MARKER_CORE_API",
    c"MARKER_CONTROL_API",
    c"MARKER_NAME_API",
    c"MEMORY_COPY",
    c"KERNEL_DISPATCH",
    c"SCRATCH_MEMORY",
    c"CORRELATION_ID_RETIREMENT",
    c"RCCL_API",
    c"OMPT",
    c"MEMORY_ALLOCATION",
    c"RUNTIME_INITIALIZATION",
    c"ROCDECODE_API",
    c"ROCJPEG_API",
    c"HIP_STREAM",
    c"HIP_RUNTIME_API_EXT",
    c"HIP_COMPILER_API_EXT",
    c"ROCDECODE_API_EXT",
    c"KFD_EVENT_PAGE_MIGRATE",
    c"KFD_EVENT_PAGE_FAULT",
    c"KFD_EVENT_QUEUE",
    c"KFD_EVENT_UNMAP_FROM_GPU",
    c"KFD_EVENT_DROPPED_EVENTS",
    c"KFD_PAGE_MIGRATE",
    c"KFD_PAGE_FAULT",
    c"KFD_QUEUE",
    c"MARKER_CORE_RANGE_API",
    c"HIP_GRAPH",
];

pub(crate) fn callback_kind(kind: u32) -> Option<&'static CStr> {
    CALLBACK_KINDS.get(kind as usize).copied()
}

pub(crate) fn buffer_kind(kind: u32) -> Option<&'static CStr> {
    BUFFER_KINDS.get(kind as usize).copied()
}

fn hip_api(op: i32) -> Option<&'static CStr> {
    static NAMES: OnceLock<Vec<CString>> = OnceLock::new();
    let names = NAMES.get_or_init(|| {
        RUNTIME_API_NAMES
            .iter()
            .map(|n| CString::new(*n).unwrap_or_default())
            .collect()
    });
    usize::try_from(op)
        .ok()
        .and_then(|i| names.get(i))
        .map(|c| c.as_c_str())
}

const MEMORY_COPY_OPS: [&CStr; 5] = [
    c"MEMORY_COPY_NONE",
    c"MEMORY_COPY_HOST_TO_HOST",
    c"MEMORY_COPY_HOST_TO_DEVICE",
    c"MEMORY_COPY_DEVICE_TO_HOST",
    c"MEMORY_COPY_DEVICE_TO_DEVICE",
];
const DISPATCH_OPS: [&CStr; 3] = [
    c"KERNEL_DISPATCH_NONE",
    c"KERNEL_DISPATCH_ENQUEUE",
    c"KERNEL_DISPATCH_COMPLETE",
];
const GRAPH_OPS: [&CStr; 4] = [
    c"HIP_GRAPH_OPERATION_NONE",
    c"HIP_GRAPH_OPERATION_EXEC_CREATE",
    c"HIP_GRAPH_OPERATION_EXEC_DESTROY",
    c"HIP_GRAPH_OPERATION_EXEC_LAUNCH",
];
const CODE_OBJECT_OPS: [&CStr; 4] = [
    c"CODE_OBJECT_NONE",
    c"CODE_OBJECT_LOAD",
    c"CODE_OBJECT_DEVICE_KERNEL_SYMBOL_REGISTER",
    c"CODE_OBJECT_HOST_KERNEL_SYMBOL_REGISTER",
];
const STREAM_OPS: [&CStr; 4] = [
    c"HIP_STREAM_NONE",
    c"HIP_STREAM_CREATE",
    c"HIP_STREAM_DESTROY",
    c"HIP_STREAM_SET",
];

fn nth(table: &'static [&'static CStr], op: i32) -> Option<&'static CStr> {
    usize::try_from(op).ok().and_then(|i| table.get(i)).copied()
}

/// The operation table of a callback kind the simulator produces.
fn callback_table(kind: u32) -> Option<&'static [&'static CStr]> {
    use sys::rocprofiler_callback_tracing_kind_t as K;
    Some(match K(kind) {
        K::MEMORY_COPY => &MEMORY_COPY_OPS,
        K::KERNEL_DISPATCH => &DISPATCH_OPS,
        K::HIP_GRAPH => &GRAPH_OPS,
        K::CODE_OBJECT => &CODE_OBJECT_OPS,
        K::HIP_STREAM => &STREAM_OPS,
        _ => return None,
    })
}

/// The operation table of a buffer kind the simulator produces.
fn buffer_table(kind: u32) -> Option<&'static [&'static CStr]> {
    use sys::rocprofiler_buffer_tracing_kind_t as K;
    Some(match K(kind) {
        K::MEMORY_COPY => &MEMORY_COPY_OPS,
        K::KERNEL_DISPATCH => &DISPATCH_OPS,
        K::HIP_GRAPH => &GRAPH_OPS,
        K::CORRELATION_ID_RETIREMENT => &[c"CORRELATION_ID_RETIREMENT_NONE"],
        _ => return None,
    })
}

pub(crate) fn callback_op(kind: u32, op: i32) -> Option<&'static CStr> {
    if kind == sys::rocprofiler_callback_tracing_kind_t::HIP_RUNTIME_API.0 {
        return hip_api(op);
    }
    nth(callback_table(kind)?, op)
}

pub(crate) fn buffer_op(kind: u32, op: i32) -> Option<&'static CStr> {
    if kind == sys::rocprofiler_buffer_tracing_kind_t::HIP_RUNTIME_API.0 {
        return hip_api(op);
    }
    nth(buffer_table(kind)?, op)
}

/// Operations of a table, NONE (0) left out as `get_ids` leaves it out.
fn ids(table: Option<&[&CStr]>) -> Vec<i32> {
    (1..table.map_or(0, |t| t.len() as i32)).collect()
}

/// The operations `rocprofiler_iterate_callback_tracing_kind_operations`
/// reports for a kind.
pub(crate) fn callback_ops(kind: u32) -> Vec<i32> {
    if kind == sys::rocprofiler_callback_tracing_kind_t::HIP_RUNTIME_API.0 {
        return (0..RUNTIME_API_NAMES.len() as i32).collect();
    }
    ids(callback_table(kind))
}

/// The operations `rocprofiler_iterate_buffer_tracing_kind_operations`
/// reports for a kind.
pub(crate) fn buffer_ops(kind: u32) -> Vec<i32> {
    if kind == sys::rocprofiler_buffer_tracing_kind_t::HIP_RUNTIME_API.0 {
        return (0..RUNTIME_API_NAMES.len() as i32).collect();
    }
    ids(buffer_table(kind))
}
