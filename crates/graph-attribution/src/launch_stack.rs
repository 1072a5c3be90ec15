//! The per-thread stack of graph launches in progress: the SDK's documented
//! recipe for crediting a dispatch to the launch (and ordinal) that the
//! requesting thread is inside.
//!
//! It lives in a const-initialised thread-local of plain `Copy` frames, so
//! touching it needs no allocation, no lock, no destructor registration and
//! no syscall. Its capacity is fixed; launches nested deeper are counted so
//! the depth stays balanced, but carry no attribution.
//!
//! A stack is owned by one tracker at a time (by its serial number): a
//! thread that meets a new tracker starts with an empty stack, so launches
//! left open by a previous profiling session cannot leak into this one.

use std::cell::{Cell, RefCell};

use crate::diagnostics::Anomaly;
use crate::ids::{AttributionId, ExecHandle, GraphKey, LaunchedExec, NodeId};
use crate::launch_log::LaunchEnding;

/// Launches that can be nested on one thread with attribution.
pub const STACK_CAPACITY: usize = 16;

/// One launch in progress on this thread.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Frame {
    pub exec: LaunchedExec,
    pub attribution: Option<AttributionId>,
    pub correlation_id: u64,
    pub thread_id: u64,
    /// The ordinal the next credited dispatch gets.
    next_ordinal: u32,
    /// NodeId u32::MAX has been handed out; nothing more can be packed.
    exhausted: bool,
}

impl Frame {
    pub fn new(
        exec: LaunchedExec,
        attribution: Option<AttributionId>,
        correlation_id: u64,
        thread_id: u64,
    ) -> Frame {
        Frame {
            exec,
            attribution,
            correlation_id,
            thread_id,
            next_ordinal: 0,
            exhausted: false,
        }
    }

    /// Dispatches credited to this launch so far (saturating at u32::MAX).
    pub fn credited(&self) -> u32 {
        if self.exhausted {
            u32::MAX
        } else {
            self.next_ordinal
        }
    }
}

const UNUSED: Frame = Frame {
    exec: LaunchedExec::Runtime {
        handle: ExecHandle(0),
    },
    attribution: None,
    correlation_id: 0,
    thread_id: 0,
    next_ordinal: 0,
    exhausted: false,
};

struct LaunchStack {
    /// Serial number of the tracker whose launches these are; 0 = none.
    owner: u64,
    /// Launches in progress, including those beyond capacity.
    depth: usize,
    frames: [Frame; STACK_CAPACITY],
}

impl LaunchStack {
    /// The stack as `owner` sees it: emptied if another tracker left it.
    fn claim(&mut self, owner: u64) {
        if self.owner != owner {
            self.owner = owner;
            self.depth = 0;
        }
    }

    fn depth_for(&self, owner: u64) -> usize {
        if self.owner == owner {
            self.depth
        } else {
            0
        }
    }
}

/// The top frame's next key, kept apart from the stack so that crediting a
/// dispatch (the per-dispatch hot path) is three `Cell` reads and one
/// write: no borrow flag, no frame lookup. While `key < end`, `key`, not
/// the top frame's `next_ordinal`, is the truth for that frame; every other
/// stack operation writes it back first (`spill`) and reloads it after
/// (`fill`).
#[derive(Clone, Copy)]
struct HotKey {
    /// The tracker the key is for; 0 = none.
    owner: u64,
    /// The packed key the next dispatch gets, while below `end`.
    key: u64,
    /// The frame's key of ordinal u32::MAX, which the slow path hands out
    /// (marking the frame exhausted); 0 = the slow path decides every key.
    end: u64,
}

const COLD: HotKey = HotKey {
    owner: 0,
    key: 0,
    end: 0,
};

/// One `Cell` per field, so the hot path writes only `key`.
struct Hot {
    owner: Cell<u64>,
    key: Cell<u64>,
    end: Cell<u64>,
}

impl Hot {
    fn get(&self) -> HotKey {
        HotKey {
            owner: self.owner.get(),
            key: self.key.get(),
            end: self.end.get(),
        }
    }

    fn set(&self, hot: HotKey) {
        self.owner.set(hot.owner);
        self.key.set(hot.key);
        self.end.set(hot.end);
    }
}

thread_local! {
    static STACK: RefCell<LaunchStack> = const {
        RefCell::new(LaunchStack { owner: 0, depth: 0, frames: [UNUSED; STACK_CAPACITY] })
    };
    static HOT: Hot = const {
        Hot { owner: Cell::new(0), key: Cell::new(0), end: Cell::new(0) }
    };
}

impl LaunchStack {
    /// Writes the hot key's ordinal back into the top frame.
    fn spill(&mut self, hot: HotKey) {
        if hot.end == 0 || hot.owner != self.owner {
            return;
        }
        if let Some(top) = self
            .depth
            .checked_sub(1)
            .and_then(|d| self.frames.get_mut(d))
        {
            top.next_ordinal = hot.key as u32;
        }
    }

    /// The hot key of the top frame, when the fast path may hand it out: an
    /// attributed frame within capacity whose next ordinal is not the last.
    fn fill(&self) -> HotKey {
        let Some(top) = self.depth.checked_sub(1).and_then(|d| self.frames.get(d)) else {
            return COLD;
        };
        match top.attribution {
            Some(attribution) if !top.exhausted && top.next_ordinal != u32::MAX => HotKey {
                owner: self.owner,
                key: GraphKey::new(attribution, NodeId(top.next_ordinal)).pack(),
                end: GraphKey::new(attribution, NodeId(u32::MAX)).pack(),
            },
            _ => COLD,
        }
    }
}

/// Run `f` on this thread's stack; `None` if it is unavailable (the thread
/// is being torn down, or a re-entrant call is already using it).
#[inline]
fn with_stack<R>(f: impl FnOnce(&mut LaunchStack) -> R) -> Option<R> {
    STACK
        .try_with(|cell| {
            cell.try_borrow_mut().ok().map(|mut stack| {
                let hot = HOT.with(Hot::get);
                stack.spill(hot);
                let out = f(&mut stack);
                HOT.with(|h| h.set(stack.fill()));
                out
            })
        })
        .ok()
        .flatten()
}

/// Push a launch. Beyond capacity the launch is counted but not stored, and
/// `StackOverflow` is returned.
#[inline]
pub(crate) fn push(owner: u64, frame: Frame) -> Result<(), Anomaly> {
    with_stack(|stack| {
        stack.claim(owner);
        let depth = stack.depth;
        stack.depth = depth.saturating_add(1);
        match stack.frames.get_mut(depth) {
            Some(slot) => {
                *slot = frame;
                Ok(())
            }
            None => Err(Anomaly::StackOverflow),
        }
    })
    .unwrap_or(Ok(()))
}

/// Pop the launch of `exec`, handing every frame that leaves the stack to
/// `finished` (top first).
///
/// Recovery from a mismatched EXIT, chosen so later attribution is never
/// corrupted: if `exec` is on the stack below the top, the launches above it
/// lost their EXIT; they are closed as [`LaunchEnding::Abandoned`] and the
/// match is popped (`ExitOutOfOrder`). If `exec` is not on the stack at all,
/// or the stack is empty, the EXIT is ignored and the stack left as it was
/// (`ExitOfUnknownExec`, `ExitWithoutEnter`). Beyond capacity frames are not
/// stored, so the EXIT is taken to close the deepest uncounted launch.
#[inline]
pub(crate) fn pop(
    owner: u64,
    exec: LaunchedExec,
    mut finished: impl FnMut(&Frame, LaunchEnding),
) -> Result<(), Anomaly> {
    with_stack(|stack| {
        let depth = stack.depth_for(owner);
        if depth == 0 {
            return Err(Anomaly::ExitWithoutEnter);
        }
        if depth > STACK_CAPACITY {
            stack.depth = depth - 1;
            return Ok(());
        }
        let Some(found) = stack.frames[..depth]
            .iter()
            .rposition(|frame| frame.exec == exec)
        else {
            return Err(Anomaly::ExitOfUnknownExec);
        };
        for frame in stack.frames[found + 1..depth].iter().rev() {
            finished(frame, LaunchEnding::Abandoned);
        }
        finished(&stack.frames[found], LaunchEnding::Exited);
        stack.depth = found;
        if found + 1 == depth {
            Ok(())
        } else {
            Err(Anomaly::ExitOutOfOrder)
        }
    })
    .unwrap_or(Ok(()))
}

/// The packed key for a dispatch requested now: the top launch's id and its
/// next ordinal, advancing the ordinal. `Ok(0)` when this thread is inside
/// no attributed launch.
#[inline]
pub(crate) fn credit_dispatch(owner: u64) -> Result<u64, Anomaly> {
    // Two early returns rather than one `&&`: LLVM then branches on each
    // compare instead of materialising both with setcc (three instructions
    // fewer per dispatch under callgrind).
    let fast = HOT.try_with(|h| {
        if h.owner.get() != owner {
            return None;
        }
        let key = h.key.get();
        // The key's low half is the ordinal; u32::MAX (`end`) goes the
        // slow way, which marks the frame exhausted.
        if key >= h.end.get() {
            return None;
        }
        h.key.set(key + 1);
        Some(key)
    });
    match fast {
        Ok(Some(key)) => Ok(key),
        _ => credit_dispatch_slow(owner),
    }
}

/// [`credit_dispatch`] when the hot key cannot answer: outside a launch, an
/// unattributed or too-deep launch, or the ordinal counter's last value.
#[cold]
#[inline(never)]
fn credit_dispatch_slow(owner: u64) -> Result<u64, Anomaly> {
    with_stack(|stack| {
        let depth = stack.depth_for(owner);
        if depth == 0 || depth > STACK_CAPACITY {
            return Ok(0);
        }
        let frame = &mut stack.frames[depth - 1];
        let Some(attribution) = frame.attribution else {
            return Ok(0);
        };
        if frame.exhausted {
            return Err(Anomaly::OrdinalCounterExhausted);
        }
        let ordinal = frame.next_ordinal;
        match ordinal.checked_add(1) {
            Some(next) => frame.next_ordinal = next,
            None => frame.exhausted = true,
        }
        Ok(GraphKey::new(attribution, NodeId(ordinal)).pack())
    })
    .unwrap_or(Ok(0))
}

/// Launches in progress on this thread for `owner`, including any beyond
/// capacity.
pub(crate) fn depth(owner: u64) -> usize {
    with_stack(|stack| stack.depth_for(owner)).unwrap_or(0)
}

/// Jump the top frame's counter (tests of the u32 overflow only).
#[cfg(test)]
pub(crate) fn set_next_ordinal(owner: u64, next: u32) {
    with_stack(|stack| {
        let depth = stack.depth_for(owner);
        if (1..=STACK_CAPACITY).contains(&depth) {
            stack.frames[depth - 1].next_ordinal = next;
        }
    });
}
