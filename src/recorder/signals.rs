//! SIGINT and SIGTERM end a recording with its trace written, then end the
//! program as the signal would have.
//!
//! A signal handler may do almost nothing safely, so it only writes the
//! signal's number into a pipe; a thread of ours reads it, does the work
//! (stop, wait for the window's records, write the trace), then restores
//! the default action and raises the signal again. A program that installed
//! its own handler keeps it: its handler runs, and the trace is written when
//! the program exits. SIGKILL cannot be caught; nothing can be saved then.
use std::ffi::{c_int, c_void};
use std::io::Read;
use std::os::fd::IntoRawFd;
use std::sync::atomic::{AtomicI32, Ordering};

/// The pipe's write end, for the handler; -1 until installed.
static PIPE: AtomicI32 = AtomicI32::new(-1);

extern "C" fn on_signal(signal: c_int) {
    let fd = PIPE.load(Ordering::Relaxed);
    if fd >= 0 {
        let byte = signal as u8;
        // SAFETY: write(2) is async-signal-safe; one byte from a live local.
        unsafe { libc::write(fd, (&byte as *const u8).cast::<c_void>(), 1) };
    }
}

pub fn name(signal: c_int) -> &'static str {
    match signal {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        _ => "a signal",
    }
}

/// Catches SIGINT and SIGTERM where the program left their default action;
/// `then` runs once per signal, on a thread of its own, before the signal
/// takes its default effect. Returns the signals left to the program.
pub fn catch(then: impl Fn(c_int) + Send + 'static) -> Result<Vec<c_int>, String> {
    let (mut reader, writer) = std::io::pipe().map_err(|e| format!("no pipe: {e}"))?;
    // The write end lives as long as the process: handlers may use it.
    PIPE.store(writer.into_raw_fd(), Ordering::Relaxed);
    let mut left = Vec::new();
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: sigaction structs are plain data; zeroed is a valid value.
        let mut current: libc::sigaction = unsafe { std::mem::zeroed() };
        // SAFETY: reads the current action into a valid struct.
        if unsafe { libc::sigaction(signal, std::ptr::null(), &mut current) } != 0
            || current.sa_sigaction != libc::SIG_DFL
        {
            left.push(signal);
            continue;
        }
        // SAFETY: as above.
        let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
        action.sa_sigaction = on_signal as extern "C" fn(c_int) as usize;
        action.sa_flags = libc::SA_RESTART;
        // SAFETY: initialises the mask of a valid struct; then installs a
        // handler that only calls write(2).
        let installed = unsafe {
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut())
        };
        if installed != 0 {
            left.push(signal);
        }
    }
    std::thread::Builder::new()
        .name("kineto-rocm-signals".into())
        .spawn(move || {
            let mut byte = [0u8];
            while reader.read_exact(&mut byte).is_ok() {
                let signal = c_int::from(byte[0]);
                then(signal);
                // SAFETY: restores the default action and raises the signal
                // again, so the program ends as it would have without us.
                unsafe {
                    libc::signal(signal, libc::SIG_DFL);
                    libc::raise(signal);
                }
            }
        })
        .map_err(|e| format!("no signal thread: {e}"))?;
    Ok(left)
}
