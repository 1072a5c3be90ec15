//! Kernel symbols of the loaded code objects (code_object.cpp): each kernel
//! name gets one process-wide kernel id, from 1 in first-seen order, and the
//! addresses its symbol callbacks report.
use super::os::lock;
use std::collections::HashMap;
use std::ffi::{c_char, CString};
use std::sync::{Mutex, OnceLock};

/// A registered kernel symbol.
#[derive(Clone, Copy)]
pub(crate) struct KernelSymbol {
    pub id: u64,
    /// The kernel's name; the bytes live for the process (tools may keep it).
    pub name: *const c_char,
    /// True the first time the name is seen: its symbol callbacks are due.
    pub fresh: bool,
}

type Registry = Mutex<(HashMap<String, u64>, Vec<CString>)>;

fn registry() -> &'static Registry {
    static K: OnceLock<Registry> = OnceLock::new();
    K.get_or_init(|| Mutex::new((HashMap::new(), Vec::new())))
}

/// The kernel's symbol; `fresh` tells the caller to fire its registration.
pub(crate) fn register(name: &str) -> KernelSymbol {
    let mut k = lock(registry());
    if let Some(&id) = k.0.get(name) {
        return KernelSymbol {
            id,
            name: k.1[id as usize - 1].as_ptr(),
            fresh: false,
        };
    }
    let id = k.0.len() as u64 + 1;
    k.0.insert(name.to_string(), id);
    let c = CString::new(name.replace('\0', "?")).unwrap_or_default();
    let ptr = c.as_ptr();
    // The CString's heap bytes never move or free.
    k.1.push(c);
    KernelSymbol {
        id,
        name: ptr,
        fresh: true,
    }
}

/// The kernel descriptor's device address (`kernel_object`).
pub(crate) fn kernel_object(id: u64) -> u64 {
    0x4000_0000 + id * 0x40
}

/// The host stub a program launches the kernel through: what
/// `__hipRegisterFunction` registered and hipLaunchKernel's
/// `function_address` / a kernel node's `func` carry (code_object.cpp
/// hip_register_function).
pub(crate) fn host_stub(id: u64) -> u64 {
    0x5555_0000_0000 + id * 0x80
}
