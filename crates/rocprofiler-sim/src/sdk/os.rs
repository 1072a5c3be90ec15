//! What the simulated SDK reads from the operating system: the clock its
//! records are stamped with and the kernel thread id; and the one lock
//! helper every module uses.
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Locks `m`, taking the data of a poisoned lock as is: a panic caught at
/// the C boundary must not wedge every later call.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// How far the clock runs ahead of CLOCK_MONOTONIC: the time synchronising
/// calls spent waiting for device work under virtual time (`advance_to`).
/// It only grows, so the clock stays monotonic.
static AHEAD_NS: AtomicU64 = AtomicU64::new(0);

/// CLOCK_MONOTONIC in nanoseconds, plus what virtual time skipped (what
/// rocprofiler_get_timestamp reports here, and the clock of every record's
/// timestamps).
pub(crate) fn now_ns() -> u64 {
    monotonic_ns() + AHEAD_NS.load(Ordering::Acquire)
}

fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through a valid pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// A thread that waited for device work resumes no earlier than its end.
/// Under real time it has already passed and this does nothing; under
/// virtual time device work completes as soon as its times are known, so
/// the clock skips to `t` for every thread, as it would have passed.
pub(crate) fn advance_to(t: u64) {
    let mut ahead = AHEAD_NS.load(Ordering::Acquire);
    loop {
        let now = monotonic_ns() + ahead;
        if now >= t {
            return;
        }
        match AHEAD_NS.compare_exchange_weak(
            ahead,
            ahead + (t - now),
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => return,
            Err(current) => ahead = current,
        }
    }
}

thread_local! {
    static TID: Cell<u64> = const { Cell::new(0) };
}

/// The kernel thread id, as `rocprofiler_thread_id_t` is (gettid).
pub(crate) fn tid() -> u64 {
    let cached = TID.try_with(|t| t.get()).unwrap_or(0);
    if cached != 0 {
        return cached;
    }
    // SAFETY: gettid has no arguments and cannot fail.
    let id = unsafe { libc::syscall(libc::SYS_gettid) } as u64;
    let _ = TID.try_with(|t| t.set(id));
    id
}
