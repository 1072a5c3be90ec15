//! The SDK's introspection entry points behave as the headers document,
//! agents can be queried before any workload runs, and a callback record's
//! arguments can be iterated.
mod common;
use common::*;
use rocprofiler_sim::options::RunOptions;
use rocprofiler_sys as sys;
use serde_json::Value;
use std::ffi::{c_char, c_void, CStr};

type S = sys::rocprofiler_status_t;

unsafe extern "C" fn count_agents(
    _v: sys::rocprofiler_agent_version_t,
    agents: *mut *const c_void,
    n: usize,
    data: *mut c_void,
) -> S {
    // SAFETY: `data` is the test's counter; the SDK passes `n` agents.
    unsafe {
        let agents = std::slice::from_raw_parts(agents, n);
        let gpus = agents
            .iter()
            .filter(|a| {
                (*(**a as *const sys::rocprofiler_agent_v0_t)).type_
                    == sys::rocprofiler_agent_type_t::GPU
            })
            .count();
        *(data as *mut (usize, usize)) = (n, gpus);
    }
    S::SUCCESS
}

unsafe extern "C" fn collect_kind(
    kind: sys::rocprofiler_callback_tracing_kind_t,
    data: *mut c_void,
) -> i32 {
    // SAFETY: `data` is the test's Vec.
    unsafe { (*(data as *mut Vec<u32>)).push(kind.0) };
    0
}

unsafe extern "C" fn collect_buffer_kind(
    kind: sys::rocprofiler_buffer_tracing_kind_t,
    data: *mut c_void,
) -> i32 {
    // SAFETY: `data` is the test's Vec.
    unsafe { (*(data as *mut Vec<u32>)).push(kind.0) };
    0
}

unsafe extern "C" fn stop_after_three(
    _k: sys::rocprofiler_callback_tracing_kind_t,
    data: *mut c_void,
) -> i32 {
    // SAFETY: `data` is the test's counter.
    let n = unsafe { &mut *(data as *mut u32) };
    *n += 1;
    (*n == 3) as i32
}

unsafe extern "C" fn collect_op(
    _k: sys::rocprofiler_callback_tracing_kind_t,
    op: sys::rocprofiler_tracing_operation_t,
    data: *mut c_void,
) -> i32 {
    // SAFETY: `data` is the test's Vec.
    unsafe { (*(data as *mut Vec<i32>)).push(op) };
    0
}

unsafe extern "C" fn collect_buffer_op(
    _k: sys::rocprofiler_buffer_tracing_kind_t,
    op: sys::rocprofiler_tracing_operation_t,
    data: *mut c_void,
) -> i32 {
    // SAFETY: `data` is the test's Vec.
    unsafe { (*(data as *mut Vec<i32>)).push(op) };
    0
}

/// The tool's logged arguments of the first call of `op`.
fn args_of(v: &Value, op: i32) -> Vec<(String, String, String, i64, i64)> {
    let mut out = Vec::new();
    for a in v["args"].as_array().unwrap() {
        if a[0].as_i64() != Some(op as i64) {
            continue;
        }
        let number = a[1].as_u64().unwrap() as usize;
        if number < out.len() {
            break;
        }
        out.push((
            a[3].as_str().unwrap().to_string(),
            a[4].as_str().unwrap().to_string(),
            a[5].as_str().unwrap().to_string(),
            a[2].as_i64().unwrap(),
            a[6].as_i64().unwrap(),
        ));
    }
    out
}

#[test]
fn introspection_agents_and_arguments() {
    let e = env();
    // SAFETY: the SDK symbols have the types rocprofiler-sys declares.
    unsafe {
        // Agents before any workload: the real SDK reads the KFD topology.
        let agents = e
            .sim
            .symbol::<sys::rocprofiler_query_available_agents_fn>(
                "rocprofiler_query_available_agents",
            )
            .unwrap();
        let mut seen = (0usize, 0usize);
        let st = agents(
            sys::rocprofiler_agent_version_t::V0,
            Some(count_agents),
            std::mem::size_of::<sys::rocprofiler_agent_v0_t>(),
            &mut seen as *mut _ as *mut c_void,
        );
        assert_eq!(st, S::SUCCESS);
        assert_eq!(seen, (5, 4), "a CPU and ROCSIM_DEVICES (4) GPUs");

        let kinds = e
            .sim
            .symbol::<sys::rocprofiler_iterate_callback_tracing_kinds_fn>(
                "rocprofiler_iterate_callback_tracing_kinds",
            )
            .unwrap();
        let mut v: Vec<u32> = Vec::new();
        assert_eq!(
            kinds(Some(collect_kind), &mut v as *mut _ as *mut c_void),
            S::SUCCESS
        );
        assert_eq!(
            v,
            (1..=22).collect::<Vec<u32>>(),
            "NONE and LAST are not kinds"
        );
        let mut n = 0u32;
        kinds(Some(stop_after_three), &mut n as *mut _ as *mut c_void);
        assert_eq!(n, 3, "a non-zero return stops the iteration");
        assert_eq!(kinds(None, std::ptr::null_mut()), S::ERROR_INVALID_ARGUMENT);

        let buffer_kinds = e
            .sim
            .symbol::<sys::rocprofiler_iterate_buffer_tracing_kinds_fn>(
                "rocprofiler_iterate_buffer_tracing_kinds",
            )
            .unwrap();
        let mut v: Vec<u32> = Vec::new();
        buffer_kinds(Some(collect_buffer_kind), &mut v as *mut _ as *mut c_void);
        assert_eq!(v, (1..=33).collect::<Vec<u32>>());

        let kind_name = e
            .sim
            .symbol::<sys::rocprofiler_query_callback_tracing_kind_name_fn>(
                "rocprofiler_query_callback_tracing_kind_name",
            )
            .unwrap();
        let name = |k: u32| {
            let (mut p, mut len): (*const c_char, u64) = (std::ptr::null(), 0);
            let st = kind_name(
                sys::rocprofiler_callback_tracing_kind_t(k),
                &mut p,
                &mut len,
            );
            (
                st,
                (!p.is_null()).then(|| (CStr::from_ptr(p).to_str().unwrap().to_string(), len)),
            )
        };
        assert_eq!(name(5), (S::SUCCESS, Some(("HIP_RUNTIME_API".into(), 15))));
        assert_eq!(name(22), (S::SUCCESS, Some(("HIP_GRAPH".into(), 9))));
        assert_eq!(name(23).0, S::ERROR_KIND_NOT_FOUND);
        let buffer_kind_name = e
            .sim
            .symbol::<sys::rocprofiler_query_buffer_tracing_kind_name_fn>(
                "rocprofiler_query_buffer_tracing_kind_name",
            )
            .unwrap();
        let mut p: *const c_char = std::ptr::null();
        assert_eq!(
            buffer_kind_name(
                sys::rocprofiler_buffer_tracing_kind_t(13),
                &mut p,
                std::ptr::null_mut()
            ),
            S::SUCCESS
        );
        assert_eq!(
            CStr::from_ptr(p).to_str().unwrap(),
            "CORRELATION_ID_RETIREMENT"
        );

        let ops = e
            .sim
            .symbol::<sys::rocprofiler_iterate_callback_tracing_kind_operations_fn>(
                "rocprofiler_iterate_callback_tracing_kind_operations",
            )
            .unwrap();
        let mut v: Vec<i32> = Vec::new();
        let hip = sys::rocprofiler_callback_tracing_kind_t::HIP_RUNTIME_API;
        assert_eq!(
            ops(hip, Some(collect_op), &mut v as *mut _ as *mut c_void),
            S::SUCCESS
        );
        assert_eq!(
            v,
            (0..477).collect::<Vec<i32>>(),
            "every HIP runtime operation"
        );
        let mut v: Vec<i32> = Vec::new();
        ops(
            sys::rocprofiler_callback_tracing_kind_t::CODE_OBJECT,
            Some(collect_op),
            &mut v as *mut _ as *mut c_void,
        );
        assert_eq!(v, [1, 2, 3]);
        assert_eq!(
            ops(
                sys::rocprofiler_callback_tracing_kind_t::NONE,
                Some(collect_op),
                std::ptr::null_mut()
            ),
            S::ERROR_INVALID_ARGUMENT
        );
        let buffer_ops = e
            .sim
            .symbol::<sys::rocprofiler_iterate_buffer_tracing_kind_operations_fn>(
                "rocprofiler_iterate_buffer_tracing_kind_operations",
            )
            .unwrap();
        let mut v: Vec<i32> = Vec::new();
        buffer_ops(
            sys::rocprofiler_buffer_tracing_kind_t::MEMORY_COPY,
            Some(collect_buffer_op),
            &mut v as *mut _ as *mut c_void,
        );
        assert_eq!(v, [1, 2, 3, 4]);

        let op_name = e
            .sim
            .symbol::<sys::rocprofiler_query_callback_tracing_kind_operation_name_fn>(
                "rocprofiler_query_callback_tracing_kind_operation_name",
            )
            .unwrap();
        let op = |k: sys::rocprofiler_callback_tracing_kind_t, o: i32| {
            let mut p: *const c_char = std::ptr::null();
            let st = op_name(k, o, &mut p, std::ptr::null_mut());
            (
                st,
                (!p.is_null()).then(|| CStr::from_ptr(p).to_str().unwrap().to_string()),
            )
        };
        use sys::hip_runtime_api_id as id;
        assert_eq!(
            op(hip, id::hipGraphLaunch),
            (S::SUCCESS, Some("hipGraphLaunch".into()))
        );
        assert_eq!(
            op(hip, id::hipMalloc),
            (S::SUCCESS, Some("hipMalloc".into()))
        );
        assert_eq!(op(hip, id::hipFree), (S::SUCCESS, Some("hipFree".into())));
        assert_eq!(op(hip, 0), (S::SUCCESS, Some("hipApiName".into())));
        assert_eq!(op(hip, 477).0, S::ERROR_OPERATION_NOT_FOUND);
        assert_eq!(
            op(sys::rocprofiler_callback_tracing_kind_t::NONE, 0).0,
            S::ERROR_INVALID_ARGUMENT
        );
        assert_eq!(
            op(sys::rocprofiler_callback_tracing_kind_t(99), 0).0,
            S::ERROR_KIND_NOT_FOUND
        );

        let iterate_args = e
            .sim
            .symbol::<sys::rocprofiler_iterate_callback_tracing_kind_operation_args_fn>(
                "rocprofiler_iterate_callback_tracing_kind_operation_args",
            )
            .unwrap();
        // SAFETY (for zeroed): the record is plain data; a null payload.
        let mut record: sys::rocprofiler_callback_tracing_record_t = std::mem::zeroed();
        record.kind = sys::rocprofiler_callback_tracing_kind_t::CODE_OBJECT;
        assert_eq!(
            iterate_args(record, None, 1, std::ptr::null_mut()),
            S::ERROR_INVALID_ARGUMENT
        );
        unsafe extern "C" fn never(
            _: sys::rocprofiler_callback_tracing_kind_t,
            _: i32,
            _: u32,
            _: *const c_void,
            _: i32,
            _: *const c_char,
            _: *const c_char,
            _: *const c_char,
            _: i32,
            _: *mut c_void,
        ) -> i32 {
            panic!("no arguments to report")
        }
        assert_eq!(
            iterate_args(record, Some(never), 1, std::ptr::null_mut()),
            S::ERROR_NOT_IMPLEMENTED
        );
        record.kind = sys::rocprofiler_callback_tracing_kind_t::NONE;
        assert_eq!(
            iterate_args(record, Some(never), 1, std::ptr::null_mut()),
            S::ERROR_INVALID_ARGUMENT
        );
    }

    // The arguments of real calls, as the tool iterated them at EXIT.
    let w = r#"{"sdk_version": "1.3.0",
        "graphs": [{"name": "g", "nodes": [{"kernel": "args_node", "grid": [8, 1, 1], "block": [64, 1, 1]},
                                         {"memset": {"bytes": 4096, "value": 3}, "deps": [0]}]}],
        "threads": [{"ops": [{"create_stream": {"name": "s"}},
            {"instantiate": {"graph": "g", "as": "e"}},
            {"launch": {"exec": "e", "stream": "s"}},
            {"kernel": {"name": "args_eager", "stream": "s", "grid": [64, 2, 1], "block": [128, 1, 1]}},
            {"memset": {"bytes": 1024, "value": 7, "stream": "s"}}]}]}"#;
    e.tool_clear();
    e.sim.run_workload(w, &RunOptions::default()).unwrap();
    e.sim.wait_idle(std::time::Duration::from_secs(30)).unwrap();
    let t = e.sim.ground_truth().unwrap().runs.pop().unwrap();
    let v = e.tool_results();
    use sys::hip_runtime_api_id as id;
    let launch = args_of(&v, id::hipLaunchKernel);
    let names: Vec<&str> = launch.iter().map(|a| a.1.as_str()).collect();
    assert_eq!(
        names,
        [
            "function_address",
            "numBlocks",
            "dimBlocks",
            "args",
            "sharedMemBytes",
            "stream"
        ]
    );
    let types: Vec<&str> = launch.iter().map(|a| a.0.as_str()).collect();
    assert_eq!(
        types,
        [
            "PKv",
            "18rocprofiler_dim3_t",
            "18rocprofiler_dim3_t",
            "PPv",
            "m",
            "P12ihipStream_t"
        ]
    );
    assert_eq!(launch[1].2, "{x=64, y=2, z=1}");
    assert_eq!(launch[3].2, "(null)");
    // function_address is the host stub the kernel's host symbol registered.
    let eager = t
        .ops
        .iter()
        .find(|o| o.kernel_name.as_deref() == Some("args_eager"))
        .unwrap();
    let stub = v["host_functions"][eager.kernel_id.to_string()]
        .as_u64()
        .unwrap();
    assert_eq!(launch[0].2, format!("{stub:#x}"));
    assert_eq!((eager.grid, eager.block), ([64 * 128, 2, 1], [128, 1, 1]));

    let create = args_of(&v, id::hipStreamCreate);
    assert_eq!(create.len(), 1);
    assert_eq!(
        (create[0].0.as_str(), create[0].3, create[0].4),
        ("PP12ihipStream_t", 2, 1)
    );
    let created: Vec<u64> = rows(&v, "callbacks")
        .iter()
        .filter(|c| c[0] == 20 && c[1] == 1)
        .map(|c| c[6])
        .collect();
    assert_eq!(
        create[0].2,
        format!("{:#x}", created[0]),
        "dereferenced: the stream written"
    );

    let node = args_of(&v, id::hipGraphAddKernelNode);
    assert_eq!(node.len(), 5);
    let node_stub = v["host_functions"][t
        .ops
        .iter()
        .find(|o| o.kernel_name.as_deref() == Some("args_node"))
        .unwrap()
        .kernel_id
        .to_string()]
    .as_u64()
    .unwrap();
    assert!(
        node[4].2.contains(&format!("func={node_stub:#x}")),
        "{}",
        node[4].2
    );
    assert!(
        node[4].2.contains("gridDim={x=8, y=1, z=1}"),
        "{}",
        node[4].2
    );
    let memset_node = args_of(&v, id::hipGraphAddMemsetNode);
    assert_eq!(memset_node[3].2, "1", "one dependency");
    assert!(memset_node[4].2.contains("value=3") && memset_node[4].2.contains("width=4096"));
    let memset = args_of(&v, id::hipMemsetAsync);
    assert_eq!((memset[1].1.as_str(), memset[1].2.as_str()), ("value", "7"));
}
