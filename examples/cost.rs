//! What the tool costs a process, measured from inside it: the tool library
//! linked into this program (not loaded as libkineto_rocm.so), so its
//! allocator (src/heap.rs, counting here) sees the tool's own allocations
//! and nothing of the simulator's, which lives in librocprofiler_sim.so
//! with the system allocator.
//!
//!   cost WORKLOAD none|tool [WINDOWS] [TRACE_DIR]
//!   cost --kernel-costs DIR
//!
//! `none` runs the workload WINDOWS times on the simulator with no tool;
//! `tool` opens a trace window around each run, writes each window's trace
//! into TRACE_DIR as it closes, and deletes it. Both run virtual time with
//! no submission jitter and no ground truth, so the simulator's work is the
//! same in both. Graph attribution follows the tool's own setting
//! (KINETO_ROCM_DISABLE_GRAPH_ATTRIBUTION). Prints one JSON object: CPU
//! seconds of the whole process (every thread, user + system), peak RSS,
//! and for `tool` the dispatches and how many got graph keys, the tool's
//! heap (live bytes with the window open and every record delivered; peak)
//! and per window its CPU seconds, the CPU seconds and minor page faults
//! finishing and writing took on this thread, and the live heap after it;
//! the minor page faults of the whole process and the bytes of trace
//! written.
//! `--kernel-costs` measures what the kernel charges this machine for the
//! two things a window's size makes it do: a page touched for the first
//! time (256 MiB of a fresh mapping, a write per page; again with the
//! mapping advised for transparent huge pages, as src/heap.rs advises its
//! large blocks) and a MiB written
//! into a file in DIR (256 MiB through the page cache), against writing
//! the same pages once they are resident.
//! scripts/bench-cost.sh runs it and prints the ratios.
use kineto_rocm::heap;
use rocprofiler_sim::host::Simulator;
use rocprofiler_sim::options::RunOptions;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// CPU seconds this thread has run.
fn thread_cpu() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through a valid pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 / 1e9
}

/// `getrusage` of this thread or of the whole process (`who`).
fn rusage(who: libc::c_int) -> libc::rusage {
    let mut u = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes one rusage through a valid pointer.
    unsafe { libc::getrusage(who, u.as_mut_ptr()) };
    // SAFETY: initialised by getrusage (and zeroed before).
    unsafe { u.assume_init() }
}

/// Minor page faults this thread has taken: the kernel's share of touching
/// fresh memory, counted exactly where CPU time on a shared machine is not.
fn thread_faults() -> u64 {
    rusage(libc::RUSAGE_THREAD).ru_minflt as u64
}

/// Microseconds per 4 KiB page of: a first touch of a fresh anonymous
/// mapping (with and without huge pages), a write to the same page once resident, and writing it into a
/// file in `dir` (through the page cache; the file is deleted).
fn kernel_costs(dir: &Path) {
    const BYTES: usize = 256 << 20;
    const PAGE: usize = 4096;
    let pages = (BYTES / PAGE) as f64;
    let timed = |f: &mut dyn FnMut()| {
        let started = std::time::Instant::now();
        f();
        started.elapsed().as_secs_f64() * 1e6 / pages
    };
    // (first touch, resident write) per page, and the mapping; with `huge`,
    // advised as the tool's allocator advises its large blocks.
    let touched = |huge: bool| {
        // SAFETY: an anonymous private mapping at an address the kernel picks.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                BYTES,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            fail("mmap", std::io::Error::last_os_error());
        }
        if huge {
            // SAFETY: advice on the mapping just made; no byte changes.
            unsafe { libc::madvise(p, BYTES, libc::MADV_HUGEPAGE) };
        }
        // SAFETY: the mapping just made, BYTES long, used only here.
        let block = unsafe { std::slice::from_raw_parts_mut(p.cast::<u8>(), BYTES) };
        let mut touch = |value: u8| {
            for page in block.chunks_exact_mut(PAGE) {
                // Volatile, so the writes are not merged or left out.
                // SAFETY: a valid, aligned byte of the mapping.
                unsafe { std::ptr::write_volatile(page.as_mut_ptr(), value) };
            }
        };
        let first = timed(&mut || touch(1));
        let resident = timed(&mut || touch(2));
        (first, resident, p)
    };
    let (first, resident, p) = touched(false);
    // SAFETY: the mapping made above, no longer used.
    unsafe { libc::munmap(p, BYTES) };
    let (first_huge, _, p) = touched(true);
    // The file is written from this mapping, resident.
    // SAFETY: the mapping just made, BYTES long, used only here.
    let block = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), BYTES) };
    let file = dir.join(format!("cost-write-{}.bin", std::process::id()));
    let write = timed(&mut || {
        let mut out = std::fs::File::create(&file).unwrap_or_else(|e| fail("create", e));
        for chunk in block.chunks(1 << 20) {
            std::io::Write::write_all(&mut out, chunk).unwrap_or_else(|e| fail("write", e));
        }
    });
    let _ = std::fs::remove_file(&file);
    // SAFETY: the mapping made above, no longer used.
    unsafe { libc::munmap(p, BYTES) };
    println!(
        "{{\"first_touch_us_per_page\": {first:.4}, \"first_touch_huge_us_per_page\": {first_huge:.4}, \"resident_us_per_page\": {resident:.4}, \"file_write_us_per_page\": {write:.4}}}"
    );
}

/// (user and system CPU seconds of every thread so far, peak RSS in KiB).
fn usage() -> (f64, f64, u64) {
    let u = rusage(libc::RUSAGE_SELF);
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (secs(u.ru_utime), secs(u.ru_stime), u.ru_maxrss as u64)
}

struct Window {
    cpu_s: f64,
    finish_s: f64,
    write_s: f64,
    /// Page faults finishing and writing took on this thread.
    faults: u64,
    heap_after: usize,
}

fn fail(what: &str, e: impl std::fmt::Display) -> ! {
    eprintln!("cost: {what}: {e}");
    std::process::exit(1)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() == 3 && args[1] == "--kernel-costs" {
        kernel_costs(Path::new(&args[2]));
        return;
    }
    if args.len() < 3 || !matches!(args[2].as_str(), "none" | "tool") {
        fail("usage", "cost WORKLOAD none|tool [WINDOWS] [TRACE_DIR]");
    }
    let workload = std::fs::read_to_string(&args[1]).unwrap_or_else(|e| fail(&args[1], e));
    let with_tool = args[2] == "tool";
    let windows: usize = args.get(3).and_then(|w| w.parse().ok()).unwrap_or(1);
    let trace_dir = PathBuf::from(args.get(4).map_or("/tmp", String::as_str));
    let options = RunOptions {
        source_name: Some(args[1].clone()),
        virtual_time: true,
        jitter_ns: 0,
        record_truth: false,
        ..RunOptions::default()
    };
    let sim = Simulator::load_default().unwrap_or_else(|e| fail("simulator", e));
    heap::count();
    let mut dispatches = 0usize;
    let mut attributed = 0u64;
    let mut held = 0usize;
    let mut trace_bytes = 0u64;
    let mut per_window = Vec::new();
    for w in 0..windows {
        let (u0, s0, _) = usage();
        if with_tool {
            kineto_rocm::session::start_collection().unwrap_or_else(|e| fail("start", e));
        }
        sim.run_workload(&workload, &options)
            .unwrap_or_else(|e| fail("workload", e));
        sim.wait_idle(Duration::from_secs(600))
            .unwrap_or_else(|e| fail("wait", e));
        if !with_tool {
            let (u1, s1, _) = usage();
            per_window.push(Window {
                cpu_s: u1 + s1 - u0 - s0,
                finish_s: 0.0,
                write_s: 0.0,
                faults: 0,
                heap_after: 0,
            });
            continue;
        }
        let open_heap = heap::usage().live;
        kineto_rocm::session::stop_collection().unwrap_or_else(|e| fail("stop", e));
        let faults_before = thread_faults();
        let started = thread_cpu();
        let finished =
            kineto_rocm::session::take_finished_windows().unwrap_or_else(|e| fail("take", e));
        let finish_s = thread_cpu() - started;
        let in_window: usize = finished.iter().map(|f| f.kernels.len()).sum();
        dispatches += in_window;
        attributed += finished
            .iter()
            .flat_map(|f| &f.summary)
            .filter_map(|line| line.strip_prefix("attributed="))
            .filter_map(|n| n.parse::<u64>().ok())
            .sum::<u64>();
        held = held.max(open_heap / in_window.max(1));
        let file = trace_dir.join(format!("cost-{}.{w}.json", std::process::id()));
        let started = thread_cpu();
        kineto_rocm::output::write_trace_file(
            &file,
            &finished,
            kineto_rocm::output::TraceFormat::Json,
        )
        .unwrap_or_else(|e| fail("write", e));
        let write_s = thread_cpu() - started;
        let faults = thread_faults() - faults_before;
        drop(finished);
        trace_bytes += std::fs::metadata(&file).map_or(0, |m| m.len());
        let _ = std::fs::remove_file(Path::new(&file));
        let (u1, s1, _) = usage();
        per_window.push(Window {
            cpu_s: u1 + s1 - u0 - s0,
            finish_s,
            write_s,
            faults,
            heap_after: heap::usage().live,
        });
    }
    sim.shutdown().unwrap_or_else(|e| fail("shutdown", e));
    let (user, sys, rss_kib) = usage();
    let windows_json: Vec<String> = per_window
        .iter()
        .map(|w| {
            format!(
                "{{\"cpu_s\": {:.4}, \"finish_s\": {:.4}, \"write_s\": {:.4}, \"faults\": {}, \"heap_after\": {}}}",
                w.cpu_s, w.finish_s, w.write_s, w.faults, w.heap_after
            )
        })
        .collect();
    println!(
        "{{\"mode\": \"{}\", \"dispatches\": {dispatches}, \"attributed\": {attributed}, \"user_s\": {user:.4}, \"sys_s\": {sys:.4}, \
         \"maxrss_kib\": {rss_kib}, \"tool_peak_bytes\": {}, \"held_bytes_per_dispatch\": {held}, \
         \"minflt\": {}, \"trace_bytes\": {trace_bytes}, \"windows\": [{}]}}",
        args[2],
        heap::usage().peak,
        rusage(libc::RUSAGE_SELF).ru_minflt,
        windows_json.join(", ")
    );
}
