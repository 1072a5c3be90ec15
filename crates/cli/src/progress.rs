//! A progress line for work that takes more than a second: once a second,
//! how many items so far; then one line when done. Quick work prints
//! nothing.
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

/// Runs `work`, which counts what it has done in the counter it is handed.
pub fn watch<T>(what: &str, unit: &str, work: impl FnOnce(&AtomicU64) -> T) -> T {
    watch_every(
        Duration::from_secs(1),
        &|line| eprintln!("kineto-rocm: {line}"),
        what,
        unit,
        work,
    )
}

/// `watch` with the interval and the line printer given.
fn watch_every<T>(
    every: Duration,
    print: &(dyn Fn(String) + Sync),
    what: &str,
    unit: &str,
    work: impl FnOnce(&AtomicU64) -> T,
) -> T {
    let counter = AtomicU64::new(0);
    let started = Instant::now();
    let (done, wait) = mpsc::channel::<()>();
    let (counter, started) = (&counter, &started);
    std::thread::scope(|scope| {
        let watcher = scope.spawn(move || {
            let mut printed = false;
            while let Err(RecvTimeoutError::Timeout) = wait.recv_timeout(every) {
                print(format!(
                    "{what}: {} {unit} so far ({:.0} s)",
                    counter.load(Ordering::Relaxed),
                    started.elapsed().as_secs_f64()
                ));
                printed = true;
            }
            printed
        });
        let result = work(counter);
        drop(done);
        if watcher.join().unwrap_or(false) {
            print(format!(
                "{what}: {} {unit} in {:.1} s",
                counter.load(Ordering::Relaxed),
                started.elapsed().as_secs_f64()
            ));
        }
        result
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    fn lines_of(work_for: Duration) -> Vec<String> {
        let lines = Mutex::new(Vec::new());
        let print = |line: String| lines.lock().unwrap().push(line);
        let result = watch_every(
            Duration::from_millis(50),
            &print,
            "reading t.json",
            "events",
            |read| {
                let end = Instant::now() + work_for;
                while Instant::now() < end {
                    read.fetch_add(1, Ordering::Relaxed);
                    std::thread::sleep(Duration::from_millis(1));
                }
                7
            },
        );
        assert_eq!(result, 7, "the work's result comes back");
        lines.into_inner().unwrap()
    }

    #[test]
    fn long_work_gets_progress_lines_then_a_last_line() {
        let lines = lines_of(Duration::from_millis(300));
        assert!(lines.len() >= 3, "{lines:?}");
        let (last, so_far) = lines.split_last().unwrap();
        assert!(
            so_far
                .iter()
                .all(|l| l.starts_with("reading t.json: ") && l.contains(" events so far (")),
            "{lines:?}"
        );
        assert!(
            last.starts_with("reading t.json: ") && last.contains(" events in "),
            "{last}"
        );
        let count: u64 = last["reading t.json: ".len()..]
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(count > 0, "{last}");
    }

    #[test]
    fn quick_work_prints_nothing() {
        assert_eq!(lines_of(Duration::ZERO), Vec::<String>::new());
    }
}
