//! The SDK's view of graphs, read into the attribution evidence: every HIP
//! runtime call's ENTER and EXIT (with its argument payload), and the SDK
//! 1.3+ HIP_GRAPH domain's exec lifecycle.
use super::hip_calls;
use crate::tool::finish::attribution::Attribution;
use crate::tool::finish::roles::{self, Build, Role};
use graph_attribution::{ExecHandle, LaunchCall, LaunchedExec};
use rocprofiler_sys::*;

/// A HIP runtime call's ENTER or EXIT, on its thread, at `now_ns`;
/// `collecting` says whether a window is open.
pub fn on_hip_api(
    attribution: &Attribution,
    operation: i32,
    phase: rocprofiler_callback_phase_t,
    call: LaunchCall,
    data: &rocprofiler_callback_tracing_hip_api_data_t,
    now_ns: u64,
    collecting: bool,
) {
    let role = roles::role(operation);
    let enter = phase == rocprofiler_callback_phase_t::ENTER;
    let exit = phase == rocprofiler_callback_phase_t::EXIT;
    if enter {
        attribution.call_entered(call, role.writes_packets(), now_ns);
    } else if exit {
        attribution.call_exited(call, role.writes_packets(), now_ns);
    }
    if enter && collecting && attribution.reads_call_work() {
        // SAFETY: `data.args` is the payload of `operation`, whose role this is.
        let work = unsafe {
            hip_calls::work_at_enter(
                role,
                &data.args,
                |stream| attribution.captures().capturing(stream),
                |exec| attribution.graph_launch_work(exec),
            )
        };
        attribution.record_work(call, work);
    }
    // SAFETY: the retval member is plain data.
    let succeeded = exit && unsafe { data.retval.hipError_t_retval } == HIP_SUCCESS;
    if succeeded {
        if let Role::Build(build) = role {
            // SAFETY: `data.args` is the payload of a successful call of
            // `build`'s operation, at EXIT.
            unsafe {
                hip_calls::follow(
                    build,
                    &data.args,
                    attribution.structure(),
                    attribution.captures(),
                )
            };
        }
    }
    track_exec_ids(attribution, operation, role, phase, call, data, succeeded);
}

/// Exec lifecycle and, for the launch-stack method, launches (SDK < 1.3 sees them
/// only through the runtime API; updates are seen only there on every
/// version).
fn track_exec_ids(
    attribution: &Attribution,
    operation: i32,
    role: Role,
    phase: rocprofiler_callback_phase_t,
    call: LaunchCall,
    data: &rocprofiler_callback_tracing_hip_api_data_t,
    succeeded: bool,
) {
    use hip_runtime_api_id as op;
    let tracker = attribution.tracker();
    match role {
        Role::Build(Build::ExecUpdate) if succeeded => {
            // SAFETY: hipGraphExecUpdate's arguments.
            let handle = unsafe { data.args.hipGraphExecUpdate.hGraphExec } as u64;
            tracker.exec_updated(ExecHandle(handle));
        }
        _ if !attribution.by_runtime_api() => {}
        Role::Build(Build::Instantiate) if succeeded => {
            // SAFETY: every instantiate starts with `hipGraphExec_t* pGraphExec`,
            // written at EXIT of a successful call.
            let out = unsafe { data.args.hipGraphInstantiate.pGraphExec };
            if !out.is_null() {
                // SAFETY: the application's output slot, valid during the callback.
                let handle = unsafe { std::ptr::read(out) } as u64;
                tracker.exec_created(LaunchedExec::Runtime {
                    handle: ExecHandle(handle),
                });
            }
        }
        Role::Build(Build::ExecDestroy) if succeeded => {
            // SAFETY: hipGraphExecDestroy's arguments.
            let handle = unsafe { data.args.hipGraphExecDestroy.graphExec } as u64;
            tracker.exec_destroyed(ExecHandle(handle));
        }
        Role::GraphLaunch if attribution.tracks_launches() => {
            debug_assert!(matches!(
                operation,
                op::hipGraphLaunch | op::hipGraphLaunch_spt
            ));
            // SAFETY: both launches take (graphExec, stream).
            let handle = ExecHandle(unsafe { data.args.hipGraphLaunch.graphExec } as u64);
            let exec = LaunchedExec::Runtime { handle };
            match phase {
                rocprofiler_callback_phase_t::ENTER => {
                    tracker.enter_launch(exec, call);
                }
                rocprofiler_callback_phase_t::EXIT => tracker.exit_launch(exec),
                _ => {}
            }
        }
        _ => {}
    }
}

/// SDK 1.3+ HIP_GRAPH callbacks.
pub fn on_graph_domain(
    attribution: &Attribution,
    operation: rocprofiler_hip_graph_operation_t,
    phase: rocprofiler_callback_phase_t,
    call: LaunchCall,
    graph_exec_id: u64,
    handle: u64,
) {
    let tracker = attribution.tracker();
    let exec = LaunchedExec::Sdk {
        graph_exec_id,
        handle: ExecHandle(handle),
    };
    match operation {
        rocprofiler_hip_graph_operation_t::EXEC_CREATE => {
            tracker.exec_created(exec);
        }
        rocprofiler_hip_graph_operation_t::EXEC_DESTROY => {
            tracker.exec_destroyed(ExecHandle(handle))
        }
        rocprofiler_hip_graph_operation_t::EXEC_LAUNCH if attribution.tracks_launches() => {
            match phase {
                rocprofiler_callback_phase_t::ENTER => {
                    tracker.enter_launch(exec, call);
                }
                rocprofiler_callback_phase_t::EXIT => tracker.exit_launch(exec),
                _ => {}
            }
        }
        _ => {}
    }
}
