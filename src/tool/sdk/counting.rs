//! Per-dispatch hardware counters through the SDK's callback dispatch
//! counting service (dispatch_counting_service.h).
//!
//! The service is configured on the tool's context at initialisation (the
//! SDK takes no new configuration later), and counts nothing until a group
//! is asked for: `KINETO_ROCM_PMC` (comma- or space-separated counter names;
//! the CLI sets it from a job file's one counter group) asks from the start,
//! and a trace can ask for its own (`request`, from PyTorch's metrics config
//! through the C++ face) and give it back (`release`). At each dispatch the
//! group asked for then picks the agent's counter config, and the dispatch
//! carries the group's number to its record callback, so a group changed
//! while the dispatch ran cannot mislabel its values. Agents may not be
//! known at `initialize` (the runtime loads later), so each agent's config
//! is made at its first dispatch under a group: its supported counters are
//! read from the SDK's catalog, and an agent that lacks one of the group's
//! counters collects nothing, said once in the log.
//!
//! A counter's instances (one record each) are summed into its value.
//! With `KINETO_ROCM_COUNTER_DIMENSIONS` on, each instance's value is kept
//! too: making the config also reads each counter's dimensions and
//! instances from the catalog (VERSION_1 info, and each instance's
//! position per dimension from `rocprofiler_query_record_dimension_position`)
//! into a map from instance id to slot and args key, so a record costs one
//! lookup and no SDK call.
use super::counter_dimensions::counter_instances;
use super::kernel_filter;
use super::tool::check;
use crate::error::ToolError;
use crate::tool::finish::counters::{self, GroupNames, InstanceKeys};
use arc_swap::ArcSwapOption;
use dashmap::DashMap;
use once_cell::sync::{Lazy, OnceCell};
use rocprofiler_sys::*;
use std::cell::Cell;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The environment variable naming the counter group.
pub const PMC_ENV: &str = "KINETO_ROCM_PMC";
/// The switch that keeps each counter instance's value beside the sum.
pub const DIMENSIONS_ENV: &str = "KINETO_ROCM_COUNTER_DIMENSIONS";

/// Whether instance values are kept (read at configuration).
static DIMENSIONS: AtomicBool = AtomicBool::new(false);

/// An agent's counter config for a group, and counter id -> index in it.
struct AgentConfig {
    config: u64,
    index_of: HashMap<u64, usize>,
    /// Dimensions on, and the catalog described every counter's instances.
    instances: Option<Instances>,
}

/// A config's counter instances: instance id -> slot, and each slot's key.
struct Instances {
    slot_of: HashMap<u64, usize>,
    keys: InstanceKeys,
}

/// A group asked for, with each agent's config (`None`: the agent cannot
/// collect it).
pub struct Group {
    number: u64,
    names: GroupNames,
    agents: Mutex<HashMap<u64, Option<Arc<AgentConfig>>>>,
}

/// The SDK, once the service is configured.
static SDK: OnceCell<Sdk> = OnceCell::new();
/// The group counted now, if any.
static ACTIVE: Lazy<ArcSwapOption<Group>> = Lazy::new(ArcSwapOption::empty);
/// Whether `ACTIVE` holds a group: one load on every dispatch that no
/// group is asked for (most dispatches of most runs), where an `ArcSwap`
/// guard costs a debt-list slot.
static ANY_ACTIVE: AtomicBool = AtomicBool::new(false);
/// Every group asked for, by number, for the records of its dispatches.
static GROUPS: Lazy<DashMap<u64, Arc<Group>>> = Lazy::new(DashMap::new);
static NEXT_GROUP: AtomicU64 = AtomicU64::new(1);

/// Kernel mode: the submission this thread is making, published by the
/// kernel-replay callback: its dispatch id, the group its pass counts
/// (`None`: a pass that counts nothing, the thread trace's) and the pass.
#[derive(Clone, Copy)]
struct ReplayPass {
    dispatch_id: u64,
    group: Option<u64>,
    pass: u32,
}

thread_local! {
    static REPLAY_PASS: Cell<Option<ReplayPass>> = const { Cell::new(None) };
}

/// Kernel mode: this thread's next submission of `dispatch_id` is `pass`,
/// counting `group` (`None`: nothing); `dispatch_id` `None`: no pass.
pub fn set_replay_pass(dispatch_id: Option<u64>, group: Option<&Group>, pass: u32) {
    let current = dispatch_id.map(|dispatch_id| ReplayPass {
        dispatch_id,
        group: group.map(|g| g.number),
        pass,
    });
    REPLAY_PASS.with(|p| p.set(current));
}

/// Counter names from a list, in order, without repeats or blanks.
pub fn group_names<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for name in names.into_iter().map(str::trim).filter(|n| !n.is_empty()) {
        if !out.iter().any(|n| n == name) {
            out.push(name.to_string());
        }
    }
    out
}

/// Configures the service on `context`, and asks for `KINETO_ROCM_PMC`'s
/// group when it is set.
pub fn configure(sdk: &Sdk, context: rocprofiler_context_id_t) -> Result<(), ToolError> {
    // SAFETY: valid context; static callbacks that take no data.
    let status = unsafe {
        (sdk.configure_callback_dispatch_counting_service)(
            context,
            Some(on_dispatch),
            std::ptr::null_mut(),
            Some(on_record),
            std::ptr::null_mut(),
        )
    };
    check(
        "rocprofiler_configure_callback_dispatch_counting_service",
        status,
    )?;
    let _ = SDK.set(*sdk);
    let dimensions = std::env::var(DIMENSIONS_ENV).ok();
    let (on, warning) = graph_attribution::switch_value(
        DIMENSIONS_ENV,
        dimensions.as_deref(),
        false,
        "counter dimensions are summed",
    );
    if let Some(warning) = warning {
        log::warn!("kineto-rocm: {warning}");
    }
    DIMENSIONS.store(on, Ordering::Relaxed);
    let value = std::env::var(PMC_ENV).unwrap_or_default();
    let names = group_names(value.split([',', ' ']));
    if !names.is_empty() {
        request(names)?;
    }
    Ok(())
}

/// A group its dispatches' records can find by number; counted where
/// something picks it (`request`, or a kernel-replay pass).
pub fn register(names: Vec<String>) -> Arc<Group> {
    let group = Arc::new(Group {
        number: NEXT_GROUP.fetch_add(1, Ordering::Relaxed),
        names: names.into(),
        agents: Mutex::new(HashMap::new()),
    });
    GROUPS.insert(group.number, group.clone());
    group
}

/// Can `agent` collect every counter of `group`? (Its config is made here
/// if it was not yet.)
pub fn collects(group: &Group, agent: rocprofiler_agent_id_t) -> bool {
    SDK.get()
        .is_some_and(|sdk| group.config_for(sdk, agent).is_some())
}

/// Counts `names` on every dispatch from now on, in place of any group
/// asked for before (asked before the SDK initialised the tool, from its
/// first dispatch).
pub fn request(names: Vec<String>) -> Result<(), ToolError> {
    if names.is_empty() {
        return Err(ToolError::Usage("no counter named"));
    }
    log::info!(
        "kineto-rocm: collecting counters {} per dispatch",
        names.join(",")
    );
    ACTIVE.store(Some(register(names)));
    ANY_ACTIVE.store(true, Ordering::Release);
    Ok(())
}

/// A dispatch's user data: its group's number, and the kernel-replay pass
/// it was counted in above bit 40 (0 when not replayed).
fn user_value(group: u64, pass: u32) -> u64 {
    (u64::from(pass) << 40) | group
}

fn group_and_pass(value: u64) -> (u64, u32) {
    (value & ((1 << 40) - 1), (value >> 40) as u32)
}

/// Counts nothing from now on; dispatches already counted keep their values.
pub fn release() {
    ANY_ACTIVE.store(false, Ordering::Release);
    ACTIVE.store(None);
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

impl Group {
    pub fn names(&self) -> &GroupNames {
        &self.names
    }

    /// The agent's supported counters by name.
    fn supported(sdk: &Sdk, agent: rocprofiler_agent_id_t) -> HashMap<String, u64> {
        let mut ids: Vec<rocprofiler_counter_id_t> = Vec::new();
        // SAFETY: a static callback; `ids` outlives the call.
        let status = unsafe {
            (sdk.iterate_agent_supported_counters)(
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
                    (sdk.query_counter_info)(
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

    /// The agent's config, made at its first dispatch under this group.
    fn config_for(&self, sdk: &Sdk, agent: rocprofiler_agent_id_t) -> Option<Arc<AgentConfig>> {
        let mut agents = self.agents.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(known) = agents.get(&agent.handle) {
            return known.clone();
        }
        let made = self.make_config(sdk, agent).map(Arc::new);
        agents.insert(agent.handle, made.clone());
        made
    }

    /// The agent's config, if it was made.
    fn made_for(&self, agent: rocprofiler_agent_id_t) -> Option<Arc<AgentConfig>> {
        let agents = self.agents.lock().unwrap_or_else(|e| e.into_inner());
        agents.get(&agent.handle).cloned().flatten()
    }

    fn make_config(&self, sdk: &Sdk, agent: rocprofiler_agent_id_t) -> Option<AgentConfig> {
        let supported = Self::supported(sdk, agent);
        let names = &self.names;
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
        let status =
            unsafe { (sdk.create_counter_config)(agent, ids.as_mut_ptr(), ids.len(), &mut config) };
        if !status.is_success() {
            log::error!(
                "kineto-rocm: rocprofiler_create_counter_config on agent {}: {status:?}; no counters from it",
                agent.handle
            );
            return None;
        }
        let instances = DIMENSIONS
            .load(Ordering::Relaxed)
            .then(|| Self::instances(sdk, agent, &ids, names))
            .flatten();
        Some(AgentConfig {
            config: config.handle,
            index_of: ids
                .iter()
                .enumerate()
                .map(|(index, id)| (id.handle, index))
                .collect(),
            instances,
        })
    }

    /// Every instance of the group's counters, from the catalog; `None`
    /// (said in the log) where the SDK cannot describe one of them.
    fn instances(
        sdk: &Sdk,
        agent: rocprofiler_agent_id_t,
        ids: &[rocprofiler_counter_id_t],
        names: &[String],
    ) -> Option<Instances> {
        let mut slot_of = HashMap::new();
        let mut keys = Vec::new();
        for (id, name) in ids.iter().zip(names) {
            let Some(described) = counter_instances(sdk, *id, name) else {
                log::warn!(
                    "kineto-rocm: the SDK gives no dimensions of {name} (rocprofiler_query_counter_info VERSION_1); agent {} shows counters summed only",
                    agent.handle
                );
                return None;
            };
            for (instance, key) in described {
                slot_of.insert(instance, keys.len());
                keys.push(key);
            }
        }
        Some(Instances {
            slot_of,
            keys: keys.into(),
        })
    }
}

unsafe extern "C" fn on_dispatch(
    data: rocprofiler_dispatch_counting_service_data_t,
    config: *mut rocprofiler_counter_config_id_t,
    user_data: *mut rocprofiler_user_data_t,
    _args: *mut c_void,
) {
    let _ = std::panic::catch_unwind(|| {
        let Some(sdk) = SDK.get() else {
            return;
        };
        if config.is_null() {
            return;
        }
        let info = &data.dispatch_info;
        let choose = |group: &Group, pass: u32| {
            if let Some(agent) = group.config_for(sdk, info.agent_id) {
                // SAFETY: the SDK's out-pointers; config checked non-null.
                unsafe {
                    (*config).handle = agent.config;
                    if !user_data.is_null() {
                        (*user_data).value = user_value(group.number, pass);
                    }
                }
            }
        };
        let replay = REPLAY_PASS
            .with(Cell::get)
            .filter(|p| p.dispatch_id == info.dispatch_id);
        if let Some(replay) = replay {
            if let Some(group) = replay.group.and_then(|n| GROUPS.get(&n).map(|g| g.clone())) {
                choose(&group, replay.pass);
            }
            return;
        }
        if !ANY_ACTIVE.load(Ordering::Acquire) {
            return;
        }
        // A guard, not a clone: the group may be released meanwhile.
        let active = ACTIVE.load();
        if let Some(group) = active.as_ref() {
            if kernel_filter::selects(info.kernel_id, info.dispatch_id) {
                choose(group, 0);
            }
        }
    });
}

unsafe extern "C" fn on_record(
    data: rocprofiler_dispatch_counting_service_data_t,
    records: *mut rocprofiler_counter_record_t,
    count: usize,
    user_data: rocprofiler_user_data_t,
    _args: *mut c_void,
) {
    let _ = std::panic::catch_unwind(|| {
        let Some(sdk) = SDK.get() else {
            return;
        };
        if records.is_null() {
            return;
        }
        // SAFETY: the value this dispatch's on_dispatch wrote.
        let (number, pass) = group_and_pass(unsafe { user_data.value });
        let Some(group) = GROUPS.get(&number).map(|g| g.clone()) else {
            return;
        };
        let Some(agent) = group.made_for(data.dispatch_info.agent_id) else {
            return;
        };
        // SAFETY: the SDK passes `count` records, valid for the call.
        let records = unsafe { std::slice::from_raw_parts(records, count) };
        for r in records {
            let mut id = rocprofiler_counter_id_t::default();
            // SAFETY: a valid out-pointer.
            let status = unsafe { (sdk.query_record_counter_id)(r.id, &mut id) };
            if let (true, Some(&index)) = (status.is_success(), agent.index_of.get(&id.handle)) {
                let instance = agent
                    .instances
                    .as_ref()
                    .and_then(|i| Some((&i.keys, *i.slot_of.get(&r.id)?)));
                counters::add(
                    r.dispatch_id,
                    pass,
                    &group.names,
                    index,
                    r.counter_value,
                    instance,
                );
            }
        }
    });
}
