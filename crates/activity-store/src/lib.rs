//! Decoded GPU activity, kept columnar per kind, bucketed into trace windows,
//! joined to the CPU ops that caused it, with proof of completeness.
//!
//! Why this crate exists: kineto's ROCm logger keeps one heap object per
//! record and leaks them (kineto issue #1560), and its teardown raced the
//! SDK's completion thread so that most runs crashed or lost records (kineto
//! PR #1564). Here records are staged as plain arrays, handed out per window
//! as columns and then forgotten, so memory follows the windows and not the
//! session; and a window is handed out when every correlation id issued in
//! it has retired, or at a deadline with the shortfall counted.
//!
//! Flow: the tool library decodes SDK buffers into the plain records of
//! [`records`] and pushes them ([`ActivityStore::push_kernel_batch`], ...) from
//! any thread; at API-call ENTER it calls [`ActivityStore::issue`],
//! [`ActivityStore::capture_for_api_call`] and [`ActivityStore::record_stream`];
//! on retirement records, [`ActivityStore::retire`]. A window is opened and
//! closed by the profiler's schedule, waited on with
//! [`ActivityStore::wait_until_retired`], and [`ActivityStore::finalise`]d
//! into a [`FinalisedWindow`] whose frames the trace writers read (and whose
//! graph columns the attribution verifier fills).
//!
//! No `unsafe`, no FFI, no I/O but the `log` crate; the locking is described
//! in one table in the `store` module.

#![forbid(unsafe_code)]
#![warn(missing_debug_implementations)]

mod completeness;
mod drops;
mod finalise;
mod frame_macro;
mod frames;
mod hash;
mod interner;
mod kernel_batch;
mod kernel_columns;
mod kernel_frame;
mod kernel_rows;
mod linkage;
pub mod records;
mod staging;
mod stats;
mod store;
mod sync;
mod windows;

pub use completeness::Completeness;
pub use drops::DropCounts;
pub use finalise::FinalisedWindow;
pub use frames::{
    ApiCallFrame, ApiCallRow, Attributable, CopyFrame, CopyRow, GraphLaunchFrame, GraphLaunchRow,
};
pub use hash::{BuildCorrelationHasher, CorrelationHasher, FastMap, FastSet};
pub use kernel_batch::KernelBatch;
pub use kernel_frame::{DispatchPlace, KernelFrame, KernelRow, LaunchLink, LaunchShape};
pub use linkage::ExternalDomain;
pub use records::{AgentId, CopyDirection, GraphLaunch, HipApiCall, KernelDispatch, MemoryCopy};
pub use stats::WindowStats;
pub use store::{ActivityStore, StoreConfig};
pub use windows::{WindowError, WindowId};
