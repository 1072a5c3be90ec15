//! Agent (device) description (agent.h), `rocprofiler_agent_v0_t`.
use crate::enums::*;
use crate::types::*;
use std::ffi::{c_char, c_void};

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct rocprofiler_agent_v0_t {
    pub size: u64,
    pub id: rocprofiler_agent_id_t,
    pub type_: rocprofiler_agent_type_t,
    pub cpu_cores_count: u32,
    pub simd_count: u32,
    pub mem_banks_count: u32,
    pub caches_count: u32,
    pub io_links_count: u32,
    pub cpu_core_id_base: u32,
    pub simd_id_base: u32,
    pub max_waves_per_simd: u32,
    pub lds_size_in_kb: u32,
    pub gds_size_in_kb: u32,
    pub num_gws: u32,
    pub wave_front_size: u32,
    pub num_xcc: u32,
    pub cu_count: u32,
    pub array_count: u32,
    pub num_shader_banks: u32,
    pub simd_arrays_per_engine: u32,
    pub cu_per_simd_array: u32,
    pub simd_per_cu: u32,
    pub max_slots_scratch_cu: u32,
    pub gfx_target_version: u32,
    pub vendor_id: u16,
    pub device_id: u16,
    pub location_id: u32,
    pub domain: u32,
    pub drm_render_minor: u32,
    pub num_sdma_engines: u32,
    pub num_sdma_xgmi_engines: u32,
    pub num_sdma_queues_per_engine: u32,
    pub num_cp_queues: u32,
    pub max_engine_clk_ccompute: u32,
    pub max_engine_clk_fcompute: u32,
    /// HSA_ENGINE_VERSION (a 32-bit union).
    pub sdma_fw_version: u32,
    /// HSA_ENGINE_ID (a 32-bit union).
    pub fw_version: u32,
    /// HSA_CAPABILITY (a 32-bit union).
    pub capability: u32,
    pub cu_per_engine: u32,
    pub max_waves_per_cu: u32,
    pub family_id: u32,
    pub workgroup_max_size: u32,
    pub grid_max_size: u32,
    pub local_mem_size: u64,
    pub hive_id: u64,
    pub gpu_id: u64,
    pub workgroup_max_dim: rocprofiler_dim3_t,
    pub grid_max_dim: rocprofiler_dim3_t,
    pub mem_banks: *const c_void,
    pub caches: *const c_void,
    pub io_links: *const c_void,
    pub name: *const c_char,
    pub vendor_name: *const c_char,
    pub product_name: *const c_char,
    pub model_name: *const c_char,
    pub node_id: u32,
    pub logical_node_id: i32,
    pub logical_node_type_id: i32,
    /// `rocprofiler_agent_runtime_visiblity_t`: bit 0 HSA, 1 HIP, 2 RCCL, 3 rocDecode.
    pub runtime_visibility: u32,
    /// `rocprofiler_uuid_t` (GPU only).
    pub uuid: [u8; 16],
}

/// `rocprofiler_query_available_agents_cb_t`.
pub type rocprofiler_query_available_agents_cb_t = Option<
    unsafe extern "C" fn(
        version: rocprofiler_agent_version_t,
        agents: *mut *const c_void,
        num_agents: usize,
        user_data: *mut c_void,
    ) -> rocprofiler_status_t,
>;
