//! The cxx bridge: the only door between the Rust core and the C++ face.
//!
//! Types cross by value. The C++ side owns only kineto types (RocmActivityApi,
//! the child profiler, GenericTraceActivity); everything collected, attributed
//! and verified is built here and handed over as one `WindowActivities` per
//! finished trace window. Errors cross as `Result` (a C++ exception on that
//! side, caught there before it could reach kineto).

#[cxx::bridge(namespace = "kineto_rocm")]
pub mod ffi {
    /// One GPU kernel, already verified: `has_graph` is true only for pairs
    /// the verifier vouched for or repaired.
    #[derive(Clone, Debug, PartialEq)]
    pub struct KernelActivity {
        pub name_index: u32,
        pub device: u32,
        pub stream: u64,
        pub queue: u64,
        pub correlation: u64,
        pub dispatch_id: u64,
        pub start_ns: u64,
        pub end_ns: u64,
        pub grid_x: u32,
        pub grid_y: u32,
        pub grid_z: u32,
        pub block_x: u32,
        pub block_y: u32,
        pub block_z: u32,
        pub lds_bytes: u32,
        pub scratch_bytes: u32,
        pub has_external_id: bool,
        pub external_id: u64,
        pub has_user_external_id: bool,
        pub user_external_id: u64,
        pub has_graph: bool,
        pub graph_id: u64,
        pub graph_node_id: u64,
    }

    /// One memory copy.
    #[derive(Clone, Debug, PartialEq)]
    pub struct CopyActivity {
        /// "HtoD", "DtoH", "DtoD", "HtoH" or "Unknown".
        pub direction: &'static str,
        pub device: u32,
        pub stream: u64,
        pub correlation: u64,
        pub bytes: u64,
        pub src_device: i64,
        pub dst_device: i64,
        pub start_ns: u64,
        pub end_ns: u64,
        pub has_external_id: bool,
        pub external_id: u64,
        pub has_graph: bool,
        pub graph_id: u64,
        pub graph_node_id: u64,
    }

    /// One HIP runtime call, on its CPU thread.
    #[derive(Clone, Debug, PartialEq)]
    pub struct RuntimeActivity {
        pub name: &'static str,
        pub thread_id: u64,
        pub correlation: u64,
        pub start_ns: u64,
        pub end_ns: u64,
        pub has_external_id: bool,
        pub external_id: u64,
    }

    /// A GPU as kineto names its lane.
    #[derive(Clone, Debug, PartialEq)]
    pub struct DeviceLane {
        pub device: u32,
        pub name: String,
    }

    /// Everything one finished trace window produced.
    #[derive(Clone, Debug, Default)]
    pub struct WindowActivities {
        pub kernel_names: Vec<String>,
        pub kernels: Vec<KernelActivity>,
        pub copies: Vec<CopyActivity>,
        pub runtime: Vec<RuntimeActivity>,
        pub devices: Vec<DeviceLane>,
        /// Add to an SDK timestamp to get system_clock nanoseconds (kineto's clock).
        pub system_clock_offset_ns: i64,
        /// `key=value` lines for the trace metadata: attribution counts,
        /// completeness, drops.
        pub summary: Vec<String>,
    }

    extern "Rust" {
        /// Starts collecting (configuring the SDK first if needed).
        fn start_collection() -> Result<()>;
        /// Stops collecting; records in flight still land in this window.
        fn stop_collection() -> Result<()>;
        /// Waits (bounded) for the stopped windows to complete and hands them over.
        fn take_finished_windows() -> Result<Vec<WindowActivities>>;
        /// Pushes a CPU op's id in the default (`user == false`) or user domain.
        fn push_correlation_id(id: u64, user: bool);
        fn pop_correlation_id(user: bool);
        /// Beyond this many records per window, drop and count.
        fn set_max_events(max_events: u64);
        /// Empty when collecting is possible, else one line saying why not.
        fn unavailable_reason() -> String;
        /// Clears anything collected and not yet taken.
        fn clear_activities();
    }
}

use crate::api;

fn start_collection() -> Result<(), api::ToolError> {
    api::start_collection()
}

fn stop_collection() -> Result<(), api::ToolError> {
    api::stop_collection()
}

fn take_finished_windows() -> Result<Vec<ffi::WindowActivities>, api::ToolError> {
    api::take_finished_windows()
}

fn push_correlation_id(id: u64, user: bool) {
    api::push_correlation_id(api::CorrelationDomain::from_user_flag(user), id)
}

fn pop_correlation_id(user: bool) {
    api::pop_correlation_id(api::CorrelationDomain::from_user_flag(user));
}

fn set_max_events(max_events: u64) {
    api::set_max_events(max_events)
}

fn unavailable_reason() -> String {
    api::unavailable_reason().unwrap_or_default()
}

fn clear_activities() {
    api::clear_activities()
}
