//! The simulated rocprofiler-sdk (crate-private: one copy per process, in the
//! loaded librocprofiler_sim.so).
pub(crate) mod discovery;
pub(crate) mod exports;
pub(crate) mod names;
pub(crate) mod state;
pub(crate) mod trace;
