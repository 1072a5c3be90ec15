//! Window finishing: the graph evidence kept over the session, applied to a
//! finalised window's records (attribution), then the window turned into a
//! [`crate::window::FinishedWindow`]. Knows nothing of the SDK: the adapter
//! above reads SDK calls into this evidence.
pub mod activities;
pub mod attribution;
mod call_works;
pub mod captures;
pub mod counters;
pub mod devices;
mod presence;
pub mod replay;
pub mod roles;
pub mod thread_traces;
pub mod timeline;
