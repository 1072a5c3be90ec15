//! The subset of the rocprofiler-sdk C ABI that kineto-rocm uses, declared by
//! hand so the crate builds on machines without ROCm.
//!
//! Why by hand: the tool library must load (and say why it collects nothing)
//! where no SDK is installed, and the simulator must export the same entry
//! points. Every type here is layout-faithful to SDK 1.0 through 1.3; when
//! `ROCPROFILER_SDK_INCLUDE_DIR` names real headers, `tests/layout.rs` checks
//! size, alignment and field offsets against bindgen's view of them.
//!
//! C enums are `#[repr(transparent)]` newtypes with associated constants, not
//! Rust enums: a value the SDK adds later must never be undefined behaviour.
//! Entry points are resolved at run time through [`Sdk`].
#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case)]

mod agent;
mod buffer_records;
mod callback_payloads;
mod counters;
mod enums;
mod hip;
pub mod hip_api_names;
mod kernel_replay;
mod registration;
mod sdk;
mod thread_trace;
mod tracing_queries;
mod types;

pub use agent::*;
pub use buffer_records::*;
pub use callback_payloads::*;
pub use counters::*;
pub use enums::*;
pub use hip::*;
pub use kernel_replay::*;
pub use registration::*;
pub use sdk::*;
pub use thread_trace::*;
pub use tracing_queries::*;
pub use types::*;

/// Encodes a version the way the SDK does: `10000 * major + 100 * minor + patch`.
pub const fn encode_version(major: u32, minor: u32, patch: u32) -> u32 {
    10000 * major + 100 * minor + patch
}

/// The first SDK version with the HIP_GRAPH tracing domain (1.3.0).
pub const HIP_GRAPH_DOMAIN_VERSION: u32 = encode_version(1, 3, 0);
