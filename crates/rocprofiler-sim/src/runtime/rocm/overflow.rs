//! ROCr's async-events thread as the intercept queue uses it (ROCR-2025
//! d8cba83d: intercept_queue.cpp `HandleAsyncDoorbell`; runtime.cpp
//! `SetAsyncSignalHandler` / `AsyncEventsLoop`: ONE thread per process): it
//! processes a full queue's waiting packets once completions free space.
use super::hwqueue::{HwQueue, Waiting};
use crate::sdk::os::{lock, now_ns};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Duration;

struct Overflow {
    waiting: Mutex<Vec<Arc<HwQueue>>>,
    wake: Condvar,
}

fn state() -> &'static Overflow {
    static O: OnceLock<Overflow> = OnceLock::new();
    O.get_or_init(|| {
        std::thread::Builder::new()
            .name("rocsim-rocr-async".into())
            .spawn(async_thread)
            .expect("spawn ROCr's async thread");
        Overflow {
            waiting: Mutex::new(Vec::new()),
            wake: Condvar::new(),
        }
    })
}

/// `q` stopped processing for want of space: process the rest later.
pub(crate) fn wait_for_space(q: Arc<HwQueue>) {
    let o = state();
    let mut w = lock(&o.waiting);
    if !w.iter().any(|x| Arc::ptr_eq(x, &q)) {
        w.push(q);
    }
    drop(w);
    o.wake.notify_one();
}

fn async_thread() {
    let o = state();
    loop {
        let queues = {
            let mut w = lock(&o.waiting);
            while w.is_empty() {
                w = o.wake.wait(w).unwrap_or_else(|p| p.into_inner());
            }
            std::mem::take(&mut *w)
        };
        let mut blocked = Vec::new();
        for q in queues {
            match q.waiting() {
                Waiting::Ready => q.process(true),
                Waiting::Full => blocked.push(q),
                Waiting::Nothing => {}
            }
        }
        if blocked.is_empty() {
            continue;
        }
        // Sleep until the earliest in-flight command ends (unknown: poll).
        let now = now_ns();
        let wait = blocked
            .iter()
            .filter_map(|q| q.next_completion_ns())
            .min()
            .map_or(50_000, |t| t.saturating_sub(now))
            .clamp(20_000, 1_000_000);
        let mut w = lock(&o.waiting);
        for q in blocked {
            if !w.iter().any(|x| Arc::ptr_eq(x, &q)) {
                w.push(q);
            }
        }
        drop(w);
        std::thread::sleep(Duration::from_nanos(wait));
    }
}
