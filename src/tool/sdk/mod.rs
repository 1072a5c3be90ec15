//! The SDK adapter: the only code that talks to rocprofiler-sdk. It
//! configures the services, receives the callbacks and buffers, reads the
//! SDK's records and HIP call arguments into plain values, and feeds them to
//! the session below. Every `unsafe` of the tool is here.
mod agents;
mod callbacks;
pub mod configure;
mod counter_dimensions;
pub mod counting;
pub mod decode;
mod external_correlation;
mod graph_calls;
mod hip_calls;
pub mod kernel_filter;
pub mod kernel_replay;
pub mod lifecycle;
mod malformed;
mod services;
pub mod thread_trace;
pub mod tool;
