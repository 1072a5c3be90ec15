//! Kernel mode: each selected dispatch runs once per pass of the plan
//! through the SDK's kernel-replay domain (experimental/kernel_replay.h),
//! one counter group per pass and maybe one thread-trace pass, so a single
//! run of the program collects several groups per kernel.
//!
//! The plan comes from `KINETO_ROCM_KERNEL_REPLAY` (the CLI writes it from a
//! job file with `job_replay_mode: kernel`): the configured passes in
//! order, `;`-separated, each a comma-separated counter group or
//! `thread_trace`. An agent skips the groups it cannot collect, so its
//! trace pass follows exactly the groups configured ahead of the trace that
//! it does collect (seed 004's rule). The kernel filters (`kernel_filter`)
//! are asked once per dispatch, at CONFIG; a dispatch not selected is not
//! replayed and collects nothing.
//!
//! The pass a submission belongs to is published at PASS ENTER, on the
//! thread that runs the loop, with the dispatch id, to the counting and
//! thread-trace services (`counting::set_replay_pass`,
//! `thread_trace::trace_pass`): their callbacks for that submission run on
//! the same thread, and a dispatch id that does not match means "not a pass
//! of this loop".
use super::counting::{self, Group};
use super::kernel_filter;
use super::thread_trace;
use super::tool::check;
use crate::error::ToolError;
use crate::tool::finish::replay;
use dashmap::DashMap;
use once_cell::sync::OnceCell;
use rocprofiler_sys::*;
use std::ffi::c_void;
use std::sync::Arc;

pub const KERNEL_REPLAY_ENV: &str = "KINETO_ROCM_KERNEL_REPLAY";
/// How a pass that runs the thread trace is written in the plan.
pub const THREAD_TRACE_PASS: &str = "thread_trace";

/// What one pass collects.
#[derive(Clone)]
pub enum Pass {
    Counters(Arc<Group>),
    ThreadTrace,
}

struct Plan {
    configured: Vec<Pass>,
    /// Each agent's passes, made at its first selected dispatch.
    agents: DashMap<u64, Arc<[Pass]>>,
}

static PLAN: OnceCell<Plan> = OnceCell::new();

/// The configured passes of a plan's text: counter groups by their names,
/// and where the trace goes.
pub fn parse(text: &str) -> Result<Vec<Option<Vec<String>>>, ToolError> {
    let passes: Vec<Option<Vec<String>>> = text
        .split(';')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| (p != THREAD_TRACE_PASS).then(|| counting::group_names(p.split(','))))
        .collect();
    if !passes.iter().any(Option::is_some) {
        return Err(ToolError::Usage(
            "KINETO_ROCM_KERNEL_REPLAY names no counter group",
        ));
    }
    if passes.iter().filter(|p| p.is_none()).count() > 1 {
        return Err(ToolError::Usage(
            "KINETO_ROCM_KERNEL_REPLAY names the thread trace twice",
        ));
    }
    Ok(passes)
}

/// Is a kernel-replay plan asked for (whether or not the SDK can replay)?
pub fn asked() -> bool {
    std::env::var(KERNEL_REPLAY_ENV).is_ok_and(|t| !t.trim().is_empty())
}

/// Subscribes `context` to the kernel-replay domain when a plan is set;
/// `Ok(false)` when none is.
pub fn configure(sdk: &Sdk, context: rocprofiler_context_id_t) -> Result<bool, ToolError> {
    let text = std::env::var(KERNEL_REPLAY_ENV).unwrap_or_default();
    if text.trim().is_empty() {
        return Ok(false);
    }
    let configured = parse(&text)?
        .into_iter()
        .map(|p| match p {
            Some(names) => Pass::Counters(counting::register(names)),
            None => Pass::ThreadTrace,
        })
        .collect();
    let plan = Plan {
        configured,
        agents: DashMap::new(),
    };
    // SAFETY: valid context; a static callback that takes no data.
    let status = unsafe {
        (sdk.configure_callback_tracing_service)(
            context,
            rocprofiler_callback_tracing_kind_t::KERNEL_REPLAY,
            std::ptr::null(),
            0,
            Some(on_replay),
            std::ptr::null_mut(),
        )
    };
    if status == rocprofiler_status_t::ERROR_KIND_NOT_FOUND {
        // An SDK without the (experimental) domain: the rest of the trace
        // is still worth having.
        log::error!(
            "kineto-rocm: this rocprofiler-sdk has no kernel-replay domain; dispatches run once and collect no counters"
        );
        return Ok(false);
    }
    check(
        "rocprofiler_configure_callback_tracing_service (kernel replay)",
        status,
    )?;
    log::info!("kineto-rocm: kernel replay, passes: {text}");
    let _ = PLAN.set(plan);
    Ok(true)
}

impl Plan {
    /// The agent's passes: the configured ones less the groups it cannot
    /// collect (said once, in the log).
    fn for_agent(&self, agent: rocprofiler_agent_id_t) -> Arc<[Pass]> {
        // The entry's lock makes the agent's passes (and the warnings) once.
        let entry = self.agents.entry(agent.handle);
        if let dashmap::Entry::Occupied(known) = &entry {
            return known.get().clone();
        }
        let passes: Arc<[Pass]> = self
            .configured
            .iter()
            .enumerate()
            .filter(|(g, pass)| match pass {
                Pass::Counters(group) => {
                    let ok = counting::collects(group, agent);
                    if !ok {
                        log::warn!(
                            "kineto-rocm: kernel replay: agent {} skips configured pass {g} ({}): it cannot collect those counters",
                            agent.handle,
                            group.names().join(",")
                        );
                    }
                    ok
                }
                Pass::ThreadTrace => true,
            })
            .map(|(_, pass)| pass.clone())
            .collect();
        entry.or_insert(passes).clone()
    }
}

/// Does the plan give the thread trace a pass?
pub fn has_thread_trace_pass() -> bool {
    PLAN.get().is_some_and(|p| {
        p.configured
            .iter()
            .any(|pass| matches!(pass, Pass::ThreadTrace))
    })
}

/// Tells the services what this thread's next submission of `dispatch_id`
/// on `agent` is: pass `pass`, or (`None`) no pass of a replay.
fn publish(plan: &Plan, dispatch_id: u64, agent: rocprofiler_agent_id_t, pass: Option<u32>) {
    let kind = pass.and_then(|p| plan.for_agent(agent).get(p as usize).cloned());
    let (Some(pass), Some(kind)) = (pass, kind) else {
        counting::set_replay_pass(None, None, 0);
        thread_trace::trace_pass(None);
        return;
    };
    let group = match &kind {
        Pass::Counters(group) => Some(group.as_ref()),
        Pass::ThreadTrace => None,
    };
    counting::set_replay_pass(Some(dispatch_id), group, pass);
    thread_trace::trace_pass(matches!(kind, Pass::ThreadTrace).then_some((dispatch_id, pass)));
}

/// How many passes the dispatch runs (the SDK calls this once, after
/// CONFIG ENTER). 1 runs it once: with a one-pass plan that run is the
/// pass, otherwise it collects nothing.
unsafe extern "C" fn pass_count(
    info: rocprofiler_kernel_dispatch_info_t,
    _user_data: rocprofiler_user_data_t,
) -> u64 {
    std::panic::catch_unwind(|| {
        let Some(plan) = PLAN.get() else {
            return 1;
        };
        if !kernel_filter::selects(info.kernel_id, info.dispatch_id) {
            publish(plan, info.dispatch_id, info.agent_id, None);
            return 1;
        }
        let passes = plan.for_agent(info.agent_id).len() as u64;
        // One pass: the ordinary run is the pass.
        let only = (passes == 1).then_some(0);
        publish(plan, info.dispatch_id, info.agent_id, only);
        if passes > 1 {
            replay::expect_passes(info.dispatch_id, passes as u32);
        }
        passes.max(1)
    })
    .unwrap_or(1)
}

unsafe extern "C" fn on_replay(
    record: rocprofiler_callback_tracing_record_t,
    _user_data: *mut rocprofiler_user_data_t,
    _args: *mut c_void,
) {
    let _ = std::panic::catch_unwind(|| {
        if record.kind != rocprofiler_callback_tracing_kind_t::KERNEL_REPLAY
            || record.phase != rocprofiler_callback_phase_t::ENTER
            || record.payload.is_null()
        {
            return;
        }
        let payload = record.payload as *mut rocprofiler_callback_tracing_kernel_replay_data_t;
        let operation = rocprofiler_kernel_replay_operation_t(record.operation as u32);
        if operation == rocprofiler_kernel_replay_operation_t::CONFIG {
            // SAFETY: the SDK's payload for this callback, writable at CONFIG ENTER.
            unsafe { (*payload).replay_pass_count = Some(pass_count) };
        } else if operation == rocprofiler_kernel_replay_operation_t::PASS {
            // SAFETY: the SDK's payload for this callback, valid for the call.
            let (dispatch_id, agent, pass) = unsafe {
                let info = &(*payload).dispatch_info;
                (info.dispatch_id, info.agent_id, (*payload).current_pass)
            };
            if let Some(plan) = PLAN.get() {
                publish(plan, dispatch_id, agent, Some(pass as u32));
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_is_groups_and_at_most_one_trace_in_order() {
        let passes = parse("SQ_WAVES, GRBM_COUNT; thread_trace ;SQ_INSTS_VALU").unwrap();
        assert_eq!(
            passes,
            vec![
                Some(vec!["SQ_WAVES".to_string(), "GRBM_COUNT".to_string()]),
                None,
                Some(vec!["SQ_INSTS_VALU".to_string()]),
            ]
        );
        assert!(parse("thread_trace").is_err(), "no counter group");
        assert!(parse("A;thread_trace;thread_trace").is_err());
        assert!(parse(" ; ").is_err());
    }
}
