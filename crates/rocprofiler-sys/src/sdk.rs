//! The SDK's entry points, resolved at run time.
//!
//! Why at run time: the tool library must load on a machine without ROCm and
//! say why it collects nothing, instead of failing to load. Symbols are looked
//! up first in the process (`RTLD_DEFAULT`: the real SDK or the simulator,
//! already loaded), then in a library named by `KINETO_ROCM_SDK_LIBRARY`, then
//! in `librocprofiler-sdk.so.1`.
use crate::agent::rocprofiler_query_available_agents_cb_t;
use crate::buffer_records::rocprofiler_buffer_tracing_cb_t;
use crate::callback_payloads::*;
use crate::enums::*;
use crate::registration::rocprofiler_force_configure_fn;
use crate::types::*;
use std::ffi::{c_void, CStr, CString};

pub type rocprofiler_get_version_fn =
    unsafe extern "C" fn(major: *mut u32, minor: *mut u32, patch: *mut u32) -> rocprofiler_status_t;
pub type rocprofiler_is_initialized_fn =
    unsafe extern "C" fn(status: *mut i32) -> rocprofiler_status_t;
pub type rocprofiler_create_context_fn =
    unsafe extern "C" fn(context_id: *mut rocprofiler_context_id_t) -> rocprofiler_status_t;
pub type rocprofiler_context_fn =
    unsafe extern "C" fn(context_id: rocprofiler_context_id_t) -> rocprofiler_status_t;
pub type rocprofiler_context_query_fn = unsafe extern "C" fn(
    context_id: rocprofiler_context_id_t,
    status: *mut i32,
) -> rocprofiler_status_t;
pub type rocprofiler_configure_callback_tracing_service_fn =
    unsafe extern "C" fn(
        context_id: rocprofiler_context_id_t,
        kind: rocprofiler_callback_tracing_kind_t,
        operations: *const rocprofiler_tracing_operation_t,
        operations_count: usize,
        callback: rocprofiler_callback_tracing_cb_t,
        callback_args: *mut c_void,
    ) -> rocprofiler_status_t;
pub type rocprofiler_create_buffer_fn = unsafe extern "C" fn(
    context: rocprofiler_context_id_t,
    size: usize,
    watermark: usize,
    policy: rocprofiler_buffer_policy_t,
    callback: rocprofiler_buffer_tracing_cb_t,
    callback_data: *mut c_void,
    buffer_id: *mut rocprofiler_buffer_id_t,
) -> rocprofiler_status_t;
pub type rocprofiler_buffer_fn =
    unsafe extern "C" fn(buffer_id: rocprofiler_buffer_id_t) -> rocprofiler_status_t;
pub type rocprofiler_configure_buffer_tracing_service_fn =
    unsafe extern "C" fn(
        context_id: rocprofiler_context_id_t,
        kind: rocprofiler_buffer_tracing_kind_t,
        operations: *const rocprofiler_tracing_operation_t,
        operations_count: usize,
        buffer_id: rocprofiler_buffer_id_t,
    ) -> rocprofiler_status_t;
pub type rocprofiler_configure_external_correlation_id_request_service_fn =
    unsafe extern "C" fn(
        context_id: rocprofiler_context_id_t,
        kinds: *const rocprofiler_external_correlation_id_request_kind_t,
        kinds_count: usize,
        callback: rocprofiler_external_correlation_id_request_cb_t,
        callback_args: *mut c_void,
    ) -> rocprofiler_status_t;
pub type rocprofiler_query_available_agents_fn = unsafe extern "C" fn(
    version: rocprofiler_agent_version_t,
    callback: rocprofiler_query_available_agents_cb_t,
    agent_size: usize,
    user_data: *mut c_void,
) -> rocprofiler_status_t;
pub type rocprofiler_get_timestamp_fn =
    unsafe extern "C" fn(ts: *mut rocprofiler_timestamp_t) -> rocprofiler_status_t;
pub type rocprofiler_get_thread_id_fn =
    unsafe extern "C" fn(tid: *mut rocprofiler_thread_id_t) -> rocprofiler_status_t;

/// Why the SDK's entry points could not be had.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SdkUnavailable {
    /// No loaded library and no candidate library provides the symbol.
    MissingSymbol {
        symbol: &'static str,
        searched: Vec<String>,
    },
}

impl std::fmt::Display for SdkUnavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SdkUnavailable::MissingSymbol { symbol, searched } => write!(
                f,
                "rocprofiler-sdk is not available: `{symbol}` is not exported by the process or by {}",
                searched.join(", ")
            ),
        }
    }
}

impl std::error::Error for SdkUnavailable {}

macro_rules! sdk_table {
    ($($field:ident: $ty:ty = $sym:literal),* $(,)?) => {
        /// Every SDK entry point the backend calls.
        #[derive(Clone, Copy, Debug)]
        pub struct Sdk {
            $(pub $field: $ty,)*
        }

        impl Sdk {
            /// Looks every entry point up; fails naming the first one missing.
            pub fn resolve() -> Result<Sdk, SdkUnavailable> {
                let lookup = Lookup::new();
                Ok(Sdk {
                    $($field: {
                        let address = lookup.find($sym)?;
                        // SAFETY: `address` is the non-null address of the SDK's
                        // exported C function named $sym, whose signature is $ty
                        // (declared from the SDK headers).
                        unsafe { std::mem::transmute::<*mut c_void, $ty>(address) }
                    },)*
                })
            }
        }
    };
}

sdk_table! {
    get_version: rocprofiler_get_version_fn = "rocprofiler_get_version",
    is_initialized: rocprofiler_is_initialized_fn = "rocprofiler_is_initialized",
    force_configure: rocprofiler_force_configure_fn = "rocprofiler_force_configure",
    create_context: rocprofiler_create_context_fn = "rocprofiler_create_context",
    start_context: rocprofiler_context_fn = "rocprofiler_start_context",
    stop_context: rocprofiler_context_fn = "rocprofiler_stop_context",
    context_is_valid: rocprofiler_context_query_fn = "rocprofiler_context_is_valid",
    context_is_active: rocprofiler_context_query_fn = "rocprofiler_context_is_active",
    configure_callback_tracing_service: rocprofiler_configure_callback_tracing_service_fn =
        "rocprofiler_configure_callback_tracing_service",
    create_buffer: rocprofiler_create_buffer_fn = "rocprofiler_create_buffer",
    flush_buffer: rocprofiler_buffer_fn = "rocprofiler_flush_buffer",
    destroy_buffer: rocprofiler_buffer_fn = "rocprofiler_destroy_buffer",
    configure_buffer_tracing_service: rocprofiler_configure_buffer_tracing_service_fn =
        "rocprofiler_configure_buffer_tracing_service",
    configure_external_correlation_id_request_service:
        rocprofiler_configure_external_correlation_id_request_service_fn =
        "rocprofiler_configure_external_correlation_id_request_service",
    query_available_agents: rocprofiler_query_available_agents_fn = "rocprofiler_query_available_agents",
    get_timestamp: rocprofiler_get_timestamp_fn = "rocprofiler_get_timestamp",
    get_thread_id: rocprofiler_get_thread_id_fn = "rocprofiler_get_thread_id",
    iterate_agent_supported_counters: crate::rocprofiler_iterate_agent_supported_counters_fn =
        "rocprofiler_iterate_agent_supported_counters",
    query_counter_info: crate::rocprofiler_query_counter_info_fn = "rocprofiler_query_counter_info",
    create_counter_config: crate::rocprofiler_create_counter_config_fn =
        "rocprofiler_create_counter_config",
    configure_callback_dispatch_counting_service:
        crate::rocprofiler_configure_callback_dispatch_counting_service_fn =
        "rocprofiler_configure_callback_dispatch_counting_service",
    query_record_counter_id: crate::rocprofiler_query_record_counter_id_fn =
        "rocprofiler_query_record_counter_id",
    query_record_dimension_position: crate::rocprofiler_query_record_dimension_position_fn =
        "rocprofiler_query_record_dimension_position",
}

impl Sdk {
    /// The running SDK's encoded version (`10000 * major + 100 * minor + patch`).
    pub fn version(&self) -> u32 {
        let (mut major, mut minor, mut patch) = (0, 0, 0);
        // SAFETY: get_version writes three u32 through valid pointers.
        let status = unsafe { (self.get_version)(&mut major, &mut minor, &mut patch) };
        if status.is_success() {
            crate::encode_version(major, minor, patch)
        } else {
            0
        }
    }
}

/// `rocprofiler_configure_dispatch_thread_trace_service`, where the SDK
/// exports it: it is experimental, so the tool asks for it only when a
/// thread trace is wanted, instead of refusing to load without it.
pub fn dispatch_thread_trace_service(
) -> Option<crate::rocprofiler_configure_dispatch_thread_trace_service_fn> {
    let address = Lookup::new()
        .find("rocprofiler_configure_dispatch_thread_trace_service")
        .ok()?;
    // SAFETY: the SDK's exported function of that name, whose signature is
    // the declared type (experimental/thread-trace/dispatch.h).
    Some(unsafe {
        std::mem::transmute::<
            *mut c_void,
            crate::rocprofiler_configure_dispatch_thread_trace_service_fn,
        >(address)
    })
}

/// The places searched for SDK symbols, in order.
struct Lookup {
    handles: Vec<(String, *mut c_void)>,
}

impl Lookup {
    fn new() -> Lookup {
        let mut handles = vec![("the running process".to_string(), libc::RTLD_DEFAULT)];
        let mut candidates: Vec<String> = Vec::new();
        if let Ok(path) = std::env::var("KINETO_ROCM_SDK_LIBRARY") {
            if !path.is_empty() {
                candidates.push(path);
            }
        }
        candidates.push("librocprofiler-sdk.so.1".to_string());
        for name in candidates {
            let Ok(c_name) = CString::new(name.clone()) else {
                continue;
            };
            // SAFETY: dlopen with a valid NUL-terminated path; a null result
            // (library absent) is handled by skipping it.
            let handle =
                unsafe { libc::dlopen(c_name.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
            handles.push((name, handle));
        }
        Lookup { handles }
    }

    fn find(&self, symbol: &'static str) -> Result<*mut c_void, SdkUnavailable> {
        let c_symbol = CString::new(symbol).expect("symbol names have no NUL");
        for (_, handle) in &self.handles {
            if handle.is_null() && *handle != libc::RTLD_DEFAULT {
                continue;
            }
            // SAFETY: `handle` is RTLD_DEFAULT or a live dlopen handle;
            // `c_symbol` is NUL-terminated.
            let address = unsafe { libc::dlsym(*handle, c_symbol.as_ptr()) };
            if !address.is_null() {
                return Ok(address);
            }
        }
        Err(SdkUnavailable::MissingSymbol {
            symbol,
            searched: self.handles.iter().map(|(name, _)| name.clone()).collect(),
        })
    }
}

/// Reads a C string the SDK owns, lossily, or `None` for null.
///
/// # Safety
/// `ptr` is null or points to a NUL-terminated string valid for the call.
pub unsafe fn c_str_lossy(ptr: *const std::ffi::c_char) -> Option<String> {
    if ptr.is_null() {
        return None;
    }
    // SAFETY: the caller guarantees a valid NUL-terminated string.
    Some(
        unsafe { CStr::from_ptr(ptr) }
            .to_string_lossy()
            .into_owned(),
    )
}
