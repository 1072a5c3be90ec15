//! Kernel replay, the SDK's experimental KERNEL_REPLAY callback domain
//! (experimental/kernel_replay.h and hsa/queue.cpp `WriteInterceptor` on
//! the kernel-replay branch; docs/conceptual/kernel_replay): a dispatch
//! runs once per pass, from the same memory, before the application sees
//! it complete.
//!
//! - Exactly one context may configure the domain (a second gets
//!   SERVICE_ALREADY_CONFIGURED). Replay is on while that context is active
//!   and covers CONFIG.
//! - The gate, on the thread that intercepts the packet: a submission of one
//!   kernel packet, not inside a HIP graph launch on THAT thread
//!   (`hip::graph::current_launch_state()`); a graph launch warns once and
//!   runs once. ROCr's intercept queue hands interceptors one packet at a
//!   time (intercept_queue.cpp `StoreRelaxed`), so the multi-packet case
//!   never arises in this model.
//! - CONFIG ENTER: the tool sets `replay_pass_count` (and maybe
//!   `replay_continue`); the SDK calls it once. NULL or 1: not replayed
//!   (CONFIG EXIT, then the ordinary path). 0 without `replay_continue`:
//!   refused with a warning, not replayed.
//! - One dispatch id for every pass; each pass: PASS ENTER (the tool may
//!   switch started contexts off or on for the rest of the loop, only then),
//!   the packet submitted again (external-correlation request, counting
//!   services, a record per pass), the pass waited for, PASS EXIT, then
//!   `replay_continue` (not after the last pass of a fixed loop). The
//!   application's completion comes once, after the loop (CONFIG EXIT).
//! - A replaying loop holds its agent's writer lock (`agent_replay_mutex`):
//!   one dispatch replays at a time per agent; other agents go on.
//! - Not modelled: the memory snapshot and restore (device memory is not
//!   simulated) and the agent-wide drain before the loop.
use super::context::contexts;
use super::intercept::{dispatch_record, DispatchInfo};
use super::os::lock;
use super::trace::{fire, select, UserSlots};
use rocprofiler_sys as sys;
use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

type Status = sys::rocprofiler_status_t;

const KIND: sys::rocprofiler_callback_tracing_kind_t =
    sys::rocprofiler_callback_tracing_kind_t::KERNEL_REPLAY;
const CONFIG: i32 = sys::rocprofiler_kernel_replay_operation_t::CONFIG.0 as i32;
const PASS: i32 = sys::rocprofiler_kernel_replay_operation_t::PASS.0 as i32;

/// The context that configured the domain; 0 for none.
static OWNER: AtomicU64 = AtomicU64::new(0);
static GRAPH_WARNED: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// Contexts switched off (true) or back on (false) for the loop running
    /// on this thread.
    static SWITCHED: RefCell<HashMap<u64, bool>> = RefCell::new(HashMap::new());
    /// A PASS ENTER callback is running: the only time switches are taken.
    static IN_PASS_ENTER: Cell<bool> = const { Cell::new(false) };
}

/// Claims the domain for `context`; false when another context has it.
pub(crate) fn claim(context: u64) -> bool {
    match OWNER.compare_exchange(0, context, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => true,
        Err(owner) => owner == context,
    }
}

/// Is `context` switched off for the replay loop running on this thread?
pub(crate) fn switched_off(context: u64) -> bool {
    SWITCHED
        .try_with(|s| s.borrow().get(&context).copied().unwrap_or(false))
        .unwrap_or(false)
}

fn switch(context: sys::rocprofiler_context_id_t, off: bool) -> Status {
    if !IN_PASS_ENTER.with(Cell::get) {
        return Status::ERROR_CONTEXT_ERROR;
    }
    if !contexts().iter().any(|c| c.handle == context.handle) {
        return Status::ERROR_CONTEXT_NOT_FOUND;
    }
    SWITCHED.with(|s| s.borrow_mut().insert(context.handle, off));
    Status::SUCCESS
}

/// `replay_start_context`: undoes a switch-off for the rest of the loop.
unsafe extern "C" fn start_context(context: sys::rocprofiler_context_id_t) -> Status {
    switch(context, false)
}

/// `replay_stop_context`: switches a context off for the rest of the loop.
unsafe extern "C" fn stop_context(context: sys::rocprofiler_context_id_t) -> Status {
    switch(context, true)
}

/// The agents with a replay loop running.
struct AgentLocks {
    busy: Mutex<HashSet<u64>>,
    freed: Condvar,
}

fn agent_locks() -> &'static AgentLocks {
    static LOCKS: OnceLock<AgentLocks> = OnceLock::new();
    LOCKS.get_or_init(|| AgentLocks {
        busy: Mutex::new(HashSet::new()),
        freed: Condvar::new(),
    })
}

/// How long a loop waits for its agent before going on without it (the
/// SDK waits without limit; a simulator that stalls helps no test).
const AGENT_WAIT: Duration = Duration::from_secs(10);

fn lock_agent(agent: u64) {
    let locks = agent_locks();
    let mut busy = lock(&locks.busy);
    let deadline = Instant::now() + AGENT_WAIT;
    while busy.contains(&agent) {
        let now = Instant::now();
        if now >= deadline {
            eprintln!("rocprofiler-sim: kernel replay: agent {agent} stayed busy for 10 s; replaying anyway");
            break;
        }
        busy = locks
            .freed
            .wait_timeout(busy, deadline - now)
            .unwrap_or_else(|p| p.into_inner())
            .0;
    }
    busy.insert(agent);
}

fn unlock_agent(agent: u64) {
    let locks = agent_locks();
    lock(&locks.busy).remove(&agent);
    locks.freed.notify_all();
}

/// A dispatch being replayed on this thread.
pub(crate) struct Replay {
    agent: u64,
    slots: UserSlots,
    payload: sys::rocprofiler_callback_tracing_kernel_replay_data_t,
    /// The pass count; 0 runs until `replay_continue` says stop.
    total: u64,
    again: sys::rocprofiler_kernel_replay_continue_cb_t,
    corr: u64,
    next: u64,
    /// The running pass's own copy of the user data.
    pass_slots: UserSlots,
}

fn data(info: &DispatchInfo) -> sys::rocprofiler_callback_tracing_kernel_replay_data_t {
    sys::rocprofiler_callback_tracing_kernel_replay_data_t {
        size: std::mem::size_of::<sys::rocprofiler_callback_tracing_kernel_replay_data_t>() as u64,
        dispatch_info: dispatch_record(info, 0, 0).dispatch_info,
        ..Default::default()
    }
}

/// CONFIG for a kernel packet intercepted on this thread: `Some` when it
/// is to run more than once.
pub(crate) fn config(info: &DispatchInfo, graph_launch_active: bool) -> Option<Replay> {
    if OWNER.load(Ordering::Acquire) == 0 {
        return None;
    }
    let mut slots = select(KIND.0, CONFIG);
    if slots.is_empty() {
        return None;
    }
    if graph_launch_active {
        if !GRAPH_WARNED.swap(true, Ordering::Relaxed) {
            eprintln!("rocprofiler-sim: kernel replay: HIP graph launches are not supported");
        }
        return None;
    }
    let mut payload = data(info);
    fire(
        &mut slots,
        KIND.0,
        CONFIG,
        sys::rocprofiler_callback_phase_t::ENTER,
        info.corr,
        &mut payload as *mut _ as *mut c_void,
    );
    let user_data = slots.first().map(|s| s.1).unwrap_or_default();
    // SAFETY: the tool's pass-count callback, called once per dispatch.
    let count = payload
        .replay_pass_count
        .map(|cb| unsafe { cb(payload.dispatch_info, user_data) });
    let again = payload.replay_continue;
    let mut replay = Replay {
        agent: info.agent,
        slots,
        payload,
        total: 0,
        again,
        corr: info.corr,
        next: 0,
        pass_slots: Vec::new(),
    };
    match (count, again) {
        (None | Some(1), _) => {}
        (Some(0), None) => {
            eprintln!("rocprofiler-sim: kernel replay: a pass count of 0 needs replay_continue; dispatch {} runs once", info.dispatch_id);
        }
        (Some(n), _) => {
            replay.total = n;
            lock_agent(info.agent);
            return Some(replay);
        }
    }
    replay.config_exit();
    None
}

impl Replay {
    fn config_exit(&mut self) {
        let mut payload = self.payload;
        payload.replay_pass_count = None;
        payload.replay_continue = None;
        fire(
            &mut self.slots,
            KIND.0,
            CONFIG,
            sys::rocprofiler_callback_phase_t::EXIT,
            self.corr,
            &mut payload as *mut _ as *mut c_void,
        );
    }

    /// PASS ENTER for the next pass; returns its number.
    pub fn begin_pass(&mut self) -> u64 {
        let pass = self.next;
        self.pass_slots = self.slots.clone();
        let mut payload = self.payload;
        payload.current_pass = pass;
        payload.total_passes = self.total;
        payload.replay_pass_count = None;
        payload.replay_continue = None;
        payload.replay_start_context = Some(start_context);
        payload.replay_stop_context = Some(stop_context);
        IN_PASS_ENTER.with(|f| f.set(true));
        fire(
            &mut self.pass_slots,
            KIND.0,
            PASS,
            sys::rocprofiler_callback_phase_t::ENTER,
            self.corr,
            &mut payload as *mut _ as *mut c_void,
        );
        IN_PASS_ENTER.with(|f| f.set(false));
        pass
    }

    /// PASS EXIT once the pass ran; whether another pass follows.
    pub fn end_pass(&mut self) -> bool {
        let pass = self.next;
        self.next += 1;
        let mut payload = self.payload;
        payload.current_pass = pass;
        payload.total_passes = self.total;
        payload.replay_pass_count = None;
        payload.replay_continue = self.again;
        fire(
            &mut self.pass_slots,
            KIND.0,
            PASS,
            sys::rocprofiler_callback_phase_t::EXIT,
            self.corr,
            &mut payload as *mut _ as *mut c_void,
        );
        if self.total != 0 && self.next >= self.total {
            return false;
        }
        let user_data = self.pass_slots.first().map(|s| s.1).unwrap_or_default();
        match payload.replay_continue {
            // SAFETY: the tool's continue callback with this pass's user data.
            Some(cb) => unsafe { cb(payload.dispatch_info, pass, self.total, user_data) != 0 },
            None => self.total != 0,
        }
    }

    /// CONFIG EXIT after the last pass; the switches end with the loop.
    pub fn finish(mut self) {
        let _ = SWITCHED.try_with(|s| s.borrow_mut().clear());
        unlock_agent(self.agent);
        self.config_exit();
    }
}
