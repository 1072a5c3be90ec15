//! HIP graph node attribution for the ROCm activity backend.
//!
//! Why: rocprofiler-sdk puts no graph identity on kernel dispatch and memory
//! copy records, so a trace cannot say which graph node produced a dispatch.
//! This crate reconstructs it in two halves:
//!
//! - at collection time, the [`LaunchTracker`] keeps a per-thread stack of
//!   graph launches and answers the SDK's external-correlation request with
//!   `(attribution id << 32) | ordinal` (the CUPTI layout PyTorch reads);
//! - when a window's records are consumed, the verifier ([`verify_window`])
//!   checks those answers against what actually ran, because a per-thread
//!   stack mis-credits dispatches when threads share a hardware queue. Each
//!   pair is vouched for, repaired from evidence, or withheld; a wrong pair
//!   never leaves.
//!
//! No FFI, no `unsafe`, no I/O but the `log` crate.

pub mod diagnostics;
pub mod env;
pub mod evidence;
pub mod exec_table;
pub mod ids;
pub mod knowledge;
pub mod launch_log;
mod launch_stack;
pub mod tracker;
pub mod verdict;
pub mod verifier;

pub use diagnostics::{Anomaly, AnomalyCounts};
pub use env::{graph_attribution_enabled, DISABLE_GRAPH_ATTRIBUTION_VAR};
pub use evidence::{DispatchKind, DispatchObservation, NodeSignature, WindowEvidence};
pub use ids::{AttributionId, ExecHandle, ExecIdentity, GraphKey, LaunchedExec, Ordinal};
pub use knowledge::{ExecKnowledge, Sighting, DEFAULT_CONFIRMATIONS};
pub use launch_log::{LaunchEnding, LaunchLedger, LaunchLog, LaunchRecord};
pub use launch_stack::STACK_CAPACITY;
pub use tracker::{LaunchCall, LaunchTracker, TrackerConfig, DEFAULT_LAUNCH_LOG_CAPACITY};
pub use verdict::{Verdict, VerificationSummary, WithholdReason};
pub use verifier::{verify_window, VerifiedWindow};
