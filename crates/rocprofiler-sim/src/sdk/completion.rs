//! Completion of device work (rocprofiler-sdk SDK-1.0: hsa/queue.cpp
//! `AsyncSignalHandler`, kernel_dispatch/tracing.cpp `dispatch_complete`):
//! a record is written into
//! the buffers captured when its packet was intercepted, at the time the
//! signal handler gets to it. One thread plays ROCr's async signal handler:
//! it delivers completions in the order of their delivery times.
use super::buffer::{push_record, Rec};
use super::correlation::corr_async_delivered;
use super::dispatch_counting::Counted;
use super::intercept::Deliveries;
use super::os::{lock, now_ns};
use super::thread_trace::Traced;
use rocprofiler_sys as sys;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::Duration;

/// Device work whose record is delivered when it completes.
pub(crate) struct Completion {
    /// When the record reaches its buffers (CLOCK_MONOTONIC ns).
    pub deliver_ns: u64,
    /// Wait for `deliver_ns`; false delivers at once (virtual time).
    pub wait: bool,
    pub corr: u64,
    pub rec: Rec,
    /// (context index, buffer, external value) captured at interception.
    pub deliveries: Deliveries,
    /// A kernel's counter values for the dispatch counting services.
    pub counted: Counted,
    /// A kernel's thread trace data for the thread trace services.
    pub traced: Traced,
}

struct Queued {
    c: Completion,
    seq: u64,
}

impl PartialEq for Queued {
    fn eq(&self, o: &Self) -> bool {
        (self.c.deliver_ns, self.seq) == (o.c.deliver_ns, o.seq)
    }
}
impl Eq for Queued {}
impl PartialOrd for Queued {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Queued {
    /// Reversed: BinaryHeap pops the earliest completion first.
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (o.c.deliver_ns, o.seq).cmp(&(self.c.deliver_ns, self.seq))
    }
}

#[derive(Default)]
struct Heap {
    heap: BinaryHeap<Queued>,
    /// Completions expected and not yet delivered (scheduled or not).
    outstanding: u64,
    started: bool,
}

struct Completions {
    q: Mutex<Heap>,
    work: Condvar,
    idle: Condvar,
    seq: AtomicU64,
}

fn state() -> &'static Completions {
    static C: OnceLock<Completions> = OnceLock::new();
    C.get_or_init(|| Completions {
        q: Mutex::new(Heap::default()),
        work: Condvar::new(),
        idle: Condvar::new(),
        seq: AtomicU64::new(0),
    })
}

/// Announces one completion that `schedule` will hand over later: until
/// then `wait_idle` keeps waiting for it.
pub(crate) fn expect() {
    lock(&state().q).outstanding += 1;
}

/// Hands over an announced completion.
pub(crate) fn schedule(c: Completion) {
    let s = state();
    let seq = s.seq.fetch_add(1, Ordering::Relaxed);
    let mut q = lock(&s.q);
    if !q.started {
        q.started = true;
        std::thread::Builder::new()
            .name("rocsim-completion".into())
            .spawn(completion_thread)
            .expect("spawn the completion thread");
    }
    q.heap.push(Queued { c, seq });
    drop(q);
    s.work.notify_one();
}

/// Waits until every expected completion was delivered. False on timeout.
pub(crate) fn wait_delivered(timeout_ns: u64) -> bool {
    let s = state();
    let deadline = now_ns().saturating_add(timeout_ns);
    let mut q = lock(&s.q);
    while q.outstanding > 0 {
        let now = now_ns();
        if now >= deadline {
            return false;
        }
        q = s
            .idle
            .wait_timeout(q, Duration::from_nanos((deadline - now).min(50_000_000)))
            .unwrap_or_else(|p| p.into_inner())
            .0;
    }
    true
}

fn completion_thread() {
    let s = state();
    loop {
        let item = {
            let mut q = lock(&s.q);
            loop {
                match q.heap.peek() {
                    None => {
                        q = s.work.wait(q).unwrap_or_else(|p| p.into_inner());
                    }
                    Some(top) => {
                        let now = now_ns();
                        if top.c.wait && top.c.deliver_ns > now {
                            let d = Duration::from_nanos(top.c.deliver_ns - now);
                            q = s
                                .work
                                .wait_timeout(q, d)
                                .unwrap_or_else(|p| p.into_inner())
                                .0;
                        } else {
                            break;
                        }
                    }
                }
            }
            q.heap.pop().expect("peeked").c
        };
        deliver(item);
        let mut q = lock(&s.q);
        q.outstanding -= 1;
        if q.outstanding == 0 {
            s.idle.notify_all();
        }
    }
}

fn deliver(item: Completion) {
    item.counted.deliver();
    item.traced.deliver();
    for &(_, buffer, external) in &item.deliveries {
        let mut rec = item.rec;
        match &mut rec {
            Rec::Kernel(r) => r.correlation_id.external = external_value(external),
            Rec::Copy(r) => r.correlation_id.external = external_value(external),
            _ => {}
        }
        push_record(buffer, rec);
    }
    corr_async_delivered(item.corr);
}

fn external_value(v: u64) -> sys::rocprofiler_user_data_t {
    sys::rocprofiler_user_data_t::from_value(v)
}
