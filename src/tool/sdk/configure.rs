//! How the SDK finds and starts this tool: `rocprofiler_configure`, then
//! `initialize` (the only place services may be configured), then `finalize`;
//! and how the session asks an SDK that has not configured us yet to do so.
use super::lifecycle::lifecycle;
use super::services;
use super::tool::{self, Tool};
use crate::error::ToolError;
use crate::tool::finish::attribution::{self, Method};
use once_cell::sync::OnceCell;
use rocprofiler_sys::*;
use std::cell::UnsafeCell;
use std::ffi::{c_char, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};

static CONFIGURED: AtomicBool = AtomicBool::new(false);
static UNAVAILABLE: OnceCell<String> = OnceCell::new();

/// What `rocprofiler_configure` hands the SDK, which reads it until finalize.
struct ConfigureResult(UnsafeCell<rocprofiler_tool_configure_result_t>);

// SAFETY: written once, at compile time; neither the SDK nor the tool ever
// writes it afterwards (the SDK only reads the function pointers).
unsafe impl Sync for ConfigureResult {}

static CONFIGURE_RESULT: ConfigureResult =
    ConfigureResult(UnsafeCell::new(rocprofiler_tool_configure_result_t {
        size: std::mem::size_of::<rocprofiler_tool_configure_result_t>(),
        initialize: Some(tool_initialize),
        finalize: Some(tool_finalize),
        tool_data: std::ptr::null_mut(),
    }));

/// The SDK calls this when it finds the symbol in a loaded library, in
/// `ROCP_TOOL_LIBRARIES`, or through `rocprofiler_force_configure`.
///
/// # Safety
/// `client_id` is null or the SDK's client id, valid for the call.
#[no_mangle]
pub unsafe extern "C" fn rocprofiler_configure(
    version: u32,
    _runtime_version: *const c_char,
    priority: u32,
    client_id: *mut rocprofiler_client_id_t,
) -> *mut rocprofiler_tool_configure_result_t {
    let outcome = catch_unwind(|| {
        crate::logging::init();
        if CONFIGURED.swap(true, Ordering::AcqRel) {
            log::info!("kineto-rocm: already configured; declining a second registration");
            return std::ptr::null_mut();
        }
        if !client_id.is_null() {
            // SAFETY: the SDK passes a valid client id for the duration of the call.
            unsafe { (*client_id).name = c"kineto-rocm".as_ptr() };
        }
        log::debug!("kineto-rocm: configure called by SDK {version} at priority {priority}");
        CONFIGURE_RESULT.0.get()
    });
    outcome.unwrap_or_else(|_| {
        log::error!("kineto-rocm: panic in rocprofiler_configure; the tool stays off");
        std::ptr::null_mut()
    })
}

unsafe extern "C" fn tool_initialize(
    _finalize: rocprofiler_client_finalize_t,
    _tool_data: *mut c_void,
) -> i32 {
    let outcome = catch_unwind(AssertUnwindSafe(|| match initialise() {
        Ok(()) => {
            if let Some(observer) = lifecycle() {
                observer.initialised();
            }
            0
        }
        Err(why) => {
            log::error!("{why}; not collecting");
            -1
        }
    }));
    outcome.unwrap_or_else(|_| {
        log::error!("kineto-rocm: panic while initialising; not collecting");
        -1
    })
}

unsafe extern "C" fn tool_finalize(_tool_data: *mut c_void) {
    let _ = catch_unwind(|| {
        if let Some(observer) = lifecycle() {
            observer.finalising();
        }
        if let Some(tool) = tool::get() {
            tool.on_sdk_finalize();
        }
    });
}

/// The SDK's `initialize`: the only time services can be configured.
fn initialise() -> Result<(), ToolError> {
    let sdk = Sdk::resolve().map_err(|why| ToolError::Unavailable(why.to_string()))?;
    let graph_domain = sdk.version() >= HIP_GRAPH_DOMAIN_VERSION;
    let attribution = attribution::enabled_from_env().then(Method::from_env);
    let ranges = lifecycle().is_some_and(|observer| observer.follows_ranges());
    let services = services::configure_all(&sdk, graph_domain, attribution, ranges)?;
    Tool::install(sdk, services, graph_domain, attribution)
}

/// Makes sure the SDK has configured us, asking it to if it has not.
///
/// An SDK that initialised without calling our `rocprofiler_configure` (the
/// library was loaded after the runtime's first use) will never call it:
/// that is reported as unavailable, with what to do, instead of waiting for
/// a configure that cannot come. `Ok(None)`: the SDK is initialising and
/// will configure us.
pub fn ensure_configured() -> Result<Option<&'static Tool>, ToolError> {
    if let Some(tool) = tool::get() {
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
        return Ok(tool::get());
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
    let status = unsafe { (sdk.force_configure)(Some(rocprofiler_configure)) };
    if status == rocprofiler_status_t::ERROR_CONFIGURATION_LOCKED {
        // The SDK initialised between the two calls, without us.
        return Err(unavailable(SDK_INITIALISED_WITHOUT_US.to_string()));
    }
    tool::check("rocprofiler_force_configure", status)?;
    Ok(tool::get())
}

const SDK_INITIALISED_WITHOUT_US: &str = "unavailable: the SDK initialised before kineto-rocm was loaded; load it before the first HIP call or list it in ROCP_TOOL_LIBRARIES";

/// Records why nothing can be collected in this process; the caller
/// reports it (one line, from the C ABI or the C++ face).
fn unavailable(why: String) -> ToolError {
    let _ = UNAVAILABLE.set(why.clone());
    ToolError::Unavailable(why)
}

/// Why nothing can be collected, once that is known.
pub fn known_unavailable() -> Option<&'static str> {
    UNAVAILABLE.get().map(String::as_str)
}
