//! Turning a closed window's staged records into the frames writers read.
//!
//! Done once per window, off every hot path: drop rows that started after
//! the stop (they were staged while the window was still open-ended), sort
//! by start so the output does not depend on which thread delivered what,
//! turn into columns (kernel rows staged in order already are), and join
//! each row's correlation id to its stream and external ids.

use crate::completeness::Completeness;
use crate::frames::{
    ApiCallFrame, ApiCallRow, CopyFrame, CopyRow, GraphLaunchFrame, GraphLaunchRow,
};
use crate::kernel_columns::OrderKey;
use crate::kernel_frame::{KernelFrame, LaunchLink};
use crate::kernel_rows::{KernelRows, Part};
use crate::linkage::{Link, LinkTable};
use crate::records::{GraphLaunch, HipApiCall, MemoryCopy, Timed};
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
    links: &'a LinkTable,
    last: Option<(u64, Link)>,
}

impl<'a> LinkCache<'a> {
    fn new(links: &'a LinkTable) -> Self {
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

/// Rows gathered per batch before a frame takes them column by column (a
/// copy, call or launch frame's, and kernel rows finalised out of order):
/// few enough that a batch stays in L1 while its columns are copied out.
/// Measured when kernel frames were built this way (benches/pipeline's
/// decode_window_finalise, alternating binaries): 64 rows 9.0-10.5 ms, a
/// row at a time 10.0-10.4, 1024 rows (L2) 10.9-11.9.
const BATCH: usize = 64;

/// Feeds `rows` to `append` a batch at a time.
fn in_batches<R: Copy>(rows: impl Iterator<Item = R>, mut append: impl FnMut(&[R])) {
    let mut batch = Vec::with_capacity(BATCH);
    for row in rows {
        batch.push(row);
        if batch.len() == BATCH {
            append(&batch);
            batch.clear();
        }
    }
    append(&batch);
}

pub(crate) struct Built {
    pub(crate) kernels: KernelFrame,
    pub(crate) copies: CopyFrame,
    pub(crate) api_calls: ApiCallFrame,
    pub(crate) graph_launches: GraphLaunchFrame,
    /// Rows staged while the window was open that started after its stop.
    pub(crate) started_after_stop: u64,
}

/// The shards' rows of one kind, each shard's array after the other (in
/// shard order), unrouted ones first: the order ties between equal keys
/// keep.
fn concat<R: Copy>(shards: &mut [Staging], column: impl Fn(&mut Staging) -> &mut Vec<R>) -> Vec<R> {
    let mut all = Vec::with_capacity(shards.iter_mut().map(|s| column(s).len()).sum());
    for shard in shards {
        all.append(column(shard));
    }
    all
}

pub(crate) fn build(mut shards: Vec<Staging>, stop_ns: u64, links: &LinkTable) -> Built {
    let mut copies = concat(&mut shards, |s| &mut s.copies);
    let mut api_calls = concat(&mut shards, |s| &mut s.api_calls);
    let mut graph_launches = concat(&mut shards, |s| &mut s.graph_launches);
    let mut started_after_stop = keep_until_stop(&mut copies, stop_ns)
        + keep_until_stop(&mut api_calls, stop_ns)
        + keep_until_stop(&mut graph_launches, stop_ns);
    copies.append(&mut concat(&mut shards, |s| &mut s.routed_copies));
    let mut cache = LinkCache::new(links);
    let (kernels, late) = kernel_frame(&mut shards, stop_ns, &mut cache);
    started_after_stop += late;
    drop(shards);
    Built {
        kernels,
        copies: copy_frame(copies, &mut cache),
        api_calls: api_call_frame(api_calls, &mut cache),
        graph_launches: graph_launch_frame(graph_launches, &mut cache),
        started_after_stop,
    }
}

/// Every shard's kernel rows, unrouted ones (those that started after the
/// stop left out and counted) before routed ones, as one sorted frame.
fn kernel_frame(
    shards: &mut [Staging],
    stop_ns: u64,
    cache: &mut LinkCache<'_>,
) -> (KernelFrame, u64) {
    let link_of = |cache: &mut LinkCache<'_>, correlation_id: u64| {
        let joined = cache.get(correlation_id);
        LaunchLink {
            launch_correlation_id: Some(correlation_id),
            stream: joined.stream,
            external_id_default: joined.external_id_default,
            external_id_user: joined.external_id_user,
        }
    };
    let (unrouted, routed): (Vec<_>, Vec<_>) = shards
        .iter_mut()
        .map(|s| (&mut s.kernels, &mut s.routed_kernels))
        .unzip();
    let largest = |part: &[&mut KernelRows]| part.iter().map(|rows| rows.len()).max();
    Part::ByStart.note_finalised(largest(&unrouted).unwrap_or(0));
    Part::Routed.note_finalised(largest(&routed).unwrap_or(0));
    // In the order ties between equal keys keep; an empty part adds
    // nothing, not even to the tables.
    let mut parts: Vec<(&mut KernelRows, Part)> = unrouted
        .into_iter()
        .map(|rows| (rows, Part::ByStart))
        .chain(routed.into_iter().map(|rows| (rows, Part::Routed)))
        .filter(|(rows, _)| rows.len() > 0)
        .collect();
    // One thread delivered the window's kernels in order (one queue, or
    // queues that never overlapped): no sort, the rows that started after
    // the stop are a tail, and the staged columns become the frame's.
    if let [(rows, part)] = parts.as_mut_slice() {
        if rows.columns().is_sorted() {
            let rows = std::mem::take(*rows);
            let kept = match part {
                Part::ByStart => rows.columns().started_by(stop_ns),
                Part::Routed => rows.len(),
            };
            let late = (rows.len() - kept) as u64;
            let frame = KernelFrame::from_staged(rows, kept, |c| link_of(cache, c));
            return (frame, late);
        }
    }
    let rows: usize = parts.iter().map(|(p, _)| p.len()).sum();
    let mut frame = KernelFrame::with_capacity(rows);
    // Each part's shape and place indices as the frame's: the shards
    // interned theirs apart.
    let remaps: Vec<(Vec<u32>, Vec<u32>)> = parts
        .iter()
        .map(|(rows, _)| {
            let shapes = rows.shapes().iter().map(|&s| frame.shape_id(s)).collect();
            let places = rows.places().iter().map(|&p| frame.place_id(p)).collect();
            (shapes, places)
        })
        .collect();
    let mut late = 0;
    let mut order: Vec<(OrderKey, u32, u32)> = Vec::with_capacity(rows);
    for (index, (rows, part)) in parts.iter().enumerate() {
        let columns = rows.columns();
        for row in 0..columns.len() {
            let key = columns.order_key(row);
            if *part == Part::ByStart && key.0 > stop_ns {
                late += 1;
            } else {
                order.push((key, index as u32, row as u32));
            }
        }
    }
    order.sort_unstable();
    // Consecutive rows may come from different parts: gathered a batch at
    // a time, their indices made the frame's as they are gathered.
    let mut batch = Vec::with_capacity(BATCH);
    for chunk in order.chunks(BATCH) {
        batch.clear();
        batch.extend(chunk.iter().map(|&(_, part, row)| {
            let mut gathered = parts[part as usize].0.columns().row(row as usize);
            let (shapes, places) = &remaps[part as usize];
            gathered.row.shape = shapes[gathered.row.shape as usize];
            gathered.row.place = places[gathered.row.place as usize];
            gathered
        }));
        frame.extend(&batch, |c| link_of(cache, c));
    }
    (frame, late)
}

fn copy_frame(records: Vec<MemoryCopy>, cache: &mut LinkCache<'_>) -> CopyFrame {
    let mut frame = CopyFrame::with_capacity(records.len());
    let rows = in_key_order(&records, |r| {
        (r.start_ns, r.correlation_id, r.end_ns, r.bytes)
    })
    .map(|r| {
        let link = cache.get(r.correlation_id);
        CopyRow {
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
        }
    });
    in_batches(rows, |batch| frame.extend_rows(batch));
    frame
}

fn api_call_frame(records: Vec<HipApiCall>, cache: &mut LinkCache<'_>) -> ApiCallFrame {
    let mut frame = ApiCallFrame::with_capacity(records.len());
    let rows = in_key_order(&records, |r| (r.start_ns, r.correlation_id, r.end_ns)).map(|r| {
        let link = cache.get(r.correlation_id);
        ApiCallRow {
            start_ns: r.start_ns,
            end_ns: r.end_ns,
            operation: r.operation,
            correlation_id: r.correlation_id,
            thread_id: r.thread_id,
            stream: link.stream,
            external_id_default: link.external_id_default,
            external_id_user: link.external_id_user,
        }
    });
    in_batches(rows, |batch| frame.extend_rows(batch));
    frame
}

fn graph_launch_frame(records: Vec<GraphLaunch>, cache: &mut LinkCache<'_>) -> GraphLaunchFrame {
    let mut frame = GraphLaunchFrame::with_capacity(records.len());
    let rows = in_key_order(&records, |r| (r.start_ns, r.correlation_id, r.end_ns)).map(|r| {
        let link = cache.get(r.correlation_id);
        GraphLaunchRow {
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
        }
    });
    in_batches(rows, |batch| frame.extend_rows(batch));
    frame
}
