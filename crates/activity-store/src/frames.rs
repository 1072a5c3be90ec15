//! The columnar frames a finalised window hands to the trace writers.
//!
//! One frame per record kind, one `Vec` per column: a window of a million
//! kernels is a few dozen allocations, not a million heap rows (kineto's
//! RocprofLogger allocates a row object per record and leaks them in
//! clearLogs, kineto issue #1560). Rows are sorted by start time, then by
//! correlation id and a kind-specific tie-breaker, so output is the same
//! whichever threads delivered the records.
//!
//! Columns the store joins at finalisation: `stream` (from HIP_STREAM SET,
//! `None` when the tool never saw one) and `external_id_default` /
//! `external_id_user` (the CPU op's external correlation ids, `None` when
//! nothing was pushed). `graph_id` / `graph_node_id` start as `None`; the
//! graph-attribution verifier fills the ones it vouches for through
//! [`GraphColumnsMut`].

use crate::frame_macro::columnar_frame;
use crate::records::{AgentId, CopyDirection};

columnar_frame! {
    /// Kernel dispatches of one window, column by column.
    frame KernelFrame;
    /// One kernel dispatch row gathered from a [`KernelFrame`].
    row KernelRow;
    columns {
        start_ns: u64,
        end_ns: u64,
        agent: AgentId,
        queue: u64,
        /// HIP stream id, joined by correlation id; `None` when unknown.
        stream: Option<u64>,
        /// The record's correlation id: the HIP call in progress on the
        /// thread that processed its packet.
        correlation_id: u64,
        /// The HIP call that launched it: `correlation_id` until graph
        /// attribution decides otherwise; `None` when that is unproven.
        launch_correlation_id: Option<u64>,
        kernel_id: u64,
        dispatch_id: u64,
        grid: [u32; 3],
        workgroup: [u32; 3],
        lds_bytes: u32,
        scratch_bytes: u32,
        thread_id: u64,
        /// The raw external correlation value the SDK carried on the record.
        external_slot: u64,
        /// Graph id, filled by the verifier only when it vouches for it.
        graph_id: Option<u64>,
        /// Packed graph node id, filled by the verifier only when vouched.
        graph_node_id: Option<u64>,
        /// Top of the Default external-id stack when the launching API call entered.
        external_id_default: Option<u64>,
        /// Top of the User external-id stack when the launching API call entered.
        external_id_user: Option<u64>,
    }
}

columnar_frame! {
    /// Memory copies of one window, column by column.
    frame CopyFrame;
    /// One memory copy row gathered from a [`CopyFrame`].
    row CopyRow;
    columns {
        start_ns: u64,
        end_ns: u64,
        direction: CopyDirection,
        src_agent: AgentId,
        dst_agent: AgentId,
        bytes: u64,
        /// HIP stream id, joined by correlation id; `None` when unknown.
        stream: Option<u64>,
        /// The record's correlation id: the HIP call that issued the copy,
        /// or, for a queued copy, the one that processed its packet.
        correlation_id: u64,
        /// The HIP call that launched it; `None` when that is unproven.
        launch_correlation_id: Option<u64>,
        thread_id: u64,
        /// The raw external correlation value the SDK carried on the record.
        external_slot: u64,
        /// Graph id, filled by the verifier only when it vouches for it.
        graph_id: Option<u64>,
        /// Packed graph node id, filled by the verifier only when vouched.
        graph_node_id: Option<u64>,
        /// Top of the Default external-id stack when the launching API call entered.
        external_id_default: Option<u64>,
        /// Top of the User external-id stack when the launching API call entered.
        external_id_user: Option<u64>,
    }
}

columnar_frame! {
    /// HIP runtime API calls of one window, column by column.
    frame ApiCallFrame;
    /// One HIP API call row gathered from an [`ApiCallFrame`].
    row ApiCallRow;
    columns {
        start_ns: u64,
        end_ns: u64,
        operation: i32,
        correlation_id: u64,
        thread_id: u64,
        /// HIP stream id, joined by correlation id; `None` when it has none.
        stream: Option<u64>,
        /// Top of the Default external-id stack when the call entered.
        external_id_default: Option<u64>,
        /// Top of the User external-id stack when the call entered.
        external_id_user: Option<u64>,
    }
}

columnar_frame! {
    /// HIP graph launches of one window, column by column.
    frame GraphLaunchFrame;
    /// One graph launch row gathered from a [`GraphLaunchFrame`].
    row GraphLaunchRow;
    columns {
        start_ns: u64,
        end_ns: u64,
        correlation_id: u64,
        graph_exec_id: u64,
        kernel_dispatch_count: u64,
        thread_id: u64,
        agent: AgentId,
        queue: u64,
        /// HIP stream id, joined by correlation id; `None` when unknown.
        stream: Option<u64>,
        /// Top of the Default external-id stack when hipGraphLaunch entered.
        external_id_default: Option<u64>,
        /// Top of the User external-id stack when hipGraphLaunch entered.
        external_id_user: Option<u64>,
    }
}

/// The two graph columns of a kernel or copy frame, writable in place.
///
/// Slices, not `Vec`s: the verifier may set any row's pair but can never
/// change a column's length and so break the frame's row alignment.
#[derive(Debug)]
pub struct GraphColumnsMut<'a> {
    pub graph_id: &'a mut [Option<u64>],
    pub graph_node_id: &'a mut [Option<u64>],
}

/// The CPU-linkage columns of a kernel or copy frame, writable in place:
/// when graph attribution finds a dispatch's launching call, it is linked to
/// that call (its CPU op and stream); when it cannot, a link that may be
/// wrong is removed.
#[derive(Debug)]
pub struct LinkageColumnsMut<'a> {
    pub launch_correlation_id: &'a mut [Option<u64>],
    pub external_id_default: &'a mut [Option<u64>],
    pub external_id_user: &'a mut [Option<u64>],
    pub stream: &'a mut [Option<u64>],
}

impl KernelFrame {
    /// The linkage columns for the verifier to correct.
    pub fn linkage_columns_mut(&mut self) -> LinkageColumnsMut<'_> {
        LinkageColumnsMut {
            launch_correlation_id: &mut self.launch_correlation_id,
            external_id_default: &mut self.external_id_default,
            external_id_user: &mut self.external_id_user,
            stream: &mut self.stream,
        }
    }

    /// The graph columns for the verifier to fill.
    pub fn graph_columns_mut(&mut self) -> GraphColumnsMut<'_> {
        GraphColumnsMut {
            graph_id: &mut self.graph_id,
            graph_node_id: &mut self.graph_node_id,
        }
    }
}

impl CopyFrame {
    /// The linkage columns for the verifier to correct.
    pub fn linkage_columns_mut(&mut self) -> LinkageColumnsMut<'_> {
        LinkageColumnsMut {
            launch_correlation_id: &mut self.launch_correlation_id,
            external_id_default: &mut self.external_id_default,
            external_id_user: &mut self.external_id_user,
            stream: &mut self.stream,
        }
    }

    /// The graph columns for the verifier to fill.
    pub fn graph_columns_mut(&mut self) -> GraphColumnsMut<'_> {
        GraphColumnsMut {
            graph_id: &mut self.graph_id,
            graph_node_id: &mut self.graph_node_id,
        }
    }
}
