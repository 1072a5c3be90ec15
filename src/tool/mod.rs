//! The rocprofiler-sdk client, in three parts, each importing only the ones
//! below it (docs/architecture.md draws the data path):
//!
//! - `sdk`: the SDK adapter: configure, services, callbacks, decoding, the
//!   process-wide tool;
//! - `session`: what was collected, window by window (the collector);
//! - `finish`: window finishing: graph attribution, then the finished window.
pub(crate) mod finish;
pub mod sdk;
pub(crate) mod session;

pub use finish::attribution::kernel_observations;
pub use session::collector::KERNELS_PER_PUSH;
