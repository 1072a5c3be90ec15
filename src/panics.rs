//! Catching panics at the FFI boundary (cxx aborts the process when one
//! escapes an `extern "Rust"` function; a C caller has no way to unwind).
//!
//! A panic inside `catch` is reported once, by the caller, as an error that
//! says where it happened; the default hook's lines are kept for panics
//! outside it (a test, say). The hook belongs to this library's own copy of
//! std: it cannot touch a host's Rust code.
use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    static LOCATION: RefCell<Option<String>> = const { RefCell::new(None) };
}

fn install_hook() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if DEPTH.with(Cell::get) == 0 {
                default(info);
                return;
            }
            let location = info
                .location()
                .map(|l| format!("{}:{}", l.file(), l.line()));
            LOCATION.with(|slot| *slot.borrow_mut() = location);
        }));
    });
}

/// Runs `f`; a panic becomes `Err("<message> (at <file>:<line>)")`.
pub fn catch<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    install_hook();
    DEPTH.with(|d| d.set(d.get() + 1));
    let outcome = panic::catch_unwind(AssertUnwindSafe(f));
    DEPTH.with(|d| d.set(d.get() - 1));
    outcome.map_err(|payload| {
        let message = if let Some(text) = payload.downcast_ref::<&str>() {
            (*text).to_string()
        } else if let Some(text) = payload.downcast_ref::<String>() {
            text.clone()
        } else {
            "a panic without a message".to_string()
        };
        match LOCATION.with(|slot| slot.borrow_mut().take()) {
            Some(at) => format!("{message} (at {at})"),
            None => message,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caught_panic_says_what_and_where() {
        let err = catch(|| panic!("boom {}", 7)).unwrap_err();
        assert!(err.starts_with("boom 7 (at src/panics.rs:"), "{err}");
    }

    #[test]
    fn nested_catches_report_to_the_innermost() {
        let outer = catch(|| catch(|| panic!("inner")).unwrap_err());
        assert_eq!(outer.map(|e| e.starts_with("inner")), Ok(true));
    }
}
