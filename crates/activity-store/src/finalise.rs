//! Turning a closed window's staged records into the frames writers read.
//!
//! Done once per window, off every hot path: drop rows that started after
//! the stop (they were staged while the window was still open-ended), sort
//! by start so the output does not depend on which thread delivered what,
//! transpose into columns, and join each row's correlation id to its stream
//! and external ids.

use crate::completeness::Completeness;
use crate::frames::{
    ApiCallFrame, ApiCallRow, CopyFrame, CopyRow, GraphLaunchFrame, GraphLaunchRow, KernelFrame,
    KernelRow,
};
use crate::linkage::{CorrelationLinks, Link};
use crate::records::{GraphLaunch, HipApiCall, KernelDispatch, MemoryCopy, Timed};
use crate::staging::Staging;
use crate::stats::WindowStats;
use crate::windows::WindowId;

/// A window handed out whole: its frames, and whether it is complete.
///
/// The store keeps nothing of it afterwards but its time range (to count
/// late arrivals).
#[derive(Clone, Debug)]
pub struct FinalisedWindow {
    pub id: WindowId,
    pub start_ns: u64,
    pub stop_ns: u64,
    pub kernels: KernelFrame,
    pub copies: CopyFrame,
    pub api_calls: ApiCallFrame,
    pub graph_launches: GraphLaunchFrame,
    pub completeness: Completeness,
    pub stats: WindowStats,
}

/// Looks up each correlation id once per run of equal ids: a graph launch's
/// dispatches share one id and sit next to each other once sorted.
struct LinkCache<'a> {
    links: &'a CorrelationLinks,
    last: Option<(u64, Link)>,
}

impl<'a> LinkCache<'a> {
    fn new(links: &'a CorrelationLinks) -> Self {
        Self { links, last: None }
    }

    fn get(&mut self, correlation_id: u64) -> Link {
        match self.last {
            Some((id, link)) if id == correlation_id => link,
            _ => {
                let link = self.links.get(correlation_id);
                self.last = Some((correlation_id, link));
                link
            }
        }
    }
}

/// The records in the order their keys sort, without moving them: sorting
/// small (key, index) pairs and reading each record once is cheaper than
/// sorting the records themselves, which are 50 to 100 bytes each.
fn in_key_order<R, K: Ord + Copy>(
    records: &[R],
    key: impl Fn(&R) -> K,
) -> impl Iterator<Item = &R> {
    let mut order: Vec<(K, usize)> = records
        .iter()
        .enumerate()
        .map(|(index, record)| (key(record), index))
        .collect();
    order.sort_unstable();
    order.into_iter().map(move |(_, index)| &records[index])
}

/// Removes rows that started after `stop_ns` and returns how many.
fn keep_until_stop<R: Timed>(records: &mut Vec<R>, stop_ns: u64) -> u64 {
    let before = records.len();
    records.retain(|r| r.start_ns() <= stop_ns);
    (before - records.len()) as u64
}

pub(crate) struct Built {
    pub(crate) kernels: KernelFrame,
    pub(crate) copies: CopyFrame,
    pub(crate) api_calls: ApiCallFrame,
    pub(crate) graph_launches: GraphLaunchFrame,
    /// Rows staged while the window was open that started after its stop.
    pub(crate) started_after_stop: u64,
}

pub(crate) fn build(mut staging: Staging, stop_ns: u64, links: &CorrelationLinks) -> Built {
    let started_after_stop = keep_until_stop(&mut staging.kernels, stop_ns)
        + keep_until_stop(&mut staging.copies, stop_ns)
        + keep_until_stop(&mut staging.api_calls, stop_ns)
        + keep_until_stop(&mut staging.graph_launches, stop_ns);
    staging.kernels.append(&mut staging.routed_kernels);
    staging.copies.append(&mut staging.routed_copies);
    let mut cache = LinkCache::new(links);
    Built {
        kernels: kernel_frame(staging.kernels, &mut cache),
        copies: copy_frame(staging.copies, &mut cache),
        api_calls: api_call_frame(staging.api_calls, &mut cache),
        graph_launches: graph_launch_frame(staging.graph_launches, &mut cache),
        started_after_stop,
    }
}

fn kernel_frame(records: Vec<KernelDispatch>, cache: &mut LinkCache<'_>) -> KernelFrame {
    let mut frame = KernelFrame::with_capacity(records.len());
    for r in in_key_order(&records, |r| {
        (r.start_ns, r.correlation_id, r.dispatch_id, r.end_ns)
    }) {
        let link = cache.get(r.correlation_id);
        frame.push_row(KernelRow {
            start_ns: r.start_ns,
            end_ns: r.end_ns,
            agent: r.agent,
            queue: r.queue,
            stream: link.stream,
            correlation_id: r.correlation_id,
            launch_correlation_id: Some(r.correlation_id),
            kernel_id: r.kernel_id,
            dispatch_id: r.dispatch_id,
            grid: r.grid,
            workgroup: r.workgroup,
            lds_bytes: r.lds_bytes,
            scratch_bytes: r.scratch_bytes,
            thread_id: r.thread_id,
            external_slot: r.external_slot,
            graph_id: None,
            graph_node_id: None,
            external_id_default: link.external_id_default,
            external_id_user: link.external_id_user,
        });
    }
    frame
}

fn copy_frame(records: Vec<MemoryCopy>, cache: &mut LinkCache<'_>) -> CopyFrame {
    let mut frame = CopyFrame::with_capacity(records.len());
    for r in in_key_order(&records, |r| {
        (r.start_ns, r.correlation_id, r.end_ns, r.bytes)
    }) {
        let link = cache.get(r.correlation_id);
        frame.push_row(CopyRow {
            start_ns: r.start_ns,
            end_ns: r.end_ns,
            direction: r.direction,
            src_agent: r.src_agent,
            dst_agent: r.dst_agent,
            bytes: r.bytes,
            stream: link.stream,
            correlation_id: r.correlation_id,
            launch_correlation_id: Some(r.correlation_id),
            thread_id: r.thread_id,
            external_slot: r.external_slot,
            graph_id: None,
            graph_node_id: None,
            external_id_default: link.external_id_default,
            external_id_user: link.external_id_user,
        });
    }
    frame
}

fn api_call_frame(records: Vec<HipApiCall>, cache: &mut LinkCache<'_>) -> ApiCallFrame {
    let mut frame = ApiCallFrame::with_capacity(records.len());
    for r in in_key_order(&records, |r| (r.start_ns, r.correlation_id, r.end_ns)) {
        let link = cache.get(r.correlation_id);
        frame.push_row(ApiCallRow {
            start_ns: r.start_ns,
            end_ns: r.end_ns,
            operation: r.operation,
            correlation_id: r.correlation_id,
            thread_id: r.thread_id,
            stream: link.stream,
            external_id_default: link.external_id_default,
            external_id_user: link.external_id_user,
        });
    }
    frame
}

fn graph_launch_frame(records: Vec<GraphLaunch>, cache: &mut LinkCache<'_>) -> GraphLaunchFrame {
    let mut frame = GraphLaunchFrame::with_capacity(records.len());
    for r in in_key_order(&records, |r| (r.start_ns, r.correlation_id, r.end_ns)) {
        let link = cache.get(r.correlation_id);
        frame.push_row(GraphLaunchRow {
            start_ns: r.start_ns,
            end_ns: r.end_ns,
            correlation_id: r.correlation_id,
            graph_exec_id: r.graph_exec_id,
            kernel_dispatch_count: r.kernel_dispatch_count,
            thread_id: r.thread_id,
            agent: r.agent,
            queue: r.queue,
            stream: link.stream,
            external_id_default: link.external_id_default,
            external_id_user: link.external_id_user,
        });
    }
    frame
}
