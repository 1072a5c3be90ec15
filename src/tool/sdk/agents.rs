//! The GPUs the SDK reports (its agents), read into the device table
//! kineto's lanes are named from.
use crate::tool::finish::devices::Devices;
use rocprofiler_sys::*;
use std::ffi::c_void;

/// Asks the SDK for its agents; GPUs are numbered as HIP numbers them.
/// `None` until the runtime has loaded (the SDK then has no agents).
pub fn query(sdk: &Sdk) -> Option<Devices> {
    let mut devices = Devices::default();
    // SAFETY: the callback receives `agents` valid for the call and our
    // `Devices` through user_data, which outlives the query.
    let status = unsafe {
        (sdk.query_available_agents)(
            rocprofiler_agent_version_t::V0,
            Some(collect_agents),
            std::mem::size_of::<rocprofiler_agent_v0_t>(),
            &mut devices as *mut Devices as *mut c_void,
        )
    };
    (status.is_success() && !devices.is_empty()).then_some(devices)
}

unsafe extern "C" fn collect_agents(
    _version: rocprofiler_agent_version_t,
    agents: *mut *const c_void,
    num_agents: usize,
    user_data: *mut c_void,
) -> rocprofiler_status_t {
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        if agents.is_null() || user_data.is_null() {
            return;
        }
        // SAFETY: user_data is the &mut Devices passed to query_available_agents.
        let devices = unsafe { &mut *(user_data as *mut Devices) };
        for i in 0..num_agents {
            // SAFETY: the SDK passes `num_agents` agent pointers of the version asked for.
            let agent = unsafe { *agents.add(i) } as *const rocprofiler_agent_v0_t;
            if agent.is_null() {
                continue;
            }
            // SAFETY: a valid agent record for the duration of the callback.
            let agent = unsafe { &*agent };
            if agent.type_ != rocprofiler_agent_type_t::GPU {
                continue;
            }
            // SAFETY: the SDK's names are NUL-terminated and live as long as the SDK.
            let product = unsafe { c_str_lossy(agent.product_name) }.filter(|s| !s.is_empty());
            // SAFETY: as above.
            let name = product
                .or_else(|| unsafe { c_str_lossy(agent.name) })
                .unwrap_or_else(|| "GPU".into());
            let index = agent.logical_node_type_id.max(0) as u32;
            devices.insert(agent.id.handle, index, name);
        }
    }));
    if outcome.is_err() {
        log::error!("kineto-rocm: panic while reading agents; lanes will be unnamed");
    }
    rocprofiler_status_t::SUCCESS
}
