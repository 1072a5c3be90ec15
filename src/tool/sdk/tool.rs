//! The process-wide tool: the SDK's entry points and contexts, and the
//! session they feed. Built once inside the SDK's `initialize`, read by every
//! callback afterwards.
//!
//! Why a global: the SDK's callbacks carry no tool pointer we could trust
//! across teardown, and `rocprofiler_configure` happens once per process.
//! Everything mutable lives in the collector behind types that make data
//! races impossible (atomics, mutexes, the store's own synchronisation).
use super::agents;
use super::malformed::MalformedWarnings;
use crate::error::ToolError;
use crate::tool::finish::attribution::Method;
use crate::tool::finish::devices::Devices;
use crate::tool::session::collector::{Collector, RecordSource};
use crate::window::FinishedWindow;
use graph_attribution::LaunchTracker;
use once_cell::sync::OnceCell;
use rocprofiler_sys::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// What the tool asked the SDK for (tool/sdk/services.rs).
pub struct Services {
    /// Started and stopped with each window.
    pub context: rocprofiler_context_id_t,
    /// Kernel mode's thread-trace pass; started and stopped with `context`.
    pub thread_trace: Option<rocprofiler_context_id_t>,
    /// Active for the whole session; `None` when the callbacks live in
    /// `context`.
    pub session: Option<rocprofiler_context_id_t>,
    /// ROCTX ranges, for the recorder; active for the whole session.
    pub markers: Option<rocprofiler_context_id_t>,
    pub buffer: rocprofiler_buffer_id_t,
}

pub struct Tool {
    sdk: Sdk,
    services: Services,
    pub collector: Collector,
    pub malformed: MalformedWarnings,
    collecting: Mutex<bool>,
    /// Queried on first use after the runtime has loaded.
    devices: OnceCell<Devices>,
}

static TOOL: OnceCell<Tool> = OnceCell::new();
/// A start asked for before the SDK initialised us: honoured in `install`.
static START_PENDING: AtomicBool = AtomicBool::new(false);

pub fn get() -> Option<&'static Tool> {
    TOOL.get()
}

/// The launch tracker, when the launch-stack method is on: the hot path's only read.
#[inline]
pub fn tracker() -> Option<&'static LaunchTracker> {
    TOOL.get()?.collector.tracker()
}

/// The SDK will initialise us at the runtime's first use: start then.
pub fn start_when_initialised() {
    START_PENDING.store(true, Ordering::Release);
}

/// Withdraws a start asked for before the SDK initialised us; false when
/// there was none.
pub fn cancel_pending_start() -> bool {
    START_PENDING.swap(false, Ordering::AcqRel)
}

/// How long finishing a window may wait for in-flight records;
/// `KINETO_ROCM_FLUSH_DEADLINE_MS` overrides.
fn finish_deadline() -> Duration {
    let ms = std::env::var("KINETO_ROCM_FLUSH_DEADLINE_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5_000);
    Duration::from_millis(ms)
}

/// Turns an SDK status into a result naming the call.
pub fn check(call: &'static str, status: rocprofiler_status_t) -> Result<(), ToolError> {
    if status.is_success() {
        Ok(())
    } else {
        Err(ToolError::Sdk {
            call,
            status: status.0,
        })
    }
}

impl Tool {
    /// Called from the SDK's `initialize`, once the services are configured:
    /// starts the session-long context, makes the tool reachable from the
    /// callbacks, and honours a start asked for before.
    pub fn install(
        sdk: Sdk,
        services: Services,
        graph_domain: bool,
        attribution: Option<Method>,
    ) -> Result<(), ToolError> {
        for context in [services.session, services.markers].into_iter().flatten() {
            // SAFETY: the context came from create_context.
            check("rocprofiler_start_context", unsafe {
                (sdk.start_context)(context)
            })?;
        }
        log::info!(
            "kineto-rocm: configured on rocprofiler-sdk {}; graph attribution {} ({})",
            sdk.version(),
            match attribution {
                Some(Method::Evidence) => "on",
                Some(Method::LaunchStack) => "on (launch-stack method, unverified)",
                None => "off",
            },
            if graph_domain {
                "HIP_GRAPH domain"
            } else {
                "HIP runtime API tracing"
            }
        );
        let tool = Tool {
            sdk,
            services,
            collector: Collector::new(graph_domain, attribution),
            malformed: MalformedWarnings::default(),
            collecting: Mutex::new(false),
            devices: OnceCell::new(),
        };
        TOOL.set(tool)
            .map_err(|_| ToolError::Internal("the SDK initialised the tool twice".into()))?;
        if cancel_pending_start() {
            TOOL.get().expect("just set").start()?;
        }
        Ok(())
    }

    pub fn now(&self) -> u64 {
        let mut ts = 0;
        // SAFETY: get_timestamp writes one u64 through a valid pointer.
        unsafe { (self.sdk.get_timestamp)(&mut ts) };
        ts
    }

    pub fn flush(&self) {
        // SAFETY: the buffer id came from create_buffer.
        unsafe { (self.sdk.flush_buffer)(self.services.buffer) };
    }

    /// Opens a window and starts the collection context.
    pub fn start(&self) -> Result<(), ToolError> {
        let mut collecting = self.collecting.lock().unwrap_or_else(|e| e.into_inner());
        if *collecting {
            return Ok(());
        }
        self.collector.open_window(self.now())?;
        // SAFETY: the context came from create_context.
        check("rocprofiler_start_context", unsafe {
            (self.sdk.start_context)(self.services.context)
        })?;
        if let Some(trace) = self.services.thread_trace {
            // SAFETY: the context came from create_context.
            check("rocprofiler_start_context", unsafe {
                (self.sdk.start_context)(trace)
            })?;
        }
        *collecting = true;
        Ok(())
    }

    /// Stops the collection context and closes the window; records in
    /// flight still land in it.
    pub fn stop(&self) -> Result<(), ToolError> {
        let mut collecting = self.collecting.lock().unwrap_or_else(|e| e.into_inner());
        if !*collecting {
            return Err(ToolError::Usage("stop without a start"));
        }
        if let Some(trace) = self.services.thread_trace {
            // SAFETY: the context came from create_context.
            let _ = unsafe { (self.sdk.stop_context)(trace) };
        }
        // SAFETY: the context came from create_context.
        let status = unsafe { (self.sdk.stop_context)(self.services.context) };
        *collecting = false;
        self.collector.close_window(self.now());
        check("rocprofiler_stop_context", status)
    }

    /// Waits (bounded) for the stopped windows' records, then finishes them.
    pub fn take_finished_windows(&self) -> Vec<FinishedWindow> {
        self.collector
            .finish_closed_windows(self, finish_deadline())
    }

    /// The SDK is shutting down: stop, and keep what was delivered.
    pub fn on_sdk_finalize(&self) {
        let mut collecting = self.collecting.lock().unwrap_or_else(|e| e.into_inner());
        if *collecting {
            *collecting = false;
            self.flush();
            self.collector.close_window(self.now());
        }
    }
}

impl RecordSource for Tool {
    fn now(&self) -> u64 {
        Tool::now(self)
    }

    fn flush(&self) {
        Tool::flush(self)
    }

    /// The SDK knows its agents once the runtime has loaded, not before.
    fn devices(&self) -> &Devices {
        if let Some(devices) = self.devices.get() {
            return devices;
        }
        match agents::query(&self.sdk) {
            Some(devices) => self.devices.get_or_init(|| devices),
            None => {
                static NONE: once_cell::sync::Lazy<Devices> =
                    once_cell::sync::Lazy::new(Devices::default);
                &NONE
            }
        }
    }
}
