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
//!   that is neither 0 nor 1 is ERROR_INCOMPATIBLE_ABI. VERSION_1 (its
//!   `dim_info` and `dim_permutations`) adds the struct's size, the
//!   counter's dimensions and every instance it reports, in arrays the SDK
//!   keeps for the process (dimensions.rs says which).
//! - `rocprofiler_create_counter_config` (counter_config.cpp): an unknown
//!   agent is ERROR_AGENT_NOT_FOUND, an unknown counter
//!   ERROR_COUNTER_NOT_FOUND, a counter the agent cannot collect
//!   ERROR_METRIC_NOT_VALID_FOR_AGENT; duplicates are added once; a non-zero
//!   `config_id` that names a config contributes its counters after the
//!   listed ones; ids count up from 1 (controller.cpp `add_profile`).
//! - `rocprofiler_destroy_counter_config` (counter_config.cpp) forgets the
//!   config and always succeeds.
use super::agents::agents;
use super::dimensions::{dimensions, instances, split, Dimension};
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

/// A counter's dimensions (dimensions.rs).
pub(crate) fn counter_dimensions(id: u64) -> Option<Vec<Dimension>> {
    counter(id).map(|c| dimensions(c.block))
}

/// What a dispatch counted on counter `id`: each instance's id and value,
/// in the catalog's instance order. Deterministic functions of the kernel,
/// its grid and its duration, so tests can check exact numbers; these
/// totals split over the instances (`split`, the remainder rotated by
/// kernel id), so the instances sum to them exactly:
/// - SQ_WAVES: 64-wide waves of every work-group (gfx942's wave size);
/// - SQ_INSTS_VALU: waves times a per-kernel instruction count
///   (16 + kernel id mod 48);
/// - GRBM_COUNT, GRBM_GUI_ACTIVE: GPU clocks over the dispatch at
///   gfx942's 2.1 GHz peak (the GUI is busy for all of a lone dispatch);
/// - TCC_HIT: 4 hits per wave;
/// - GPU_UTIL: its expression over the two GRBM values (100), one instance.
pub(crate) fn counter_values(
    id: u64,
    kernel_id: u64,
    grid: [u32; 3],
    workgroup: [u32; 3],
    duration_ns: u64,
) -> Option<Vec<(u64, f64)>> {
    let c = counter(id)?;
    let groups: u64 = (0..3)
        .map(|i| u64::from(grid[i]).div_ceil(u64::from(workgroup[i].max(1))))
        .product();
    let group_size: u64 = workgroup.iter().map(|&w| u64::from(w.max(1))).product();
    let waves = groups * group_size.div_ceil(64);
    let clocks = duration_ns * 21 / 10;
    let total = match c.name.to_bytes() {
        b"SQ_WAVES" => waves,
        b"SQ_INSTS_VALU" => waves * (16 + kernel_id % 48),
        b"GRBM_COUNT" | b"GRBM_GUI_ACTIVE" => clocks,
        b"TCC_HIT" => waves * 4,
        b"GPU_UTIL" => {
            let util = if clocks == 0 { 0.0 } else { 100.0 };
            return Some(vec![(id << super::dimensions::DIM_BITS, util)]);
        }
        _ => return None,
    };
    let all = instances(id, &dimensions(c.block));
    let shares = split(total, all.len(), kernel_id);
    Some(
        all.into_iter()
            .zip(shares)
            .map(|((instance, _), share)| (instance, share as f64))
            .collect(),
    )
}

/// VERSION_1's arrays for one counter, made once and kept for the process
/// as the SDK keeps them (counters.cpp `get_static_ptr_array`).
struct DimensionArrays {
    dimensions: Vec<*const sys::rocprofiler_counter_record_dimension_info_t>,
    instances: Vec<*const sys::rocprofiler_counter_record_dimension_instance_info_t>,
}
// SAFETY: the pointers name leaked, never-written structs and strings.
unsafe impl Send for DimensionArrays {}
// SAFETY: as above.
unsafe impl Sync for DimensionArrays {}

fn leak<T>(v: T) -> *const T {
    Box::into_raw(Box::new(v))
}

fn dimension_arrays(id: u64, c: &Counter) -> DimensionArrays {
    let dims = dimensions(c.block);
    let dimensions = dims
        .iter()
        .map(|d| {
            leak(sys::rocprofiler_counter_record_dimension_info_t {
                name: d.name.as_ptr(),
                instance_size: d.size,
                id: d.id,
            })
        })
        .collect();
    let instances =
        instances(id, &dims)
            .into_iter()
            .map(|(instance_id, positions)| {
                let per_dim: Vec<*const sys::rocprofiler_counter_dimension_info_t> = dims
                    .iter()
                    .zip(positions)
                    .map(|(d, index)| {
                        leak(sys::rocprofiler_counter_dimension_info_t {
                            size: std::mem::size_of::<sys::rocprofiler_counter_dimension_info_t>()
                                as u64,
                            dimension_name: d.name.as_ptr(),
                            index,
                        })
                    })
                    .collect();
                leak(sys::rocprofiler_counter_record_dimension_instance_info_t {
                    size: std::mem::size_of::<
                        sys::rocprofiler_counter_record_dimension_instance_info_t,
                    >() as u64,
                    instance_id,
                    counter_id: id,
                    dimensions_count: per_dim.len() as u64,
                    dimensions: per_dim.leak().as_ptr(),
                })
            })
            .collect();
    DimensionArrays {
        dimensions,
        instances,
    }
}

/// Each catalog counter's VERSION_1 arrays, by id.
fn all_dimension_arrays() -> &'static [DimensionArrays] {
    static ARRAYS: OnceLock<Vec<DimensionArrays>> = OnceLock::new();
    ARRAYS.get_or_init(|| {
        CATALOG
            .iter()
            .enumerate()
            .map(|(id, c)| dimension_arrays(id as u64, c))
            .collect()
    })
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
        let v1 = match version {
            sys::rocprofiler_counter_info_version_id_t::V0 => false,
            sys::rocprofiler_counter_info_version_id_t::V1 => true,
            _ => return Status::ERROR_INCOMPATIBLE_ABI,
        };
        let Some(c) = counter(counter_id.handle) else {
            return Status::ERROR_COUNTER_NOT_FOUND;
        };
        let flags = if c.expression.is_empty() {
            0
        } else {
            sys::rocprofiler_counter_info_v0_t::IS_DERIVED
        };
        if !v1 {
            // SAFETY: for VERSION_0 the caller passes a rocprofiler_counter_info_v0_t.
            unsafe {
                *(info as *mut sys::rocprofiler_counter_info_v0_t) =
                    sys::rocprofiler_counter_info_v0_t {
                        id: counter_id,
                        name: c.name.as_ptr(),
                        description: c.description.as_ptr(),
                        block: c.block.as_ptr(),
                        expression: c.expression.as_ptr(),
                        flags,
                    };
            }
            return Status::SUCCESS;
        }
        let arrays = &all_dimension_arrays()[counter_id.handle as usize];
        // SAFETY: for VERSION_1 the caller passes a rocprofiler_counter_info_v1_t.
        unsafe {
            *(info as *mut sys::rocprofiler_counter_info_v1_t) =
                sys::rocprofiler_counter_info_v1_t {
                    size: std::mem::size_of::<sys::rocprofiler_counter_info_v1_t>() as u64,
                    id: counter_id,
                    name: c.name.as_ptr(),
                    description: c.description.as_ptr(),
                    block: c.block.as_ptr(),
                    expression: c.expression.as_ptr(),
                    flags,
                    dimensions_count: arrays.dimensions.len() as u64,
                    dimensions: arrays.dimensions.as_ptr(),
                    dimensions_instances_count: arrays.instances.len() as u64,
                    dimensions_instances: arrays.instances.as_ptr(),
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
