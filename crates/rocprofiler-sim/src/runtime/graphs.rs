//! Graphs and execs through the HIP graph API.
//!
//! - A graph is built once per run, by the first thread that instantiates
//!   (or updates to) it, or by the setup thread for shared execs:
//!   hipGraphCreate, then per node in creation order hipGraphAddKernelNode
//!   (`func` = the kernel's host stub), hipGraphAddMemcpyNode1D or
//!   hipGraphAddMemsetNode, each with its dependencies' node handles. Every
//!   built graph is destroyed (hipGraphDestroy) when the run ends.
//! - A graph's events (named by its event-record and event-wait nodes) are
//!   created with hipEventCreate just before the first node naming each;
//!   hipGraphAddEventRecordNode / hipGraphAddEventWaitNode carry the
//!   hipEvent_t (hip_graph.cpp `hipGraphAddEventRecordNode`: the node keeps
//!   the event; nothing is recorded until a launch).
//! - hipGraphExecUpdate keeps the exec handle and its SDK graph_exec_id and
//!   swaps the nodes; it needs an identical topology (node kinds and deps),
//!   else it returns hipErrorGraphExecUpdateFailure (910) and leaves the
//!   exec unchanged.
//! - hipGraphExecDestroy frees the handle for the next instantiate.
use super::calls::HipCall;
use super::context::Ctx;
use super::handles::{
    alloc_exec_handle, alloc_graph_handle, free_exec_handle, free_graph_handle, new_exec_id,
    new_node_handle,
};
use super::timeline::hip_event_create;
use crate::sdk::graph_trace::graph_event;
use crate::sdk::kernels::host_stub;
use crate::sdk::os::{lock, tid};
use crate::truth::ExecEvent;
use crate::workload::{NodeWork, Workload};
use rocprofiler_sys as sys;
use rocprofiler_sys::hip_runtime_api_id as api;
use std::collections::HashMap;
use std::ffi::c_void;

/// hipErrorGraphExecUpdateFailure.
const HIP_ERROR_GRAPH_EXEC_UPDATE_FAILURE: i32 = 910;
/// hipGraphExecUpdateErrorTopologyChanged.
const HIP_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED: i32 = 2;

/// Where the simulated buffers of copies and memsets live.
pub(crate) const DST_ADDRESS: u64 = 0x9000_0000;
pub(crate) const SRC_ADDRESS: u64 = 0x8000_0000;
/// The host function every host node and hipLaunchHostFunc runs (an
/// address the tool may show; nothing is called).
pub(crate) const HOST_FN_ADDRESS: u64 = 0x4000_1000;

fn dim(v: [u32; 3]) -> sys::rocprofiler_dim3_t {
    sys::rocprofiler_dim3_t {
        x: v[0],
        y: v[1],
        z: v[2],
    }
}

/// A graph built through the HIP graph API.
pub(crate) struct Built {
    pub handle: u64,
    /// The hipEvent_t of each event its nodes name.
    pub events: HashMap<String, u64>,
}

/// Graph `gi`, built through the HIP graph API by the first thread that
/// needs it (others wait until it is built).
pub(crate) fn built_graph<'c>(ctx: &'c Ctx, gi: usize) -> &'c Built {
    ctx.built[gi].get_or_init(|| build(ctx, gi))
}

/// The handle of graph `gi` (built if it was not).
pub(crate) fn built(ctx: &Ctx, gi: usize) -> u64 {
    built_graph(ctx, gi).handle
}

/// hipGraphCreate and one hipGraphAdd*Node per node.
fn build(ctx: &Ctx, gi: usize) -> Built {
    let graph = &ctx.w.graphs[gi];
    let mut out: sys::hipGraph_t = std::ptr::null_mut();
    let p_out: *mut sys::hipGraph_t = &mut out;
    let mut args = sys::rocprofiler_hip_api_args_t::default();
    args.hipGraphCreate = sys::hip_graph_create_args {
        pGraph: p_out,
        flags: 0,
    };
    let call = HipCall::enter(&ctx.shared, api::hipGraphCreate, args, None);
    let handle = alloc_graph_handle();
    // SAFETY: `p_out` points to `out`, live across the call; the tool reads
    // *pGraph at EXIT.
    unsafe { p_out.write(handle as sys::hipGraph_t) };
    call.exit(sys::HIP_SUCCESS);
    let mut nodes: Vec<sys::hipGraphNode_t> = Vec::with_capacity(graph.nodes.len());
    let mut events: HashMap<String, u64> = HashMap::new();
    for node in &graph.nodes {
        let deps: Vec<sys::hipGraphNode_t> = node.deps.iter().map(|&d| nodes[d]).collect();
        let mut out: sys::hipGraphNode_t = std::ptr::null_mut();
        let p_out: *mut sys::hipGraphNode_t = &mut out;
        let deps_ptr = if deps.is_empty() {
            std::ptr::null()
        } else {
            deps.as_ptr()
        };
        let mut args = sys::rocprofiler_hip_api_args_t::default();
        let kernel_params;
        let memset_params;
        let host_params;
        let mut event = None;
        let op = match node.work() {
            NodeWork::Kernel { name, grid, block } => {
                kernel_params = sys::hipKernelNodeParams {
                    blockDim: dim(block),
                    extra: std::ptr::null_mut(),
                    func: host_stub(ctx.kernels[name].0) as *mut c_void,
                    gridDim: dim(grid),
                    kernelParams: std::ptr::null_mut(),
                    sharedMemBytes: 0,
                };
                args.hipGraphAddKernelNode = sys::hip_graph_add_kernel_node_args {
                    pGraphNode: p_out,
                    graph: handle as sys::hipGraph_t,
                    pDependencies: deps_ptr,
                    numDependencies: deps.len(),
                    pNodeParams: &kernel_params,
                };
                api::hipGraphAddKernelNode
            }
            NodeWork::Memcpy(m) => {
                args.hipGraphAddMemcpyNode1D = sys::hip_graph_add_memcpy_node_1d_args {
                    pGraphNode: p_out,
                    graph: handle as sys::hipGraph_t,
                    pDependencies: deps_ptr,
                    numDependencies: deps.len(),
                    dst: DST_ADDRESS as *mut c_void,
                    src: SRC_ADDRESS as *const c_void,
                    count: m.bytes as usize,
                    kind: m.direction.hip_kind(),
                };
                api::hipGraphAddMemcpyNode1D
            }
            NodeWork::Memset(m) => {
                memset_params = sys::hipMemsetParams {
                    dst: (DST_ADDRESS + m.offset) as *mut c_void,
                    elementSize: 1,
                    height: 1,
                    pitch: 0,
                    value: m.value,
                    width: m.bytes as usize,
                };
                args.hipGraphAddMemsetNode = sys::hip_graph_add_memset_node_args {
                    pGraphNode: p_out,
                    graph: handle as sys::hipGraph_t,
                    pDependencies: deps_ptr,
                    numDependencies: deps.len(),
                    pMemsetParams: &memset_params,
                };
                api::hipGraphAddMemsetNode
            }
            NodeWork::Host(_) => {
                host_params = sys::hipHostNodeParams {
                    fn_: HOST_FN_ADDRESS as sys::hipHostFn_t,
                    userData: std::ptr::null_mut(),
                };
                args.hipGraphAddHostNode = sys::hip_graph_add_host_node_args {
                    pGraphNode: p_out,
                    graph: handle as sys::hipGraph_t,
                    pDependencies: deps_ptr,
                    numDependencies: deps.len(),
                    pNodeParams: &host_params,
                };
                api::by_name("hipGraphAddHostNode").expect("in the table")
            }
            NodeWork::Empty => {
                args.hipGraphAddEmptyNode = sys::hip_graph_add_empty_node_args {
                    pGraphNode: p_out,
                    graph: handle as sys::hipGraph_t,
                    pDependencies: deps_ptr,
                    numDependencies: deps.len(),
                };
                api::hipGraphAddEmptyNode
            }
            NodeWork::EventRecord(name) | NodeWork::EventWait(name) => {
                let e = *events
                    .entry(name.to_string())
                    .or_insert_with(|| hip_event_create(ctx));
                event = Some(e);
                let a = sys::hip_graph_add_event_node_args {
                    pGraphNode: p_out,
                    graph: handle as sys::hipGraph_t,
                    pDependencies: deps_ptr,
                    numDependencies: deps.len(),
                    event: e as sys::hipEvent_t,
                };
                let name = if matches!(node.work(), NodeWork::EventRecord(_)) {
                    args.hipGraphAddEventRecordNode = a;
                    "hipGraphAddEventRecordNode"
                } else {
                    args.hipGraphAddEventWaitNode = a;
                    "hipGraphAddEventWaitNode"
                };
                api::by_name(name).expect("in the table")
            }
        };
        let mut call = HipCall::enter(&ctx.shared, op, args, None);
        call.event = event;
        let node_handle = new_node_handle() as sys::hipGraphNode_t;
        // SAFETY: `p_out` points to `out`, live across the call.
        unsafe { p_out.write(node_handle) };
        call.exit(sys::HIP_SUCCESS);
        nodes.push(node_handle);
    }
    Built { handle, events }
}

/// hipGraphDestroy; the handle may be handed out again.
pub(crate) fn destroy_graph(ctx: &Ctx, handle: u64) {
    let mut args = sys::rocprofiler_hip_api_args_t::default();
    args.hipGraphDestroy = sys::hip_graph_destroy_args {
        graph: handle as sys::hipGraph_t,
    };
    let call = HipCall::enter(&ctx.shared, api::hipGraphDestroy, args, None);
    free_graph_handle(handle);
    call.exit(sys::HIP_SUCCESS);
}

/// An instantiated graph.
pub(crate) struct Exec<E> {
    pub handle: u64,
    pub exec_id: u64,
    /// The graph whose nodes it runs (changes with updates).
    pub graph: usize,
    /// Successful updates so far.
    pub epoch: u32,
    /// What the submission model keeps per exec.
    pub model: E,
}

/// hipGraphInstantiate of built graph `gi`; `model` runs inside the call.
pub(crate) fn instantiate<E>(ctx: &Ctx, gi: usize, model: impl FnOnce() -> E) -> Exec<E> {
    let graph = built(ctx, gi);
    let mut out: sys::hipGraphExec_t = std::ptr::null_mut();
    let p_out: *mut sys::hipGraphExec_t = &mut out;
    let mut args = sys::rocprofiler_hip_api_args_t::default();
    args.hipGraphInstantiate = sys::hip_graph_instantiate_args {
        pGraphExec: p_out,
        graph: graph as sys::hipGraph_t,
        pErrorNode: std::ptr::null_mut(),
        pLogBuffer: std::ptr::null_mut(),
        bufferSize: 0,
    };
    let call = HipCall::enter(&ctx.shared, api::hipGraphInstantiate, args, None);
    let handle = alloc_exec_handle();
    let exec_id = new_exec_id();
    let model = model();
    // SAFETY: `p_out` points to `out`, live across the call; the tool reads
    // *pGraphExec at EXIT.
    unsafe { p_out.write(handle as sys::hipGraphExec_t) };
    graph_event(
        sys::rocprofiler_hip_graph_operation_t::EXEC_CREATE,
        call.corr(),
        exec_id,
        handle,
    );
    lock(&ctx.shared.truth).exec_events.push(ExecEvent {
        event: "instantiate".into(),
        correlation_id: call.corr(),
        thread: tid(),
        exec_handle: handle,
        graph_exec_id: exec_id,
        graph: Some(ctx.w.graphs[gi].name.clone()),
    });
    call.exit(sys::HIP_SUCCESS);
    Exec {
        handle,
        exec_id,
        graph: gi,
        epoch: 0,
        model,
    }
}

fn same_topology(w: &Workload, a: usize, b: usize) -> bool {
    let (ga, gb) = (&w.graphs[a], &w.graphs[b]);
    let kind = |n: &crate::workload::Node| match n.work() {
        NodeWork::Kernel { .. } => 0,
        NodeWork::Memcpy(_) => 1,
        NodeWork::Memset(_) => 2,
        NodeWork::Host(_) => 3,
        NodeWork::Empty => 4,
        NodeWork::EventRecord(_) => 5,
        NodeWork::EventWait(_) => 6,
    };
    ga.nodes.len() == gb.nodes.len()
        && ga
            .nodes
            .iter()
            .zip(&gb.nodes)
            .all(|(x, y)| x.deps == y.deps && kind(x) == kind(y))
}

/// hipGraphExecUpdate of `e` to built graph `gi`.
pub(crate) fn update<E>(ctx: &Ctx, e: &mut Exec<E>, gi: usize) {
    let graph = built(ctx, gi);
    let mut error_node: sys::hipGraphNode_t = std::ptr::null_mut();
    let mut result: i32 = -1;
    let p_result: *mut i32 = &mut result;
    let mut args = sys::rocprofiler_hip_api_args_t::default();
    args.hipGraphExecUpdate = sys::hip_graph_exec_update_args {
        hGraphExec: e.handle as sys::hipGraphExec_t,
        hGraph: graph as sys::hipGraph_t,
        hErrorNode_out: &mut error_node,
        updateResult_out: p_result,
    };
    let call = HipCall::enter(&ctx.shared, api::hipGraphExecUpdate, args, None);
    let ok = same_topology(ctx.w, e.graph, gi);
    let code = if ok {
        sys::HIP_GRAPH_EXEC_UPDATE_SUCCESS
    } else {
        HIP_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED
    };
    // SAFETY: `p_result` points to `result`, live across the call.
    unsafe { p_result.write(code) };
    if ok {
        e.graph = gi;
        e.epoch += 1;
    }
    lock(&ctx.shared.truth).exec_events.push(ExecEvent {
        event: if ok { "update" } else { "update_failed" }.into(),
        correlation_id: call.corr(),
        thread: tid(),
        exec_handle: e.handle,
        graph_exec_id: e.exec_id,
        graph: Some(ctx.w.graphs[gi].name.clone()),
    });
    call.exit(if ok {
        sys::HIP_SUCCESS
    } else {
        HIP_ERROR_GRAPH_EXEC_UPDATE_FAILURE
    });
}

/// hipGraphExecDestroy; `model` runs inside the call.
pub(crate) fn destroy<E>(ctx: &Ctx, e: Exec<E>, model: impl FnOnce(E)) {
    let mut args = sys::rocprofiler_hip_api_args_t::default();
    args.hipGraphExecDestroy = sys::hip_graph_exec_destroy_args {
        graphExec: e.handle as sys::hipGraphExec_t,
    };
    let call = HipCall::enter(&ctx.shared, api::hipGraphExecDestroy, args, None);
    graph_event(
        sys::rocprofiler_hip_graph_operation_t::EXEC_DESTROY,
        call.corr(),
        e.exec_id,
        e.handle,
    );
    model(e.model);
    free_exec_handle(e.handle);
    lock(&ctx.shared.truth).exec_events.push(ExecEvent {
        event: "destroy".into(),
        correlation_id: call.corr(),
        thread: tid(),
        exec_handle: e.handle,
        graph_exec_id: e.exec_id,
        graph: None,
    });
    call.exit(sys::HIP_SUCCESS);
}
