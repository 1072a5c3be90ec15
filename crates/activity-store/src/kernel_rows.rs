//! Kernel dispatches as a window holds them until it is finalised: 40
//! bytes a row instead of the 112 of a decoded record.
//!
//! Why: a window holds every dispatch launched in it, a million or more, so
//! its rows are the tool's memory. Most of a record repeats: a graph's
//! launches run the same kernels with the same shapes on the same queues.
//! So a row keeps its times and ids, and names its launch shape (kernel,
//! grid, workgroup, LDS and scratch) and its place (agent, queue, thread)
//! by index into small tables of the values seen. Rows are kept in chunks
//! of fixed size, so a growing window never copies what it holds and never
//! holds more than one chunk it does not use. A chunk holds a column per
//! field, as the finalised frame does, so finalising rows that arrived in
//! order copies columns whole. The external-correlation slot (the
//! launch-stack method's answer) gets a column of its own only once a
//! record carries one.

use crate::interner::Interner;
use crate::kernel_frame::{DispatchPlace, LaunchShape};
use crate::records::KernelDispatch;

/// What finalisation sorts kernel rows by: start, then correlation id,
/// dispatch id and end.
pub(crate) type OrderKey = (u64, u64, u64, u64);

/// Rows per chunk (1.25 MiB): every column at least 128 KiB, a block the
/// tool's allocator maps and keeps for reuse (src/heap.rs) rather than
/// glibc's heap, which trimmed freed columns and faulted them in again for
/// each window. With 4096-row chunks (32 and 16 KiB columns) the pipeline
/// benchmark's staging took 25 times the page faults.
const CHUNK: usize = 32 << 10;

/// Consecutive staged dispatches, a slice per field: a run of one chunk,
/// or rows gathered in finalisation's order.
#[derive(Clone, Copy, Debug)]
pub(crate) struct StagedRun<'a> {
    pub(crate) start_ns: &'a [u64],
    pub(crate) end_ns: &'a [u64],
    pub(crate) correlation_id: &'a [u64],
    pub(crate) dispatch_id: &'a [u64],
    /// Indices into the stager's launch shapes.
    pub(crate) shape: &'a [u32],
    /// Indices into the stager's places.
    pub(crate) place: &'a [u32],
    /// External-correlation slots; `None`: every one is 0.
    pub(crate) external_slot: Option<&'a [u64]>,
}

impl StagedRun<'_> {
    pub(crate) fn len(&self) -> usize {
        self.start_ns.len()
    }
}

/// The columns of staged rows: a chunk's, or a batch gathered in order.
#[derive(Debug, Default)]
pub(crate) struct StagedColumns {
    start_ns: Vec<u64>,
    end_ns: Vec<u64>,
    correlation_id: Vec<u64>,
    dispatch_id: Vec<u64>,
    shape: Vec<u32>,
    place: Vec<u32>,
}

impl StagedColumns {
    pub(crate) fn with_capacity(rows: usize) -> Self {
        Self {
            start_ns: Vec::with_capacity(rows),
            end_ns: Vec::with_capacity(rows),
            correlation_id: Vec::with_capacity(rows),
            dispatch_id: Vec::with_capacity(rows),
            shape: Vec::with_capacity(rows),
            place: Vec::with_capacity(rows),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.start_ns.len()
    }

    /// Appends one row: `key` as [`OrderKey`] orders it, then its shape and
    /// place indices.
    pub(crate) fn push(
        &mut self,
        (start, correlation, dispatch, end): OrderKey,
        shape: u32,
        place: u32,
    ) {
        self.start_ns.push(start);
        self.end_ns.push(end);
        self.correlation_id.push(correlation);
        self.dispatch_id.push(dispatch);
        self.shape.push(shape);
        self.place.push(place);
    }

    pub(crate) fn clear(&mut self) {
        self.start_ns.clear();
        self.end_ns.clear();
        self.correlation_id.clear();
        self.dispatch_id.clear();
        self.shape.clear();
        self.place.clear();
    }

    /// The first `rows` rows, with `slots` as their external slots.
    pub(crate) fn run<'a>(
        &'a self,
        rows: usize,
        external_slot: Option<&'a [u64]>,
    ) -> StagedRun<'a> {
        StagedRun {
            start_ns: &self.start_ns[..rows],
            end_ns: &self.end_ns[..rows],
            correlation_id: &self.correlation_id[..rows],
            dispatch_id: &self.dispatch_id[..rows],
            shape: &self.shape[..rows],
            place: &self.place[..rows],
            external_slot,
        }
    }

    fn order_key(&self, row: usize) -> OrderKey {
        (
            self.start_ns[row],
            self.correlation_id[row],
            self.dispatch_id[row],
            self.end_ns[row],
        )
    }
}

/// One staging shard's kernel dispatches.
#[derive(Debug, Default)]
pub(crate) struct KernelRows {
    chunks: Vec<StagedColumns>,
    len: usize,
    shapes: Interner<LaunchShape>,
    places: Interner<DispatchPlace>,
    /// Per row, once any record carried a non-zero external slot.
    external_slots: Option<Vec<u64>>,
    /// Where the rows so far break [`OrderKey`] order, if anywhere: kept as
    /// rows arrive, when they are in cache, so finalisation need not read
    /// them all again to learn it.
    out_of_order: bool,
}

impl KernelRows {
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Stages `records` a chunk's room at a time: each piece is one extend
    /// of each of the last chunk's columns.
    pub(crate) fn extend_from_slice(&mut self, records: &[KernelDispatch]) {
        let key = |r: &KernelDispatch| (r.start_ns, r.correlation_id, r.dispatch_id, r.end_ns);
        if let (Some(first), Some(last)) = (records.first(), self.len.checked_sub(1)) {
            self.out_of_order |= self.order_key(last) > key(first);
        }
        self.out_of_order |= !records.is_sorted_by(|a, b| key(a) <= key(b));
        let mut rest = records;
        while !rest.is_empty() {
            if self.chunks.last().is_none_or(|c| c.len() == CHUNK) {
                self.chunks.push(StagedColumns::with_capacity(CHUNK));
            }
            let KernelRows {
                chunks,
                shapes,
                places,
                ..
            } = self;
            let chunk = chunks.last_mut().expect("a chunk with room");
            let (piece, after) = rest.split_at(rest.len().min(CHUNK - chunk.len()));
            // One pass, as the batch is read once: the columns have room.
            for r in piece {
                let shape = shapes.id(
                    LaunchShape {
                        kernel_id: r.kernel_id,
                        grid: r.grid,
                        workgroup: r.workgroup,
                        lds_bytes: r.lds_bytes,
                        scratch_bytes: r.scratch_bytes,
                    },
                    r.kernel_id,
                );
                let place = places.id(
                    DispatchPlace {
                        agent: r.agent,
                        queue: r.queue,
                        thread_id: r.thread_id,
                    },
                    r.queue ^ r.thread_id.rotate_left(32),
                );
                chunk.push(
                    (r.start_ns, r.correlation_id, r.dispatch_id, r.end_ns),
                    shape,
                    place,
                );
            }
            if self.external_slots.is_some() || piece.iter().any(|r| r.external_slot != 0) {
                let len = self.len;
                let slots = self.external_slots.get_or_insert_with(|| vec![0; len]);
                slots.extend(piece.iter().map(|r| r.external_slot));
            }
            self.len += piece.len();
            rest = after;
        }
    }

    /// Row `index`'s shape and place indices.
    pub(crate) fn shape_and_place(&self, index: usize) -> (u32, u32) {
        let chunk = &self.chunks[index / CHUNK];
        (chunk.shape[index % CHUNK], chunk.place[index % CHUNK])
    }

    /// Row `index`'s external-correlation slot (0: none).
    pub(crate) fn external_slot(&self, index: usize) -> u64 {
        self.external_slots.as_ref().map_or(0, |s| s[index])
    }

    /// The first `len` rows as consecutive runs, a chunk's at a time.
    pub(crate) fn runs(&self, len: usize) -> impl Iterator<Item = StagedRun<'_>> {
        self.chunks
            .iter()
            .enumerate()
            .take(len.div_ceil(CHUNK))
            .map(move |(i, chunk)| {
                let rows = (len - i * CHUNK).min(chunk.len());
                let slots = self.external_slots.as_ref();
                chunk.run(rows, slots.map(|s| &s[i * CHUNK..i * CHUNK + rows]))
            })
    }

    /// Did any row carry an external-correlation slot?
    pub(crate) fn has_external_slots(&self) -> bool {
        self.external_slots.is_some()
    }

    /// The launch shapes rows name, by index.
    pub(crate) fn shapes(&self) -> &[LaunchShape] {
        self.shapes.values()
    }

    /// The places rows name, by index.
    pub(crate) fn places(&self) -> &[DispatchPlace] {
        self.places.values()
    }

    /// What finalisation sorts row `index` by.
    pub(crate) fn order_key(&self, index: usize) -> OrderKey {
        self.chunks[index / CHUNK].order_key(index % CHUNK)
    }

    /// Are the rows in the order finalisation sorts them by?
    pub(crate) fn is_sorted(&self) -> bool {
        !self.out_of_order
    }

    /// The number of rows before the first whose order key fails `pred`,
    /// for rows sorted so that it holds of a prefix.
    pub(crate) fn partition_point(&self, pred: impl Fn(OrderKey) -> bool) -> usize {
        let (mut lo, mut hi) = (0, self.len);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if pred(self.order_key(mid)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// Row `index` as the record it was staged from.
    #[cfg(test)]
    fn get(&self, index: usize) -> KernelDispatch {
        let (start_ns, correlation_id, dispatch_id, end_ns) = self.order_key(index);
        let (shape, place) = self.shape_and_place(index);
        let shape = self.shapes.get(shape);
        let place = self.places.get(place);
        KernelDispatch {
            agent: place.agent,
            queue: place.queue,
            correlation_id,
            external_slot: self.external_slot(index),
            thread_id: place.thread_id,
            kernel_id: shape.kernel_id,
            dispatch_id,
            grid: shape.grid,
            workgroup: shape.workgroup,
            lds_bytes: shape.lds_bytes,
            scratch_bytes: shape.scratch_bytes,
            start_ns,
            end_ns,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::AgentId;

    fn record(i: u64) -> KernelDispatch {
        KernelDispatch {
            agent: AgentId(1 + i % 2),
            queue: 0x7f00 + (i % 3),
            correlation_id: 100 + i / 32,
            external_slot: 0,
            thread_id: 7 + i % 5,
            kernel_id: i % 32,
            dispatch_id: i,
            grid: [(i % 7) as u32, 1, 1],
            workgroup: [64, 1, 1],
            lds_bytes: (i % 11) as u32,
            scratch_bytes: 0,
            start_ns: 1_000 * i,
            end_ns: 1_000 * i + 500,
        }
    }

    #[test]
    fn every_row_comes_back_as_it_went_in() {
        for first_slot in [10, CHUNK + 7] {
            // The first slot alone in its push, or inside a long one.
            let mut rows = KernelRows::default();
            let mut records: Vec<KernelDispatch> = (0..3 * CHUNK as u64 + 5).map(record).collect();
            records[first_slot].external_slot = 42;
            records[2 * CHUNK + 1].external_slot = 43;
            rows.extend_from_slice(&records[..10]);
            rows.extend_from_slice(&records[10..11]);
            rows.extend_from_slice(&records[11..]);
            assert_eq!(rows.len(), records.len());
            for (i, want) in records.iter().enumerate() {
                assert_eq!(rows.get(i), *want, "row {i}");
            }
        }
    }

    #[test]
    fn rows_know_whether_they_arrived_in_order() {
        let records: Vec<KernelDispatch> = (0..10).map(record).collect();
        let mut rows = KernelRows::default();
        rows.extend_from_slice(&records[..4]);
        rows.extend_from_slice(&records[4..]);
        assert!(rows.is_sorted(), "in order across pushes");

        let mut across = KernelRows::default();
        across.extend_from_slice(&records[4..]);
        across.extend_from_slice(&records[..4]);
        assert!(
            !across.is_sorted(),
            "a push that starts before the last row"
        );

        let mut within = KernelRows::default();
        let mut swapped = records.clone();
        swapped.swap(6, 7);
        within.extend_from_slice(&swapped);
        assert!(!within.is_sorted(), "two rows swapped inside one push");

        // Equal starts are ordered by correlation id, then dispatch id.
        let mut tie = records[2..4].to_vec();
        tie[1].start_ns = tie[0].start_ns;
        tie[1].dispatch_id = tie[0].dispatch_id - 1;
        let mut ties = KernelRows::default();
        ties.extend_from_slice(&tie);
        assert!(
            !ties.is_sorted(),
            "an equal start with a smaller dispatch id"
        );
    }
}
