//! What the simulated SDK reads from the operating system: the clock its
//! records are stamped with and the kernel thread id; and the one lock
//! helper every module uses.
use std::cell::Cell;
use std::sync::{Mutex, MutexGuard};

/// Locks `m`, taking the data of a poisoned lock as is: a panic caught at
/// the C boundary must not wedge every later call.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// CLOCK_MONOTONIC in nanoseconds (what rocprofiler_get_timestamp reports
/// here, and the clock of every record's timestamps).
pub(crate) fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through a valid pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
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
