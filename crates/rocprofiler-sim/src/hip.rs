//! The HIP runtime calls kineto's own ROCm backend makes outside the SDK
//! (DeviceUtil.cpp, RocmActivityProfiler.cpp), so a kineto ROCm build links
//! and runs against this library in place of libamdhip64.so. Return values
//! are hipError_t: 0 = hipSuccess.
#![allow(non_snake_case)]
use std::ffi::{c_char, c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};

const HIP_SUCCESS: c_int = 0;
const HIP_ERROR_INVALID_VALUE: c_int = 1;
const HIP_ERROR_NOT_SUPPORTED: c_int = 801;
const HIP_ERROR_UNKNOWN: c_int = 999;

/// The HIP version the simulator reports (7.0.0, HIP's major * 10^7 + minor * 10^5 + patch).
const SIM_HIP_VERSION: c_int = 70_000_000;

/// hipDeviceSynchronize waits at most this long for in-flight work.
const SYNC_TIMEOUT_NS: u64 = 30_000_000_000;

fn write(out: *mut c_int, value: impl FnOnce() -> c_int) -> c_int {
    if out.is_null() {
        return HIP_ERROR_INVALID_VALUE;
    }
    catch_unwind(AssertUnwindSafe(value))
        .map(|v| {
            // SAFETY: non-null, the caller's int.
            unsafe { *out = v };
            HIP_SUCCESS
        })
        .unwrap_or(HIP_ERROR_UNKNOWN)
}

/// The simulated GPUs (the agent list the SDK reports, fixed now if no
/// workload fixed it yet).
#[no_mangle]
pub extern "C" fn hipGetDeviceCount(count: *mut c_int) -> c_int {
    write(count, || crate::sdk::agents::agents().gpus() as c_int)
}

#[no_mangle]
pub extern "C" fn hipRuntimeGetVersion(version: *mut c_int) -> c_int {
    write(version, || SIM_HIP_VERSION)
}

#[no_mangle]
pub extern "C" fn hipDriverGetVersion(version: *mut c_int) -> c_int {
    write(version, || SIM_HIP_VERSION)
}

/// Every completion delivered (what kineto calls before flushing).
#[no_mangle]
pub extern "C" fn hipDeviceSynchronize() -> c_int {
    match catch_unwind(|| crate::sdk::registration::wait_idle(SYNC_TIMEOUT_NS)) {
        Ok(true) => HIP_SUCCESS,
        _ => HIP_ERROR_UNKNOWN,
    }
}

/// Device properties are not modelled: kineto then writes none (its own
/// fallback when the call fails). `prop` is not touched.
#[no_mangle]
pub extern "C" fn hipGetDevicePropertiesR0600(_prop: *mut c_void, _device: c_int) -> c_int {
    HIP_ERROR_NOT_SUPPORTED
}

#[no_mangle]
pub extern "C" fn hipGetErrorString(error: c_int) -> *const c_char {
    match error {
        HIP_SUCCESS => c"hipSuccess",
        HIP_ERROR_INVALID_VALUE => c"hipErrorInvalidValue",
        HIP_ERROR_NOT_SUPPORTED => c"hipErrorNotSupported",
        _ => c"hipErrorUnknown",
    }
    .as_ptr()
}
