//! Graph attribution wired to the SDK: exec lifecycle and launches from the
//! callbacks into the tracker, and, when a window is finished, the verifier
//! over its kernel and copy rows.
//!
//! On SDK 1.3+ execs and launches come from the HIP_GRAPH domain; before it,
//! from HIP runtime API tracing of instantiate, launch and destroy. Exec
//! updates come from the runtime API on every version (the graph domain does
//! not see hipGraphExecUpdate).
use activity_store::FinalisedWindow;
use graph_attribution::{
    ExecHandle, ExecIdentity, LaunchCall, LaunchTracker, LaunchedExec, TrackerConfig,
};
use rocprofiler_sys::*;

pub struct Attribution {
    tracker: LaunchTracker,
    verification: super::verification::Verification,
}

impl Attribution {
    pub fn new(graph_domain: bool) -> Attribution {
        let identity = if graph_domain {
            ExecIdentity::SdkGraphDomain
        } else {
            ExecIdentity::RuntimeApi
        };
        Attribution {
            tracker: LaunchTracker::new(TrackerConfig::new(identity)),
            verification: super::verification::Verification::default(),
        }
    }

    #[inline]
    pub fn tracker(&self) -> &LaunchTracker {
        &self.tracker
    }

    fn by_runtime_api(&self) -> bool {
        self.tracker.identity() == ExecIdentity::RuntimeApi
    }

    pub fn on_hip_api(
        &self,
        operation: i32,
        phase: rocprofiler_callback_phase_t,
        call: LaunchCall,
        data: &rocprofiler_callback_tracing_hip_api_data_t,
    ) {
        use hip_runtime_api_id as op;
        let exit = phase == rocprofiler_callback_phase_t::EXIT;
        // SAFETY: the args member read matches `operation`; retval is plain data.
        let succeeded = exit && unsafe { data.retval.hipError_t_retval } == HIP_SUCCESS;
        match operation {
            op::hipGraphExecUpdate if succeeded => {
                // SAFETY: hipGraphExecUpdate's arguments.
                let handle = unsafe { data.args.hipGraphExecUpdate.hGraphExec } as u64;
                self.tracker.exec_updated(ExecHandle(handle));
            }
            _ if !self.by_runtime_api() => {}
            op::hipGraphInstantiate | op::hipGraphInstantiateWithFlags if succeeded => {
                // SAFETY: both calls start with `hipGraphExec_t* pGraphExec`; at
                // EXIT of a successful call it points to the new exec.
                let out = unsafe { data.args.hipGraphInstantiate.pGraphExec };
                if !out.is_null() {
                    // SAFETY: the application's output slot, valid during the callback.
                    let handle = unsafe { std::ptr::read(out) } as u64;
                    self.tracker.exec_created(LaunchedExec::Runtime {
                        handle: ExecHandle(handle),
                    });
                }
            }
            op::hipGraphExecDestroy if succeeded => {
                // SAFETY: hipGraphExecDestroy's arguments.
                let handle = unsafe { data.args.hipGraphExecDestroy.graphExec } as u64;
                self.tracker.exec_destroyed(ExecHandle(handle));
            }
            op::hipGraphLaunch | op::hipGraphLaunch_spt => {
                // SAFETY: both launches take (graphExec, stream).
                let handle = ExecHandle(unsafe { data.args.hipGraphLaunch.graphExec } as u64);
                let exec = LaunchedExec::Runtime { handle };
                if phase == rocprofiler_callback_phase_t::ENTER {
                    self.tracker.enter_launch(exec, call);
                } else if exit {
                    self.tracker.exit_launch(exec);
                }
            }
            _ => {}
        }
    }

    pub fn on_graph_domain(
        &self,
        operation: rocprofiler_hip_graph_operation_t,
        phase: rocprofiler_callback_phase_t,
        call: LaunchCall,
        graph_exec_id: u64,
        handle: u64,
    ) {
        let exec = LaunchedExec::Sdk {
            graph_exec_id,
            handle: ExecHandle(handle),
        };
        match operation {
            rocprofiler_hip_graph_operation_t::EXEC_CREATE => {
                self.tracker.exec_created(exec);
            }
            rocprofiler_hip_graph_operation_t::EXEC_DESTROY => {
                self.tracker.exec_destroyed(ExecHandle(handle))
            }
            rocprofiler_hip_graph_operation_t::EXEC_LAUNCH => match phase {
                rocprofiler_callback_phase_t::ENTER => {
                    self.tracker.enter_launch(exec, call);
                }
                rocprofiler_callback_phase_t::EXIT => self.tracker.exit_launch(exec),
                _ => {}
            },
            _ => {}
        }
    }

    /// Verifies the window's pairs in place; returns summary lines.
    pub fn attribute(&self, window: &mut FinalisedWindow) -> Vec<String> {
        self.verification.verify(&self.tracker, window)
    }
}
