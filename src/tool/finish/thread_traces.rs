//! Thread-trace data by dispatch and pass: the raw bytes of each traced
//! dispatch go to files as they arrive (the trace is large and only the
//! closed decoder reads it); finishing names the files on the kernel event
//! of the pass that traced it. Keyed like the counters, by dispatch id and
//! kernel-replay pass.
use dashmap::DashMap;
use once_cell::sync::Lazy;
use std::sync::atomic::{AtomicBool, Ordering};

static FILES: Lazy<DashMap<(u64, u32), Vec<String>>> = Lazy::new(DashMap::new);
static EVER: AtomicBool = AtomicBool::new(false);

/// A file now holds (part of) the trace of a dispatch's pass.
pub fn add(dispatch_id: u64, pass: u32, file: String) {
    EVER.store(true, Ordering::Release);
    let mut files = FILES.entry((dispatch_id, pass)).or_default();
    if !files.contains(&file) {
        files.push(file);
    }
}

/// The files of a dispatch's pass, comma-separated, removed from the
/// store; `None` when it was not traced.
#[inline]
pub fn take(dispatch_id: u64, pass: u32) -> Option<String> {
    if !EVER.load(Ordering::Acquire) {
        return None;
    }
    take_recorded(dispatch_id, pass)
}

/// `take` once something was recorded; out of line, so a session
/// that traces nothing pays one load per record.
fn take_recorded(dispatch_id: u64, pass: u32) -> Option<String> {
    FILES
        .remove(&(dispatch_id, pass))
        .map(|(_, files)| files.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pass_names_each_of_its_files_once() {
        add(7_001, 1, "a/d7001-se0.att".into());
        add(7_001, 1, "a/d7001-se1.att".into());
        add(7_001, 1, "a/d7001-se0.att".into());
        assert_eq!(take(7_001, 0), None);
        assert_eq!(
            take(7_001, 1).as_deref(),
            Some("a/d7001-se0.att,a/d7001-se1.att")
        );
        assert_eq!(take(7_001, 1), None, "taken once");
    }
}
