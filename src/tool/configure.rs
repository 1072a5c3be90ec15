//! How the SDK finds and starts this tool: `rocprofiler_configure`, then
//! `initialize` (the only place services may be configured), then `finalize`.
use super::services;
use super::state::{self, Tool};
use rocprofiler_sys::*;
use std::cell::UnsafeCell;
use std::ffi::{c_char, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};

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
        if state::already_configured() {
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
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        match Tool::build(services::configure_all) {
            Ok(()) => 0,
            Err(why) => {
                log::error!("kineto-rocm: not collecting: {why}");
                -1
            }
        }
    }));
    outcome.unwrap_or_else(|_| {
        log::error!("kineto-rocm: panic while initialising; not collecting");
        -1
    })
}

unsafe extern "C" fn tool_finalize(_tool_data: *mut c_void) {
    let _ = catch_unwind(|| {
        if let Some(tool) = state::tool() {
            tool.on_sdk_finalize();
        }
    });
}
