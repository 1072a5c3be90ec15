//! The simulated rocprofiler-sdk (crate-private: one copy per process, in the
//! loaded librocprofiler_sim.so). Each module models one part of the SDK
//! and cites its source file.
pub(crate) mod agents;
mod args;
pub(crate) mod buffer;
pub(crate) mod code_object;
pub(crate) mod completion;
pub(crate) mod context;
pub(crate) mod correlation;
pub(crate) mod counters;
pub(crate) mod dimensions;
mod discovery;
pub(crate) mod dispatch_counting;
pub(crate) mod exports;
pub(crate) mod graph_trace;
pub(crate) mod intercept;
pub(crate) mod kernel_replay;
pub(crate) mod kernels;
pub(crate) mod markers;
mod names;
pub(crate) mod os;
mod queries;
pub(crate) mod registration;
mod roctx;
pub(crate) mod thread_trace;
pub(crate) mod trace;
