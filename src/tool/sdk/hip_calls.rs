//! Reading a HIP runtime call's arguments, as the SDK passes them to the
//! HIP API callback: the device work a call will produce (at ENTER) and how
//! a graph-changing call changed the graphs (at EXIT, when its output
//! handles are written). The only code that reads HIP argument unions.
use crate::tool::finish::captures::Captures;
use crate::tool::finish::roles::{work_of_role, Build, Role};
use crate::tool::finish::timeline::{CallArgs, TimelineCall};
use activity_store::CopyDirection;
use graph_attribution::{
    CallWork, Direction, ExecHandle, FillParts, GraphHandle, GraphStructure, HostKernel,
    NodeDetail, NodeHandle, NodeWork, Output,
};
use rocprofiler_sys::hip_memcpy_kind as kind;
use rocprofiler_sys::*;

fn dim3(d: rocprofiler_dim3_t) -> [u32; 3] {
    [d.x, d.y, d.z]
}

fn direction(kind_value: i32) -> Option<Option<Direction>> {
    Some(match kind_value {
        kind::hipMemcpyHostToHost => Some(Direction::HostToHost),
        kind::hipMemcpyHostToDevice => Some(Direction::HostToDevice),
        kind::hipMemcpyDeviceToHost => Some(Direction::DeviceToHost),
        kind::hipMemcpyDeviceToDevice => Some(Direction::DeviceToDevice),
        kind::hipMemcpyDefault => None,
        _ => return None,
    })
}

/// A copy of `bytes` in `direction`: a blit kernel or a copy-engine
/// transfer, as rocclr chooses by size, memory kind and peer access
/// (rocblit.cpp `KernelBlitManager::copyBuffer`).
fn copy_output(direction: Option<Direction>, bytes: u64) -> Output {
    Output::BlitOrCopy { direction, bytes }
}

/// The work of a call of `role` with these arguments, at ENTER. `capturing`
/// says whether a stream is being captured into a graph (its calls then add
/// nodes instead of running).
///
/// # Safety
/// `args` must be the payload of a call of `role`'s operation.
pub unsafe fn work_at_enter(
    role: Role,
    args: &rocprofiler_hip_api_args_t,
    capturing: impl Fn(u64) -> bool,
    graph_launch: impl FnOnce(ExecHandle) -> CallWork,
) -> CallWork {
    match role {
        Role::LaunchKernel => {
            // SAFETY: hipLaunchKernel and _spt share this layout (api_args.h).
            let a = unsafe { args.hipLaunchKernel };
            if capturing(a.stream as u64) {
                return CallWork::NoDevice;
            }
            CallWork::Kernel(HostKernel::from_blocks(
                a.function_address as u64,
                dim3(a.numBlocks),
                dim3(a.dimBlocks),
            ))
        }
        Role::MemcpyAsync => {
            // SAFETY: hipMemcpyAsync and _spt share this layout.
            let a = unsafe { args.hipMemcpyAsync };
            if capturing(a.stream as u64) {
                return CallWork::NoDevice;
            }
            match direction(a.kind) {
                Some(d) => CallWork::Output(copy_output(d, a.sizeBytes as u64)),
                None => CallWork::Unknown,
            }
        }
        Role::Memcpy => {
            // SAFETY: hipMemcpy's arguments.
            let a = unsafe { args.hipMemcpy };
            match direction(a.kind) {
                Some(d) => CallWork::Output(copy_output(d, a.sizeBytes as u64)),
                None => CallWork::Unknown,
            }
        }
        Role::Memset => {
            // SAFETY: hipMemsetAsync's arguments (the _spt variant and
            // hipMemset lead with the same three).
            let a = unsafe { args.hipMemsetAsync };
            match FillParts::of_1d(a.dst as u64, a.sizeBytes as u64) {
                Some(fills) => CallWork::Fill(fills),
                None => CallWork::NoDevice,
            }
        }
        Role::MemcpyPeer => {
            // SAFETY: hipMemcpyPeerAsync's arguments (hipMemcpyPeer's
            // leading five are the same).
            let a = unsafe { args.hipMemcpyPeerAsync };
            CallWork::Output(copy_output(
                Some(Direction::DeviceToDevice),
                a.sizeBytes as u64,
            ))
        }
        Role::GraphLaunch => {
            // SAFETY: hipGraphLaunch and _spt take (graphExec, stream).
            let a = unsafe { args.hipGraphLaunch };
            if capturing(a.stream as u64) {
                return CallWork::NoDevice;
            }
            graph_launch(ExecHandle(a.graphExec as u64))
        }
        other => work_of_role(other),
    }
}

/// Reads `*p` if `p` is not null.
///
/// # Safety
/// `p` is null or valid for reads during the callback.
unsafe fn read<T: Copy>(p: *const T) -> Option<T> {
    // SAFETY: per this function's contract.
    (!p.is_null()).then(|| unsafe { std::ptr::read_unaligned(p) })
}

/// The node handles an add call depends on.
///
/// # Safety
/// `deps` is null or points to `n` handles valid during the callback.
unsafe fn dependencies(deps: *const hipGraphNode_t, n: usize) -> Vec<NodeHandle> {
    if deps.is_null() {
        return Vec::new();
    }
    // SAFETY: per this function's contract.
    unsafe { std::slice::from_raw_parts(deps, n) }
        .iter()
        .map(|&d| NodeHandle(d as u64))
        .collect()
}

/// Follows a successful graph-changing call at EXIT.
///
/// # Safety
/// `args` must be the payload of a call of `build`'s operation, at EXIT of a
/// call that returned hipSuccess (its output handles are written).
pub unsafe fn follow(
    build: Build,
    args: &rocprofiler_hip_api_args_t,
    s: &GraphStructure,
    capture: &Captures,
) {
    // Every add call starts with (pGraphNode, graph, pDependencies, numDependencies).
    // SAFETY: the caller passes the payload of an add call for the add arms.
    let add_with = |work: NodeWork, detail: NodeDetail| unsafe {
        let a = args.hipGraphAddEmptyNode;
        if let Some(node) = read(a.pGraphNode) {
            s.node_added_with(
                GraphHandle(a.graph as u64),
                NodeHandle(node as u64),
                &dependencies(a.pDependencies, a.numDependencies),
                work,
                detail,
            );
        }
    };
    let add = |work: NodeWork| add_with(work, NodeDetail::None);
    // SAFETY: in every arm the union member read is the one of `build`'s
    // operation, whose output handles the call wrote before EXIT; `read`
    // and `dependencies` get pointers from those arguments.
    unsafe {
        match build {
            Build::Create => {
                if let Some(g) = read(args.hipGraphCreate.pGraph) {
                    s.graph_created(GraphHandle(g as u64));
                }
            }
            Build::AddKernelNode => {
                let a = args.hipGraphAddKernelNode;
                let work = match read(a.pNodeParams) {
                    Some(p) => NodeWork::Kernel(HostKernel::from_blocks(
                        p.func as u64,
                        dim3(p.gridDim),
                        dim3(p.blockDim),
                    )),
                    None => NodeWork::Unknown,
                };
                add(work);
            }
            Build::AddMemcpyNode1D => {
                let a = args.hipGraphAddMemcpyNode1D;
                add(match direction(a.kind) {
                    Some(direction) => NodeWork::Memcpy {
                        direction,
                        bytes: a.count as u64,
                    },
                    None => NodeWork::Unknown,
                });
            }
            Build::AddMemsetNode => {
                let a = args.hipGraphAddMemsetNode;
                match read(a.pMemsetParams) {
                    Some(p) => {
                        let row = (p.width as u64).saturating_mul(u64::from(p.elementSize.max(1)));
                        // hip_graph_internal.hpp `GraphMemsetNode`: one row
                        // is a 1-D fill, more rows a 2-D one.
                        let bytes = row.saturating_mul(p.height.max(1) as u64);
                        let fills = if p.height > 1 {
                            Some(FillParts::two_d(bytes))
                        } else {
                            FillParts::of_1d(p.dst as u64, row)
                        };
                        let detail = NodeDetail::Memset {
                            bytes,
                            value: p.value,
                        };
                        match fills {
                            Some(fills) => add_with(NodeWork::Memset(fills), detail),
                            None => add(NodeWork::Unknown),
                        }
                    }
                    None => add(NodeWork::Unknown),
                }
            }
            Build::AddHostNode => {
                let a = args.hipGraphAddHostNode;
                let detail = match read(a.pNodeParams) {
                    Some(p) => NodeDetail::Host {
                        function: p.fn_ as u64,
                    },
                    None => NodeDetail::None,
                };
                add_with(NodeWork::NoDispatch, detail)
            }
            Build::AddEventRecordNode => {
                let event = args.hipGraphAddEventRecordNode.event as u64;
                add_with(NodeWork::NoDispatch, NodeDetail::EventRecord { event })
            }
            Build::AddOtherNode(work) => add(work),
            Build::Clone => {
                let a = args.hipGraphClone;
                if let Some(clone) = read(a.pGraphClone) {
                    s.graph_cloned(
                        GraphHandle(a.originalGraph as u64),
                        GraphHandle(clone as u64),
                    );
                }
            }
            Build::Destroy => s.graph_destroyed(GraphHandle(args.hipGraphDestroy.graph as u64)),
            Build::Instantiate => {
                let a = args.hipGraphInstantiate;
                if let Some(exec) = read(a.pGraphExec) {
                    s.exec_instantiated(ExecHandle(exec as u64), GraphHandle(a.graph as u64));
                }
            }
            Build::ExecUpdate => {
                let a = args.hipGraphExecUpdate;
                s.exec_updated(
                    ExecHandle(a.hGraphExec as u64),
                    GraphHandle(a.hGraph as u64),
                );
            }
            Build::ExecDestroy => {
                s.exec_destroyed(ExecHandle(args.hipGraphExecDestroy.graphExec as u64))
            }
            Build::GraphChanged => s.graph_changed_untracked(GraphHandle(args.raw[0])),
            Build::NodeChanged => s.node_changed_untracked(NodeHandle(args.raw[0])),
            Build::ExecChanged => s.exec_changed_untracked(ExecHandle(args.raw[0])),
            Build::BeginCapture => capture.begin(args.hipStreamBeginCapture.stream as u64),
            Build::EndCapture => {
                let a = args.hipStreamEndCapture;
                capture.end(a.stream as u64);
                if let Some(g) = read(a.pGraph) {
                    // Captured work is not followed node by node yet: the graph
                    // is known to exist, not what it runs.
                    s.graph_created(GraphHandle(g as u64));
                    s.graph_changed_untracked(GraphHandle(g as u64));
                }
            }
        }
    }
}

/// What the timeline reads from a call's arguments at ENTER.
///
/// # Safety
/// `args` must be the payload of a call of `call`'s operation.
pub unsafe fn timeline_args(
    call: TimelineCall,
    args: &rocprofiler_hip_api_args_t,
) -> Option<CallArgs> {
    let copy_direction = |k: i32| match direction(k) {
        Some(Some(Direction::HostToHost)) => CopyDirection::HostToHost,
        Some(Some(Direction::HostToDevice)) => CopyDirection::HostToDevice,
        Some(Some(Direction::DeviceToHost)) => CopyDirection::DeviceToHost,
        Some(Some(Direction::DeviceToDevice)) => CopyDirection::DeviceToDevice,
        _ => CopyDirection::Unknown,
    };
    // SAFETY: in every arm the union member read is the one of `call`'s
    // operation (the _spt variants share their layouts; hipMemset and
    // hipMemcpy lead with the async variants' arguments).
    Some(unsafe {
        match call {
            TimelineCall::Memset => {
                let a = args.hipMemsetAsync;
                CallArgs::Memset {
                    dst: a.dst as u64,
                    bytes: a.sizeBytes as u64,
                    value: (a.value as u32) & 0xff,
                }
            }
            TimelineCall::Copy => {
                let a = args.hipMemcpy;
                CallArgs::Copy {
                    bytes: a.sizeBytes as u64,
                    direction: copy_direction(a.kind),
                }
            }
            TimelineCall::PeerCopy => {
                let a = args.hipMemcpyPeerAsync;
                CallArgs::PeerCopy {
                    bytes: a.sizeBytes as u64,
                    src_device: a.srcDevice,
                    dst_device: a.dstDeviceId,
                }
            }
            TimelineCall::StreamSync => CallArgs::StreamSync,
            TimelineCall::DeviceSync => CallArgs::DeviceSync,
            TimelineCall::EventSync => CallArgs::EventSync {
                event: args.hipEventSynchronize.event as u64,
            },
            TimelineCall::StreamWaitEvent => CallArgs::StreamWaitEvent {
                event: args.hipStreamWaitEvent.event as u64,
            },
            TimelineCall::EventRecord => CallArgs::EventRecord {
                event: args.hipEventRecord.event as u64,
            },
            TimelineCall::HostFunc => CallArgs::HostFunc {
                function: args.hipLaunchHostFunc.fn_ as u64,
            },
            TimelineCall::SetDevice => CallArgs::SetDevice {
                device: args.hipSetDevice.deviceId,
            },
        }
    })
}
