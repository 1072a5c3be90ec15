//! Kernel dispatches as a window holds them until it is finalised: 40
//! bytes a row instead of the 112 of a decoded record, in the columns its
//! frame will keep ([`KernelColumns`]).
//!
//! Why: a window holds every dispatch launched in it, a million or more, so
//! its rows are the tool's memory. Most of a record repeats: a graph's
//! launches run the same kernels with the same shapes on the same queues.
//! So a row keeps its times and ids, and names its launch shape (kernel,
//! grid, workgroup, LDS and scratch) and its place (agent, queue, thread)
//! by index into small tables of the values seen. The external-correlation
//! slot (the launch-stack method's answer) gets a column of its own only
//! once a record carries one.
//!
//! Columns must be contiguous for the frame to take them over, so they grow
//! as vectors do, and growing copies what they hold (or, for a block the
//! tool's allocator maps, touches fresh pages). A session's windows are
//! mostly alike (a profiler's schedule repeats its steps), so a shard's
//! rows start with room for as many as the largest shard held in the last
//! window finalised ([`Part::note_finalised`]): in benches/pipeline,
//! staging 100k rows took 0.6 to 0.7 ms more when they grew from nothing.

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::interner::Interner;
use crate::kernel_batch::{BatchRow, BatchTables};
use crate::kernel_columns::KernelColumns;
use crate::kernel_frame::{DispatchPlace, LaunchShape};
#[cfg(test)]
use crate::records::KernelDispatch;

/// One staging shard's kernel dispatches.
#[derive(Debug, Default)]
pub(crate) struct KernelRows {
    columns: KernelColumns,
    shapes: Interner<LaunchShape>,
    places: Interner<DispatchPlace>,
    /// A batch's shape and place indices as this shard's, while one is
    /// staged (`UNMAPPED` until a row names one): kept to reuse their room.
    shape_ids: Vec<u32>,
    place_ids: Vec<u32>,
}

/// Which of a shard's two sets of kernel rows: placed by their start, or
/// routed to the window their launching call was issued in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Part {
    ByStart = 0,
    Routed = 1,
}

/// Per [`Part`], the rows the largest shard held in the last window
/// finalised in this process. Process-wide because it is only room: it
/// changes no row, and a fresh store's first window (a test's, a
/// benchmark's) is as alike to the last as a session's next one.
static LAST_WINDOW_ROWS: [AtomicUsize; 2] = [AtomicUsize::new(0), AtomicUsize::new(0)];

impl Part {
    /// Notes the rows the largest shard of this part held in a window
    /// being finalised.
    pub(crate) fn note_finalised(self, rows: usize) {
        LAST_WINDOW_ROWS[self as usize].store(rows, Ordering::Relaxed);
    }

    /// Room a shard's rows of this part start with.
    fn expected_rows(self) -> usize {
        LAST_WINDOW_ROWS[self as usize].load(Ordering::Relaxed)
    }
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
        self.columns.len()
    }

    /// Stages a batch's rows as rows of `part`. A row's shape and place
    /// index the batch's tables; each distinct one is looked up in this
    /// shard's tables once per call, when a row first names it, so the
    /// tables hold only what rows name, numbered as they first appear.
    pub(crate) fn extend_from_batch(
        &mut self,
        batch: &[BatchRow],
        tables: &BatchTables,
        part: Part,
    ) {
        if self.columns.capacity() == 0 {
            self.columns
                .reserve_exact(part.expected_rows().max(batch.len()));
        }
        let KernelRows {
            columns,
            shapes,
            places,
            shape_ids,
            place_ids,
        } = self;
        shape_ids.clear();
        shape_ids.resize(tables.shapes.values().len(), UNMAPPED);
        place_ids.clear();
        place_ids.resize(tables.places.values().len(), UNMAPPED);
        columns.extend(
            batch,
            |s| {
                mapped(&mut shape_ids[s as usize], || {
                    let shape = *tables.shapes.get(s);
                    shapes.id(shape, shape.hint())
                })
            },
            |p| {
                mapped(&mut place_ids[p as usize], || {
                    let place = *tables.places.get(p);
                    places.id(place, place.hint())
                })
            },
            tables.any_external_slot,
        );
    }

    /// The rows, column by column.
    pub(crate) fn columns(&self) -> &KernelColumns {
        &self.columns
    }

    /// The launch shapes rows name, by index.
    pub(crate) fn shapes(&self) -> &[LaunchShape] {
        self.shapes.values()
    }

    /// The places rows name, by index.
    pub(crate) fn places(&self) -> &[DispatchPlace] {
        self.places.values()
    }

    /// The rows' columns and the tables they index.
    pub(crate) fn into_parts(
        self,
    ) -> (
        KernelColumns,
        Interner<LaunchShape>,
        Interner<DispatchPlace>,
    ) {
        (self.columns, self.shapes, self.places)
    }

    /// Row `index` as the record it was staged from.
    #[cfg(test)]
    fn get(&self, index: usize) -> KernelDispatch {
        let b = self.columns.row(index);
        b.row.dispatch(
            self.shapes.get(b.row.shape),
            self.places.get(b.row.place),
            b.external_slot,
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
        // A window of several thousand rows, staged in three pushes.
        let long = 4096;
        for first_slot in [10, long + 7] {
            // The first slot alone in its push, or inside a long one.
            let mut rows = KernelRows::default();
            let mut records: Vec<KernelDispatch> = (0..3 * long as u64 + 5).map(record).collect();
            records[first_slot].external_slot = 42;
            records[2 * long + 1].external_slot = 43;
            for part in [&records[..10], &records[10..11], &records[11..]] {
                let batch: KernelBatch = part.iter().copied().collect();
                rows.extend_from_batch(batch.rows(), batch.tables(), Part::ByStart);
            }
            assert_eq!(rows.len(), records.len());
            for (i, want) in records.iter().enumerate() {
                assert_eq!(rows.get(i), *want, "row {i}");
            }
        }
    }

    #[test]
    fn a_part_starts_with_room_for_the_last_windows_largest_shard() {
        // No other test of this binary finalises a window.
        Part::Routed.note_finalised(5_000);
        Part::ByStart.note_finalised(0);
        let batch: KernelBatch = (0..10).map(record).collect();
        let mut routed = KernelRows::default();
        routed.extend_from_batch(batch.rows(), batch.tables(), Part::Routed);
        assert!(routed.columns().capacity() >= 5_000);
        let mut by_start = KernelRows::default();
        by_start.extend_from_batch(batch.rows(), batch.tables(), Part::ByStart);
        assert!(by_start.columns().capacity() < 5_000);
        assert_eq!(routed.len(), 10);
    }
}
