//! Why a session call could not do its work: one error type for the whole
//! crate, so that each face (the C ABI's status codes, the cxx bridge's C++
//! exceptions) tells its caller which kind of failure it was.
use activity_store::WindowError;
use std::fmt;

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
    /// The activity store refused a window: opened while another is open,
    /// or overlapping the previous one.
    Window(WindowError),
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
            ToolError::Window(why) => write!(f, "kineto-rocm: {why}"),
            ToolError::Io(what) => write!(f, "kineto-rocm: {what}"),
            ToolError::Internal(what) => write!(f, "kineto-rocm: internal error: {what}"),
        }
    }
}

impl std::error::Error for ToolError {}

impl From<WindowError> for ToolError {
    fn from(why: WindowError) -> Self {
        ToolError::Window(why)
    }
}
