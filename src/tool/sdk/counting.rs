//! Per-dispatch hardware counters through the SDK's callback dispatch
//! counting service (dispatch_counting_service.h).
//!
//! The group is `KINETO_ROCM_PMC` (comma- or space-separated counter
//! names; the CLI sets it from a job file's one counter group). Agents may
//! not be known at `initialize` (the runtime loads later), so each agent's
//! counter config is made at its first dispatch: its supported counters
//! are read from the SDK's catalog, and an agent that lacks one of the
//! group's counters collects nothing, said once in the log.
use super::tool::check;
use crate::error::ToolError;
use crate::tool::finish::counters::{self, CounterValues};
use once_cell::sync::OnceCell;
use rocprofiler_sys::*;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::Mutex;

/// The environment variable naming the counter group.
pub const PMC_ENV: &str = "KINETO_ROCM_PMC";

/// What the callbacks need: the SDK, and each agent's config (`None`: the
/// agent cannot collect the group) and counter id -> index in the group.
struct Counting {
    sdk: Sdk,
    values: &'static CounterValues,
    agents: Mutex<HashMap<u64, Option<u64>>>,
    indices: Mutex<HashMap<u64, usize>>,
}

static COUNTING: OnceCell<Counting> = OnceCell::new();

/// The group asked for, in order, without repeats.
fn group_from_env() -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let value = std::env::var(PMC_ENV).unwrap_or_default();
    for name in value.split([',', ' ']).filter(|n| !n.is_empty()) {
        if !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
    }
    names
}

/// Configures the service on `context` when a group is asked for.
pub fn configure(sdk: &Sdk, context: rocprofiler_context_id_t) -> Result<(), ToolError> {
    let names = group_from_env();
    if names.is_empty() {
        return Ok(());
    }
    log::info!(
        "kineto-rocm: collecting counters {} per dispatch",
        names.join(",")
    );
    let _ = COUNTING.set(Counting {
        sdk: *sdk,
        values: counters::install(names),
        agents: Mutex::new(HashMap::new()),
        indices: Mutex::new(HashMap::new()),
    });
    // SAFETY: valid context; static callbacks that take no data.
    check(
        "rocprofiler_configure_callback_dispatch_counting_service",
        unsafe {
            (sdk.configure_callback_dispatch_counting_service)(
                context,
                Some(on_dispatch),
                std::ptr::null_mut(),
                Some(on_record),
                std::ptr::null_mut(),
            )
        },
    )
}

unsafe extern "C" fn collect_ids(
    _agent: rocprofiler_agent_id_t,
    ids: *mut rocprofiler_counter_id_t,
    count: usize,
    user_data: *mut c_void,
) -> rocprofiler_status_t {
    if ids.is_null() || user_data.is_null() {
        return rocprofiler_status_t::SUCCESS;
    }
    // SAFETY: the SDK passes `count` ids; user_data is our Vec.
    unsafe {
        (*(user_data as *mut Vec<rocprofiler_counter_id_t>))
            .extend_from_slice(std::slice::from_raw_parts(ids, count))
    };
    rocprofiler_status_t::SUCCESS
}

impl Counting {
    /// The agent's supported counters by name.
    fn supported(&self, agent: rocprofiler_agent_id_t) -> HashMap<String, u64> {
        let mut ids: Vec<rocprofiler_counter_id_t> = Vec::new();
        // SAFETY: a static callback; `ids` outlives the call.
        let status = unsafe {
            (self.sdk.iterate_agent_supported_counters)(
                agent,
                Some(collect_ids),
                &mut ids as *mut _ as *mut c_void,
            )
        };
        if !status.is_success() {
            return HashMap::new();
        }
        ids.into_iter()
            .filter_map(|id| {
                // SAFETY: all-zero is a valid info struct (null pointers).
                let mut info: rocprofiler_counter_info_v0_t = unsafe { std::mem::zeroed() };
                // SAFETY: VERSION_0 with a v0 struct.
                let status = unsafe {
                    (self.sdk.query_counter_info)(
                        id,
                        rocprofiler_counter_info_version_id_t::V0,
                        &mut info as *mut _ as *mut c_void,
                    )
                };
                // SAFETY: the SDK's names are NUL-terminated and live as long as it.
                let name = status
                    .is_success()
                    .then(|| unsafe { c_str_lossy(info.name) })??;
                Some((name, id.handle))
            })
            .collect()
    }

    /// The agent's config, made at its first dispatch.
    fn config_for(&self, agent: rocprofiler_agent_id_t) -> Option<u64> {
        let mut agents = self.agents.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(known) = agents.get(&agent.handle) {
            return *known;
        }
        let made = self.make_config(agent);
        agents.insert(agent.handle, made);
        made
    }

    fn make_config(&self, agent: rocprofiler_agent_id_t) -> Option<u64> {
        let supported = self.supported(agent);
        let names = self.values.names();
        let missing: Vec<&str> = names
            .iter()
            .filter(|n| !supported.contains_key(*n))
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            log::error!(
                "kineto-rocm: agent {} cannot collect {} (not among its {} supported counters); no counters from it",
                agent.handle,
                missing.join(","),
                supported.len()
            );
            return None;
        }
        let mut ids: Vec<rocprofiler_counter_id_t> = names
            .iter()
            .map(|n| rocprofiler_counter_id_t {
                handle: supported[n],
            })
            .collect();
        let mut config = rocprofiler_counter_config_id_t::default();
        // SAFETY: `ids` and `config` outlive the call.
        let status = unsafe {
            (self.sdk.create_counter_config)(agent, ids.as_mut_ptr(), ids.len(), &mut config)
        };
        if !status.is_success() {
            log::error!(
                "kineto-rocm: rocprofiler_create_counter_config on agent {}: {status:?}; no counters from it",
                agent.handle
            );
            return None;
        }
        let mut indices = self.indices.lock().unwrap_or_else(|e| e.into_inner());
        for (index, id) in ids.iter().enumerate() {
            indices.insert(id.handle, index);
        }
        Some(config.handle)
    }
}

unsafe extern "C" fn on_dispatch(
    data: rocprofiler_dispatch_counting_service_data_t,
    config: *mut rocprofiler_counter_config_id_t,
    _user_data: *mut rocprofiler_user_data_t,
    _args: *mut c_void,
) {
    let _ = std::panic::catch_unwind(|| {
        let Some(counting) = COUNTING.get() else {
            return;
        };
        if config.is_null() {
            return;
        }
        if let Some(handle) = counting.config_for(data.dispatch_info.agent_id) {
            // SAFETY: the SDK's out-pointer, checked non-null.
            unsafe { (*config).handle = handle };
        }
    });
}

unsafe extern "C" fn on_record(
    _data: rocprofiler_dispatch_counting_service_data_t,
    records: *mut rocprofiler_counter_record_t,
    count: usize,
    _user_data: rocprofiler_user_data_t,
    _args: *mut c_void,
) {
    let _ = std::panic::catch_unwind(|| {
        let Some(counting) = COUNTING.get() else {
            return;
        };
        if records.is_null() {
            return;
        }
        // SAFETY: the SDK passes `count` records, valid for the call.
        let records = unsafe { std::slice::from_raw_parts(records, count) };
        let indices = counting.indices.lock().unwrap_or_else(|e| e.into_inner());
        for r in records {
            let mut id = rocprofiler_counter_id_t::default();
            // SAFETY: a valid out-pointer.
            let status = unsafe { (counting.sdk.query_record_counter_id)(r.id, &mut id) };
            if let (true, Some(&index)) = (status.is_success(), indices.get(&id.handle)) {
                counting.values.add(r.dispatch_id, index, r.counter_value);
            }
        }
    });
}
