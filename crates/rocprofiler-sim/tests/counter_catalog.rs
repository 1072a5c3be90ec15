//! The counter catalog and counter configurations answer as the SDK's
//! counters.cpp and counter_config.cpp do: every gfx942 counter of the
//! catalog on a GPU agent, none on the CPU, info for each id (VERSION_1
//! with each counter's dimensions sized by the agent's topology, every
//! instance, ids laid out as id_decode.hpp does, and the positions
//! `rocprofiler_query_record_dimension_position` reads back), configs bound
//! to an agent with ids counting up.
mod common;
use common::*;
use rocprofiler_sys as sys;
use std::ffi::{c_void, CStr};

type S = sys::rocprofiler_status_t;

/// (handle, is a GPU, num_xcc, num_shader_banks).
type AgentRow = (u64, bool, u32, u32);

unsafe extern "C" fn collect_agents(
    _v: sys::rocprofiler_agent_version_t,
    agents: *mut *const c_void,
    n: usize,
    data: *mut c_void,
) -> S {
    // SAFETY: `data` is the test's Vec; the SDK passes `n` v0 agents.
    unsafe {
        for a in std::slice::from_raw_parts(agents, n) {
            let a = &*(*a as *const sys::rocprofiler_agent_v0_t);
            (*(data as *mut Vec<AgentRow>)).push((
                a.id.handle,
                a.type_ == sys::rocprofiler_agent_type_t::GPU,
                a.num_xcc,
                a.num_shader_banks,
            ));
        }
    }
    S::SUCCESS
}

unsafe extern "C" fn collect_counters(
    _agent: sys::rocprofiler_agent_id_t,
    counters: *mut sys::rocprofiler_counter_id_t,
    n: usize,
    data: *mut c_void,
) -> S {
    // SAFETY: `data` is the test's Vec; the SDK passes `n` ids.
    unsafe {
        let ids = std::slice::from_raw_parts(counters, n);
        (*(data as *mut Vec<u64>)).extend(ids.iter().map(|c| c.handle));
    }
    S::SUCCESS
}

unsafe extern "C" fn refuse(
    _agent: sys::rocprofiler_agent_id_t,
    _counters: *mut sys::rocprofiler_counter_id_t,
    _n: usize,
    _data: *mut c_void,
) -> S {
    S::ERROR_INVALID_ARGUMENT
}

struct Api {
    iterate: sys::rocprofiler_iterate_agent_supported_counters_fn,
    info: sys::rocprofiler_query_counter_info_fn,
    create: sys::rocprofiler_create_counter_config_fn,
    position: sys::rocprofiler_query_record_dimension_position_fn,
    destroy: sys::rocprofiler_destroy_counter_config_fn,
    agents: Vec<AgentRow>,
}

fn api() -> Api {
    let e = env();
    // SAFETY: the SDK symbols have the types rocprofiler-sys declares.
    unsafe {
        let query = *e
            .sim
            .symbol::<sys::rocprofiler_query_available_agents_fn>(
                "rocprofiler_query_available_agents",
            )
            .unwrap();
        let mut agents = Vec::new();
        let st = query(
            sys::rocprofiler_agent_version_t::V0,
            Some(collect_agents),
            std::mem::size_of::<sys::rocprofiler_agent_v0_t>(),
            &mut agents as *mut _ as *mut c_void,
        );
        assert_eq!(st, S::SUCCESS);
        Api {
            iterate: *e
                .sim
                .symbol("rocprofiler_iterate_agent_supported_counters")
                .unwrap(),
            info: *e.sim.symbol("rocprofiler_query_counter_info").unwrap(),
            create: *e.sim.symbol("rocprofiler_create_counter_config").unwrap(),
            position: *e
                .sim
                .symbol("rocprofiler_query_record_dimension_position")
                .unwrap(),
            destroy: *e.sim.symbol("rocprofiler_destroy_counter_config").unwrap(),
            agents,
        }
    }
}

fn agent(handle: u64) -> sys::rocprofiler_agent_id_t {
    sys::rocprofiler_agent_id_t { handle }
}

impl Api {
    fn gpu(&self) -> sys::rocprofiler_agent_id_t {
        agent(self.agents.iter().find(|a| a.1).unwrap().0)
    }

    fn cpu(&self) -> sys::rocprofiler_agent_id_t {
        agent(self.agents.iter().find(|a| !a.1).unwrap().0)
    }

    fn supported(&self, a: sys::rocprofiler_agent_id_t) -> (S, Vec<u64>) {
        let mut ids = Vec::new();
        // SAFETY: the callback matches the SDK's type; `ids` outlives the call.
        let st =
            unsafe { (self.iterate)(a, Some(collect_counters), &mut ids as *mut _ as *mut c_void) };
        (st, ids)
    }

    /// (status, name, block, expression, flags).
    fn info(&self, id: u64) -> (S, String, String, String, u8) {
        // SAFETY: all-zero is a valid info struct (null pointers, zero flags).
        let mut info: sys::rocprofiler_counter_info_v0_t = unsafe { std::mem::zeroed() };
        // SAFETY: VERSION_0 with a v0 struct.
        let st = unsafe {
            (self.info)(
                sys::rocprofiler_counter_id_t { handle: id },
                sys::rocprofiler_counter_info_version_id_t::V0,
                &mut info as *mut _ as *mut c_void,
            )
        };
        if st != S::SUCCESS {
            return (st, String::new(), String::new(), String::new(), 0);
        }
        // SAFETY: the SDK fills NUL-terminated strings that live as long as it.
        let s = |p| unsafe { CStr::from_ptr(p) }.to_str().unwrap().to_string();
        assert_eq!(info.id.handle, id);
        (
            st,
            s(info.name),
            s(info.block),
            s(info.expression),
            info.flags,
        )
    }

    fn create(&self, a: sys::rocprofiler_agent_id_t, ids: &[u64], base: u64) -> (S, u64) {
        let mut list: Vec<_> = ids
            .iter()
            .map(|&handle| sys::rocprofiler_counter_id_t { handle })
            .collect();
        let mut config = sys::rocprofiler_counter_config_id_t { handle: base };
        // SAFETY: `list` holds `ids.len()` ids; `config` is ours.
        let st = unsafe { (self.create)(a, list.as_mut_ptr(), list.len(), &mut config) };
        (st, config.handle)
    }
}

#[test]
fn a_gpu_agent_lists_the_catalog_and_each_counter_describes_itself() {
    let api = api();
    let (st, ids) = api.supported(api.gpu());
    assert_eq!(st, S::SUCCESS);
    let described: Vec<_> = ids.iter().map(|&id| api.info(id)).collect();
    let names: Vec<&str> = described.iter().map(|d| d.1.as_str()).collect();
    assert_eq!(
        names,
        [
            "SQ_WAVES",
            "SQ_INSTS_VALU",
            "GRBM_COUNT",
            "GRBM_GUI_ACTIVE",
            "TCC_HIT",
            "GPU_UTIL"
        ]
    );
    for (st, name, block, expression, flags) in &described {
        assert_eq!(*st, S::SUCCESS);
        let derived = flags & sys::rocprofiler_counter_info_v0_t::IS_DERIVED != 0;
        assert_eq!(derived, name == "GPU_UTIL", "{name}");
        assert_eq!(
            block.is_empty(),
            derived,
            "{name}: a block only on hardware counters"
        );
        assert_eq!(expression.is_empty(), !derived, "{name}");
        assert_eq!(flags & sys::rocprofiler_counter_info_v0_t::IS_CONSTANT, 0);
    }
    assert_eq!(described[0].2, "SQ");
    assert_eq!(
        described[5].3,
        "100*reduce(GRBM_GUI_ACTIVE,max)/reduce(GRBM_COUNT,max)"
    );
}

#[test]
fn agents_without_counters_and_unknown_agents_are_refused() {
    let api = api();
    assert_eq!(
        api.supported(api.cpu()).0,
        S::ERROR_AGENT_ARCH_NOT_SUPPORTED
    );
    assert_eq!(api.supported(agent(7)).0, S::ERROR_AGENT_NOT_FOUND);
    // SAFETY: the callback's status is what the SDK returns.
    let st = unsafe { (api.iterate)(api.gpu(), Some(refuse), std::ptr::null_mut()) };
    assert_eq!(
        st,
        S::ERROR_INVALID_ARGUMENT,
        "the callback's status comes back"
    );
}

#[test]
fn counter_info_refuses_unknown_ids_and_versions() {
    let api = api();
    assert_eq!(api.info(1_000).0, S::ERROR_COUNTER_NOT_FOUND);
    // SAFETY: all-zero is a valid info struct.
    let mut info: sys::rocprofiler_counter_info_v0_t = unsafe { std::mem::zeroed() };
    let mut ask = |version| {
        // SAFETY: a v0-sized struct; the simulator writes none for these versions.
        unsafe {
            (api.info)(
                sys::rocprofiler_counter_id_t { handle: 0 },
                version,
                &mut info as *mut _ as *mut c_void,
            )
        }
    };
    assert_eq!(
        ask(sys::rocprofiler_counter_info_version_id_t(3)),
        S::ERROR_INCOMPATIBLE_ABI
    );
    assert_eq!(
        ask(sys::rocprofiler_counter_info_version_id_t(0)),
        S::ERROR_INCOMPATIBLE_ABI,
        "VERSION_NONE"
    );
    // SAFETY: all-zero is a valid v1 struct.
    let mut v1: sys::rocprofiler_counter_info_v1_t = unsafe { std::mem::zeroed() };
    // SAFETY: VERSION_1 with a v1 struct.
    let st = unsafe {
        (api.info)(
            sys::rocprofiler_counter_id_t { handle: 1_000 },
            sys::rocprofiler_counter_info_version_id_t::V1,
            &mut v1 as *mut _ as *mut c_void,
        )
    };
    assert_eq!(st, S::ERROR_COUNTER_NOT_FOUND);
}

#[test]
fn configs_are_bound_to_an_agent_and_count_up() {
    let api = api();
    let gpu = api.gpu();
    let (st, first) = api.create(gpu, &[0, 2, 0], 0);
    assert_eq!(st, S::SUCCESS);
    let (st, second) = api.create(gpu, &[3], first);
    assert_eq!(st, S::SUCCESS);
    assert!(first >= 1 && second > first, "{first} then {second}");
    assert_eq!(
        api.create(gpu, &[0, 1_000], 0).0,
        S::ERROR_COUNTER_NOT_FOUND
    );
    assert_eq!(
        api.create(api.cpu(), &[0], 0).0,
        S::ERROR_METRIC_NOT_VALID_FOR_AGENT
    );
    assert_eq!(api.create(agent(7), &[0], 0).0, S::ERROR_AGENT_NOT_FOUND);
    // SAFETY: plain calls with config ids.
    unsafe {
        assert_eq!(
            (api.destroy)(sys::rocprofiler_counter_config_id_t { handle: second }),
            S::SUCCESS
        );
        assert_eq!(
            (api.destroy)(sys::rocprofiler_counter_config_id_t { handle: 999_999 }),
            S::SUCCESS
        );
    }
}

/// One dimension as VERSION_1 describes it: (name, instance size, id).
type DimRow = (String, usize, u64);

/// One instance as VERSION_1 lists it: (instance id, counter id, (name,
/// index) per dimension).
type InstanceRow = (u64, u64, Vec<(String, usize)>);

impl Api {
    fn info_v1(&self, id: u64) -> (Vec<DimRow>, Vec<InstanceRow>) {
        // SAFETY: all-zero is a valid v1 struct (null pointers, zero counts).
        let mut info: sys::rocprofiler_counter_info_v1_t = unsafe { std::mem::zeroed() };
        // SAFETY: VERSION_1 with a v1 struct.
        let st = unsafe {
            (self.info)(
                sys::rocprofiler_counter_id_t { handle: id },
                sys::rocprofiler_counter_info_version_id_t::V1,
                &mut info as *mut _ as *mut c_void,
            )
        };
        assert_eq!(st, S::SUCCESS);
        assert_eq!(
            info.size as usize,
            std::mem::size_of::<sys::rocprofiler_counter_info_v1_t>()
        );
        assert_eq!(info.id.handle, id);
        // SAFETY: the SDK's strings and arrays live as long as it; each
        // array holds its count of valid pointers.
        unsafe {
            let s = |p| CStr::from_ptr(p).to_str().unwrap().to_string();
            let dims = std::slice::from_raw_parts(info.dimensions, info.dimensions_count as usize)
                .iter()
                .map(|d| (s((**d).name), (**d).instance_size, (**d).id))
                .collect();
            let instances = std::slice::from_raw_parts(
                info.dimensions_instances,
                info.dimensions_instances_count as usize,
            )
            .iter()
            .map(|i| {
                let i = &**i;
                assert_eq!(
                    i.size as usize,
                    std::mem::size_of::<sys::rocprofiler_counter_record_dimension_instance_info_t>(
                    )
                );
                let at = std::slice::from_raw_parts(i.dimensions, i.dimensions_count as usize)
                    .iter()
                    .map(|d| (s((**d).dimension_name), (**d).index))
                    .collect();
                (i.instance_id, i.counter_id, at)
            })
            .collect();
            (dims, instances)
        }
    }

    fn position(&self, instance: u64, dim: u64) -> usize {
        let mut pos = usize::MAX;
        // SAFETY: a valid out-pointer.
        let st = unsafe { (self.position)(instance, dim, &mut pos) };
        assert_eq!(st, S::SUCCESS);
        pos
    }
}

#[test]
fn version_1_gives_each_counter_the_dimensions_of_its_block_on_the_agents_topology() {
    let api = api();
    let gpu = api.agents.iter().find(|a| a.1).unwrap();
    assert_eq!((gpu.2, gpu.3), (8, 32), "MI300X: 8 XCCs, 32 shader engines");
    let (xcc, se) = (gpu.2 as usize, (gpu.3 / gpu.2) as usize);
    let d = |name: &str, size, id| (name.to_string(), size, id);
    let expected: [(u64, Vec<DimRow>); 6] = [
        (
            0,
            vec![
                d("DIMENSION_XCC", xcc, 1),
                d("DIMENSION_SHADER_ENGINE", se, 3),
                d("DIMENSION_INSTANCE", 1, 7),
            ],
        ),
        (
            1,
            vec![
                d("DIMENSION_XCC", xcc, 1),
                d("DIMENSION_SHADER_ENGINE", se, 3),
                d("DIMENSION_INSTANCE", 1, 7),
            ],
        ),
        (
            2,
            vec![d("DIMENSION_XCC", xcc, 1), d("DIMENSION_INSTANCE", 1, 7)],
        ),
        (
            3,
            vec![d("DIMENSION_XCC", xcc, 1), d("DIMENSION_INSTANCE", 1, 7)],
        ),
        (
            4,
            vec![d("DIMENSION_XCC", xcc, 1), d("DIMENSION_INSTANCE", 16, 7)],
        ),
        (5, vec![d("DIMENSION_INSTANCE", 1, 7)]),
    ];
    for (id, want) in expected {
        let (dims, instances) = api.info_v1(id);
        assert_eq!(dims, want, "counter {id}");
        let count: usize = dims.iter().map(|d| d.1).product();
        assert_eq!(instances.len(), count, "counter {id}: every combination");
        let mut seen = std::collections::HashSet::new();
        for (ordinal, (instance, counter, at)) in instances.iter().enumerate() {
            assert_eq!(*counter, id);
            assert!(seen.insert(*instance), "counter {id}: ids are distinct");
            let mut rest = ordinal;
            let mut dimension_bits = 0u64;
            for (k, (name, size, dim)) in dims.iter().enumerate() {
                let pos = rest % size;
                rest /= size;
                assert_eq!(at[k], (name.clone(), pos), "the first dimension fastest");
                assert_eq!(api.position(*instance, *dim), pos);
                dimension_bits |= (pos as u64) << ((dim - 1) * 6);
            }
            assert_eq!(
                *instance,
                (id << 48) | dimension_bits,
                "id_decode.hpp's layout: 6 bits per dimension below the counter id"
            );
            assert_eq!(
                api.position(*instance, 0) as u64,
                dimension_bits,
                "DIMENSION_NONE reads all 48 bits"
            );
            assert_eq!(api.position(*instance, 2), 0, "a dimension it lacks is 0");
            let mut counter_id = sys::rocprofiler_counter_id_t::default();
            let query: sys::rocprofiler_query_record_counter_id_fn =
                // SAFETY: the symbol has the type rocprofiler-sys declares.
                unsafe { *env().sim.symbol("rocprofiler_query_record_counter_id").unwrap() };
            // SAFETY: a valid out-pointer.
            assert_eq!(unsafe { query(*instance, &mut counter_id) }, S::SUCCESS);
            assert_eq!(counter_id.handle, id);
        }
    }
    assert_eq!(
        api.info_v1(5).1[0].0,
        5 << 48,
        "GPU_UTIL's one reduced instance"
    );
}
