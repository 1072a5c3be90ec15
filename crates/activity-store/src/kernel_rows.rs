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
//! holds more than one chunk it does not use. The external-correlation slot
//! (the launch-stack method's answer) gets a column of its own only once a
//! record carries one.

use crate::interner::Interner;
use crate::kernel_batch::{BatchRow, BatchTables};
use crate::kernel_frame::{DispatchPlace, LaunchShape};
use crate::records::KernelDispatch;

/// What finalisation sorts kernel rows by: start, then correlation id,
/// dispatch id and end.
pub(crate) type OrderKey = (u64, u64, u64, u64);

/// Rows per chunk (160 KiB).
const CHUNK: usize = 4096;

/// A staged dispatch: its times and ids, and its launch shape and place by
/// index into its shard's tables.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Row {
    pub(crate) start_ns: u64,
    pub(crate) end_ns: u64,
    pub(crate) correlation_id: u64,
    pub(crate) dispatch_id: u64,
    pub(crate) shape: u32,
    pub(crate) place: u32,
}

impl Row {
    /// The dispatch this row was staged from, given what its shape and
    /// place indices name and its external slot.
    pub(crate) fn dispatch(
        &self,
        shape: &LaunchShape,
        place: &DispatchPlace,
        external_slot: u64,
    ) -> KernelDispatch {
        KernelDispatch {
            agent: place.agent,
            queue: place.queue,
            correlation_id: self.correlation_id,
            external_slot,
            thread_id: place.thread_id,
            kernel_id: shape.kernel_id,
            dispatch_id: self.dispatch_id,
            grid: shape.grid,
            workgroup: shape.workgroup,
            lds_bytes: shape.lds_bytes,
            scratch_bytes: shape.scratch_bytes,
            start_ns: self.start_ns,
            end_ns: self.end_ns,
        }
    }
}

/// One staging shard's kernel dispatches.
#[derive(Debug, Default)]
pub(crate) struct KernelRows {
    chunks: Vec<Vec<Row>>,
    len: usize,
    shapes: Interner<LaunchShape>,
    places: Interner<DispatchPlace>,
    /// Per row, once any record carried a non-zero external slot.
    external_slots: Option<Vec<u64>>,
    /// A batch's shape and place indices as this shard's, while one is
    /// staged (`UNMAPPED` until a row names one): kept to reuse their room.
    shape_ids: Vec<u32>,
    place_ids: Vec<u32>,
}

/// A batch index not yet looked up in the shard's table.
const UNMAPPED: u32 = u32::MAX;

/// The shard's index cached in `slot`, looked up first if it is not yet.
#[inline(always)]
fn mapped(slot: &mut u32, look_up: impl FnOnce() -> u32) -> u32 {
    if *slot == UNMAPPED {
        *slot = look_up();
    }
    *slot
}

impl KernelRows {
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Stages a batch's rows a chunk's room at a time: each piece is one
    /// extend of the last chunk, with one capacity check. A row's shape and
    /// place index the batch's tables; each distinct one is looked up in
    /// this shard's tables once per call, when a row first names it, so
    /// the tables hold only what rows name, numbered as they first appear.
    pub(crate) fn extend_from_batch(&mut self, batch: &[BatchRow], tables: &BatchTables) {
        let KernelRows {
            chunks,
            len,
            shapes,
            places,
            external_slots,
            shape_ids,
            place_ids,
        } = self;
        shape_ids.clear();
        shape_ids.resize(tables.shapes.values().len(), UNMAPPED);
        place_ids.clear();
        place_ids.resize(tables.places.values().len(), UNMAPPED);
        let mut rest = batch;
        while !rest.is_empty() {
            if chunks.last().is_none_or(|c| c.len() == CHUNK) {
                chunks.push(Vec::with_capacity(CHUNK));
            }
            let chunk = chunks.last_mut().expect("a chunk with room");
            let (piece, after) = rest.split_at(rest.len().min(CHUNK - chunk.len()));
            chunk.extend(piece.iter().map(|b| {
                let mut row = b.row;
                row.shape = mapped(&mut shape_ids[row.shape as usize], || {
                    let shape = *tables.shapes.get(row.shape);
                    shapes.id(shape, shape.hint())
                });
                row.place = mapped(&mut place_ids[row.place as usize], || {
                    let place = *tables.places.get(row.place);
                    places.id(place, place.hint())
                });
                row
            }));
            let any = || tables.any_external_slot && piece.iter().any(|b| b.external_slot != 0);
            if external_slots.is_some() || any() {
                let slots = external_slots.get_or_insert_with(|| vec![0; *len]);
                slots.extend(piece.iter().map(|b| b.external_slot));
            }
            *len += piece.len();
            rest = after;
        }
    }

    /// Row `index` as staged.
    pub(crate) fn row(&self, index: usize) -> &Row {
        &self.chunks[index / CHUNK][index % CHUNK]
    }

    /// Row `index`'s external-correlation slot (0: none).
    pub(crate) fn external_slot(&self, index: usize) -> u64 {
        self.external_slots.as_ref().map_or(0, |s| s[index])
    }

    /// The first `len` rows as consecutive runs, each with its rows'
    /// external-correlation slots (`None`: no row carried one).
    pub(crate) fn runs(&self, len: usize) -> impl Iterator<Item = (&[Row], Option<&[u64]>)> {
        self.chunks
            .iter()
            .enumerate()
            .take(len.div_ceil(CHUNK))
            .map(move |(i, chunk)| {
                let rows = (len - i * CHUNK).min(chunk.len());
                let slots = self.external_slots.as_ref();
                let slots = slots.map(|s| &s[i * CHUNK..i * CHUNK + rows]);
                (&chunk[..rows], slots)
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
        let r = self.row(index);
        (r.start_ns, r.correlation_id, r.dispatch_id, r.end_ns)
    }

    /// Are the rows in the order finalisation sorts them by?
    pub(crate) fn is_sorted(&self) -> bool {
        self.chunks
            .iter()
            .flatten()
            .map(|r| (r.start_ns, r.correlation_id, r.dispatch_id, r.end_ns))
            .is_sorted()
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
        let r = self.row(index);
        r.dispatch(
            self.shapes.get(r.shape),
            self.places.get(r.place),
            self.external_slot(index),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel_batch::tests::dispatch;
    use crate::kernel_batch::KernelBatch;

    fn record(i: u64) -> KernelDispatch {
        dispatch(i, 32)
    }

    #[test]
    fn every_row_comes_back_as_it_went_in() {
        for first_slot in [10, CHUNK + 7] {
            // The first slot alone in its push, or inside a long one.
            let mut rows = KernelRows::default();
            let mut records: Vec<KernelDispatch> = (0..3 * CHUNK as u64 + 5).map(record).collect();
            records[first_slot].external_slot = 42;
            records[2 * CHUNK + 1].external_slot = 43;
            for part in [&records[..10], &records[10..11], &records[11..]] {
                let batch: KernelBatch = part.iter().copied().collect();
                rows.extend_from_batch(batch.rows(), batch.tables());
            }
            assert_eq!(rows.len(), records.len());
            for (i, want) in records.iter().enumerate() {
                assert_eq!(rows.get(i), *want, "row {i}");
            }
        }
        assert!(std::mem::size_of::<Row>() <= 40);
    }
}
