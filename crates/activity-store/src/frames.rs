//! The columnar frames a finalised window hands to the trace writers.
//!
//! One frame per record kind, one `Vec` per column (kernels, nearly all of
//! a window, name their repeated values by index: `kernel_frame`): a window of a million
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
//! [`Attributable`].

use crate::frame_macro::columnar_frame;
use crate::kernel_frame::LaunchLink;
use crate::records::{AgentId, CopyDirection};

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

/// What graph attribution reads from a kernel or copy frame and writes
/// into it: a row's graph key once vouched for, and the call it links to
/// (its CPU op and stream); when it cannot prove one, a link that may be
/// wrong is removed. Rows can be changed, never added or removed, so the
/// frame's columns stay aligned.
pub trait Attributable {
    /// How many rows the frame has.
    fn row_count(&self) -> usize;

    /// The raw external correlation value the SDK carried on row `row`.
    fn external_slot(&self, row: usize) -> u64;

    /// The call row `row` is linked to now.
    fn launch_correlation_id(&self, row: usize) -> Option<u64>;

    fn set_graph_key(&mut self, row: usize, graph_id: u64, graph_node_id: u64);

    fn set_link(&mut self, row: usize, link: LaunchLink);
}

impl Attributable for CopyFrame {
    fn row_count(&self) -> usize {
        CopyFrame::len(self)
    }

    fn external_slot(&self, row: usize) -> u64 {
        self.external_slot[row]
    }

    fn launch_correlation_id(&self, row: usize) -> Option<u64> {
        self.launch_correlation_id[row]
    }

    fn set_graph_key(&mut self, row: usize, graph_id: u64, graph_node_id: u64) {
        self.graph_id[row] = Some(graph_id);
        self.graph_node_id[row] = Some(graph_node_id);
    }

    fn set_link(&mut self, row: usize, link: LaunchLink) {
        self.launch_correlation_id[row] = link.launch_correlation_id;
        self.external_id_default[row] = link.external_id_default;
        self.external_id_user[row] = link.external_id_user;
        self.stream[row] = link.stream;
    }
}
