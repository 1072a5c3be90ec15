//! The C ABI declared in include/kineto_rocm.h. No panic crosses it.
use crate::error::ToolError;
use crate::output::{pftrace::GzipLevel, TraceFormat};
use crate::{output, session};
use std::ffi::{c_char, c_int, CStr, CString};

const OK: c_int = 0;
const UNAVAILABLE: c_int = 1;
const SDK_ERROR: c_int = 2;
const USAGE_ERROR: c_int = 3;
const IO_ERROR: c_int = 4;
const INTERNAL_ERROR: c_int = 5;

fn status_of(result: Result<(), ToolError>) -> c_int {
    match result {
        Ok(()) => OK,
        Err(error) => {
            log::warn!("{error}");
            match error {
                ToolError::Unavailable(_) => UNAVAILABLE,
                ToolError::Sdk { .. } => SDK_ERROR,
                ToolError::Usage(_) | ToolError::Window(_) => USAGE_ERROR,
                ToolError::Io(_) => IO_ERROR,
                ToolError::Internal(_) => INTERNAL_ERROR,
            }
        }
    }
}

fn guarded(name: &str, f: impl FnOnce() -> c_int) -> c_int {
    crate::panics::catch(f).unwrap_or_else(|panic| {
        log::error!("kineto-rocm: internal error: panic in {name}: {panic}");
        INTERNAL_ERROR
    })
}

/// 1: kineto's user domain; anything else the default one.
fn is_user(domain: c_int) -> bool {
    domain == 1
}

#[no_mangle]
pub extern "C" fn kineto_rocm_start() -> c_int {
    guarded("kineto_rocm_start", || {
        status_of(session::start_collection())
    })
}

#[no_mangle]
pub extern "C" fn kineto_rocm_stop() -> c_int {
    guarded("kineto_rocm_stop", || status_of(session::stop_collection()))
}

#[no_mangle]
pub extern "C" fn kineto_rocm_request_counters(names: *const c_char) -> c_int {
    guarded("kineto_rocm_request_counters", || {
        let requested = text_of(names).and_then(|names| session::request_counters(&names));
        status_of(requested)
    })
}

#[no_mangle]
pub extern "C" fn kineto_rocm_release_counters() -> c_int {
    guarded("kineto_rocm_release_counters", || {
        session::release_counters();
        status_of(Ok(()))
    })
}

#[no_mangle]
pub extern "C" fn kineto_rocm_set_thread_trace(on: c_int) -> c_int {
    guarded("kineto_rocm_set_thread_trace", || {
        session::set_thread_trace(on != 0);
        status_of(Ok(()))
    })
}

#[no_mangle]
pub extern "C" fn kineto_rocm_write_trace(path: *const c_char) -> c_int {
    guarded("kineto_rocm_write_trace", || {
        let written = path_of(path).and_then(|path| {
            let windows = session::take_finished_windows()?;
            output::write_trace_file(&path, &windows, TraceFormat::Json).map(|_| ())
        });
        status_of(written)
    })
}

/// Writes the same windows to `count` files: `paths[i]` as `formats[i]` (0
/// kineto's JSON, 1 Perfetto at `gzip_level` 0 to 9; 0 uncompressed).
#[no_mangle]
pub extern "C" fn kineto_rocm_write_traces(
    paths: *const *const c_char,
    formats: *const c_int,
    count: c_int,
    gzip_level: c_int,
) -> c_int {
    guarded("kineto_rocm_write_traces", || {
        let count = match usize::try_from(count) {
            Ok(n) if n > 0 && !paths.is_null() && !formats.is_null() => n,
            _ => {
                return status_of(Err(ToolError::Usage(
                    "kineto_rocm_write_traces needs count > 0 paths and formats",
                )))
            }
        };
        // SAFETY: the caller passes `count` paths and `count` formats.
        let (paths, formats) = unsafe {
            (
                std::slice::from_raw_parts(paths, count),
                std::slice::from_raw_parts(formats, count),
            )
        };
        let mut outputs = Vec::with_capacity(count);
        for (&path, &format) in paths.iter().zip(formats) {
            match (path_of(path), trace_format(format, gzip_level)) {
                (Ok(path), Ok(format)) => outputs.push((path, format)),
                (Err(e), _) | (_, Err(e)) => return status_of(Err(e)),
            }
        }
        let written = session::take_finished_windows().and_then(|windows| {
            outputs.iter().try_for_each(|(path, format)| {
                output::write_trace_file(path, &windows, *format).map(|_| ())
            })
        });
        status_of(written)
    })
}

fn trace_format(format: c_int, gzip_level: c_int) -> Result<TraceFormat, ToolError> {
    match format {
        0 => Ok(TraceFormat::Json),
        1 => u32::try_from(gzip_level)
            .ok()
            .and_then(|level| GzipLevel::new(level).ok())
            .map(TraceFormat::Pftrace)
            .ok_or(ToolError::Usage("gzip_level must be 0 to 9")),
        _ => Err(ToolError::Usage(
            "a trace format must be 0 (JSON) or 1 (Perfetto)",
        )),
    }
}

fn text_of(text: *const c_char) -> Result<String, ToolError> {
    if text.is_null() {
        return Err(ToolError::Usage("asking for counters needs their names"));
    }
    // SAFETY: the caller passes a NUL-terminated string valid for the call.
    Ok(unsafe { CStr::from_ptr(text) }
        .to_string_lossy()
        .into_owned())
}

fn path_of(path: *const c_char) -> Result<std::path::PathBuf, ToolError> {
    if path.is_null() {
        return Err(ToolError::Usage("writing a trace needs a path"));
    }
    // SAFETY: the caller passes a NUL-terminated path valid for the call.
    let path = unsafe { CStr::from_ptr(path) }.to_string_lossy();
    Ok(std::path::PathBuf::from(path.into_owned()))
}

#[no_mangle]
pub extern "C" fn kineto_rocm_push_correlation_id(id: u64, domain_value: c_int) {
    let _ = crate::panics::catch(|| session::push_correlation_id(is_user(domain_value), id));
}

#[no_mangle]
pub extern "C" fn kineto_rocm_pop_correlation_id(domain_value: c_int) {
    let _ = crate::panics::catch(|| session::pop_correlation_id(is_user(domain_value)));
}

#[no_mangle]
pub extern "C" fn kineto_rocm_unavailable_reason() -> *const c_char {
    static REASON: once_cell::sync::OnceCell<CString> = once_cell::sync::OnceCell::new();
    crate::panics::catch(|| match session::unavailable_reason() {
        None => std::ptr::null(),
        Some(reason) => REASON
            .get_or_init(|| CString::new(reason.replace('\0', " ")).expect("NULs replaced"))
            .as_ptr(),
    })
    .unwrap_or(std::ptr::null())
}
