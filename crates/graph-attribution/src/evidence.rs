//! What the evidence method is given about one trace window: every
//! completed record, every HIP call, what each call may put on the device,
//! and where the window's edges leave calls unseen.

use std::borrow::Cow;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::ids::AttributionId;
use crate::structure::ExecContents;
use crate::work::{BlitKind, FillParts, HostKernel, KernelLookup, Observed, Output};

/// One completed kernel dispatch or memory copy record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Observation {
    /// The record's correlation id: the HIP call in progress on the thread
    /// that processed its packet (ROCr's intercept runs on whichever thread
    /// rings the doorbell), not necessarily the call that launched it.
    pub correlation_id: u64,
    /// What the record shows, in its window's [`ObservedTable`]
    /// ([`WindowEvidence::observed`] reads it).
    pub observed: ObservedId,
    /// The hardware queue (0 for copy-engine transfers).
    pub queue_id: u64,
    /// The SDK's dispatch id: a process-wide counter taken as packets are
    /// processed, so per queue it follows the queue's slot order. `None`
    /// for copies.
    pub dispatch_id: Option<u64>,
    pub start_ns: u64,
    pub end_ns: u64,
}

/// A window's observations, a column per field: a rule's pass reads only
/// the columns it needs (the call index only correlation ids, rule 7 only
/// what records show). The tool lends its frame's id and time columns
/// ([`Observations::lending`]) instead of copying them; a column becomes
/// the observations' own only when records are pushed after them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Observations<'a> {
    correlation_id: Cow<'a, [u64]>,
    observed: Vec<ObservedId>,
    queue_id: Vec<u64>,
    /// [`NO_DISPATCH_ID`] for records without one.
    dispatch_id: Cow<'a, [u64]>,
    start_ns: Cow<'a, [u64]>,
    end_ns: Cow<'a, [u64]>,
}

/// The dispatch-id column's entry for a record with none (a copy). The
/// SDK's dispatch ids count up from 1 and never reach it; one that did
/// would read as unknown.
pub(crate) const NO_DISPATCH_ID: u64 = u64::MAX;

/// The columns of kernel records a frame lends, each as long as the others.
#[derive(Clone, Copy, Debug)]
pub struct LentColumns<'a> {
    pub correlation_id: &'a [u64],
    pub dispatch_id: &'a [u64],
    pub start_ns: &'a [u64],
    pub end_ns: &'a [u64],
}

/// `column` as a vector of its own with room for `extra` more.
fn own<'c>(column: &'c mut Cow<'_, [u64]>, extra: usize) -> &'c mut Vec<u64> {
    if let Cow::Borrowed(lent) = column {
        let mut owned = Vec::with_capacity(lent.len() + extra);
        owned.extend_from_slice(lent);
        *column = Cow::Owned(owned);
    }
    let owned = column.to_mut();
    owned.reserve(extra);
    owned
}

impl<'a> Observations<'a> {
    /// Kernel records given column by column: the id and time columns
    /// lent, what each shows and its queue as iterators.
    ///
    /// # Panics
    /// If the columns' lengths differ: the observations would not be rows.
    pub fn lending(
        columns: LentColumns<'a>,
        observed: impl IntoIterator<Item = ObservedId>,
        queue_id: impl IntoIterator<Item = u64>,
    ) -> Observations<'a> {
        let out = Observations {
            correlation_id: Cow::Borrowed(columns.correlation_id),
            observed: observed.into_iter().collect(),
            queue_id: queue_id.into_iter().collect(),
            dispatch_id: Cow::Borrowed(columns.dispatch_id),
            start_ns: Cow::Borrowed(columns.start_ns),
            end_ns: Cow::Borrowed(columns.end_ns),
        };
        let n = out.len();
        let lengths = [
            out.observed.len(),
            out.queue_id.len(),
            out.dispatch_id.len(),
            out.start_ns.len(),
            out.end_ns.len(),
        ];
        assert!(lengths.iter().all(|&l| l == n), "columns of one length");
        out
    }

    pub fn len(&self) -> usize {
        self.correlation_id.len()
    }

    pub fn is_empty(&self) -> bool {
        self.correlation_id.is_empty()
    }

    /// Makes room for `extra` more records, taking lent columns as the
    /// observations' own (none when `extra` is 0): pushing after lending
    /// then costs one copy of each lent column, not a copy and a regrowth.
    pub fn reserve(&mut self, extra: usize) {
        if extra == 0 {
            return;
        }
        own(&mut self.correlation_id, extra);
        own(&mut self.dispatch_id, extra);
        own(&mut self.start_ns, extra);
        own(&mut self.end_ns, extra);
        self.observed.reserve(extra);
        self.queue_id.reserve(extra);
    }

    pub fn push(&mut self, o: Observation) {
        own(&mut self.correlation_id, 1).push(o.correlation_id);
        self.observed.push(o.observed);
        self.queue_id.push(o.queue_id);
        own(&mut self.dispatch_id, 1).push(o.dispatch_id.unwrap_or(NO_DISPATCH_ID));
        own(&mut self.start_ns, 1).push(o.start_ns);
        own(&mut self.end_ns, 1).push(o.end_ns);
    }

    /// Record `r`, gathered from the columns (a pass that reads one field
    /// of it reads one column).
    #[inline]
    pub fn get(&self, r: usize) -> Observation {
        Observation {
            correlation_id: self.correlation_id[r],
            observed: self.observed[r],
            queue_id: self.queue_id[r],
            dispatch_id: self.dispatch_id(r),
            start_ns: self.start_ns[r],
            end_ns: self.end_ns[r],
        }
    }

    /// Records `range`, in order.
    pub fn range(
        &self,
        range: std::ops::Range<usize>,
    ) -> impl ExactSizeIterator<Item = Observation> + DoubleEndedIterator + '_ {
        range.map(move |r| self.get(r))
    }

    /// Every record, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Observation> + DoubleEndedIterator + '_ {
        self.range(0..self.len())
    }

    pub fn correlation_ids(&self) -> &[u64] {
        &self.correlation_id
    }

    pub fn observed_ids(&self) -> &[ObservedId] {
        &self.observed
    }

    pub fn queue_ids(&self) -> &[u64] {
        &self.queue_id
    }

    /// The dispatch-id column: [`NO_DISPATCH_ID`] where a record has none.
    pub(crate) fn dispatch_ids(&self) -> &[u64] {
        &self.dispatch_id
    }

    /// Record `r`'s dispatch id, read from its column alone.
    #[inline]
    pub(crate) fn dispatch_id(&self, r: usize) -> Option<u64> {
        Some(self.dispatch_id[r]).filter(|&d| d != NO_DISPATCH_ID)
    }

    pub fn start_ns(&self) -> &[u64] {
        &self.start_ns
    }

    pub fn end_ns(&self) -> &[u64] {
        &self.end_ns
    }
}

impl FromIterator<Observation> for Observations<'_> {
    fn from_iter<I: IntoIterator<Item = Observation>>(records: I) -> Self {
        let mut out = Observations::default();
        records.into_iter().for_each(|o| out.push(o));
        out
    }
}

/// What a record shows, as an index into its window's
/// [`WindowEvidence::observed`] table: a window's records show few distinct
/// things, so the column the rules match against is 4 bytes a record, not
/// the 40 of an [`Observed`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObservedId(u32);

impl ObservedId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// What a window's records show, each distinct thing once.
#[derive(Clone, Debug, Default)]
pub struct ObservedTable {
    values: Vec<Observed>,
    ids: FxHashMap<Observed, ObservedId>,
}

impl ObservedTable {
    /// The id of `observed`, added the first time it is seen.
    pub fn intern(&mut self, observed: Observed) -> ObservedId {
        let next = ObservedId(self.values.len() as u32);
        *self.ids.entry(observed).or_insert_with(|| {
            self.values.push(observed);
            next
        })
    }

    /// Every distinct thing, indexed by its id.
    pub fn values(&self) -> &[Observed] {
        &self.values
    }
}

/// What one HIP call may put on the device.
#[derive(Clone, Debug)]
pub enum CallWork {
    /// Cannot write an AQL packet (getters, allocation, graph building).
    NoDevice,
    /// May write packets that produce no record (markers, barriers): it can
    /// hold up other threads' packets or process them, but produces nothing.
    Barrier,
    /// An eager kernel launched through a host stub.
    Kernel(HostKernel),
    /// An eager blit or copy.
    Output(Output),
    /// An eager memset: this many fill blits.
    Fill(FillParts),
    /// A graph launch: its exec's attribution id at launch time (`None`
    /// when it has none) and what the exec ran then.
    Graph {
        graph_id: Option<AttributionId>,
        exec: Arc<ExecContents>,
    },
    /// May write anything (an API the tool does not model).
    Unknown,
}

impl CallWork {
    /// Can this call write a packet (and so hold up or process others')?
    pub fn writes_packets(&self) -> bool {
        !matches!(self, CallWork::NoDevice)
    }
}

/// One HIP API call, as its HIP_RUNTIME_API record and callbacks give it.
#[derive(Clone, Debug)]
pub struct Call {
    pub correlation_id: u64,
    pub thread_id: u64,
    /// ENTER and EXIT, on the clock of every other timestamp.
    pub enter_ns: u64,
    pub exit_ns: u64,
    /// The stream it names (HIP_STREAM SET), if any.
    pub stream: Option<u64>,
    pub work: CallWork,
}

/// A packet-writing HIP call the window's records do not describe: one in
/// flight when the window opened, or one still in flight when it was
/// finished. The tool saw its thread enter it, but not what it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub thread_id: u64,
    pub enter_ns: u64,
    /// `None`: still in flight when the window was finished.
    pub exit_ns: Option<u64>,
}

/// Everything known about one window.
#[derive(Clone, Copy)]
pub struct WindowEvidence<'a> {
    pub observations: &'a Observations<'a>,
    /// What the observations show, by [`ObservedId`]
    /// ([`ObservedTable::values`]).
    pub observed: &'a [Observed],
    /// The HIP calls issued while the window was open.
    pub calls: &'a [Call],
    /// Calls in flight when the window opened, or when it was finished
    /// (their work is unknown).
    pub open_edge: &'a [Span],
    /// When the window stopped collecting: calls issued after it are not in
    /// `calls`, so a call still in flight then may have met unseen ones.
    pub close_ns: u64,
    /// Every record of the window's calls has been delivered (every
    /// correlation id retired) and none was dropped.
    pub complete: bool,
    /// Every HIP call of the window has its record (none was dropped): the
    /// neighbourhoods the rules bound are whole. Without it nothing is
    /// attributed or linked.
    pub calls_complete: bool,
    /// Host stub -> kernel id.
    pub kernels: &'a dyn KernelLookup,
    /// Packets a hardware queue holds (`ROC_AQL_QUEUE_SIZE`, 16384 by
    /// default): see `rules::backlog`.
    pub queue_slots: u64,
}

impl<'a> WindowEvidence<'a> {
    /// Each thing the window's records show, by its id: the first id
    /// where the table holds it twice (one built by hand), so that equal
    /// ids still mean equal things.
    pub(crate) fn observed_ids(&self) -> FxHashMap<Observed, ObservedId> {
        let mut ids = FxHashMap::default();
        for (i, observed) in self.observed.iter().enumerate() {
            ids.entry(*observed).or_insert(ObservedId(i as u32));
        }
        ids
    }

    /// A window seen whole: no call crossed its edges, it closed at
    /// `close_ns`, every record and every call's record arrived, and its
    /// queues hold rocclr's default number of packets. Anything else is a
    /// field changed with struct update syntax.
    pub fn whole(
        observations: &'a Observations,
        observed: &'a [Observed],
        calls: &'a [Call],
        kernels: &'a dyn KernelLookup,
        close_ns: u64,
    ) -> WindowEvidence<'a> {
        WindowEvidence {
            observations,
            observed,
            calls,
            open_edge: &[],
            close_ns,
            complete: true,
            calls_complete: true,
            kernels,
            queue_slots: DEFAULT_QUEUE_SLOTS,
        }
    }
}

impl WindowEvidence<'_> {
    /// What `observation` shows. An id outside the table matches no call's
    /// work (a runtime kernel no modelled call produces), so its record is
    /// withheld, never attributed.
    #[inline]
    pub fn observed(&self, observation: &Observation) -> &Observed {
        self.observed_by_id(observation.observed)
    }

    /// What a record of id `id` shows (as [`WindowEvidence::observed`]).
    #[inline]
    pub fn observed_by_id(&self, id: ObservedId) -> &Observed {
        const NOTHING_MODELLED: Observed = Observed::Blit(BlitKind::Other);
        self.observed.get(id.index()).unwrap_or(&NOTHING_MODELLED)
    }
}

/// rocclr's AQL queue size when `ROC_AQL_QUEUE_SIZE` is not set.
pub const DEFAULT_QUEUE_SLOTS: u64 = 16384;

#[cfg(test)]
pub(crate) mod testing {
    use std::sync::LazyLock;

    use super::ObservedId;
    use crate::work::{KernelShape, Observed};

    /// What the unit tests' records show: kernel `k` (below 256) with a
    /// grid of 64 work-items in blocks of 64 is entry `k`.
    pub(crate) static KERNELS_SHOWN: LazyLock<Vec<Observed>> = LazyLock::new(|| {
        (0..256)
            .map(|kernel_id| {
                Observed::Kernel(KernelShape {
                    kernel_id,
                    grid: [64, 1, 1],
                    block: [64, 1, 1],
                })
            })
            .collect()
    });

    /// Kernel `k`'s entry in [`KERNELS_SHOWN`].
    pub(crate) fn kernel_shown(k: u64) -> ObservedId {
        assert!(k < 256, "the tests' table holds kernels 0 to 255");
        ObservedId(k as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attribute::attribute_window;
    use crate::session::SessionMemory;
    use crate::verdict::{KeyVerdict, Reason};
    use crate::work::KernelShape;

    fn kernel(kernel_id: u64, grid: u32) -> Observed {
        Observed::Kernel(KernelShape {
            kernel_id,
            grid: [grid, 1, 1],
            block: [64, 1, 1],
        })
    }

    fn rows() -> Vec<Observation> {
        (0..5)
            .map(|i| Observation {
                correlation_id: 10 + i,
                observed: ObservedId(i as u32 % 2),
                queue_id: 0x100 + i % 3,
                dispatch_id: (i != 2).then_some(i),
                start_ns: 100 * i,
                end_ns: 100 * i + 50,
            })
            .collect()
    }

    /// Kernel records' id and time columns, as a frame holds them.
    struct Frame([Vec<u64>; 4]);

    impl Frame {
        fn of(kernels: &[Observation]) -> Frame {
            let column = |f: fn(&Observation) -> u64| kernels.iter().map(f).collect();
            Frame([
                column(|o| o.correlation_id),
                column(|o| o.dispatch_id.expect("a kernel's dispatch id")),
                column(|o| o.start_ns),
                column(|o| o.end_ns),
            ])
        }

        /// Observations of `kernels` lending this frame's columns.
        fn lend<'a>(&'a self, kernels: &[Observation]) -> Observations<'a> {
            let [correlation_id, dispatch_id, start_ns, end_ns] = &self.0;
            let lent = LentColumns {
                correlation_id,
                dispatch_id,
                start_ns,
                end_ns,
            };
            Observations::lending(
                lent,
                kernels.iter().map(|o| o.observed),
                kernels.iter().map(|o| o.queue_id),
            )
        }
    }

    #[test]
    fn observations_given_column_by_column_are_the_rows_given_one_by_one() {
        // Kernel records only: lent columns carry a dispatch id for each.
        let rows: Vec<Observation> = rows()
            .into_iter()
            .map(|o| Observation {
                dispatch_id: o.dispatch_id.or(Some(99)),
                ..o
            })
            .collect();
        let by_rows: Observations = rows.iter().copied().collect();
        let frame = Frame::of(&rows);
        assert_eq!(frame.lend(&rows), by_rows);
        assert_eq!(by_rows.iter().collect::<Vec<_>>(), rows);
        assert_eq!(by_rows.range(1..3).collect::<Vec<_>>(), rows[1..3]);
        assert_eq!(by_rows.get(4), rows[4]);
        let column = |f: fn(&Observation) -> u64| rows.iter().map(f).collect::<Vec<u64>>();
        assert_eq!(by_rows.correlation_ids(), column(|o| o.correlation_id));
        assert_eq!(by_rows.queue_ids(), column(|o| o.queue_id));
        assert_eq!(by_rows.end_ns(), column(|o| o.end_ns));
    }

    #[test]
    fn records_pushed_after_lent_columns_follow_them() {
        let rows = rows();
        let (kernels, copies) = rows.split_at(2);
        let frame = Frame::of(kernels);
        let mut observations = frame.lend(kernels);
        observations.reserve(copies.len());
        copies.iter().for_each(|&o| observations.push(o));
        assert_eq!(observations.iter().collect::<Vec<_>>(), rows);
        assert_eq!(
            observations.get(2).dispatch_id,
            None,
            "a record without one"
        );
        assert_eq!(
            frame.0,
            Frame::of(kernels).0,
            "the lender's columns are untouched"
        );
    }

    #[test]
    #[should_panic(expected = "columns of one length")]
    fn columns_of_different_lengths_are_refused() {
        let rows = rows();
        let ids: Vec<u64> = rows.iter().map(|o| o.correlation_id).collect();
        let lent = LentColumns {
            correlation_id: &ids,
            dispatch_id: &ids,
            start_ns: &ids,
            end_ns: &ids,
        };
        Observations::lending(
            lent,
            rows.iter().map(|o| o.observed),
            rows.iter().skip(1).map(|o| o.queue_id),
        );
    }

    #[test]
    fn a_table_gives_one_id_per_distinct_thing_and_reads_it_back() {
        let mut table = ObservedTable::default();
        let shown = [kernel(1, 64), kernel(2, 64), kernel(1, 128), kernel(1, 64)];
        let ids: Vec<ObservedId> = shown.iter().map(|&o| table.intern(o)).collect();
        assert_eq!(ids[0], ids[3], "the same thing keeps its id");
        assert_ne!(ids[0], ids[1], "another kernel");
        assert_ne!(ids[0], ids[2], "the same kernel in another shape");
        assert_eq!(table.values().len(), 3);
        for (id, o) in ids.iter().zip(&shown) {
            assert_eq!(&table.values()[id.index()], o);
        }
    }

    #[test]
    fn a_record_whose_id_is_outside_the_table_is_withheld_not_guessed() {
        let mut table = ObservedTable::default();
        let known = table.intern(kernel(7, 64));
        let record = |observed| Observation {
            correlation_id: 1,
            observed,
            queue_id: 1,
            dispatch_id: Some(1),
            start_ns: 20,
            end_ns: 30,
        };
        let calls = [Call {
            correlation_id: 1,
            thread_id: 1,
            enter_ns: 0,
            exit_ns: 10,
            stream: Some(1),
            work: CallWork::Kernel(HostKernel::from_blocks(0xa0, [1, 1, 1], [64, 1, 1])),
        }];
        let stubs: std::collections::HashMap<u64, u64> = [(0xa0, 7)].into_iter().collect();
        let outcome = |observed| {
            let observations: Observations = [record(observed)].into_iter().collect();
            let evidence =
                WindowEvidence::whole(&observations, table.values(), &calls, &stubs, 100);
            attribute_window(&evidence, &mut SessionMemory::new()).keys[0]
        };
        assert_eq!(
            outcome(known),
            KeyVerdict::NotGraphed,
            "the table's kernel is the call's"
        );
        assert!(
            matches!(
                outcome(ObservedId(known.0 + 1)),
                KeyVerdict::Withheld(Reason::NoProducer)
            ),
            "an id past the table matches nothing"
        );
    }
}
