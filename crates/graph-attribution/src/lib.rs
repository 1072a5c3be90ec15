//! HIP graph node attribution for the ROCm activity backend.
//!
//! Why: rocprofiler-sdk puts no graph identity on kernel dispatch and memory
//! copy records, so a trace cannot say which graph node produced a dispatch.
//! The SDK's documented recipe (a per-thread stack of graph launches,
//! answered through the external-correlation request service) credits each
//! dispatch to whatever the thread that *processed* its packet was doing;
//! under ROCm's submission (shared hardware queues, packets processed by
//! whichever thread rings a doorbell, graph branches on several queues) that
//! is often another thread's launch. This crate attributes from evidence
//! instead:
//!
//! - [`GraphStructure`] follows the graph-building HIP calls, so each exec's
//!   nodes are known (kernel, launch shape, dependencies) and a node's id is
//!   its creation index;
//! - [`attribute_window`] decides, for every record of a finished trace
//!   window, which calls could have written its packet (the two-hop rule:
//!   [`attribute`]'s module docs), and emits a key or a link only when the
//!   evidence leaves one answer. Everything else is withheld and counted.
//!
//! The SDK's recipe, the first round's launch-stack method, stays available
//! ([`LaunchTracker`]) to show what it would have emitted.
//!
//! No FFI, no `unsafe`, no I/O but the `log` crate.
//!
//! ```
//! use graph_attribution::*;
//! use std::collections::HashMap;
//!
//! // A graph of two kernels, built and instantiated.
//! let structure = GraphStructure::new();
//! let graph = GraphHandle(0x10);
//! structure.graph_created(graph);
//! let kernel = |stub| NodeWork::Kernel(HostKernel::from_blocks(stub, [256, 1, 1], [256, 1, 1]));
//! structure.node_added(graph, NodeHandle(1), &[], kernel(0xa0));
//! structure.node_added(graph, NodeHandle(2), &[NodeHandle(1)], kernel(0xb0));
//! structure.exec_instantiated(ExecHandle(0x7f00), graph);
//!
//! // One launch (correlation id 42) and the two records it produced.
//! let calls = [Call {
//!     correlation_id: 42,
//!     thread_id: 1,
//!     enter_ns: 100,
//!     exit_ns: 200,
//!     stream: Some(1),
//!     work: CallWork::Graph {
//!         graph_id: AttributionId::new(1),
//!         exec: structure.exec_contents(ExecHandle(0x7f00)),
//!     },
//! }];
//! let stubs: HashMap<u64, u64> = [(0xa0, 7), (0xb0, 8)].into_iter().collect();
//! // What records show is interned: a window shows few distinct things.
//! let mut shown = ObservedTable::default();
//! let mut record = |kernel_id, dispatch_id| Observation {
//!     correlation_id: 42,
//!     observed: shown.intern(Observed::Kernel(KernelShape {
//!         kernel_id,
//!         grid: [65536, 1, 1],
//!         block: [256, 1, 1],
//!     })),
//!     queue_id: 1,
//!     dispatch_id: Some(dispatch_id),
//!     start_ns: 300 + 10 * dispatch_id,
//!     end_ns: 305 + 10 * dispatch_id,
//! };
//! let observations: Observations = [record(8, 2), record(7, 1)].into_iter().collect();
//! // Seen whole: no call crossed the window's edges, every record came.
//! let evidence = WindowEvidence::whole(&observations, shown.values(), &calls, &stubs, 1_000);
//! let out = attribute_window(&evidence, &mut SessionMemory::new());
//! let nodes: Vec<u64> = out.keys.iter().map(|k| k.key().unwrap().graph_node_id()).collect();
//! assert_eq!(nodes, [(1 << 32) | 1, 1 << 32]);
//! assert_eq!(out.links[0].correlation_id(), Some(42));
//! ```
//!
//! With attribution off ([`graph_attribution_enabled`] says false) the tool
//! library registers none of these callbacks, so "off" costs nothing.

#![forbid(unsafe_code)]

mod ambiguity;
pub mod assumptions;
pub mod attribute;
mod calls;
pub mod diagnostics;
pub mod env;
pub mod evidence;
pub mod exec_table;
pub mod ids;
mod intervals;
mod joint;
pub mod launch_log;
mod launch_stack;
mod rules;
pub mod session;
pub mod structure;
#[cfg(test)]
mod test_rng;
pub mod tracker;
pub mod verdict;
pub mod work;

pub use assumptions::{Assumptions, DISTRUST_VAR};
pub use attribute::{attribute_window, attribute_window_record_by_record, AttributedWindow};
pub use diagnostics::{Anomaly, AnomalyCounts};
pub use env::{graph_attribution_enabled, switch_value, DISABLE_GRAPH_ATTRIBUTION_VAR};
pub use evidence::{
    Call, CallWork, LentColumns, Observation, Observations, ObservedId, ObservedTable, Span,
    WindowEvidence,
};
pub use ids::{AttributionId, ExecHandle, ExecIdentity, GraphKey, LaunchedExec, NodeId};
pub use launch_log::{LaunchEnding, LaunchLog, LaunchRecord};
pub use launch_stack::STACK_CAPACITY;
pub use session::SessionMemory;
pub use structure::{
    ExecContents, GraphHandle, GraphStructure, NodeDetail, NodeHandle, NodeSpec, NodeWork,
};
#[cfg(feature = "naive-launch-stack")]
pub use tracker::NaiveLaunchStack;
pub use tracker::{LaunchCall, LaunchTracker, TrackerConfig, DEFAULT_LAUNCH_LOG_CAPACITY};
pub use verdict::{KeyProof, KeyVerdict, LinkProof, LinkVerdict, Reason, Summary};
pub use work::{
    BlitKind, Direction, FillParts, HostKernel, KernelLookup, KernelShape, Observed, Output,
};
