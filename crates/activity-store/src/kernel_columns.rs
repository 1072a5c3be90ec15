//! Kernel dispatches column by column: their times and ids, and their
//! launch shape and place by index into tables kept beside them. A window
//! stages its dispatches this way, and its finalised frame keeps them so.
//!
//! Why: a window whose dispatches arrived in order (one thread delivered
//! them, as the SDK's buffer thread does) becomes a frame by moving these
//! columns, not by copying them. Staged as 40-byte rows, finalising read
//! every row back and wrote it out again as columns: 0.75 of the 3.7 ms
//! that benches/pipeline's whole pipeline took for 100k dispatches.

use crate::kernel_batch::BatchRow;
use crate::kernel_frame::{DispatchPlace, LaunchShape};
use crate::records::KernelDispatch;

/// What finalisation sorts kernel rows by: start, then correlation id,
/// dispatch id and end.
pub(crate) type OrderKey = (u64, u64, u64, u64);

/// One dispatch's times and ids, and its launch shape and place by index
/// into the tables of whatever holds it.
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
    /// The dispatch this row was made from, given what its shape and place
    /// indices name and its external slot.
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

/// Rows as columns, every column as long as the others but the external
/// slots, which are empty until a row carries a non-zero one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct KernelColumns {
    pub(crate) start_ns: Vec<u64>,
    pub(crate) end_ns: Vec<u64>,
    pub(crate) correlation_id: Vec<u64>,
    pub(crate) dispatch_id: Vec<u64>,
    pub(crate) shape: Vec<u32>,
    pub(crate) place: Vec<u32>,
    /// Per row once any row carried a non-zero external-correlation slot
    /// (the launch-stack method's answer); empty until then.
    pub(crate) external_slot: Vec<u64>,
}

impl KernelColumns {
    /// Empty columns with room for `rows` rows (the external slots get
    /// theirs when a row first carries one).
    pub(crate) fn with_capacity(rows: usize) -> Self {
        let mut columns = Self::default();
        columns.reserve_exact(rows);
        columns
    }

    pub(crate) fn len(&self) -> usize {
        self.start_ns.len()
    }

    /// Rows the columns hold room for.
    pub(crate) fn capacity(&self) -> usize {
        self.start_ns.capacity()
    }

    /// Makes room for `rows` more rows in every column but the external
    /// slots, exactly.
    pub(crate) fn reserve_exact(&mut self, rows: usize) {
        self.start_ns.reserve_exact(rows);
        self.end_ns.reserve_exact(rows);
        self.correlation_id.reserve_exact(rows);
        self.dispatch_id.reserve_exact(rows);
        self.shape.reserve_exact(rows);
        self.place.reserve_exact(rows);
    }

    /// Appends `rows` a column at a time: one tight loop and one capacity
    /// check each, over rows that stay in the core's first-level cache.
    /// `shape` and `place` map a row's indices to the tables these columns
    /// name; `any_slot`: whether a row may carry an external slot, so the
    /// slots are looked at only then.
    #[inline]
    pub(crate) fn extend(
        &mut self,
        rows: &[BatchRow],
        mut shape: impl FnMut(u32) -> u32,
        mut place: impl FnMut(u32) -> u32,
        any_slot: bool,
    ) {
        let before = self.len();
        self.start_ns.extend(rows.iter().map(|b| b.row.start_ns));
        self.end_ns.extend(rows.iter().map(|b| b.row.end_ns));
        self.correlation_id
            .extend(rows.iter().map(|b| b.row.correlation_id));
        self.dispatch_id
            .extend(rows.iter().map(|b| b.row.dispatch_id));
        self.shape.extend(rows.iter().map(|b| shape(b.row.shape)));
        self.place.extend(rows.iter().map(|b| place(b.row.place)));
        let carried = || any_slot && rows.iter().any(|b| b.external_slot != 0);
        if !self.external_slot.is_empty() || carried() {
            self.external_slot.resize(before, 0);
            self.external_slot
                .extend(rows.iter().map(|b| b.external_slot));
        }
    }

    /// Row `index`, with its external slot.
    pub(crate) fn row(&self, index: usize) -> BatchRow {
        BatchRow {
            row: Row {
                start_ns: self.start_ns[index],
                end_ns: self.end_ns[index],
                correlation_id: self.correlation_id[index],
                dispatch_id: self.dispatch_id[index],
                shape: self.shape[index],
                place: self.place[index],
            },
            external_slot: self.external_slot(index),
        }
    }

    /// Row `index`'s external-correlation slot (0: none).
    pub(crate) fn external_slot(&self, index: usize) -> u64 {
        self.external_slot.get(index).copied().unwrap_or(0)
    }

    /// What finalisation sorts row `index` by.
    pub(crate) fn order_key(&self, index: usize) -> OrderKey {
        (
            self.start_ns[index],
            self.correlation_id[index],
            self.dispatch_id[index],
            self.end_ns[index],
        )
    }

    /// Are the rows in the order finalisation sorts them by? Nearly every
    /// row starts after the one before, so a block of rows whose starts
    /// rise is checked with no branch a row, and only a block with a tie
    /// or a fall is walked row by row, reading the other columns where
    /// two rows start together.
    pub(crate) fn is_sorted(&self) -> bool {
        const BLOCK: usize = 256;
        let starts = &self.start_ns;
        let in_order = |i: usize| match starts[i].cmp(&starts[i + 1]) {
            std::cmp::Ordering::Less => true,
            std::cmp::Ordering::Greater => false,
            std::cmp::Ordering::Equal => self.order_key(i) <= self.order_key(i + 1),
        };
        let pairs = starts.len().saturating_sub(1);
        (0..pairs).step_by(BLOCK).all(|first| {
            let end = (first + BLOCK).min(pairs);
            let (earlier, later) = (&starts[first..end], &starts[first + 1..=end]);
            let rising = earlier
                .iter()
                .zip(later)
                .fold(true, |rising, (a, b)| rising & (a < b));
            rising || (first..end).all(in_order)
        })
    }

    /// The number of rows before the first whose start is after `stop_ns`,
    /// for rows in order.
    pub(crate) fn started_by(&self, stop_ns: u64) -> usize {
        self.start_ns.partition_point(|&start| start <= stop_ns)
    }

    /// Keeps the first `len` rows.
    pub(crate) fn truncate(&mut self, len: usize) {
        self.start_ns.truncate(len);
        self.end_ns.truncate(len);
        self.correlation_id.truncate(len);
        self.dispatch_id.truncate(len);
        self.shape.truncate(len);
        self.place.truncate(len);
        self.external_slot.truncate(len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(start_ns: u64, correlation_id: u64, dispatch_id: u64, slot: u64) -> BatchRow {
        BatchRow {
            row: Row {
                start_ns,
                end_ns: start_ns + 5,
                correlation_id,
                dispatch_id,
                shape: 0,
                place: 0,
            },
            external_slot: slot,
        }
    }

    fn columns(rows: &[BatchRow]) -> KernelColumns {
        let mut columns = KernelColumns::default();
        columns.extend(rows, |s| s, |p| p, true);
        columns
    }

    #[test]
    fn order_ties_on_start_are_broken_by_the_other_columns() {
        assert!(columns(&[row(1, 2, 3, 0), row(1, 2, 4, 0), row(2, 1, 1, 0)]).is_sorted());
        assert!(!columns(&[row(1, 2, 4, 0), row(1, 2, 3, 0)]).is_sorted());
        assert!(!columns(&[row(1, 3, 0, 0), row(1, 2, 9, 0)]).is_sorted());
        assert!(!columns(&[row(2, 0, 0, 0), row(1, 9, 9, 0)]).is_sorted());
        assert!(columns(&[]).is_sorted());
        // Past the first block of rows: a tie broken right, then a fall.
        let mut rows: Vec<BatchRow> = (0..600).map(|i| row(10 * i, 1, i, 0)).collect();
        rows[300] = row(10 * 299, 1, 300, 0);
        assert!(columns(&rows).is_sorted());
        rows[512] = row(10 * 511 - 1, 1, 512, 0);
        assert!(!columns(&rows).is_sorted());
    }

    #[test]
    fn slots_get_a_column_from_the_first_non_zero_one_on() {
        let mut columns = columns(&[row(1, 1, 1, 0), row(2, 1, 2, 0)]);
        assert!(columns.external_slot.is_empty());
        columns.extend(&[row(3, 1, 3, 0), row(4, 1, 4, 9)], |s| s, |p| p, true);
        assert_eq!(columns.external_slot, [0, 0, 0, 9]);
        columns.extend(&[row(5, 1, 5, 0)], |s| s, |p| p, false);
        assert_eq!(columns.external_slot, [0, 0, 0, 9, 0]);
        columns.truncate(4);
        assert_eq!(columns.len(), 4);
        assert_eq!(columns.row(3).external_slot, 9);
        assert_eq!(columns.started_by(2), 2);
    }
}
