//! The rocprofiler-sdk client: configure, services, callbacks, teardown.
mod attribution;
mod callbacks;
mod collector;
pub mod configure;
pub mod decode;
mod devices;
mod external_correlation;
mod hip_calls;
mod malformed;
mod presence;
mod services;
pub mod state;
