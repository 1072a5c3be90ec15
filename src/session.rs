//! The session functions: everything the faces (the C ABI in
//! include/kineto_rocm.h, the cxx bridge) may ask of the tool, in one place.
//! They drive it the way kineto's profiler drives its activity API: start,
//! stop, take finished windows.
//!
//! The SDK may not have configured the tool yet when a call comes: a start
//! then waits for the SDK's `initialize`, and a stop withdraws it.
use crate::error::ToolError;
use crate::tool::sdk::{configure, counting, thread_trace, tool};
use crate::tool::session::collector::Collector;
use crate::window::FinishedWindow;
use activity_store::ExternalDomain;
use rocprofiler_sys::Sdk;

/// Starts collecting (configuring the SDK first if needed).
pub fn start_collection() -> Result<(), ToolError> {
    match configure::ensure_configured()? {
        Some(tool) => tool.start(),
        None => {
            tool::start_when_initialised();
            Ok(())
        }
    }
}

/// Stops collecting; records in flight still land in this window.
pub fn stop_collection() -> Result<(), ToolError> {
    match tool::get() {
        Some(tool) => tool.stop(),
        None if tool::cancel_pending_start() => Ok(()),
        None => Err(match configure::known_unavailable() {
            Some(why) => ToolError::Unavailable(why.to_string()),
            None => ToolError::Usage("stop without a start"),
        }),
    }
}

/// Waits (bounded) for the stopped windows to complete and hands them over.
pub fn take_finished_windows() -> Result<Vec<FinishedWindow>, ToolError> {
    // Finishing peaks from the window's own memory, as the first did.
    crate::heap::give_back_kept();
    match (tool::get(), configure::known_unavailable()) {
        (Some(tool), _) => Ok(tool.take_finished_windows()),
        (None, Some(why)) => Err(ToolError::Unavailable(why.to_string())),
        (None, None) => Ok(Vec::new()),
    }
}

/// kineto's correlation domains: the default one, or the user one.
fn domain(user: bool) -> ExternalDomain {
    if user {
        ExternalDomain::User
    } else {
        ExternalDomain::Default
    }
}

/// Pushes a CPU op's id, which the GPU work it launches will carry.
pub fn push_correlation_id(user: bool, id: u64) {
    if let Some(tool) = tool::get() {
        tool.collector.push_external(domain(user), id)
    }
}

pub fn pop_correlation_id(user: bool) -> Option<u64> {
    tool::get()?.collector.pop_external(domain(user))
}

/// Beyond this many records per window, drop and count. Before the SDK has
/// initialised the tool the limit waits for the store to be built;
/// afterwards it applies to the live store.
pub fn set_max_events(max_events: u64) {
    match tool::get() {
        Some(tool) => tool.collector.set_max_events(max_events),
        None => Collector::set_initial_max_events(max_events),
    }
}

/// `None` when collecting is possible, else why not.
pub fn unavailable_reason() -> Option<String> {
    if tool::get().is_some() {
        return None;
    }
    if let Some(why) = configure::known_unavailable() {
        return Some(why.to_string());
    }
    Sdk::resolve().err().map(|why| why.to_string())
}

/// Clears anything collected and not yet taken.
pub fn clear_activities() {
    if let Some(tool) = tool::get() {
        tool.collector.clear();
    }
}

/// Asks the SDK to configure the tool now, without opening a window
/// (kineto's RocprofLogger::ensureRegistered).
pub fn register_tool() -> Result<(), ToolError> {
    configure::ensure_configured().map(|_| ())
}

/// Counts these hardware counters on every dispatch from now on (a
/// trace's own group, from PyTorch's metrics config); each kernel event
/// then carries their values.
pub fn request_counters(names: &str) -> Result<(), ToolError> {
    counting::request(counting::group_names(names.split([',', ' '])))
}

/// Stops counting the group asked for; values already counted stay.
pub fn release_counters() {
    counting::release();
}

/// Application mode's thread trace (`KINETO_ROCM_THREAD_TRACE` set, no
/// kernel-replay plan): traces every selected dispatch from now on (on),
/// or none (off). Without the trace's settings at initialisation the
/// service is not configured and this changes nothing.
pub fn set_thread_trace(on: bool) {
    if on {
        thread_trace::request();
    } else {
        thread_trace::release();
    }
}
