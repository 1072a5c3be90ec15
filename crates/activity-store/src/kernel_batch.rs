//! Kernel dispatches as a decoder hands them over: already in the 40-byte
//! form a window stages them in, with their launch shapes and places
//! interned where they are decoded.
//!
//! Why: staged from decoded 112-byte records, every dispatch was written
//! whole into a batch and read back to be interned and staged, in a second
//! pass over memory that had left the core's first-level cache. Interned
//! as it is decoded, that work overlaps the reads of the SDK's buffer,
//! which bound decoding: in benches/pipeline.rs decoding straight into
//! staged rows took about the time decoding alone took (1.0 against 0.8 to
//! 1.0 ms for 100k records), where decoding and then staging took 1.9 ms.
//! The store then copies the rows into its window, mapping each batch
//! index to the window's own once per distinct value
//! ([`crate::kernel_rows::KernelRows::extend_from_batch`]).

use crate::interner::Interner;
use crate::kernel_columns::Row;
use crate::kernel_frame::{DispatchPlace, LaunchShape};
use crate::records::{KernelDispatch, Timed};

/// A batch's launch shapes and places seen: kept from batch to batch, so a
/// steady workload interns nothing new, until they hold this many values.
const TABLE_BOUND: usize = 1024;

/// One dispatch of a batch (or gathered from columns): its row, whose
/// shape and place index the tables of what holds it, and its
/// external-correlation slot.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BatchRow {
    pub(crate) row: Row,
    pub(crate) external_slot: u64,
}

impl Timed for BatchRow {
    fn start_ns(&self) -> u64 {
        self.row.start_ns
    }
    fn end_ns(&self) -> u64 {
        self.row.end_ns
    }
}

/// The values a batch's rows name by index, and whether any row carries
/// an external-correlation slot (with the evidence method none does, and
/// staging then need not look).
#[derive(Clone, Debug, Default)]
pub(crate) struct BatchTables {
    pub(crate) shapes: Interner<LaunchShape>,
    pub(crate) places: Interner<DispatchPlace>,
    pub(crate) any_external_slot: bool,
}

impl BatchTables {
    /// The dispatch `b` was pushed as.
    fn dispatch(&self, b: &BatchRow) -> KernelDispatch {
        let shape = self.shapes.get(b.row.shape);
        let place = self.places.get(b.row.place);
        b.row.dispatch(shape, place, b.external_slot)
    }
}

/// Kernel dispatches waiting to be pushed
/// ([`crate::ActivityStore::push_kernel_batch`]); reused from push to
/// push.
#[derive(Clone, Debug, Default)]
pub struct KernelBatch {
    rows: Vec<BatchRow>,
    tables: BatchTables,
}

impl KernelBatch {
    /// Adds one dispatch.
    #[inline]
    pub fn push(&mut self, r: KernelDispatch) {
        let shape = LaunchShape::of(&r);
        let place = DispatchPlace::of(&r);
        let tables = &mut self.tables;
        tables.any_external_slot |= r.external_slot != 0;
        self.rows.push(BatchRow {
            row: Row {
                start_ns: r.start_ns,
                end_ns: r.end_ns,
                correlation_id: r.correlation_id,
                dispatch_id: r.dispatch_id,
                shape: tables.shapes.id(shape, shape.hint()),
                place: tables.places.id(place, place.hint()),
            },
            external_slot: r.external_slot,
        });
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Empties the batch for reuse, and its tables too once they are large,
    /// so a workload of ever new shapes holds a bounded batch.
    pub fn clear(&mut self) {
        self.rows.clear();
        self.tables.any_external_slot = false;
        if self.tables.shapes.values().len() + self.tables.places.values().len() > TABLE_BOUND {
            self.tables = BatchTables::default();
        }
    }

    /// Dispatch `index` as it was pushed.
    pub fn get(&self, index: usize) -> KernelDispatch {
        self.tables.dispatch(&self.rows[index])
    }

    /// Keeps the dispatches `keep` says to, in order.
    pub fn retain(&mut self, mut keep: impl FnMut(&KernelDispatch) -> bool) {
        let tables = &self.tables;
        self.rows.retain(|b| keep(&tables.dispatch(b)));
    }

    pub(crate) fn rows(&self) -> &[BatchRow] {
        &self.rows
    }

    pub(crate) fn tables(&self) -> &BatchTables {
        &self.tables
    }
}

impl FromIterator<KernelDispatch> for KernelBatch {
    fn from_iter<I: IntoIterator<Item = KernelDispatch>>(records: I) -> Self {
        let mut batch = KernelBatch::default();
        for record in records {
            batch.push(record);
        }
        batch
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::records::AgentId;

    /// Dispatch `i` of a made-up window running `kernels` distinct kernels
    /// on two agents, three queues and five threads.
    pub(crate) fn dispatch(i: u64, kernels: u64) -> KernelDispatch {
        KernelDispatch {
            agent: AgentId(1 + i % 2),
            queue: 0x7f00 + (i % 3),
            correlation_id: 100 + i / 32,
            external_slot: 0,
            thread_id: 7 + i % 5,
            kernel_id: i % kernels,
            dispatch_id: i,
            grid: [(i % 7) as u32, 1, 1],
            workgroup: [64, 1, 1],
            lds_bytes: (i % 11) as u32,
            scratch_bytes: 0,
            start_ns: 1_000 * i,
            end_ns: 1_000 * i + 500,
        }
    }

    /// A dispatch of its own kernel, with an external slot.
    fn record(i: u64) -> KernelDispatch {
        KernelDispatch {
            external_slot: i % 4,
            ..dispatch(i, u64::MAX)
        }
    }

    #[test]
    fn dispatches_come_back_as_pushed_across_clears() {
        let mut batch = KernelBatch::default();
        // Distinct kernels, so the tables pass their bound and are dropped
        // at a clear while the batch goes on.
        for round in 0..4 {
            let records: Vec<KernelDispatch> = (0..700).map(|i| record(round * 700 + i)).collect();
            for r in &records {
                batch.push(*r);
            }
            assert_eq!(batch.len(), records.len());
            for (i, want) in records.iter().enumerate() {
                assert_eq!(batch.get(i), *want, "round {round}, dispatch {i}");
            }
            batch.clear();
            assert!(batch.is_empty());
            assert!(
                batch.tables.shapes.values().len() + batch.tables.places.values().len()
                    <= TABLE_BOUND
            );
        }
    }

    #[test]
    fn retain_keeps_the_chosen_dispatches_in_order() {
        let records: Vec<KernelDispatch> = (0..50).map(record).collect();
        let mut batch: KernelBatch = records.iter().copied().collect();
        batch.retain(|k| k.dispatch_id % 3 != 1);
        let kept: Vec<KernelDispatch> = (0..batch.len()).map(|i| batch.get(i)).collect();
        let want: Vec<KernelDispatch> = records
            .into_iter()
            .filter(|k| k.dispatch_id % 3 != 1)
            .collect();
        assert_eq!(kept, want);
    }
}
