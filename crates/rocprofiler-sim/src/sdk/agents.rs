//! The agents the SDK reports: a CPU agent (node 0) and one GPU per device.
//! The real SDK reads them from the KFD topology, not from HSA, so they can
//! be queried before the runtime is used; here the list is fixed by the
//! first query or the first run, from ROCSIM_DEVICES (default 4) GPUs.
use rocprofiler_sys as sys;
use std::ffi::{c_char, CString};
use std::sync::OnceLock;

pub(crate) struct Agents {
    pub list: Vec<sys::rocprofiler_agent_v0_t>,
}
// SAFETY: the agents' raw pointers name leaked, immutable C strings.
unsafe impl Send for Agents {}
// SAFETY: as above; the data is never written after creation.
unsafe impl Sync for Agents {}

impl Agents {
    /// GPU devices in the list.
    pub fn gpus(&self) -> u32 {
        self.list.len() as u32 - 1
    }
}

static AGENTS: OnceLock<Agents> = OnceLock::new();

/// The agent handle of KFD node `node_id` (0 is the CPU, device d is d + 1).
pub(crate) fn agent_handle(node_id: u32) -> u64 {
    0xa6e7_0000 + node_id as u64
}

fn env_devices() -> u32 {
    std::env::var("ROCSIM_DEVICES")
        .ok()
        .and_then(|v| v.trim().parse::<u32>().ok())
        .unwrap_or(4)
        .clamp(1, 64)
}

/// The process's agents, fixed now if nothing fixed them yet.
pub(crate) fn agents() -> &'static Agents {
    AGENTS.get_or_init(|| make_agents(env_devices()))
}

/// The agents for a run on `devices` GPUs: the first use of the list may
/// still size it (to `max(devices, ROCSIM_DEVICES)`); once fixed, a run
/// asking for more devices than it has is refused.
pub(crate) fn agents_for_run(devices: u32) -> Result<&'static Agents, String> {
    let a = AGENTS.get_or_init(|| make_agents(env_devices().max(devices)));
    if a.gpus() < devices {
        return Err(format!(
            "this process was initialized with {} device(s); the workload asks for {devices}",
            a.gpus()
        ));
    }
    Ok(a)
}

fn make_agents(devices: u32) -> Agents {
    let leak = |s: String| -> *const c_char { CString::new(s).unwrap_or_default().into_raw() };
    let mut list = Vec::new();
    for node in 0..=devices {
        let gpu = node > 0;
        // SAFETY: rocprofiler_agent_v0_t is plain data (integers and pointers);
        // all-zero is a valid value that the fields below complete.
        let mut a: sys::rocprofiler_agent_v0_t = unsafe { std::mem::zeroed() };
        a.size = std::mem::size_of::<sys::rocprofiler_agent_v0_t>() as u64;
        a.id = sys::rocprofiler_agent_id_t {
            handle: agent_handle(node),
        };
        a.type_ = if gpu {
            sys::rocprofiler_agent_type_t::GPU
        } else {
            sys::rocprofiler_agent_type_t::CPU
        };
        a.node_id = node;
        a.logical_node_id = node as i32;
        a.logical_node_type_id = if gpu { node as i32 - 1 } else { 0 };
        a.wave_front_size = if gpu { 64 } else { 0 };
        a.cu_count = if gpu { 304 } else { 0 };
        a.simd_per_cu = if gpu { 4 } else { 0 };
        // MI300X's topology as KFD reports it: 8 XCCs of 4 shader engines,
        // one shader array each. aqlprofile sizes the counter dimensions
        // from num_xcc and num_shader_banks (the SDK's agent.cpp;
        // dimensions.rs).
        a.num_xcc = if gpu { 8 } else { 0 };
        a.num_shader_banks = if gpu { 32 } else { 0 };
        a.simd_arrays_per_engine = if gpu { 1 } else { 0 };
        a.array_count = if gpu { 32 } else { 0 };
        a.cpu_cores_count = if gpu { 0 } else { 16 };
        a.gfx_target_version = if gpu { 90402 } else { 0 };
        a.vendor_id = 0x1002;
        a.device_id = if gpu { 0x74a1 } else { 0 };
        a.location_id = node * 0x100;
        a.name = leak(if gpu {
            "gfx942".into()
        } else {
            "rocsim-cpu".into()
        });
        a.vendor_name = leak("AMD".into());
        a.product_name = leak(if gpu {
            format!("rocprofiler-sim GPU {}", node - 1)
        } else {
            "rocprofiler-sim CPU".into()
        });
        a.model_name = leak(if gpu { "sim".into() } else { String::new() });
        list.push(a);
    }
    Agents { list }
}
