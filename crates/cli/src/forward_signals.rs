//! SIGINT and SIGTERM sent to `record` go on to the program it runs, whose
//! recorder writes the trace before the signal ends it; `record` itself
//! keeps waiting for the program. The FFI module of `record`: the handler
//! and its installation.
use std::ffi::c_int;
use std::sync::atomic::{AtomicI32, Ordering};

/// The running program, for the handler; 0 when none.
static CHILD: AtomicI32 = AtomicI32::new(0);

extern "C" fn forward(signal: c_int) {
    let child = CHILD.load(Ordering::Relaxed);
    if child > 0 {
        // SAFETY: kill(2) is async-signal-safe; a pid we spawned.
        unsafe { libc::kill(child, signal) };
    }
}

/// From now on SIGINT and SIGTERM go to the program `child` (0: dropped,
/// while no program runs).
pub fn to(child: u32) {
    CHILD.store(child as i32, Ordering::Relaxed);
}

/// Installs the forwarding handler for SIGINT and SIGTERM.
pub fn install() {
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: installs a handler that only calls kill(2).
        unsafe {
            libc::signal(
                signal,
                forward as extern "C" fn(c_int) as libc::sighandler_t,
            )
        };
    }
}
