//! The recorder: kineto-rocm in any HIP program, with no code in it.
//! `kineto-rocm record` starts the program with this library listed in
//! `ROCP_TOOL_LIBRARIES` (as rocprofv3 loads its tool) and the settings in
//! the environment (config.rs). When the library is loaded, it registers
//! for the SDK's lifecycle; when the SDK initialises it (the program's first
//! HIP call), it opens the window, at once or after a delay, and closes it
//! after a duration if one is set; or, told to follow a ROCTX range, it
//! opens a window at each push of that range and closes it at its pop (the
//! SDK's MARKER_CORE_API callbacks). When the SDK finalises it (the program
//! exits), or on SIGINT/SIGTERM, it writes the trace. A window cut short by
//! the program's end or a signal is kept whole (every record of work it
//! launched is waited for) and the trace says it is partial.
mod config;
mod signals;

use crate::output;
use crate::session;
use crate::tool::sdk::lifecycle::{observe_lifecycle, Lifecycle};
use crate::window::FinishedWindow;
use config::{RecordConfig, Trigger};
use once_cell::sync::OnceCell;
use std::collections::HashMap;
use std::ffi::c_int;
use std::sync::Mutex;
use std::time::{Duration, Instant};

static RECORDER: OnceCell<Recorder> = OnceCell::new();

/// Runs when the library is loaded, before the SDK configures it.
#[used]
#[link_section = ".init_array"]
static ON_LOAD: extern "C" fn() = on_load;

extern "C" fn on_load() {
    let _ = std::panic::catch_unwind(|| match RecordConfig::from_env() {
        Ok(None) => {}
        Ok(Some(config)) => {
            let recorder = RECORDER.get_or_init(|| Recorder {
                config,
                state: Mutex::new(State::default()),
            });
            observe_lifecycle(recorder);
        }
        Err(why) => eprintln!("kineto-rocm: not recording: {why}"),
    });
}

#[derive(Clone, Copy, Debug, Default)]
enum Window {
    #[default]
    Waiting,
    Open(Instant),
    /// Its duration ran out before the program ended.
    Closed,
}

#[derive(Default)]
struct State {
    window: Window,
    initialised: Option<Instant>,
    written: bool,
    /// Windows opened so far.
    opened: usize,
    /// Per SDK thread, its open ROCTX ranges: whether each is the followed
    /// one (a pop names no range; the thread's stack says which it closes).
    ranges: HashMap<u64, Vec<bool>>,
    /// Followed ranges open now, on every thread.
    open_ranges: usize,
}

/// How the recording ended.
#[derive(Clone, Copy)]
enum Ending {
    Exit,
    Signal(c_int),
}

struct Recorder {
    config: RecordConfig,
    state: Mutex<State>,
}

fn recorder() -> &'static Recorder {
    RECORDER.get().expect("the recorder observes only once set")
}

fn seconds(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

impl Recorder {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Opens the window unless it is open or the trace is written.
    fn open(&self, state: &mut State) {
        if state.written || matches!(state.window, Window::Open(_)) {
            return;
        }
        match session::start_collection() {
            Ok(()) => {
                state.window = Window::Open(Instant::now());
                state.opened += 1;
            }
            Err(e) => eprintln!("kineto-rocm: recording: the window could not start: {e}"),
        }
    }

    fn close(&self, state: &mut State) {
        if let Window::Open(_) = state.window {
            if let Err(e) = session::stop_collection() {
                eprintln!("kineto-rocm: recording: the window could not stop: {e}");
            }
            state.window = Window::Closed;
        }
    }

    /// Stops the window if open, waits for its records, writes the trace
    /// with a line saying how the recording ended. Once.
    fn finish(&self, ending: Ending) {
        let mut state = self.state();
        if std::mem::replace(&mut state.written, true) {
            return;
        }
        let line = match &self.config.trigger {
            Trigger::Timer { delay, duration } => {
                Self::timer_line(&state, ending, *delay, *duration)
            }
            Trigger::Range(name) => Self::range_line(&state, ending, name),
        };
        if let Window::Open(_) = state.window {
            if let Err(e) = session::stop_collection() {
                eprintln!("kineto-rocm: recording: the window could not stop: {e}");
            }
        }
        let mut windows = session::take_finished_windows().unwrap_or_else(|e| {
            eprintln!("kineto-rocm: recording: {e}");
            Vec::new()
        });
        match windows.last_mut() {
            Some(last) => last.summary.push(line.clone()),
            None => windows.push(FinishedWindow {
                summary: vec![line.clone()],
                ..FinishedWindow::default()
            }),
        }
        let out = &self.config.out;
        match output::write_trace_file(out, &windows, self.config.format) {
            Ok(kernels) => eprintln!(
                "kineto-rocm: {kernels} kernels recorded to {} ({line})",
                out.display()
            ),
            Err(e) => eprintln!("kineto-rocm: recording lost: {e}"),
        }
    }

    /// How a timed window ended.
    fn timer_line(
        state: &State,
        ending: Ending,
        delay: Duration,
        duration: Option<Duration>,
    ) -> String {
        let since_start = state.initialised.map(|t| t.elapsed()).unwrap_or_default();
        match (state.window, ending) {
            (Window::Waiting, Ending::Exit) => format!(
                "recording=empty: the program ended {} after its first HIP call, before the {} delay",
                seconds(since_start),
                seconds(delay)
            ),
            (Window::Waiting, Ending::Signal(s)) => format!(
                "recording=empty: stopped by {} before the window opened",
                signals::name(s)
            ),
            (Window::Open(since), ending) => match (ending, duration) {
                (Ending::Signal(s), _) => format!(
                    "recording=partial: stopped by {} {} into the window",
                    signals::name(s),
                    seconds(since.elapsed())
                ),
                (Ending::Exit, Some(duration)) => format!(
                    "recording=partial: the program exited {} into a {} window",
                    seconds(since.elapsed()),
                    seconds(duration)
                ),
                (Ending::Exit, None) => {
                    "recording=complete: the window ran until the program exited".to_string()
                }
            },
            (Window::Closed, _) => format!(
                "recording=complete: the {} window ended before the program did",
                seconds(duration.unwrap_or_default())
            ),
        }
    }

    /// How the windows of a followed ROCTX range ended.
    fn range_line(state: &State, ending: Ending, name: &str) -> String {
        let ended = match ending {
            Ending::Exit => "the program exited".to_string(),
            Ending::Signal(s) => format!("stopped by {}", signals::name(s)),
        };
        match state.window {
            Window::Waiting => {
                format!("recording=empty: {ended} before any ROCTX range \"{name}\"")
            }
            Window::Open(since) => format!(
                "recording=partial: {ended} {} into ROCTX range \"{name}\" ({} windows)",
                seconds(since.elapsed()),
                state.opened
            ),
            Window::Closed => format!(
                "recording=complete: {} windows, each a ROCTX range \"{name}\"",
                state.opened
            ),
        }
    }

    /// A ROCTX range pushed or popped: the followed one opens the window
    /// when it is the first open, and closes it when it is the last.
    fn follow(&self, name: &str, thread: u64, pushed: Option<&str>) {
        let mut state = self.state();
        match pushed {
            Some(message) => {
                let followed = message == name;
                state.ranges.entry(thread).or_default().push(followed);
                if followed {
                    state.open_ranges += 1;
                    self.open(&mut state);
                }
            }
            None => {
                let followed = state
                    .ranges
                    .get_mut(&thread)
                    .and_then(Vec::pop)
                    .unwrap_or(false);
                if followed {
                    state.open_ranges -= 1;
                    if state.open_ranges == 0 {
                        self.close(&mut state);
                    }
                }
            }
        }
    }
}

impl Lifecycle for Recorder {
    fn initialised(&self) {
        self.state().initialised = Some(Instant::now());
        match signals::catch(|signal| recorder().finish(Ending::Signal(signal))) {
            Ok(left) if !left.is_empty() => {
                let names: Vec<&str> = left.iter().map(|s| signals::name(*s)).collect();
                eprintln!(
                    "kineto-rocm: recording: the program ignores or handles {} itself; the trace is written when it exits",
                    names.join(" and ")
                )
            }
            Ok(_) => {}
            Err(e) => eprintln!("kineto-rocm: recording: signals not caught ({e}); SIGINT or SIGTERM would lose the trace"),
        }
        let Trigger::Timer { delay, duration } = self.config.trigger else {
            return;
        };
        if delay.is_zero() {
            self.open(&mut self.state());
        }
        if delay.is_zero() && duration.is_none() {
            return;
        }
        let timer = std::thread::Builder::new()
            .name("kineto-rocm-window".into())
            .spawn(move || {
                std::thread::sleep(delay);
                let recorder = recorder();
                recorder.open(&mut recorder.state());
                if let Some(duration) = duration {
                    std::thread::sleep(duration);
                    recorder.close(&mut recorder.state());
                }
            });
        if let Err(e) = timer {
            eprintln!("kineto-rocm: recording: no window timer ({e}); recording the whole run");
            self.open(&mut self.state());
        }
    }

    fn finalising(&self) {
        self.finish(Ending::Exit);
    }

    fn follows_ranges(&self) -> bool {
        matches!(self.config.trigger, Trigger::Range(_))
    }

    fn range(&self, thread: u64, pushed: Option<&str>) {
        if let Trigger::Range(name) = &self.config.trigger {
            self.follow(name, thread, pushed);
        }
    }
}
