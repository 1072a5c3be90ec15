//! The arguments of a traced HIP runtime call, one by one, as
//! `rocprofiler_iterate_callback_tracing_kind_operation_args` reports them
//! (callback_tracing.cpp, hip/hip.cpp `iterate_args`,
//! lib/common/stringize_arg.hpp): for each argument in prototype order its
//! 0-based number, the address of its copy inside the record's args union,
//! its pointer depth, its type as `typeid(T).name()` spells it (mangled, not
//! demangled), its name, its value as text (pointers dereferenced up to the
//! caller's maximum where the pointee has a value; "(null)" for null), and
//! how many times it was dereferenced. Described for every call the
//! simulator makes and for hipMalloc, hipFree and hipMemcpy; other
//! operations have no arguments here.
use rocprofiler_sys as sys;
use rocprofiler_sys::hip_runtime_api_id as api;
use std::ffi::{c_void, CStr, CString};
use std::mem::offset_of;

/// How an argument's value is read and shown.
#[derive(Clone, Copy)]
enum Show {
    /// A pointer whose pointee has no printable value (opaque or void).
    Ptr,
    /// A pointer to a pointer-sized handle.
    PtrToPtr,
    /// A pointer to an int-sized enum value.
    PtrToI32,
    PtrToKernelParams,
    PtrToMemsetParams,
    U32,
    I32,
    Usize,
    Dim3,
    MemcpyKind,
}

struct Arg {
    ty: &'static CStr,
    name: &'static CStr,
    indirection: i32,
    offset: usize,
    show: Show,
}

const fn arg(
    ty: &'static CStr,
    name: &'static CStr,
    indirection: i32,
    offset: usize,
    show: Show,
) -> Arg {
    Arg {
        ty,
        name,
        indirection,
        offset,
        show,
    }
}

const STREAM: &CStr = c"P12ihipStream_t";
const GRAPH: &CStr = c"P9ihipGraph";
const NODE_OUT: &CStr = c"PP12hipGraphNode";
const DEPS: &CStr = c"PKP12hipGraphNode";
const EXEC: &CStr = c"P12hipGraphExec";
const SIZE: &CStr = c"m";
const KIND: &CStr = c"13hipMemcpyKind";

fn args_of(op: i32) -> Vec<Arg> {
    use sys::*;
    use Show::*;
    match op {
        api::hipStreamCreate => vec![arg(
            c"PP12ihipStream_t",
            c"stream",
            2,
            offset_of!(hip_stream_create_args, stream),
            PtrToPtr,
        )],
        api::hipStreamDestroy => vec![arg(
            STREAM,
            c"stream",
            1,
            offset_of!(hip_stream_destroy_args, stream),
            Ptr,
        )],
        api::hipGraphCreate => vec![
            arg(
                c"PP9ihipGraph",
                c"pGraph",
                2,
                offset_of!(hip_graph_create_args, pGraph),
                PtrToPtr,
            ),
            arg(
                c"j",
                c"flags",
                0,
                offset_of!(hip_graph_create_args, flags),
                U32,
            ),
        ],
        api::hipGraphDestroy => vec![arg(
            GRAPH,
            c"graph",
            1,
            offset_of!(hip_graph_destroy_args, graph),
            Ptr,
        )],
        api::hipGraphAddKernelNode => {
            type A = hip_graph_add_kernel_node_args;
            vec![
                arg(
                    NODE_OUT,
                    c"pGraphNode",
                    2,
                    offset_of!(A, pGraphNode),
                    PtrToPtr,
                ),
                arg(GRAPH, c"graph", 1, offset_of!(A, graph), Ptr),
                arg(
                    DEPS,
                    c"pDependencies",
                    2,
                    offset_of!(A, pDependencies),
                    PtrToPtr,
                ),
                arg(
                    SIZE,
                    c"numDependencies",
                    0,
                    offset_of!(A, numDependencies),
                    Usize,
                ),
                arg(
                    c"PK19hipKernelNodeParams",
                    c"pNodeParams",
                    1,
                    offset_of!(A, pNodeParams),
                    PtrToKernelParams,
                ),
            ]
        }
        api::hipGraphAddMemcpyNode1D => {
            type A = hip_graph_add_memcpy_node_1d_args;
            vec![
                arg(
                    NODE_OUT,
                    c"pGraphNode",
                    2,
                    offset_of!(A, pGraphNode),
                    PtrToPtr,
                ),
                arg(GRAPH, c"graph", 1, offset_of!(A, graph), Ptr),
                arg(
                    DEPS,
                    c"pDependencies",
                    2,
                    offset_of!(A, pDependencies),
                    PtrToPtr,
                ),
                arg(
                    SIZE,
                    c"numDependencies",
                    0,
                    offset_of!(A, numDependencies),
                    Usize,
                ),
                arg(c"Pv", c"dst", 1, offset_of!(A, dst), Ptr),
                arg(c"PKv", c"src", 1, offset_of!(A, src), Ptr),
                arg(SIZE, c"count", 0, offset_of!(A, count), Usize),
                arg(KIND, c"kind", 0, offset_of!(A, kind), MemcpyKind),
            ]
        }
        api::hipGraphAddMemsetNode => {
            type A = hip_graph_add_memset_node_args;
            vec![
                arg(
                    NODE_OUT,
                    c"pGraphNode",
                    2,
                    offset_of!(A, pGraphNode),
                    PtrToPtr,
                ),
                arg(GRAPH, c"graph", 1, offset_of!(A, graph), Ptr),
                arg(
                    DEPS,
                    c"pDependencies",
                    2,
                    offset_of!(A, pDependencies),
                    PtrToPtr,
                ),
                arg(
                    SIZE,
                    c"numDependencies",
                    0,
                    offset_of!(A, numDependencies),
                    Usize,
                ),
                arg(
                    c"PK15hipMemsetParams",
                    c"pMemsetParams",
                    1,
                    offset_of!(A, pMemsetParams),
                    PtrToMemsetParams,
                ),
            ]
        }
        api::hipGraphInstantiate => {
            type A = hip_graph_instantiate_args;
            vec![
                arg(
                    c"PP12hipGraphExec",
                    c"pGraphExec",
                    2,
                    offset_of!(A, pGraphExec),
                    PtrToPtr,
                ),
                arg(GRAPH, c"graph", 1, offset_of!(A, graph), Ptr),
                arg(
                    NODE_OUT,
                    c"pErrorNode",
                    2,
                    offset_of!(A, pErrorNode),
                    PtrToPtr,
                ),
                arg(c"Pc", c"pLogBuffer", 1, offset_of!(A, pLogBuffer), Ptr),
                arg(SIZE, c"bufferSize", 0, offset_of!(A, bufferSize), Usize),
            ]
        }
        api::hipGraphExecUpdate => {
            type A = hip_graph_exec_update_args;
            vec![
                arg(EXEC, c"hGraphExec", 1, offset_of!(A, hGraphExec), Ptr),
                arg(GRAPH, c"hGraph", 1, offset_of!(A, hGraph), Ptr),
                arg(
                    NODE_OUT,
                    c"hErrorNode_out",
                    2,
                    offset_of!(A, hErrorNode_out),
                    PtrToPtr,
                ),
                arg(
                    c"P24hipGraphExecUpdateResult",
                    c"updateResult_out",
                    1,
                    offset_of!(A, updateResult_out),
                    PtrToI32,
                ),
            ]
        }
        api::hipGraphExecDestroy => vec![arg(
            EXEC,
            c"graphExec",
            1,
            offset_of!(hip_graph_exec_destroy_args, graphExec),
            Ptr,
        )],
        api::hipGraphLaunch => vec![
            arg(
                EXEC,
                c"graphExec",
                1,
                offset_of!(hip_graph_launch_args, graphExec),
                Ptr,
            ),
            arg(
                STREAM,
                c"stream",
                1,
                offset_of!(hip_graph_launch_args, stream),
                Ptr,
            ),
        ],
        api::hipLaunchKernel => {
            type A = hip_launch_kernel_args;
            vec![
                arg(
                    c"PKv",
                    c"function_address",
                    1,
                    offset_of!(A, function_address),
                    Ptr,
                ),
                arg(
                    c"18rocprofiler_dim3_t",
                    c"numBlocks",
                    0,
                    offset_of!(A, numBlocks),
                    Dim3,
                ),
                arg(
                    c"18rocprofiler_dim3_t",
                    c"dimBlocks",
                    0,
                    offset_of!(A, dimBlocks),
                    Dim3,
                ),
                arg(c"PPv", c"args", 2, offset_of!(A, args), Ptr),
                arg(
                    SIZE,
                    c"sharedMemBytes",
                    0,
                    offset_of!(A, sharedMemBytes),
                    Usize,
                ),
                arg(STREAM, c"stream", 1, offset_of!(A, stream), Ptr),
            ]
        }
        api::hipMemcpyAsync => {
            type A = hip_memcpy_async_args;
            vec![
                arg(c"Pv", c"dst", 1, offset_of!(A, dst), Ptr),
                arg(c"PKv", c"src", 1, offset_of!(A, src), Ptr),
                arg(SIZE, c"sizeBytes", 0, offset_of!(A, sizeBytes), Usize),
                arg(KIND, c"kind", 0, offset_of!(A, kind), MemcpyKind),
                arg(STREAM, c"stream", 1, offset_of!(A, stream), Ptr),
            ]
        }
        api::hipMemsetAsync => {
            type A = hip_memset_async_args;
            vec![
                arg(c"Pv", c"dst", 1, offset_of!(A, dst), Ptr),
                arg(c"i", c"value", 0, offset_of!(A, value), I32),
                arg(SIZE, c"sizeBytes", 0, offset_of!(A, sizeBytes), Usize),
                arg(STREAM, c"stream", 1, offset_of!(A, stream), Ptr),
            ]
        }
        api::hipMalloc => vec![
            arg(
                c"PPv",
                c"ptr",
                2,
                offset_of!(hip_malloc_args, ptr),
                PtrToPtr,
            ),
            arg(SIZE, c"size", 0, offset_of!(hip_malloc_args, size), Usize),
        ],
        api::hipFree => vec![arg(c"Pv", c"ptr", 1, offset_of!(hip_free_args, ptr), Ptr)],
        api::hipMemcpy => {
            type A = hip_memcpy_args;
            vec![
                arg(c"Pv", c"dst", 1, offset_of!(A, dst), Ptr),
                arg(c"PKv", c"src", 1, offset_of!(A, src), Ptr),
                arg(SIZE, c"sizeBytes", 0, offset_of!(A, sizeBytes), Usize),
                arg(KIND, c"kind", 0, offset_of!(A, kind), MemcpyKind),
            ]
        }
        _ => Vec::new(),
    }
}

fn hex(v: usize) -> String {
    if v == 0 {
        "(null)".into()
    } else {
        format!("{v:#x}")
    }
}

fn dim3(d: sys::rocprofiler_dim3_t) -> String {
    format!("{{x={}, y={}, z={}}}", d.x, d.y, d.z)
}

fn memcpy_kind(k: i32) -> String {
    match k {
        0 => "hipMemcpyHostToHost".into(),
        1 => "hipMemcpyHostToDevice".into(),
        2 => "hipMemcpyDeviceToHost".into(),
        3 => "hipMemcpyDeviceToDevice".into(),
        4 => "hipMemcpyDefault".into(),
        k => k.to_string(),
    }
}

/// The argument's value as text and how often it was dereferenced.
///
/// # Safety
/// `at` points to the argument inside a live args union; pointers the
/// simulator passed are null or point to live values of their type.
unsafe fn show(a: &Arg, at: *const u8, max_deref: i32) -> (String, i32) {
    // SAFETY: `at` is inside the args union and holds a value of the
    // argument's type (the caller's contract).
    unsafe {
        let ptr = || std::ptr::read_unaligned(at as *const usize);
        let deref = |p: usize| max_deref > 0 && p != 0;
        match a.show {
            Show::Ptr => (hex(ptr()), 0),
            Show::PtrToPtr if deref(ptr()) => {
                (hex(std::ptr::read_unaligned(ptr() as *const usize)), 1)
            }
            Show::PtrToI32 if deref(ptr()) => {
                (std::ptr::read_unaligned(ptr() as *const i32).to_string(), 1)
            }
            Show::PtrToKernelParams if deref(ptr()) => {
                let p = std::ptr::read_unaligned(ptr() as *const sys::hipKernelNodeParams);
                let text = format!(
                    "{{blockDim={}, extra={}, func={}, gridDim={}, kernelParams={}, sharedMemBytes={}}}",
                    dim3(p.blockDim),
                    hex(p.extra as usize),
                    hex(p.func as usize),
                    dim3(p.gridDim),
                    hex(p.kernelParams as usize),
                    p.sharedMemBytes
                );
                (text, 1)
            }
            Show::PtrToMemsetParams if deref(ptr()) => {
                let p = std::ptr::read_unaligned(ptr() as *const sys::hipMemsetParams);
                let text = format!(
                    "{{dst={}, elementSize={}, height={}, pitch={}, value={}, width={}}}",
                    hex(p.dst as usize),
                    p.elementSize,
                    p.height,
                    p.pitch,
                    p.value,
                    p.width
                );
                (text, 1)
            }
            Show::PtrToPtr | Show::PtrToI32 | Show::PtrToKernelParams | Show::PtrToMemsetParams => {
                (hex(ptr()), 0)
            }
            Show::U32 => (std::ptr::read_unaligned(at as *const u32).to_string(), 0),
            Show::I32 => (std::ptr::read_unaligned(at as *const i32).to_string(), 0),
            Show::Usize => (ptr().to_string(), 0),
            Show::Dim3 => (
                dim3(std::ptr::read_unaligned(
                    at as *const sys::rocprofiler_dim3_t,
                )),
                0,
            ),
            Show::MemcpyKind => (memcpy_kind(std::ptr::read_unaligned(at as *const i32)), 0),
        }
    }
}

/// Calls `cb` once per argument of the HIP runtime call in `data`; stops
/// at the first non-zero return.
///
/// # Safety
/// `data` is the live payload of a HIP_RUNTIME_API callback record.
pub(crate) unsafe fn iterate_hip_args(
    kind: sys::rocprofiler_callback_tracing_kind_t,
    op: i32,
    data: *const sys::rocprofiler_callback_tracing_hip_api_data_t,
    cb: unsafe extern "C" fn(
        sys::rocprofiler_callback_tracing_kind_t,
        sys::rocprofiler_tracing_operation_t,
        u32,
        *const c_void,
        i32,
        *const std::ffi::c_char,
        *const std::ffi::c_char,
        *const std::ffi::c_char,
        i32,
        *mut c_void,
    ) -> i32,
    max_deref: i32,
    user_data: *mut c_void,
) {
    // SAFETY: the payload is live (the caller's contract); only the address
    // of its args union is taken.
    let base = unsafe { std::ptr::addr_of!((*data).args) } as *const u8;
    for (i, a) in args_of(op).iter().enumerate() {
        // SAFETY: every offset is of a field inside the 88-byte args union.
        let at = unsafe { base.add(a.offset) };
        // SAFETY: `at` points to this argument (the caller's contract).
        let (value, derefs) = unsafe { show(a, at, max_deref) };
        let value = CString::new(value).unwrap_or_default();
        // SAFETY: the tool's callback with pointers valid for the call.
        let rc = unsafe {
            cb(
                kind,
                op,
                i as u32,
                at as *const c_void,
                a.indirection,
                a.ty.as_ptr(),
                a.name.as_ptr(),
                value.as_ptr(),
                derefs,
                user_data,
            )
        };
        if rc != 0 {
            return;
        }
    }
}
