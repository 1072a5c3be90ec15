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
//!
//! # Wiring, and what a benchmark measures
//!
//! The three hot-path calls are plain methods on a shared tracker, so a
//! benchmark can drive them directly (one replay of a 3-node graph here):
//!
//! ```
//! use graph_attribution::*;
//!
//! let tracker = LaunchTracker::new(TrackerConfig::new(ExecIdentity::SdkGraphDomain));
//! let exec = LaunchedExec::Sdk { graph_exec_id: 1, handle: ExecHandle(0x7f00_0000) };
//! tracker.exec_created(exec);                                  // EXEC_CREATE
//!
//! let call = LaunchCall { correlation_id: 42, thread_id: 1 };
//! tracker.enter_launch(exec, call);                            // EXEC_LAUNCH ENTER
//! let slots: Vec<u64> = (0..3).map(|_| tracker.external_for_dispatch()).collect();
//! tracker.exit_launch(exec);                                   // EXEC_LAUNCH EXIT
//! assert_eq!(slots, [1 << 32, (1 << 32) | 1, (1 << 32) | 2]);
//!
//! // When the window's records are consumed:
//! let launches = tracker.drain_launches();
//! let observations: Vec<DispatchObservation> = slots
//!     .iter()
//!     .enumerate()
//!     .map(|(node, &external)| DispatchObservation {
//!         correlation_id: 42,
//!         external,
//!         signature: 100 + node as u64,
//!         kind: DispatchKind::Kernel,
//!         queue_id: 1,
//!         thread_id: 1,
//!         start_ns: 0,
//!     })
//!     .collect();
//! let mut knowledge = ExecKnowledge::with_confirmations(1);
//! let out = verify_window(&WindowEvidence::new(&observations, &launches), &mut knowledge);
//! assert_eq!(out.summary.vouched, 3);
//! ```
//!
//! With attribution off ([`graph_attribution_enabled`] says false) the tool
//! library registers none of these callbacks, so "off" costs nothing.

pub(crate) mod contended;
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
pub use evidence::{
    ApiSpan, DispatchKind, DispatchObservation, NodeSignature, SdkLaunch, WindowEvidence,
};
pub use ids::{AttributionId, ExecHandle, ExecIdentity, GraphKey, LaunchedExec, Ordinal};
pub use knowledge::{ExecKnowledge, Sighting, DEFAULT_CONFIRMATIONS};
pub use launch_log::{LaunchEnding, LaunchLedger, LaunchLog, LaunchRecord};
pub use launch_stack::STACK_CAPACITY;
#[cfg(feature = "seed-naive-modes")]
pub use tracker::SeedNaive;
pub use tracker::{LaunchCall, LaunchTracker, TrackerConfig, DEFAULT_LAUNCH_LOG_CAPACITY};
pub use verdict::{Verdict, VerificationSummary, WithholdReason};
pub use verifier::{verify_window, VerifiedWindow};
