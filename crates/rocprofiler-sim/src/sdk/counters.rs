//! The counter catalog and counter configurations: what a tool discovers
//! before it asks for counters (counters.h, counter_config.h).
//!
//! The catalog is a subset of gfx942's counters in the SDK's
//! `share/rocprofiler-sdk/counter_defs.yaml`: names, descriptions, blocks
//! and the one derived counter's expression as written there. Modelled from
//! the SDK's sources:
//! - `rocprofiler_iterate_agent_supported_counters` (counters.cpp): an
//!   unknown agent is ERROR_AGENT_NOT_FOUND; an agent whose architecture has
//!   no counter definitions (the CPU) is ERROR_AGENT_ARCH_NOT_SUPPORTED;
//!   otherwise the callback gets every id at once and its status is
//!   returned.
//! - `rocprofiler_query_counter_info` (counters.cpp): VERSION_0 fills the
//!   id, name, description, block, expression and the is_constant /
//!   is_derived bits; an unknown id is ERROR_COUNTER_NOT_FOUND; a version
//!   that is neither 0 nor 1 is ERROR_INCOMPATIBLE_ABI. VERSION_1 adds the
//!   counter's dimensions, which the simulator does not model yet: it
//!   answers ERROR_NOT_IMPLEMENTED rather than a made-up layout.
//! - `rocprofiler_create_counter_config` (counter_config.cpp): an unknown
//!   agent is ERROR_AGENT_NOT_FOUND, an unknown counter
//!   ERROR_COUNTER_NOT_FOUND, a counter the agent cannot collect
//!   ERROR_METRIC_NOT_VALID_FOR_AGENT; duplicates are added once; a non-zero
//!   `config_id` that names a config contributes its counters after the
//!   listed ones; ids count up from 1 (controller.cpp `add_profile`).
//! - `rocprofiler_destroy_counter_config` (counter_config.cpp) forgets the
//!   config and always succeeds.
use super::agents::agents;
use super::exports::guard;
use rocprofiler_sys as sys;
use std::collections::HashMap;
use std::ffi::{c_void, CStr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

type Status = sys::rocprofiler_status_t;

/// One counter of the catalog.
struct Counter {
    name: &'static CStr,
    description: &'static CStr,
    /// Empty for a derived counter.
    block: &'static CStr,
    /// Empty for a hardware counter.
    expression: &'static CStr,
}

/// gfx942's definitions of these counters in counter_defs.yaml; a counter's
/// id is its index here.
const CATALOG: [Counter; 6] = [
    Counter {
        name: c"SQ_WAVES",
        description: c"Count number of waves sent to distributed sequencers (SQs). This value represents the number of waves that are sent to each SQ. This only counts new waves sent since the start of collection (for dispatch profiling this is the timeframe of kernel execution, for agent profiling it is the timeframe between start_context and read counter data). A sum of all SQ_WAVES values will give the total number of waves started by the application during the collection timeframe. Returns one value per-SE (aggregates of SIMD values).",
        block: c"SQ",
        expression: c"",
    },
    Counter {
        name: c"SQ_INSTS_VALU",
        description: c"The number of VALU (Vector ALU) instructions issued. The value is returned per-SE (aggregate of values in SIMDs in the SE). See AMD ISAs for more information on VALU instructions.",
        block: c"SQ",
        expression: c"",
    },
    Counter {
        name: c"GRBM_COUNT",
        description: c"Tie High - Count Number of Clocks",
        block: c"GRBM",
        expression: c"",
    },
    Counter {
        name: c"GRBM_GUI_ACTIVE",
        description: c"The GUI is Active",
        block: c"GRBM",
        expression: c"",
    },
    Counter {
        name: c"TCC_HIT",
        description: c"Number of cache hits.",
        block: c"TCC",
        expression: c"",
    },
    Counter {
        name: c"GPU_UTIL",
        description: c"Percentage of the time that GUI is active",
        block: c"",
        expression: c"100*reduce(GRBM_GUI_ACTIVE,max)/reduce(GRBM_COUNT,max)",
    },
];

/// The architecture the catalog's definitions are for.
const ARCH: &CStr = c"gfx942";

fn counter(id: u64) -> Option<&'static Counter> {
    CATALOG.get(usize::try_from(id).ok()?)
}

/// `Ok(true)`: a GPU agent of the catalog's architecture; `Ok(false)`: an
/// agent without counter definitions; `Err`: no such agent.
fn agent_has_counters(agent: sys::rocprofiler_agent_id_t) -> Result<bool, Status> {
    let found = agents()
        .list
        .iter()
        .find(|a| a.id.handle == agent.handle)
        .ok_or(Status::ERROR_AGENT_NOT_FOUND)?;
    // SAFETY: agent names are leaked, NUL-terminated strings (agents.rs).
    let name = unsafe { CStr::from_ptr(found.name) };
    Ok(found.type_ == sys::rocprofiler_agent_type_t::GPU && name == ARCH)
}

/// A counter configuration: the agent it was made for and its counters.
#[derive(Clone)]
pub(crate) struct Config {
    pub agent: u64,
    pub counters: Vec<u64>,
}

/// Each counter configuration, by config id.
fn configs() -> &'static Mutex<HashMap<u64, Config>> {
    static CONFIGS: OnceLock<Mutex<HashMap<u64, Config>>> = OnceLock::new();
    CONFIGS.get_or_init(Default::default)
}

/// The configuration named by a config id, if it exists.
pub(crate) fn config(id: u64) -> Option<Config> {
    configs()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&id)
        .cloned()
}

/// A counter's name, for the ground truth.
pub(crate) fn counter_name(id: u64) -> Option<&'static str> {
    counter(id).and_then(|c| c.name.to_str().ok())
}

/// What a dispatch counted, by counter id: deterministic functions of the
/// kernel, its grid and its duration, so tests can check exact numbers.
/// - SQ_WAVES: 64-wide waves of every work-group (gfx942's wave size);
/// - SQ_INSTS_VALU: waves times a per-kernel instruction count
///   (16 + kernel id mod 48);
/// - GRBM_COUNT, GRBM_GUI_ACTIVE: GPU clocks over the dispatch at
///   gfx942's 2.1 GHz peak (the GUI is busy for all of a lone dispatch);
/// - TCC_HIT: 4 hits per wave;
/// - GPU_UTIL: its expression over the two GRBM values (100).
pub(crate) fn counter_value(
    id: u64,
    kernel_id: u64,
    grid: [u32; 3],
    workgroup: [u32; 3],
    duration_ns: u64,
) -> Option<f64> {
    let groups: u64 = (0..3)
        .map(|i| u64::from(grid[i]).div_ceil(u64::from(workgroup[i].max(1))))
        .product();
    let group_size: u64 = workgroup.iter().map(|&w| u64::from(w.max(1))).product();
    let waves = groups * group_size.div_ceil(64);
    let clocks = duration_ns * 21 / 10;
    let value = match counter(id)?.name.to_bytes() {
        b"SQ_WAVES" => waves as f64,
        b"SQ_INSTS_VALU" => (waves * (16 + kernel_id % 48)) as f64,
        b"GRBM_COUNT" | b"GRBM_GUI_ACTIVE" => clocks as f64,
        b"TCC_HIT" => (waves * 4) as f64,
        b"GPU_UTIL" if clocks == 0 => 0.0,
        b"GPU_UTIL" => 100.0,
        _ => return None,
    };
    Some(value)
}

static NEXT_CONFIG: AtomicU64 = AtomicU64::new(1);

#[no_mangle]
pub extern "C" fn rocprofiler_iterate_agent_supported_counters(
    agent_id: sys::rocprofiler_agent_id_t,
    cb: sys::rocprofiler_available_counters_cb_t,
    user_data: *mut c_void,
) -> Status {
    guard(|| {
        let Some(cb) = cb else {
            return Status::ERROR_INVALID_ARGUMENT;
        };
        match agent_has_counters(agent_id) {
            Err(status) => status,
            Ok(false) => Status::ERROR_AGENT_ARCH_NOT_SUPPORTED,
            Ok(true) => {
                let mut ids: Vec<sys::rocprofiler_counter_id_t> = (0..CATALOG.len() as u64)
                    .map(|handle| sys::rocprofiler_counter_id_t { handle })
                    .collect();
                // SAFETY: the tool's callback, given the ids for this call.
                unsafe { cb(agent_id, ids.as_mut_ptr(), ids.len(), user_data) }
            }
        }
    })
}

#[no_mangle]
pub extern "C" fn rocprofiler_query_counter_info(
    counter_id: sys::rocprofiler_counter_id_t,
    version: sys::rocprofiler_counter_info_version_id_t,
    info: *mut c_void,
) -> Status {
    guard(|| {
        if info.is_null() {
            return Status::ERROR_INVALID_ARGUMENT;
        }
        match version {
            sys::rocprofiler_counter_info_version_id_t::V0 => {}
            sys::rocprofiler_counter_info_version_id_t::V1 => return Status::ERROR_NOT_IMPLEMENTED,
            _ => return Status::ERROR_INCOMPATIBLE_ABI,
        }
        let Some(c) = counter(counter_id.handle) else {
            return Status::ERROR_COUNTER_NOT_FOUND;
        };
        let derived = if c.expression.is_empty() {
            0
        } else {
            sys::rocprofiler_counter_info_v0_t::IS_DERIVED
        };
        // SAFETY: for VERSION_0 the caller passes a rocprofiler_counter_info_v0_t.
        unsafe {
            *(info as *mut sys::rocprofiler_counter_info_v0_t) =
                sys::rocprofiler_counter_info_v0_t {
                    id: counter_id,
                    name: c.name.as_ptr(),
                    description: c.description.as_ptr(),
                    block: c.block.as_ptr(),
                    expression: c.expression.as_ptr(),
                    flags: derived,
                };
        }
        Status::SUCCESS
    })
}

#[no_mangle]
pub extern "C" fn rocprofiler_create_counter_config(
    agent_id: sys::rocprofiler_agent_id_t,
    counters_list: *mut sys::rocprofiler_counter_id_t,
    counters_count: usize,
    config_id: *mut sys::rocprofiler_counter_config_id_t,
) -> Status {
    guard(|| {
        if config_id.is_null() || (counters_count > 0 && counters_list.is_null()) {
            return Status::ERROR_INVALID_ARGUMENT;
        }
        let collects = match agent_has_counters(agent_id) {
            Ok(collects) => collects,
            Err(status) => return status,
        };
        let listed = if counters_count == 0 {
            &[][..]
        } else {
            // SAFETY: the caller passes `counters_count` ids (checked non-null).
            unsafe { std::slice::from_raw_parts(counters_list, counters_count) }
        };
        let mut counters: Vec<u64> = Vec::new();
        for id in listed {
            if counter(id.handle).is_none() {
                return Status::ERROR_COUNTER_NOT_FOUND;
            }
            if counters.contains(&id.handle) {
                continue;
            }
            if !collects {
                return Status::ERROR_METRIC_NOT_VALID_FOR_AGENT;
            }
            counters.push(id.handle);
        }
        let mut all = configs().lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: checked non-null; the caller's config id.
        let base = unsafe { (*config_id).handle };
        if let Some(existing) = all.get(&base) {
            for &c in &existing.counters {
                if !counters.contains(&c) {
                    counters.push(c);
                }
            }
        }
        let id = NEXT_CONFIG.fetch_add(1, Ordering::Relaxed);
        all.insert(
            id,
            Config {
                agent: agent_id.handle,
                counters,
            },
        );
        // SAFETY: checked non-null.
        unsafe { (*config_id).handle = id };
        Status::SUCCESS
    })
}

#[no_mangle]
pub extern "C" fn rocprofiler_destroy_counter_config(
    config_id: sys::rocprofiler_counter_config_id_t,
) -> Status {
    guard(|| {
        configs()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&config_id.handle);
        Status::SUCCESS
    })
}
