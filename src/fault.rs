//! Test-only fault injection. Never set these in production.
//!
//! `KINETO_ROCM_TEST_PANIC_FINISHING_WINDOW=1`: the first trace window the
//! process finishes panics, once. Tests use it to show that a bug in window
//! finishing costs that window and nothing else: the panic is caught at the
//! FFI boundary, the host (kineto, PyTorch) carries on, and the next window
//! works.
use std::sync::atomic::{AtomicBool, Ordering};

static PANIC_FINISHING_WINDOW: once_cell::sync::Lazy<AtomicBool> =
    once_cell::sync::Lazy::new(|| {
        AtomicBool::new(
            std::env::var("KINETO_ROCM_TEST_PANIC_FINISHING_WINDOW").as_deref() == Ok("1"),
        )
    });

/// Called where a finalised window is turned into activities.
pub fn finishing_window() {
    if PANIC_FINISHING_WINDOW.swap(false, Ordering::AcqRel) {
        panic!("test fault injected by KINETO_ROCM_TEST_PANIC_FINISHING_WINDOW");
    }
}
