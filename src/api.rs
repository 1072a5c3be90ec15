//! The Rust-facing session API: what the C ABI (include/kineto_rocm.h), the
//! cxx bridge and the CLI call. It drives the tool the way kineto's profiler
//! drives its activity API: start, stop, take finished windows.
use crate::bridge::ffi::WindowActivities;
use crate::tool::state;
use std::fmt;

/// Kineto's two correlation domains.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CorrelationDomain {
    Default,
    User,
}

impl CorrelationDomain {
    pub fn from_user_flag(user: bool) -> Self {
        if user {
            CorrelationDomain::User
        } else {
            CorrelationDomain::Default
        }
    }
}

/// Why a session call could not do its work.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolError {
    /// No rocprofiler-sdk in this process (or it refused us): nothing is collected.
    Unavailable(String),
    /// The SDK returned an error status from the named call.
    Sdk {
        call: &'static str,
        status: u32,
    },
    /// A call made in the wrong order (stop before start, say).
    Usage(&'static str),
    Io(String),
    /// A bug: a panic inside the tool, caught at the FFI boundary. The call
    /// that hit it lost its result (a trace window, say); nothing else.
    Internal(String),
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolError::Unavailable(why) => write!(f, "kineto-rocm collects nothing: {why}"),
            ToolError::Sdk { call, status } => write!(
                f,
                "kineto-rocm: {call} failed with rocprofiler status {status}"
            ),
            ToolError::Usage(what) => write!(f, "kineto-rocm: {what}"),
            ToolError::Io(what) => write!(f, "kineto-rocm: {what}"),
            ToolError::Internal(what) => write!(f, "kineto-rocm: internal error: {what}"),
        }
    }
}

impl std::error::Error for ToolError {}

pub fn start_collection() -> Result<(), ToolError> {
    state::start_collection()
}

pub fn stop_collection() -> Result<(), ToolError> {
    state::stop_collection()
}

pub fn take_finished_windows() -> Result<Vec<WindowActivities>, ToolError> {
    state::take_finished_windows()
}

pub fn push_correlation_id(domain: CorrelationDomain, id: u64) {
    state::push_correlation_id(domain, id)
}

pub fn pop_correlation_id(domain: CorrelationDomain) -> Option<u64> {
    state::pop_correlation_id(domain)
}

pub fn set_max_events(max_events: u64) {
    state::set_max_events(max_events)
}

/// `None` when collecting is possible.
pub fn unavailable_reason() -> Option<String> {
    state::unavailable_reason()
}

pub fn clear_activities() {
    state::clear_activities()
}

/// Asks the SDK to configure the tool without opening a window.
pub fn register_tool() -> Result<(), ToolError> {
    state::ensure_configured().map(|_| ())
}
