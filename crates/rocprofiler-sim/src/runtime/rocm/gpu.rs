//! GPU timing of the `rocm` model: every command (a packet on a HW queue or
//! an SDMA copy) starts when all it waits for is known and done:
//! start = max(processing time, previous end on its queue or copy engine,
//! the ends of the commands it waits for), end = start + duration. The
//! packet processor runs a queue in order (HIP sets the barrier bit on its
//! packets); a barrier-AND packet waits for the commands it names, on any
//! queue (rocvirtual.cpp `dispatchBlockingWait` and `amd::Marker` wait
//! lists, RV-MID; CLR-SEG `EnqueueSegmentedGraph`); SDMA copies run in
//! order on their engine (rocblit.cpp `DmaBlitManager`, CLR-2024).
//!
//! A command may be waited for before it is processed (its slot is blocked
//! behind another thread's unwritten one), so times are resolved when the
//! last input arrives, never estimated: a command never starts before what
//! it waits for ends.
use crate::sdk::os::lock;
use std::sync::{Arc, Mutex};

type Done = Box<dyn FnOnce(u64, u64) + Send>;

struct Inner {
    /// Inputs not known yet.
    missing: u32,
    /// The latest input time known so far.
    ready_at: u64,
    duration: u64,
    /// (start, end) once resolved.
    times: Option<(u64, u64)>,
    dependents: Vec<Arc<Cmd>>,
    done: Option<Done>,
}

/// One command's timing node.
pub(crate) struct Cmd {
    inner: Mutex<Inner>,
    /// Virtual time: the command counts as complete once its times are
    /// known, without waiting for its end to pass.
    virtual_time: bool,
}

impl Cmd {
    /// A command of `duration` that starts once `inputs` inputs are known.
    pub fn new(duration: u64, inputs: u32, virtual_time: bool) -> Arc<Cmd> {
        Arc::new(Cmd {
            inner: Mutex::new(Inner {
                missing: inputs,
                ready_at: 0,
                duration,
                times: None,
                dependents: Vec::new(),
                done: None,
            }),
            virtual_time,
        })
    }

    /// Makes it take no time (before its times resolve): the trailing
    /// barrier kernel replay leaves in a dispatch's place.
    pub fn take_no_time(&self) {
        lock(&self.inner).duration = 0;
    }

    /// Runs `f(start, end)` when the times are resolved (set it before the
    /// last input arrives).
    pub fn on_done(&self, f: impl FnOnce(u64, u64) + Send + 'static) {
        lock(&self.inner).done = Some(Box::new(f));
    }

    /// One input became known: it allows a start at `t`.
    pub fn input(self: &Arc<Self>, t: u64) {
        let mut work = vec![(self.clone(), t)];
        while let Some((c, t)) = work.pop() {
            let mut g = lock(&c.inner);
            g.ready_at = g.ready_at.max(t);
            g.missing -= 1;
            if g.missing > 0 {
                continue;
            }
            let start = g.ready_at;
            let end = start + g.duration;
            g.times = Some((start, end));
            let dependents = std::mem::take(&mut g.dependents);
            let done = g.done.take();
            drop(g);
            if let Some(f) = done {
                f(start, end);
            }
            work.extend(dependents.into_iter().map(|d| (d, end)));
        }
    }

    /// The end of `dep` becomes one of this command's inputs.
    pub fn after(self: &Arc<Self>, dep: &Arc<Cmd>) {
        let mut g = lock(&dep.inner);
        match g.times {
            Some((_, end)) => {
                drop(g);
                self.input(end);
            }
            None => g.dependents.push(self.clone()),
        }
    }

    /// The end time, once resolved.
    pub fn end(&self) -> Option<u64> {
        lock(&self.inner).times.map(|(_, e)| e)
    }

    /// Has it completed by `now`?
    pub fn completed(&self, now: u64) -> bool {
        self.end().is_some_and(|e| self.virtual_time || e <= now)
    }
}
