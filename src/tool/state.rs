//! The process-wide tool: built once inside the SDK's `initialize`, read by
//! every callback afterwards.
//!
//! Why a global: the SDK's callbacks carry no tool pointer we could trust
//! across teardown, and `rocprofiler_configure` happens once per process.
//! Everything mutable lives in the collector behind types that make data
//! races impossible (atomics, mutexes, the store's own synchronisation).
use super::attribution::Method;
use super::collector::Collector;
use super::malformed::MalformedWarnings;
use super::services::Services;
use crate::api::{CorrelationDomain, ToolError};
use crate::bridge::ffi::WindowActivities;
use graph_attribution::LaunchTracker;
use once_cell::sync::OnceCell;
use rocprofiler_sys::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

pub struct Tool {
    pub sdk: Sdk,
    pub sdk_version: u32,
    pub services: Services,
    pub collector: Collector,
    pub malformed: MalformedWarnings,
    collecting: Mutex<bool>,
}

static TOOL: OnceCell<Tool> = OnceCell::new();
/// A start asked for before the SDK initialised us: honoured in `build`.
static START_PENDING: AtomicBool = AtomicBool::new(false);
static CONFIGURED: AtomicBool = AtomicBool::new(false);
static UNAVAILABLE: OnceCell<String> = OnceCell::new();

pub fn tool() -> Option<&'static Tool> {
    TOOL.get()
}

/// The launch tracker, when graph attribution is on: the hot path's only read.
#[inline]
pub fn tracker() -> Option<&'static LaunchTracker> {
    TOOL.get()?.collector.tracker()
}

pub fn already_configured() -> bool {
    CONFIGURED.swap(true, Ordering::AcqRel)
}

/// How long finishing a window may wait for in-flight records;
/// `KINETO_ROCM_FLUSH_DEADLINE_MS` overrides.
pub fn finish_deadline() -> Duration {
    let ms = std::env::var("KINETO_ROCM_FLUSH_DEADLINE_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5_000);
    Duration::from_millis(ms)
}

impl Tool {
    /// Called from the SDK's `initialize`: the only time services can be configured.
    pub fn build(
        configure: fn(&Sdk, bool, Option<Method>) -> Result<Services, String>,
    ) -> Result<(), String> {
        let sdk = Sdk::resolve().map_err(|e| e.to_string())?;
        let sdk_version = sdk.version();
        let graph_domain = sdk_version >= HIP_GRAPH_DOMAIN_VERSION;
        let attribution = super::collector::attribution_enabled_from_env().then(Method::from_env);
        let services = configure(&sdk, graph_domain, attribution)?;
        let collector = Collector::new(graph_domain, attribution);
        if let Some(session) = services.session {
            // SAFETY: the context came from create_context.
            let status = unsafe { (sdk.start_context)(session) };
            if !status.is_success() {
                return Err(format!(
                    "rocprofiler_start_context (session callbacks) returned status {}",
                    status.0
                ));
            }
        }
        log::info!(
            "kineto-rocm: configured on rocprofiler-sdk {sdk_version}; graph attribution {} ({})",
            match attribution {
                Some(Method::Evidence) => "on",
                Some(Method::Seed) => "on (seed method, unverified)",
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
            sdk_version,
            services,
            collector,
            malformed: MalformedWarnings::default(),
            collecting: Mutex::new(false),
        };
        TOOL.set(tool)
            .map_err(|_| "initialised twice".to_string())?;
        if START_PENDING.swap(false, Ordering::AcqRel) {
            tool_start(TOOL.get().expect("just set"))?;
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

fn tool_start(tool: &Tool) -> Result<(), String> {
    let mut collecting = tool.collecting.lock().unwrap_or_else(|e| e.into_inner());
    if *collecting {
        return Ok(());
    }
    tool.collector.open_window(tool.now())?;
    // SAFETY: the context came from create_context.
    let status = unsafe { (tool.sdk.start_context)(tool.services.context) };
    if !status.is_success() {
        return Err(format!(
            "rocprofiler_start_context returned status {}",
            status.0
        ));
    }
    *collecting = true;
    Ok(())
}

/// Makes sure the SDK has configured us, asking it to if it has not.
///
/// An SDK that initialised without calling our `rocprofiler_configure` (the
/// library was loaded after the runtime's first use) will never call it:
/// that is reported as unavailable, with what to do, instead of waiting for
/// a configure that cannot come.
pub(crate) fn ensure_configured() -> Result<Option<&'static Tool>, ToolError> {
    if let Some(tool) = TOOL.get() {
        return Ok(Some(tool));
    }
    if let Some(why) = UNAVAILABLE.get() {
        return Err(ToolError::Unavailable(why.clone()));
    }
    crate::logging::init();
    let sdk = match Sdk::resolve() {
        Ok(sdk) => sdk,
        Err(why) => return Err(unavailable(why.to_string())),
    };
    let mut initialized = 0;
    // SAFETY: is_initialized writes one int through a valid pointer.
    unsafe { (sdk.is_initialized)(&mut initialized) };
    if CONFIGURED.load(Ordering::Acquire) {
        return Ok(TOOL.get());
    }
    // 1: initialised (every tool it will ever configure has been); -1: in
    // progress, our configure may still come.
    if initialized > 0 {
        return Err(unavailable(SDK_INITIALISED_WITHOUT_US.to_string()));
    }
    if initialized < 0 {
        return Ok(None);
    }
    // SAFETY: registers our own exported configure function.
    let status = unsafe { (sdk.force_configure)(Some(super::configure::rocprofiler_configure)) };
    if status == rocprofiler_status_t::ERROR_CONFIGURATION_LOCKED {
        // The SDK initialised between the two calls, without us.
        return Err(unavailable(SDK_INITIALISED_WITHOUT_US.to_string()));
    }
    if !status.is_success() {
        return Err(ToolError::Sdk {
            call: "rocprofiler_force_configure",
            status: status.0,
        });
    }
    Ok(TOOL.get())
}

const SDK_INITIALISED_WITHOUT_US: &str = "unavailable: the SDK initialised before kineto-rocm was loaded; load it before the first HIP call or list it in ROCP_TOOL_LIBRARIES";

/// Records why nothing can be collected in this process; the caller
/// reports it (one line, from the C ABI or the C++ face).
fn unavailable(why: String) -> ToolError {
    let _ = UNAVAILABLE.set(why.clone());
    ToolError::Unavailable(why)
}

pub fn start_collection() -> Result<(), ToolError> {
    match ensure_configured()? {
        Some(tool) => tool_start(tool).map_err(ToolError::Unavailable),
        None => {
            // The SDK will initialise us at the runtime's first use.
            START_PENDING.store(true, Ordering::Release);
            Ok(())
        }
    }
}

pub fn stop_collection() -> Result<(), ToolError> {
    let Some(tool) = TOOL.get() else {
        if START_PENDING.swap(false, Ordering::AcqRel) {
            return Ok(());
        }
        return Err(unavailable_or_usage("stop without a start"));
    };
    let mut collecting = tool.collecting.lock().unwrap_or_else(|e| e.into_inner());
    if !*collecting {
        return Err(ToolError::Usage("stop without a start"));
    }
    // SAFETY: the context came from create_context.
    let status = unsafe { (tool.sdk.stop_context)(tool.services.context) };
    *collecting = false;
    tool.collector.close_window(tool.now());
    if status.is_success() {
        Ok(())
    } else {
        Err(ToolError::Sdk {
            call: "rocprofiler_stop_context",
            status: status.0,
        })
    }
}

fn unavailable_or_usage(what: &'static str) -> ToolError {
    match UNAVAILABLE.get() {
        Some(why) => ToolError::Unavailable(why.clone()),
        None => ToolError::Usage(what),
    }
}

pub fn take_finished_windows() -> Result<Vec<WindowActivities>, ToolError> {
    let Some(tool) = TOOL.get() else {
        return match UNAVAILABLE.get() {
            Some(why) => Err(ToolError::Unavailable(why.clone())),
            None => Ok(Vec::new()),
        };
    };
    Ok(tool
        .collector
        .finish_closed_windows(tool, finish_deadline()))
}

pub fn push_correlation_id(domain: CorrelationDomain, id: u64) {
    if let Some(tool) = TOOL.get() {
        tool.collector.push_external(domain, id)
    }
}

pub fn pop_correlation_id(domain: CorrelationDomain) -> Option<u64> {
    TOOL.get()?.collector.pop_external(domain)
}

/// Before the SDK has initialised the tool the limit waits for the store to
/// be built; afterwards it applies to the live store.
pub fn set_max_events(max_events: u64) {
    match TOOL.get() {
        Some(tool) => tool.collector.set_max_events(max_events),
        None => Collector::set_initial_max_events(max_events),
    }
}

pub fn unavailable_reason() -> Option<String> {
    if TOOL.get().is_some() {
        return None;
    }
    if let Some(why) = UNAVAILABLE.get() {
        return Some(why.clone());
    }
    match Sdk::resolve() {
        Ok(_) => None,
        Err(why) => Some(why.to_string()),
    }
}

pub fn clear_activities() {
    if let Some(tool) = TOOL.get() {
        tool.collector.clear();
    }
}
