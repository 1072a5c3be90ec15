//! Tool discovery, as registration.cpp `find_clients` does it (SDK-1.0), in
//! order: libraries named by ROCP_TOOL_LIBRARIES are dlopened and asked for
//! `rocprofiler_configure`; then the symbol is looked up in the global scope
//! (`dlsym(RTLD_DEFAULT)`, which also finds one the executable exports, as
//! the SDK's weak declaration does) and with RTLD_NEXT; if the global scope
//! had one, every loaded library (the link map, here dl_iterate_phdr) is
//! asked for its own. Each distinct function address is one tool.
use std::ffi::{c_int, c_void, CStr, CString};

const SYMBOL: &CStr = c"rocprofiler_configure";

/// Addresses of every distinct `rocprofiler_configure` found.
pub(crate) fn discover() -> Vec<usize> {
    let mut found = Vec::new();
    if let Ok(list) = std::env::var("ROCP_TOOL_LIBRARIES") {
        for path in list.split([':', ' ', ',']).filter(|p| !p.is_empty()) {
            let Ok(c) = CString::new(path) else { continue };
            // SAFETY: dlopen with a valid NUL-terminated path; a null result
            // (library missing) is skipped. RTLD_GLOBAL so the tool's own
            // lookups of SDK symbols resolve, as in a real process.
            let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
            if h.is_null() {
                eprintln!(
                    "rocprofiler-sim: ROCP_TOOL_LIBRARIES entry {path:?} could not be loaded: {}",
                    dl_error()
                );
                continue;
            }
            push_symbol(h, &mut found);
        }
    }
    let global = lookup(libc::RTLD_DEFAULT);
    for f in [global, lookup(libc::RTLD_NEXT)].into_iter().flatten() {
        if !found.contains(&f) {
            found.push(f);
        }
    }
    if global.is_none() {
        return found;
    }
    for name in loaded_libraries() {
        let Ok(c) = CString::new(name) else { continue };
        // SAFETY: RTLD_NOLOAD only returns a handle to an already-loaded
        // library (adding a reference), never loads one.
        let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD) };
        if !h.is_null() {
            push_symbol(h, &mut found);
        }
    }
    found
}

fn lookup(handle: *mut c_void) -> Option<usize> {
    // SAFETY: `handle` is a live dlopen handle or a pseudo-handle
    // (RTLD_DEFAULT / RTLD_NEXT); SYMBOL is NUL-terminated.
    let addr = unsafe { libc::dlsym(handle, SYMBOL.as_ptr()) } as usize;
    (addr != 0).then_some(addr)
}

fn push_symbol(handle: *mut c_void, found: &mut Vec<usize>) {
    if let Some(addr) = lookup(handle) {
        if !found.contains(&addr) {
            found.push(addr);
        }
    }
}

fn dl_error() -> String {
    // SAFETY: dlerror returns null or a thread-local NUL-terminated message.
    let e = unsafe { libc::dlerror() };
    if e.is_null() {
        "unknown error".into()
    } else {
        // SAFETY: non-null dlerror result is a valid C string.
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}

/// Paths of the shared objects loaded in this process (not the executable).
fn loaded_libraries() -> Vec<String> {
    unsafe extern "C" fn each(
        info: *mut libc::dl_phdr_info,
        _size: usize,
        data: *mut c_void,
    ) -> c_int {
        // SAFETY: dl_iterate_phdr passes a valid info and our Vec as data.
        let (info, out) = unsafe { (&*info, &mut *(data as *mut Vec<String>)) };
        if !info.dlpi_name.is_null() {
            // SAFETY: dlpi_name is a NUL-terminated path owned by the loader.
            let name = unsafe { CStr::from_ptr(info.dlpi_name) }.to_string_lossy();
            if !name.is_empty() {
                out.push(name.into_owned());
            }
        }
        0
    }
    let mut out: Vec<String> = Vec::new();
    // SAFETY: the callback only reads the loader's data and pushes into `out`,
    // which outlives the call.
    unsafe { libc::dl_iterate_phdr(Some(each), &mut out as *mut _ as *mut c_void) };
    out
}
