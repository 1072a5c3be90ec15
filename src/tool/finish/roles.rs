//! What each HIP runtime call does, as graph attribution needs to know it:
//! whether it can write packets to a hardware queue, what records it can
//! produce, and whether it changes graphs.
//!
//! Every operation of the SDK's HIP runtime table gets a role once, from its
//! name. Calls known not to touch a queue are `NoDevice`; calls that may
//! write packets but produce no record (events, waits, synchronisation) are
//! `Barrier`; a call the tool does not model is `Unknown`, which the
//! attribution rules treat as "may have produced anything". Erring towards
//! `Unknown` only withholds more.
use graph_attribution::{CallWork, NodeWork};
use once_cell::sync::Lazy;
use rocprofiler_sys::hip_api_names::RUNTIME_API_NAMES;

/// How a graph-changing call is followed (read at EXIT).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Build {
    Create,
    AddKernelNode,
    AddMemcpyNode1D,
    AddMemsetNode,
    /// hipGraphAddHostNode: no dispatch; its function is kept for the
    /// timeline.
    AddHostNode,
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
    /// hipMemcpyPeerAsync / hipMemcpyPeer: a device-to-device copy.
    MemcpyPeer,
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
        "hipMemcpyPeerAsync" | "hipMemcpyPeer" => return Role::MemcpyPeer,
        "hipGraphLaunch" | "hipGraphLaunch_spt" => return Role::GraphLaunch,
        "hipGraphAddHostNode" => return Role::Build(AddHostNode),
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
            Role::Build(Build::AddHostNode)
        );
        assert_eq!(
            by_name("hipGraphAddEventRecordNode"),
            Role::Build(Build::AddOtherNode(NodeWork::NoDispatch))
        );
        assert_eq!(by_name("hipMemcpyPeerAsync"), Role::MemcpyPeer);
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
