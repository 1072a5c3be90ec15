//! The session: where everything the SDK adapter reads goes, from the first
//! start to process exit. Decoded records go into the activity store,
//! window by window; graph evidence into attribution; kernel names into a
//! table. Finishing a window waits for its records, then hands it to
//! window finishing (tool/finish) and returns the [`FinishedWindow`].
use crate::tool::finish::activities::{self, Context};
use crate::tool::finish::attribution::{Attribution, Method, WindowSpan};
use crate::tool::finish::devices::Devices;
use crate::tool::finish::replay;
use crate::tool::finish::timeline::TimelineEvidence;
use crate::window::FinishedWindow;
use crate::window::Overhead;
use activity_store::{
    ActivityStore, ExternalDomain, GraphLaunch, HipApiCall, KernelBatch, MemoryCopy, StoreConfig,
    WindowError, WindowId,
};
use graph_attribution::LaunchTracker;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, RwLock};
use std::time::{Duration, Instant};

/// kineto's default for ROCTRACER_MAX_EVENTS-like limits: records per window.
const DEFAULT_MAX_EVENTS: u64 = 50_000_000;
static MAX_EVENTS: AtomicU64 = AtomicU64::new(DEFAULT_MAX_EVENTS);

/// One SDK buffer's records, sorted by kind; reused between buffers.
#[derive(Default)]
pub struct Batch {
    pub kernels: KernelBatch,
    pub copies: Vec<MemoryCopy>,
    pub api_calls: Vec<HipApiCall>,
    pub graph_launches: Vec<GraphLaunch>,
    /// Correlation ids whose every record has been delivered.
    pub retired: Vec<u64>,
}

/// Kernel records decoded before they are pushed. Pushed in batches this
/// long (24 KiB), a buffer's records are still in the core's caches when
/// they are staged; decoded whole, a 16 MiB buffer's went out to memory
/// and back (benches/pipeline.rs).
pub const KERNELS_PER_PUSH: usize = 512;

impl Batch {
    /// Has it decoded enough kernel records to push them now?
    pub fn kernels_full(&self) -> bool {
        self.kernels.len() >= KERNELS_PER_PUSH
    }

    fn clear(&mut self) {
        self.kernels.clear();
        self.copies.clear();
        self.api_calls.clear();
        self.graph_launches.clear();
        self.retired.clear();
    }
}

#[derive(Default)]
struct WindowBook {
    /// The open window and when it opened.
    open: Option<(WindowId, u64)>,
    closed: Vec<(WindowId, WindowSpan)>,
}

/// What finishing a window needs from the SDK, without the session
/// knowing it is the SDK.
pub trait RecordSource {
    /// The SDK's clock.
    fn now(&self) -> u64;
    /// Delivers whatever records the SDK still buffers.
    fn flush(&self);
    /// The GPUs, as far as the SDK knows them now.
    fn devices(&self) -> &Devices;
}

pub struct Collector {
    store: ActivityStore,
    attribution: Option<Attribution>,
    /// A window is open: the session-long callbacks do collection work.
    collecting: AtomicBool,
    kernel_names: RwLock<HashMap<u64, String>>,
    windows: Mutex<WindowBook>,
    sdk_dropped: AtomicU64,
    timeline: TimelineEvidence,
}

impl Collector {
    pub fn new(graph_domain: bool, attribution: Option<Method>) -> Collector {
        let config = StoreConfig {
            max_records_per_window: MAX_EVENTS.load(Ordering::Relaxed) as usize,
            ..StoreConfig::default()
        };
        Collector {
            store: ActivityStore::new(config),
            attribution: attribution.map(|method| Attribution::new(graph_domain, method)),
            collecting: AtomicBool::new(false),
            kernel_names: RwLock::new(HashMap::new()),
            windows: Mutex::new(WindowBook::default()),
            sdk_dropped: AtomicU64::new(0),
            timeline: TimelineEvidence::new(),
        }
    }

    /// The timeline's evidence (syncs, events, host functions, markers,
    /// overhead).
    pub fn timeline(&self) -> &TimelineEvidence {
        &self.timeline
    }

    /// The graph evidence, when graph attribution is on.
    pub fn attribution(&self) -> Option<&Attribution> {
        self.attribution.as_ref()
    }

    /// Whether a window is open.
    pub fn collecting(&self) -> bool {
        self.collecting.load(Ordering::Acquire)
    }

    /// The launch-stack method's tracker, which the external-correlation request
    /// answers from (the evidence method configures no such request).
    #[inline]
    pub fn tracker(&self) -> Option<&LaunchTracker> {
        self.attribution
            .as_ref()
            .filter(|a| a.tracks_launches())
            .map(Attribution::tracker)
    }

    /// The limit the store is built with (a setMaxEvents before the SDK
    /// initialised the tool).
    pub fn set_initial_max_events(max_events: u64) {
        MAX_EVENTS.store(max_events.max(1), Ordering::Relaxed);
    }

    /// kineto's setMaxEvents: the limit for windows from now on, and for
    /// records still to arrive in this one.
    pub fn set_max_events(&self, max_events: u64) {
        let max_events = max_events.max(1);
        self.store
            .set_max_records_per_window(usize::try_from(max_events).unwrap_or(usize::MAX));
    }

    pub fn push_external(&self, domain: ExternalDomain, id: u64) {
        self.store.push_external(domain, id)
    }

    pub fn pop_external(&self, domain: ExternalDomain) -> Option<u64> {
        self.store.pop_external(domain)
    }

    /// A HIP runtime call's ENTER inside a window: its records belong to
    /// the window, and its correlation id must retire before the window is
    /// finished.
    pub fn on_call_issued(&self, correlation_id: u64, now_ns: u64) {
        self.store.capture_for_api_call(correlation_id);
        self.store.issue(correlation_id, now_ns);
    }

    pub fn on_stream_of(&self, correlation_id: u64, stream: u64) {
        self.store.record_stream(correlation_id, stream);
    }

    /// A kernel's symbol, once its code object was loaded.
    pub fn kernel_symbol(&self, kernel_id: u64) -> Option<String> {
        self.kernel_names
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&kernel_id)
            .cloned()
    }

    pub fn on_kernel_symbol(&self, kernel_id: u64, name: String) {
        if let Some(attribution) = &self.attribution {
            attribution.on_device_kernel(kernel_id, &name);
        }
        self.kernel_names
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(kernel_id, name);
    }

    pub fn on_sdk_dropped(&self, count: u64) {
        if self.sdk_dropped.fetch_add(count, Ordering::Relaxed) == 0 {
            log::warn!(
                "kineto-rocm: the SDK dropped {count} records (buffer full); counted in the trace"
            );
        }
    }

    /// Takes the rest of one SDK buffer's decoded records: each kind pushed
    /// as one batch (one lock per run of a window, not per record),
    /// retirements last, so a correlation id retires only after its records
    /// are stored.
    pub fn on_records(&self, records: &mut Batch) {
        self.on_kernels(records);
        self.store.push_copies(&records.copies);
        self.store.push_api_calls(&records.api_calls);
        self.store.push_graph_launches(&records.graph_launches);
        for correlation_id in records.retired.drain(..) {
            self.store.retire(correlation_id);
        }
        records.clear();
    }

    /// Pushes the kernel records decoded so far, ahead of the rest of
    /// their buffer ([`Batch::kernels_full`]).
    pub fn on_kernels(&self, records: &mut Batch) {
        replay::hold_back_repeats(&mut records.kernels);
        self.store.push_kernel_batch(&records.kernels);
        records.kernels.clear();
    }

    pub fn count_malformed(&self) {
        self.store.count_malformed(1);
    }

    pub fn open_window(&self, start_ns: u64) -> Result<(), WindowError> {
        let mut book = self.windows.lock().unwrap_or_else(|e| e.into_inner());
        let id = self.store.open_window(start_ns)?;
        if let Some(attribution) = &self.attribution {
            attribution.window_opened(start_ns);
        }
        book.open = Some((id, start_ns));
        self.collecting.store(true, Ordering::Release);
        Ok(())
    }

    pub fn close_window(&self, stop_ns: u64) {
        let mut book = self.windows.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((id, opened_ns)) = book.open.take() {
            self.collecting.store(false, Ordering::Release);
            let span = WindowSpan {
                opened_ns,
                closed_ns: stop_ns,
                last_correlation_id: self
                    .attribution
                    .as_ref()
                    .map_or(0, Attribution::last_correlation_id),
            };
            match self.store.close_window(id, stop_ns) {
                Ok(()) => book.closed.push((id, span)),
                Err(e) => log::warn!("kineto-rocm: closing window: {e}"),
            }
        }
    }

    fn take_closed_windows(&self) -> Vec<(WindowId, WindowSpan)> {
        std::mem::take(
            &mut self
                .windows
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .closed,
        )
    }

    pub fn clear(&self) {
        let closed = self.take_closed_windows();
        for (id, _) in closed {
            let _ = self.store.finalise(id);
        }
        self.timeline.clear();
        replay::clear();
    }

    /// Waits (at most `deadline` per window) for every correlation id issued
    /// in each closed window to retire, flushing the SDK's buffer between
    /// waits, then finishes the windows.
    pub fn finish_closed_windows(
        &self,
        sdk: &impl RecordSource,
        deadline: Duration,
    ) -> Vec<FinishedWindow> {
        let closed = self.take_closed_windows();
        let mut finished = Vec::with_capacity(closed.len());
        for (id, span) in closed {
            let until = Instant::now() + deadline;
            let completeness = match self.store.wait_until_retired(id, until, || sdk.flush()) {
                Ok(completeness) => completeness,
                Err(e) => {
                    log::warn!("kineto-rocm: waiting for window {}: {e}", id.get());
                    continue;
                }
            };
            if !completeness.is_complete() {
                log::warn!(
                    "kineto-rocm: window {} finalised at its deadline with {} correlation ids still in flight; the trace says so",
                    id.get(),
                    completeness.outstanding()
                );
            }
            match self.store.finalise(id) {
                Ok(window) => {
                    crate::fault::finishing_window();
                    let names = self.kernel_names.read().unwrap_or_else(|e| e.into_inner());
                    let began_ns = sdk.now();
                    let records = window.stats.records();
                    let cx = Context {
                        attribution: self.attribution.as_ref(),
                        kernel_names: &names,
                        devices: sdk.devices(),
                        sdk_dropped: self.sdk_dropped.load(Ordering::Relaxed),
                        system_clock_offset_ns: system_clock_offset(sdk),
                        timeline: &self.timeline,
                    };
                    let mut done = activities::finish(window, &span, &cx);
                    done.overheads.push(Overhead {
                        name: crate::vocabulary::OVERHEAD_FINISH,
                        start_ns: began_ns,
                        end_ns: sdk.now().max(began_ns),
                        count: records as u64,
                    });
                    finished.push(done);
                }
                Err(e) => log::warn!("kineto-rocm: finalising window {}: {e}", id.get()),
            }
        }
        finished
    }
}

/// system_clock minus the SDK's clock: what kineto's clock adds. Read as
/// an SDK timestamp, the system clock and an SDK timestamp back to back,
/// against the middle of the two, and the tightest of a few such brackets
/// kept, so that a preemption between two reads cannot shift every
/// converted timestamp: taken a few calls apart, the reads put a trace's
/// HIP calls 5 to 8 us after the CPU ops around them (ctest linkage).
fn system_clock_offset(sdk: &impl RecordSource) -> i64 {
    let system_ns = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as i64)
    };
    (0..5)
        .map(|_| {
            let before = sdk.now();
            let system = system_ns();
            let after = sdk.now().max(before);
            let middle = before + (after - before) / 2;
            (after - before, system - middle as i64)
        })
        .min_by_key(|&(bracket, _)| bracket)
        .map_or(0, |(_, offset)| offset)
}
