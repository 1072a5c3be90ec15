//! What each HIP runtime call does, as graph attribution needs to know it:
//! whether it can write packets to a hardware queue, what records it
//! produces (read from its arguments at ENTER), and how it changes graphs
//! (read at EXIT, when its output handles are written).
//!
//! Every operation of the SDK's HIP runtime table gets a role once, from its
//! name. Calls known not to touch a queue are `NoDevice`; calls that may
//! write packets but produce no record (events, waits, synchronisation) are
//! `Barrier`; a call the tool does not model is `Unknown`, which the
//! attribution rules treat as "may have produced anything". Erring towards
//! `Unknown` only withholds more.
use graph_attribution::{
    BlitKind, CallWork, Direction, ExecHandle, GraphHandle, GraphStructure, HostKernel, NodeHandle,
    NodeWork, Output,
};
use once_cell::sync::Lazy;
use rocprofiler_sys::hip_api_names::RUNTIME_API_NAMES;
use rocprofiler_sys::hip_memcpy_kind as kind;
use rocprofiler_sys::*;

/// How a graph-changing call is followed (read at EXIT).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Build {
    Create,
    AddKernelNode,
    AddMemcpyNode1D,
    AddMemsetNode,
    /// Another hipGraphAdd*Node (same leading arguments), with the work its
    /// kind implies.
    AddOtherNode(NodeWork),
    Clone,
    Destroy,
    Instantiate,
    ExecUpdate,
    ExecDestroy,
    /// The first argument is a graph changed in a way not modelled.
    GraphChanged,
    /// The first argument is a node changed in a way not modelled.
    NodeChanged,
    /// The first argument is an exec changed in a way not modelled.
    ExecChanged,
    BeginCapture,
    EndCapture,
}

/// What one HIP runtime operation is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    NoDevice,
    Barrier,
    Unknown,
    LaunchKernel,
    MemcpyAsync,
    Memcpy,
    Memset,
    GraphLaunch,
    Build(Build),
}

impl Role {
    /// Can a call of this role write an AQL packet?
    pub fn writes_packets(self) -> bool {
        !matches!(self, Role::NoDevice | Role::Build(_))
    }
}

fn role_of(name: &str) -> Role {
    use Build::*;
    match name {
        "hipLaunchKernel" | "hipLaunchKernel_spt" => return Role::LaunchKernel,
        "hipMemcpyAsync" | "hipMemcpyAsync_spt" => return Role::MemcpyAsync,
        "hipMemcpy" | "hipMemcpy_spt" => return Role::Memcpy,
        "hipMemsetAsync" | "hipMemsetAsync_spt" | "hipMemset" | "hipMemset_spt" => {
            return Role::Memset
        }
        "hipGraphLaunch" | "hipGraphLaunch_spt" => return Role::GraphLaunch,
        "hipGraphCreate" => return Role::Build(Create),
        "hipGraphAddKernelNode" => return Role::Build(AddKernelNode),
        "hipGraphAddMemcpyNode1D" => return Role::Build(AddMemcpyNode1D),
        "hipGraphAddMemsetNode" => return Role::Build(AddMemsetNode),
        "hipGraphClone" => return Role::Build(Clone),
        "hipGraphDestroy" => return Role::Build(Destroy),
        "hipGraphInstantiate"
        | "hipGraphInstantiateWithFlags"
        | "hipGraphInstantiateWithParams" => return Role::Build(Instantiate),
        "hipGraphExecUpdate" => return Role::Build(ExecUpdate),
        "hipGraphExecDestroy" => return Role::Build(ExecDestroy),
        "hipStreamBeginCapture" => return Role::Build(BeginCapture),
        "hipStreamEndCapture" => return Role::Build(EndCapture),
        "hipGraphAddDependencies" | "hipGraphRemoveDependencies" | "hipGraphAddDependencies_v2" => {
            return Role::Build(GraphChanged)
        }
        "hipGraphDestroyNode" => return Role::Build(NodeChanged),
        _ => {}
    }
    if name.starts_with("hipGraphAdd") && name.ends_with("Node") {
        let quiet = ["Empty", "EventRecord", "EventWait", "Host"]
            .iter()
            .any(|k| name.contains(k));
        return Role::Build(AddOtherNode(if quiet {
            NodeWork::NoDispatch
        } else {
            NodeWork::Unknown
        }));
    }
    if name.starts_with("hipGraphExec") && name.contains("Set") {
        return Role::Build(ExecChanged);
    }
    if name.starts_with("hipGraph") && name.contains("NodeSet") {
        return Role::Build(NodeChanged);
    }
    if name.starts_with("hipStreamBeginCapture") {
        // hipStreamBeginCaptureToGraph: capture appends to an existing graph.
        return Role::Build(GraphChanged);
    }
    const NO_DEVICE: &[&str] = &[
        "hipGet",
        "hipDeviceGet",
        "hipDriverGet",
        "hipRuntimeGet",
        "hipPeekAtLastError",
        "hipMalloc",
        "hipHostMalloc",
        "hipHostAlloc",
        "hipHostGet",
        "hipHostRegister",
        "hipHostUnregister",
        "hipSetDevice",
        "hipSetValidDevices",
        "hipStreamCreate",
        "hipStreamGet",
        "hipStreamIsCapturing",
        "hipEventCreate",
        "hipEventDestroy",
        "hipEventQuery",
        "hipEventElapsedTime",
        "hipGraphGet",
        "hipGraphNodeGet",
        "hipGraphKernelNodeGet",
        "hipGraphMemcpyNodeGet",
        "hipGraphMemsetNodeGet",
        "hipGraphHostNodeGet",
        "hipGraphChildGraphNodeGet",
        "hipGraphEventRecordNodeGet",
        "hipGraphEventWaitNodeGet",
        "hipGraphDebug",
        "hipGraphRetain",
        "hipGraphRelease",
        "hipUserObject",
        "hipPointerGet",
        "hipFuncGet",
        "hipFuncSet",
        "hipModuleLoad",
        "hipModuleGet",
        "hipModuleUnload",
        "hipCtx",
        "hipDeviceCanAccessPeer",
        "hipDeviceComputeCapability",
        "hipDeviceTotalMem",
        "hipDevicePrimaryCtx",
        "hipChooseDevice",
        "hipInit",
        "hipMemGetInfo",
        "hipMemPtrGetInfo",
        "hipMemGetAddressRange",
        "hipOccupancy",
        "hipIpcGet",
        "hipIpcOpen",
        "hipIpcClose",
        "hipDeviceSetCacheConfig",
        "hipDeviceSetSharedMemConfig",
        "hipDeviceSetLimit",
        "hipGetErrorName",
        "hipGetErrorString",
        "hipProfilerStart",
        "hipProfilerStop",
        "hipApiName",
        "hipKernelNameRef",
    ];
    const BARRIER: &[&str] = &[
        "hipEventRecord",
        "hipStreamWaitEvent",
        "hipStreamSynchronize",
        "hipDeviceSynchronize",
        "hipEventSynchronize",
        "hipStreamQuery",
        "hipLaunchHostFunc",
        "hipStreamAddCallback",
        "hipFree",
        "hipHostFree",
        "hipFreeHost",
        "hipStreamDestroy",
        "hipDeviceReset",
    ];
    // Stream-ordered variants (hipMallocAsync, ...) may write markers.
    if NO_DEVICE.iter().any(|p| name.starts_with(p)) && !name.contains("Async") {
        Role::NoDevice
    } else if BARRIER.iter().any(|p| name.starts_with(p)) {
        Role::Barrier
    } else {
        Role::Unknown
    }
}

static ROLES: Lazy<Vec<Role>> =
    Lazy::new(|| RUNTIME_API_NAMES.iter().map(|n| role_of(n)).collect());

/// The role of HIP runtime operation `op` (`Unknown` past the table).
pub fn role(op: i32) -> Role {
    usize::try_from(op)
        .ok()
        .and_then(|i| ROLES.get(i))
        .copied()
        .unwrap_or(Role::Unknown)
}

/// What a call whose work is not read from its arguments may do.
pub fn work_of_role(role: Role) -> CallWork {
    match role {
        Role::NoDevice | Role::Build(_) => CallWork::NoDevice,
        Role::Barrier => CallWork::Barrier,
        _ => CallWork::Unknown,
    }
}

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
        Role::Memset => CallWork::Output(Output::Blit(BlitKind::Fill)),
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
    let add = |work: NodeWork| unsafe {
        let a = args.hipGraphAddEmptyNode;
        if let Some(node) = read(a.pGraphNode) {
            s.node_added(
                GraphHandle(a.graph as u64),
                NodeHandle(node as u64),
                &dependencies(a.pDependencies, a.numDependencies),
                work,
            );
        }
    };
    // SAFETY (all arms): the union member read matches `build`'s operation.
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
            Build::AddMemsetNode => add(NodeWork::Memset),
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

/// Streams being captured into a graph: their calls add nodes instead of
/// running.
#[derive(Debug, Default)]
pub struct Captures {
    streams: std::sync::Mutex<Vec<u64>>,
    any: std::sync::atomic::AtomicBool,
}

impl Captures {
    fn begin(&self, stream: u64) {
        let mut s = self.streams.lock().unwrap_or_else(|p| p.into_inner());
        s.push(stream);
        self.any.store(true, std::sync::atomic::Ordering::Release);
    }

    fn end(&self, stream: u64) {
        let mut s = self.streams.lock().unwrap_or_else(|p| p.into_inner());
        s.retain(|&x| x != stream);
        self.any
            .store(!s.is_empty(), std::sync::atomic::Ordering::Release);
    }

    /// Is `stream` being captured? One atomic load when nothing is.
    pub fn capturing(&self, stream: u64) -> bool {
        self.any.load(std::sync::atomic::Ordering::Acquire)
            && self
                .streams
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .contains(&stream)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocprofiler_sys::hip_runtime_api_id as id;

    #[test]
    fn every_operation_has_a_role_and_the_simulated_ones_the_right_one() {
        assert_eq!(ROLES.len(), RUNTIME_API_NAMES.len());
        assert_eq!(role(id::hipLaunchKernel), Role::LaunchKernel);
        assert_eq!(role(id::hipGraphLaunch), Role::GraphLaunch);
        assert_eq!(role(id::hipMemsetAsync), Role::Memset);
        assert_eq!(
            role(id::hipGraphAddKernelNode),
            Role::Build(Build::AddKernelNode)
        );
        assert_eq!(role(id::hipGraphExecUpdate), Role::Build(Build::ExecUpdate));
        assert_eq!(role(id::hipStreamCreate), Role::NoDevice);
        assert_eq!(role(id::hipStreamSynchronize), Role::Barrier);
        assert_eq!(role(id::hipModuleLaunchKernel), Role::Unknown);
        assert_eq!(role(-1), Role::Unknown);
        assert_eq!(role(100_000), Role::Unknown);
        let by_name =
            |n: &str| role(RUNTIME_API_NAMES.iter().position(|x| *x == n).unwrap() as i32);
        assert_eq!(
            by_name("hipGraphAddHostNode"),
            Role::Build(Build::AddOtherNode(NodeWork::NoDispatch))
        );
        assert_eq!(
            by_name("hipGraphAddChildGraphNode"),
            Role::Build(Build::AddOtherNode(NodeWork::Unknown))
        );
        assert_eq!(
            by_name("hipGraphExecKernelNodeSetParams"),
            Role::Build(Build::ExecChanged)
        );
        assert_eq!(
            by_name("hipGraphKernelNodeSetParams"),
            Role::Build(Build::NodeChanged)
        );
        assert_eq!(
            by_name("hipGraphUpload"),
            Role::Unknown,
            "may write packets"
        );
        assert_eq!(
            by_name("hipExtLaunchKernel"),
            Role::Unknown,
            "not modelled: anything"
        );
    }
}
