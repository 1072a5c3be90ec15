//! A finalised window's kernel dispatches: 48 bytes a row.
//!
//! Why: a window holds a million dispatches or more, and what finishing it
//! writes it writes once per row. Gathered as plain columns a row was 216
//! bytes (19 columns, six of them `Option<u64>`), the widest thing a window
//! makes. Most of it repeats: a graph's launches run the same kernels with
//! the same shapes on the same queues, and a launch's kernels share one CPU
//! side. So a row keeps its times and ids, and names its launch shape, its
//! place, its CPU side and its graph key by index into small tables of the
//! values seen. The times, ids, shapes and places are the columns staging
//! kept (`kernel_columns`), taken over whole when they arrived in order.
//! [`KernelFrame::rows`] gathers whole [`KernelRow`]s for the writers.

use crate::frames::Attributable;
use crate::interner::Interner;
use crate::kernel_batch::BatchRow;
use crate::kernel_columns::KernelColumns;
use crate::kernel_rows::KernelRows;
use crate::records::{AgentId, KernelDispatch};

/// What a dispatch ran.
#[derive(Clone, Copy, Debug, Default, Eq)]
pub struct LaunchShape {
    pub kernel_id: u64,
    pub grid: [u32; 3],
    pub workgroup: [u32; 3],
    pub lds_bytes: u32,
    pub scratch_bytes: u32,
}

/// Staging compares every record's shape with an interned one: element by
/// element, where the derived equality compares the arrays through their
/// generic equality. `Hash` below hashes the same fields, so the two agree.
impl PartialEq for LaunchShape {
    fn eq(&self, other: &Self) -> bool {
        let (g, w) = (&self.grid, &self.workgroup);
        let (og, ow) = (&other.grid, &other.workgroup);
        self.kernel_id == other.kernel_id
            && (g[0] == og[0]) & (g[1] == og[1]) & (g[2] == og[2])
            && (w[0] == ow[0]) & (w[1] == ow[1]) & (w[2] == ow[2])
            && (self.lds_bytes == other.lds_bytes) & (self.scratch_bytes == other.scratch_bytes)
    }
}

impl LaunchShape {
    /// What `r` ran.
    #[inline]
    pub(crate) fn of(r: &KernelDispatch) -> LaunchShape {
        LaunchShape {
            kernel_id: r.kernel_id,
            grid: r.grid,
            workgroup: r.workgroup,
            lds_bytes: r.lds_bytes,
            scratch_bytes: r.scratch_bytes,
        }
    }

    /// The interning cache's hint: shapes of one kernel share an entry.
    #[inline]
    pub(crate) fn hint(&self) -> u64 {
        self.kernel_id
    }
}

impl std::hash::Hash for LaunchShape {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.kernel_id.hash(state);
        self.grid.hash(state);
        self.workgroup.hash(state);
        self.lds_bytes.hash(state);
        self.scratch_bytes.hash(state);
    }
}

/// Where a dispatch ran, and which thread processed its packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DispatchPlace {
    pub agent: AgentId,
    pub queue: u64,
    pub thread_id: u64,
}

impl DispatchPlace {
    /// Where `r` ran.
    #[inline]
    pub(crate) fn of(r: &KernelDispatch) -> DispatchPlace {
        DispatchPlace {
            agent: r.agent,
            queue: r.queue,
            thread_id: r.thread_id,
        }
    }

    /// The interning cache's hint, from the queue and the thread.
    #[inline]
    pub(crate) fn hint(&self) -> u64 {
        self.queue ^ self.thread_id.rotate_left(32)
    }
}

/// A record's CPU side: the call that launched it and what that call
/// carried.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct LaunchLink {
    /// The HIP call that launched it: the record's correlation id until
    /// graph attribution decides otherwise; `None` when that is unproven.
    pub launch_correlation_id: Option<u64>,
    /// HIP stream id, joined by correlation id; `None` when unknown.
    pub stream: Option<u64>,
    /// Top of the Default external-id stack when the launching call entered.
    pub external_id_default: Option<u64>,
    /// Top of the User external-id stack when the launching call entered.
    pub external_id_user: Option<u64>,
}

/// One kernel dispatch row gathered from a [`KernelFrame`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelRow {
    pub start_ns: u64,
    pub end_ns: u64,
    pub agent: AgentId,
    pub queue: u64,
    /// HIP stream id, joined by correlation id; `None` when unknown.
    pub stream: Option<u64>,
    /// The record's correlation id: the HIP call in progress on the thread
    /// that processed its packet.
    pub correlation_id: u64,
    /// The HIP call that launched it: `correlation_id` until graph
    /// attribution decides otherwise; `None` when that is unproven.
    pub launch_correlation_id: Option<u64>,
    pub kernel_id: u64,
    pub dispatch_id: u64,
    pub grid: [u32; 3],
    pub workgroup: [u32; 3],
    pub lds_bytes: u32,
    pub scratch_bytes: u32,
    pub thread_id: u64,
    /// The raw external correlation value the SDK carried on the record.
    pub external_slot: u64,
    /// Graph id, filled by the verifier only when it vouches for it.
    pub graph_id: Option<u64>,
    /// Packed graph node id, filled by the verifier only when vouched.
    pub graph_node_id: Option<u64>,
    /// Top of the Default external-id stack when the launching API call entered.
    pub external_id_default: Option<u64>,
    /// Top of the User external-id stack when the launching API call entered.
    pub external_id_user: Option<u64>,
}

/// The graph-key index of a row the verifier has not vouched for.
const NO_KEY: u32 = u32::MAX;

/// Kernel dispatches of one window: the columns staging kept (times, ids,
/// and indices into the shape and place tables below), and a CPU side and
/// a graph key per row by index.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelFrame {
    columns: KernelColumns,
    link: Vec<u32>,
    /// Per row once the verifier has vouched for any row's graph key;
    /// empty until then, as with attribution off.
    graph_key: Vec<u32>,
    shapes: Interner<LaunchShape>,
    places: Interner<DispatchPlace>,
    /// The rows' CPU sides, a new entry only where a run's differs from
    /// the last one added: a window's rows come in runs of one launch, and
    /// an eager window's links are nearly all distinct, so a lookup table
    /// would cost a hash a row and more memory than it saves.
    links: Vec<LaunchLink>,
    /// (graph id, packed graph node id).
    graph_keys: Interner<(u64, u64)>,
}

impl KernelFrame {
    /// An empty frame with room for `rows` rows in every column, so
    /// finalisation allocates each column once.
    pub(crate) fn with_capacity(rows: usize) -> Self {
        Self {
            columns: KernelColumns::with_capacity(rows),
            link: Vec::with_capacity(rows),
            ..Self::default()
        }
    }

    /// A shard's staged rows as they are, cut to the first `kept`: their
    /// columns and tables become the frame's, not copied. `link_of` joins
    /// a correlation id to its CPU side, asked once per run of equal ids.
    pub(crate) fn from_staged(
        rows: KernelRows,
        kept: usize,
        link_of: impl FnMut(u64) -> LaunchLink,
    ) -> Self {
        let (mut columns, shapes, places) = rows.into_parts();
        columns.truncate(kept);
        let mut frame = Self {
            columns,
            link: Vec::with_capacity(kept),
            shapes,
            places,
            ..Self::default()
        };
        frame.link_from(0, link_of);
        frame
    }

    /// The index of `shape` in this frame's table.
    pub(crate) fn shape_id(&mut self, shape: LaunchShape) -> u32 {
        self.shapes.id(shape, shape.hint())
    }

    /// The index of `place` in this frame's table.
    pub(crate) fn place_id(&mut self, place: DispatchPlace) -> u32 {
        self.places.id(place, place.hint())
    }

    /// The index of a link equal to `link`: the last one added, or a new
    /// one.
    pub(crate) fn link_id(&mut self, link: LaunchLink) -> u32 {
        link_index(&mut self.links, link)
    }

    /// Appends rows whose shape and place already index this frame's
    /// tables: the only way rows are added but [`Self::from_staged`],
    /// which keeps the columns the same length. `link_of` joins a
    /// correlation id to its CPU side, asked once per run of equal ids.
    pub(crate) fn extend(&mut self, rows: &[BatchRow], link_of: impl FnMut(u64) -> LaunchLink) {
        let from = self.len();
        self.columns.extend(rows, |s| s, |p| p, true);
        if !self.graph_key.is_empty() {
            self.graph_key.extend(rows.iter().map(|_| NO_KEY));
        }
        self.link_from(from, link_of);
    }

    /// Joins rows `from..` to their CPU sides, a run of equal correlation
    /// ids at a time: a graph launch's dispatches share one and sit
    /// together, so a run's index is written as a block.
    fn link_from(&mut self, from: usize, mut link_of: impl FnMut(u64) -> LaunchLink) {
        let ids = &self.columns.correlation_id[from..];
        self.link.reserve(ids.len());
        let mut rest = ids;
        while let Some(&id) = rest.first() {
            let run = rest.iter().take_while(|&&c| c == id).count();
            let link = link_index(&mut self.links, link_of(id));
            self.link.extend(std::iter::repeat_n(link, run));
            rest = &rest[run..];
        }
    }

    /// Number of rows (every column has this length).
    pub fn len(&self) -> usize {
        self.columns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn start_ns(&self) -> &[u64] {
        &self.columns.start_ns
    }

    pub fn end_ns(&self) -> &[u64] {
        &self.columns.end_ns
    }

    /// Each record's correlation id: the HIP call in progress on the thread
    /// that processed its packet.
    pub fn correlation_id(&self) -> &[u64] {
        &self.columns.correlation_id
    }

    pub fn dispatch_id(&self) -> &[u64] {
        &self.columns.dispatch_id
    }

    /// The distinct launch shapes the rows name.
    pub fn launch_shapes(&self) -> &[LaunchShape] {
        self.shapes.values()
    }

    /// Each row's index into [`Self::launch_shapes`]: what depends on the
    /// shape alone is worked out once per shape, not once per row.
    pub fn launch_shape_ids(&self) -> &[u32] {
        &self.columns.shape
    }

    /// The distinct places the rows name.
    pub fn places(&self) -> &[DispatchPlace] {
        self.places.values()
    }

    /// Each row's index into [`Self::places`].
    pub fn place_ids(&self) -> &[u32] {
        &self.columns.place
    }

    /// What row `row` ran.
    pub fn launch_shape(&self, row: usize) -> &LaunchShape {
        self.shapes.get(self.columns.shape[row])
    }

    /// Where row `row` ran.
    pub fn place(&self, row: usize) -> &DispatchPlace {
        self.places.get(self.columns.place[row])
    }

    /// Row `row`'s CPU side.
    pub fn link(&self, row: usize) -> &LaunchLink {
        &self.links[self.link[row] as usize]
    }

    /// Row `row`'s (graph id, packed graph node id), once the verifier has
    /// vouched for it.
    pub fn graph_key(&self, row: usize) -> Option<(u64, u64)> {
        let key = self.graph_key.get(row).copied().unwrap_or(NO_KEY);
        (key != NO_KEY).then(|| *self.graph_keys.get(key))
    }

    /// Row `index` gathered from every column and table, or `None` past
    /// the end.
    pub fn row(&self, index: usize) -> Option<KernelRow> {
        if index >= self.len() {
            return None;
        }
        let shape = self.launch_shape(index);
        let place = self.place(index);
        let link = self.link(index);
        let key = self.graph_key(index);
        Some(KernelRow {
            start_ns: self.columns.start_ns[index],
            end_ns: self.columns.end_ns[index],
            agent: place.agent,
            queue: place.queue,
            stream: link.stream,
            correlation_id: self.columns.correlation_id[index],
            launch_correlation_id: link.launch_correlation_id,
            kernel_id: shape.kernel_id,
            dispatch_id: self.columns.dispatch_id[index],
            grid: shape.grid,
            workgroup: shape.workgroup,
            lds_bytes: shape.lds_bytes,
            scratch_bytes: shape.scratch_bytes,
            thread_id: place.thread_id,
            external_slot: self.external_slot(index),
            graph_id: key.map(|(graph, _)| graph),
            graph_node_id: key.map(|(_, node)| node),
            external_id_default: link.external_id_default,
            external_id_user: link.external_id_user,
        })
    }

    /// Every row in order, gathered.
    pub fn rows(&self) -> impl ExactSizeIterator<Item = KernelRow> + '_ {
        (0..self.len()).map(move |index| self.row(index).expect("an index below len"))
    }
}

/// The index in `links` of a link equal to `link`: the last one, or a new
/// one pushed.
fn link_index(links: &mut Vec<LaunchLink>, link: LaunchLink) -> u32 {
    if links.last() != Some(&link) {
        links.push(link);
    }
    u32::try_from(links.len() - 1).expect("fewer than 2^32 links")
}

impl Attributable for KernelFrame {
    fn row_count(&self) -> usize {
        KernelFrame::len(self)
    }

    fn external_slot(&self, row: usize) -> u64 {
        self.columns.external_slot(row)
    }

    fn launch_correlation_id(&self, row: usize) -> Option<u64> {
        self.link(row).launch_correlation_id
    }

    fn set_graph_key(&mut self, row: usize, graph_id: u64, graph_node_id: u64) {
        if self.graph_key.is_empty() {
            self.graph_key.resize(self.len(), NO_KEY);
        }
        self.graph_key[row] = self.graph_keys.id((graph_id, graph_node_id), graph_node_id);
    }

    fn set_link(&mut self, row: usize, link: LaunchLink) {
        self.link[row] = self.link_id(link);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel_columns::Row;

    #[test]
    fn a_row_comes_back_whole_through_its_tables() {
        let mut frame = KernelFrame::with_capacity(2);
        let shape = LaunchShape {
            kernel_id: 9,
            grid: [4, 2, 1],
            workgroup: [64, 1, 1],
            lds_bytes: 128,
            scratch_bytes: 16,
        };
        let place = DispatchPlace {
            agent: AgentId(3),
            queue: 0x7f00,
            thread_id: 11,
        };
        let link = LaunchLink {
            launch_correlation_id: Some(5),
            stream: Some(0),
            external_id_default: Some(100),
            external_id_user: None,
        };
        let (shape, place) = (frame.shape_id(shape), frame.place_id(place));
        for i in 0..2 {
            let row = Row {
                start_ns: 10 * i,
                end_ns: 10 * i + 5,
                correlation_id: 5,
                dispatch_id: i,
                shape,
                place,
            };
            let staged = BatchRow {
                row,
                external_slot: 0,
            };
            frame.extend(&[staged], |_| link);
        }
        assert_eq!(frame.graph_key(1), None, "no key before one is set");
        frame.set_graph_key(1, 7, (7 << 32) | 2);
        let want = KernelRow {
            start_ns: 10,
            end_ns: 15,
            agent: AgentId(3),
            queue: 0x7f00,
            stream: Some(0),
            correlation_id: 5,
            launch_correlation_id: Some(5),
            kernel_id: 9,
            dispatch_id: 1,
            grid: [4, 2, 1],
            workgroup: [64, 1, 1],
            lds_bytes: 128,
            scratch_bytes: 16,
            thread_id: 11,
            external_slot: 0,
            graph_id: Some(7),
            graph_node_id: Some((7 << 32) | 2),
            external_id_default: Some(100),
            external_id_user: None,
        };
        assert_eq!(frame.row(1), Some(want));
        assert_eq!(frame.row(0).unwrap().graph_id, None);
        assert_eq!(frame.row(2), None);
        frame.set_link(0, LaunchLink::default());
        assert_eq!(frame.row(0).unwrap().launch_correlation_id, None);
        assert_eq!(frame.row(1).unwrap().launch_correlation_id, Some(5));
    }
}
