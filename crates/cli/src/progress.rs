//! A progress line for work that takes more than a second: once a second,
//! how many items so far; then one line when done. Quick work prints
//! nothing.
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

/// Runs `work`, which counts what it has done in the counter it is handed.
pub fn watch<T>(what: &str, unit: &str, work: impl FnOnce(&AtomicU64) -> T) -> T {
    let counter = AtomicU64::new(0);
    let started = Instant::now();
    let (done, wait) = mpsc::channel::<()>();
    let (counter, started) = (&counter, &started);
    std::thread::scope(|scope| {
        let watcher = scope.spawn(move || {
            let mut printed = false;
            while let Err(RecvTimeoutError::Timeout) = wait.recv_timeout(Duration::from_secs(1)) {
                eprintln!(
                    "kineto-rocm: {what}: {} {unit} so far ({:.0} s)",
                    counter.load(Ordering::Relaxed),
                    started.elapsed().as_secs_f64()
                );
                printed = true;
            }
            printed
        });
        let result = work(counter);
        drop(done);
        if watcher.join().unwrap_or(false) {
            eprintln!(
                "kineto-rocm: {what}: {} {unit} in {:.1} s",
                counter.load(Ordering::Relaxed),
                started.elapsed().as_secs_f64()
            );
        }
        result
    })
}
