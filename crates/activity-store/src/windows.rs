//! Trace windows: which window a record belongs to, and the table of them.
//!
//! A profiler schedule with repeats (steps 1-2 and 4-5 of a loop of 6) gives
//! several windows per session, and each must come out whole. A record
//! belongs to the window whose `[start, stop]` contains its START time,
//! whenever it arrives: GPU records are delivered late, from the SDK's
//! completion thread, often after `close_window`, so arrival order says
//! nothing about membership (the same rule as PyTorch's CUPTI observer,
//! which buckets by start time and finalises without a device sync).
//!
//! Windows never overlap: a new one may open only when none is open and it
//! starts after every earlier window's stop, so a start time names at most
//! one window.

use std::fmt;
use std::sync::atomic::Ordering;

use crate::drops::DropReason;
use crate::staging::{ShardedStaging, Staged};
use crate::sync::{AtomicU64, AtomicUsize};

/// A trace window of one store; ids are handed out from 1 upwards in the
/// order windows are opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WindowId(pub(crate) u64);

impl WindowId {
    /// The id as a number, for logs and trace metadata.
    pub fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for WindowId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "window {}", self.0)
    }
}

/// Why a window operation was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowError {
    /// Only one window may be open at a time.
    AnotherWindowOpen {
        open: WindowId,
    },
    /// Windows may not overlap: a new window must start after the previous
    /// one's stop.
    StartsBeforePreviousStop {
        start_ns: u64,
        previous_stop_ns: u64,
    },
    StopBeforeStart {
        start_ns: u64,
        stop_ns: u64,
    },
    /// This store never opened such a window.
    Unknown(WindowId),
    AlreadyClosed(WindowId),
    /// Waiting and finalising need the window's stop time.
    NotClosed(WindowId),
    AlreadyFinalised(WindowId),
}

impl fmt::Display for WindowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::AnotherWindowOpen { open } => {
                write!(f, "cannot open a window while {open} is open")
            }
            Self::StartsBeforePreviousStop {
                start_ns,
                previous_stop_ns,
            } => write!(
                f,
                "a window starting at {start_ns} ns would overlap the previous one, \
                 which stops at {previous_stop_ns} ns"
            ),
            Self::StopBeforeStart { start_ns, stop_ns } => write!(
                f,
                "a window cannot stop at {stop_ns} ns before its start at {start_ns} ns"
            ),
            Self::Unknown(id) => write!(f, "{id} was never opened"),
            Self::AlreadyClosed(id) => write!(f, "{id} is already closed"),
            Self::NotClosed(id) => write!(f, "{id} is still open"),
            Self::AlreadyFinalised(id) => write!(f, "{id} was already finalised"),
        }
    }
}

impl std::error::Error for WindowError {}

/// A window that has not been finalised yet, with the records staged for it.
#[derive(Debug)]
pub(crate) struct Window {
    pub(crate) id: WindowId,
    pub(crate) start_ns: u64,
    /// `None` while open: then every start time from `start_ns` on is taken.
    pub(crate) stop_ns: Option<u64>,
    /// Records reserved against the limit (may run past it: see `accept`).
    reserved: AtomicUsize,
    /// Records this window refused for being over the limit.
    pub(crate) over_limit: AtomicU64,
    /// The smallest and largest correlation id issued in it (ids grow with
    /// time, so they bound every id it issued).
    first_correlation: AtomicU64,
    last_correlation: AtomicU64,
    /// Records of no known call that started after it stopped, while it was
    /// the last window to stop and none was open (see `place`).
    pub(crate) unplaced: AtomicU64,
    pub(crate) staging: ShardedStaging,
}

impl Window {
    fn contains(&self, start_ns: u64) -> bool {
        start_ns >= self.start_ns
            && match self.stop_ns {
                Some(stop_ns) => start_ns <= stop_ns,
                None => true,
            }
    }

    /// Stages as many of `records` as the limit leaves room for and returns
    /// how many it refused.
    ///
    /// The room is reserved with one `fetch_add`, so concurrent batches can
    /// never together exceed the limit; the counter may run past the limit,
    /// which only means later batches find no room.
    fn accept<R: Staged>(
        &self,
        records: &[R],
        tables: &R::Tables,
        max_records: usize,
        routed: bool,
    ) -> u64 {
        let before = self.reserved.fetch_add(records.len(), Ordering::Relaxed);
        let room = max_records.saturating_sub(before);
        let taken = records.len().min(room);
        if taken > 0 && routed {
            self.staging.append_routed(&records[..taken], tables);
        } else if taken > 0 {
            self.staging.append(&records[..taken], tables);
        }
        let refused = (records.len() - taken) as u64;
        self.over_limit.fetch_add(refused, Ordering::Relaxed);
        refused
    }
}

/// The range of a window already handed out, kept so that a record arriving
/// for it later is counted as late rather than as outside every window.
/// One per window, never per record.
#[derive(Clone, Copy, Debug)]
struct FinalisedRange {
    start_ns: u64,
    stop_ns: u64,
    /// Correlation ids issued in it: their records are late, whenever they
    /// started.
    correlations: (u64, u64),
}

/// Every window of a store: those still pending (open, or closed and waiting
/// to be finalised) with their staged records, and the ranges of finalised
/// ones.
#[derive(Debug)]
pub(crate) struct WindowTable {
    pending: Vec<Window>,
    finalised: Vec<FinalisedRange>,
    next_id: u64,
    last_stop_ns: Option<u64>,
    staging_shards: usize,
}

/// Where a record with a given start time goes.
pub(crate) enum Placement<'a> {
    Window(&'a Window),
    Dropped(DropReason),
}

impl WindowTable {
    pub(crate) fn new(staging_shards: usize) -> Self {
        Self {
            pending: Vec::new(),
            finalised: Vec::new(),
            next_id: 1,
            last_stop_ns: None,
            staging_shards,
        }
    }

    pub(crate) fn open(&mut self, start_ns: u64) -> Result<WindowId, WindowError> {
        if let Some(open) = self.pending.iter().find(|w| w.stop_ns.is_none()) {
            return Err(WindowError::AnotherWindowOpen { open: open.id });
        }
        if let Some(previous_stop_ns) = self.last_stop_ns {
            if start_ns <= previous_stop_ns {
                return Err(WindowError::StartsBeforePreviousStop {
                    start_ns,
                    previous_stop_ns,
                });
            }
        }
        let id = WindowId(self.next_id);
        self.next_id += 1;
        self.pending.push(Window {
            id,
            start_ns,
            stop_ns: None,
            reserved: AtomicUsize::new(0),
            over_limit: AtomicU64::new(0),
            first_correlation: AtomicU64::new(u64::MAX),
            last_correlation: AtomicU64::new(0),
            unplaced: AtomicU64::new(0),
            staging: ShardedStaging::new(self.staging_shards),
        });
        Ok(id)
    }

    pub(crate) fn close(&mut self, id: WindowId, stop_ns: u64) -> Result<(), WindowError> {
        let window = self.pending_mut(id)?;
        if window.stop_ns.is_some() {
            return Err(WindowError::AlreadyClosed(id));
        }
        if stop_ns < window.start_ns {
            return Err(WindowError::StopBeforeStart {
                start_ns: window.start_ns,
                stop_ns,
            });
        }
        window.stop_ns = Some(stop_ns);
        self.last_stop_ns = Some(stop_ns);
        Ok(())
    }

    /// Takes a closed window out of the table; from here on records for its
    /// range count as late.
    pub(crate) fn take_closed(&mut self, id: WindowId) -> Result<(Window, u64), WindowError> {
        let Some(index) = self.pending.iter().position(|w| w.id == id) else {
            return Err(self.missing(id));
        };
        let Some(stop_ns) = self.pending[index].stop_ns else {
            return Err(WindowError::NotClosed(id));
        };
        let window = self.pending.remove(index);
        self.finalised.push(FinalisedRange {
            start_ns: window.start_ns,
            stop_ns,
            correlations: (
                window.first_correlation.load(Ordering::Relaxed),
                window.last_correlation.load(Ordering::Relaxed),
            ),
        });
        Ok((window, stop_ns))
    }

    /// The `[start, stop]` of a pending, closed window.
    pub(crate) fn closed_range(&self, id: WindowId) -> Result<(u64, u64), WindowError> {
        let window = self.pending_ref(id)?;
        match window.stop_ns {
            Some(stop_ns) => Ok((window.start_ns, stop_ns)),
            None => Err(WindowError::NotClosed(id)),
        }
    }

    pub(crate) fn place(&self, start_ns: u64) -> Placement<'_> {
        if let Some(window) = self.pending.iter().find(|w| w.contains(start_ns)) {
            return Placement::Window(window);
        }
        let late = self
            .finalised
            .iter()
            .any(|range| start_ns >= range.start_ns && start_ns <= range.stop_ns);
        if !late {
            self.note_unplaced(start_ns);
        }
        Placement::Dropped(if late {
            DropReason::AfterFinalise
        } else {
            DropReason::OutsideWindows
        })
    }

    /// A record no route names started at `start_ns`, after every pending
    /// window stopped and before any opened again: it may be work of the
    /// last window to stop (its call is unknown, so it cannot be placed), so
    /// that window is not complete.
    pub(crate) fn note_unplaced(&self, start_ns: u64) {
        if self.pending.iter().any(|w| w.stop_ns.is_none()) {
            return;
        }
        if let Some(last) = self
            .pending
            .iter()
            .filter(|w| w.stop_ns.is_some_and(|stop| stop < start_ns))
            .max_by_key(|w| w.stop_ns)
        {
            last.unplaced.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The pending window containing `at_ns`, if any.
    fn pending_by_id(&self, id: WindowId) -> Option<&Window> {
        self.pending.iter().find(|w| w.id == id)
    }

    /// Is window `id` open, or closed and not yet finalised?
    pub(crate) fn is_pending(&self, id: WindowId) -> bool {
        self.pending_by_id(id).is_some()
    }

    pub(crate) fn pending_containing(&self, at_ns: u64) -> Option<WindowId> {
        self.pending
            .iter()
            .find(|w| w.contains(at_ns))
            .map(|w| w.id)
    }

    /// Notes that `correlation_id` was issued in window `id`.
    pub(crate) fn note_issued(&self, id: WindowId, correlation_id: u64) {
        if let Some(w) = self.pending_by_id(id) {
            w.first_correlation
                .fetch_min(correlation_id, Ordering::Relaxed);
            w.last_correlation
                .fetch_max(correlation_id, Ordering::Relaxed);
        }
    }

    /// Was `correlation_id` issued in a window already finalised?
    fn issued_in_finalised(&self, correlation_id: u64) -> bool {
        self.finalised
            .iter()
            .any(|r| r.correlations.0 <= correlation_id && correlation_id <= r.correlations.1)
    }

    pub(crate) fn pending_ids(&self) -> impl Iterator<Item = WindowId> + '_ {
        self.pending.iter().map(|w| w.id)
    }

    pub(crate) fn staged_rows(&self) -> usize {
        self.pending.iter().map(|w| w.staging.rows()).sum()
    }

    fn pending_ref(&self, id: WindowId) -> Result<&Window, WindowError> {
        match self.pending.iter().find(|w| w.id == id) {
            Some(window) => Ok(window),
            None => Err(self.missing(id)),
        }
    }

    fn pending_mut(&mut self, id: WindowId) -> Result<&mut Window, WindowError> {
        let missing = self.missing(id);
        self.pending.iter_mut().find(|w| w.id == id).ok_or(missing)
    }

    fn missing(&self, id: WindowId) -> WindowError {
        if id.0 >= 1 && id.0 < self.next_id {
            WindowError::AlreadyFinalised(id)
        } else {
            WindowError::Unknown(id)
        }
    }
}

/// What a record's launching call says about where it goes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Launch {
    /// Issued in this pending window: the record is staged there.
    Routed(WindowId),
    /// Issued in a finalised window: the record is late.
    Late,
    /// Not a launch the store routes (or a host record): placed by start.
    ByStart,
}

/// Stages a batch into the windows its records name, counting what is
/// refused. Consecutive records bound for one window go in as one run under
/// one shard lock, and a run of records of one launch (one correlation id)
/// looks its route up once. Returns refusals per reason via `refuse`.
pub(crate) fn stage_batch<R: Staged>(
    table: &WindowTable,
    records: &[R],
    tables: &R::Tables,
    max_records: usize,
    route: impl Fn(u64) -> Option<WindowId>,
    mut refuse: impl FnMut(DropReason, u64),
) {
    let mut last: Option<(u64, Launch)> = None;
    let mut launch = |record: &R| {
        let Some(correlation) = record.launch_correlation() else {
            return Launch::ByStart;
        };
        match last {
            Some((c, launch)) if c == correlation => launch,
            _ => {
                // Device work launched inside a window belongs to it, even
                // when the device started it after the window's stop; work
                // of a call issued in a finalised window is late, not work
                // of whichever window its start time falls in.
                let launch =
                    match route(correlation).filter(|&id| table.pending_by_id(id).is_some()) {
                        Some(window) => Launch::Routed(window),
                        None if table.issued_in_finalised(correlation) => Launch::Late,
                        None => Launch::ByStart,
                    };
                last = Some((correlation, launch));
                launch
            }
        }
    };
    let mut index = 0;
    while index < records.len() {
        let first = &records[index];
        if !first.is_well_formed() {
            refuse(DropReason::Malformed, 1);
            index += 1;
            continue;
        }
        let how = launch(first);
        let window = match how {
            Launch::Routed(id) => table
                .pending_by_id(id)
                .expect("routes name pending windows"),
            Launch::Late => {
                refuse(DropReason::AfterFinalise, 1);
                index += 1;
                continue;
            }
            Launch::ByStart => match table.place(first.start_ns()) {
                Placement::Window(window) => window,
                Placement::Dropped(reason) => {
                    refuse(reason, 1);
                    index += 1;
                    continue;
                }
            },
        };
        let run = 1 + records[index + 1..]
            .iter()
            .take_while(|r| {
                // A start time names one window, so `contains` is the same
                // placement without its counting of unplaced records.
                r.is_well_formed()
                    && launch(r) == how
                    && (how != Launch::ByStart || window.contains(r.start_ns()))
            })
            .count();
        let routed = how != Launch::ByStart;
        let refused = window.accept(&records[index..index + run], tables, max_records, routed);
        refuse(DropReason::OverLimit, refused);
        index += run;
    }
}
