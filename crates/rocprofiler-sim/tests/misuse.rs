//! Malformed calls get the SDK's statuses; configuring outside initialize is
//! locked; the tool's own probes inside initialize saw the right statuses.
mod common;
use common::*;
use rocprofiler_sim::options::RunOptions;
use rocprofiler_sys as sys;
use std::ffi::c_void;
use std::ptr::null_mut;

type S = sys::rocprofiler_status_t;

unsafe extern "C" fn cb(
    _: sys::rocprofiler_callback_tracing_record_t,
    _: *mut sys::rocprofiler_user_data_t,
    _: *mut c_void,
) {
}

#[test]
fn statuses() {
    let e = env();
    // SAFETY: the SDK symbols have the types rocprofiler-sys declares.
    unsafe {
        let is_init = e
            .sim
            .symbol::<sys::rocprofiler_is_initialized_fn>("rocprofiler_is_initialized")
            .unwrap();
        let create = e
            .sim
            .symbol::<sys::rocprofiler_create_context_fn>("rocprofiler_create_context")
            .unwrap();
        let conf = e
            .sim
            .symbol::<sys::rocprofiler_configure_callback_tracing_service_fn>(
                "rocprofiler_configure_callback_tracing_service",
            )
            .unwrap();
        let flush = e
            .sim
            .symbol::<sys::rocprofiler_buffer_fn>("rocprofiler_flush_buffer")
            .unwrap();
        let start = e
            .sim
            .symbol::<sys::rocprofiler_context_fn>("rocprofiler_start_context")
            .unwrap();
        let ts = e
            .sim
            .symbol::<sys::rocprofiler_get_timestamp_fn>("rocprofiler_get_timestamp")
            .unwrap();
        let force = e
            .sim
            .symbol::<sys::rocprofiler_force_configure_fn>("rocprofiler_force_configure")
            .unwrap();
        let valid = e
            .sim
            .symbol::<sys::rocprofiler_context_query_fn>("rocprofiler_context_is_valid")
            .unwrap();

        let mut st = 7;
        assert_eq!(is_init(&mut st), S::SUCCESS);
        assert_eq!(st, 0, "not initialized before the runtime's first use");
        let mut ctx = sys::rocprofiler_context_id_t::default();
        assert_eq!(
            create(&mut ctx),
            S::ERROR_CONFIGURATION_LOCKED,
            "before initialize"
        );

        e.sim
            .run_workload_file(
                &workload("topology-chain6.json"),
                &RunOptions {
                    virtual_time: true,
                    ..Default::default()
                },
            )
            .unwrap();
        e.sim.wait_idle(std::time::Duration::from_secs(30)).unwrap();
        assert_eq!(is_init(&mut st), S::SUCCESS);
        assert_eq!(st, 1);

        // Outside initialize: locked.
        assert_eq!(create(&mut ctx), S::ERROR_CONFIGURATION_LOCKED);
        let tool_ctx = sys::rocprofiler_context_id_t { handle: 0x100 };
        assert_eq!(
            conf(
                tool_ctx,
                sys::rocprofiler_callback_tracing_kind_t::HIP_RUNTIME_API,
                std::ptr::null(),
                0,
                Some(cb),
                null_mut()
            ),
            S::ERROR_CONFIGURATION_LOCKED
        );
        assert_eq!(force(None), S::ERROR_CONFIGURATION_LOCKED);
        // Null pointers, unknown ids.
        assert_eq!(is_init(null_mut()), S::ERROR_INVALID_ARGUMENT);
        assert_eq!(create(null_mut()), S::ERROR_INVALID_ARGUMENT);
        assert_eq!(ts(null_mut()), S::ERROR_INVALID_ARGUMENT);
        assert_eq!(valid(tool_ctx, null_mut()), S::ERROR_INVALID_ARGUMENT);
        assert_eq!(valid(tool_ctx, &mut st), S::SUCCESS);
        assert_eq!(st, 1);
        assert_eq!(
            flush(sys::rocprofiler_buffer_id_t { handle: 42 }),
            S::ERROR_BUFFER_NOT_FOUND
        );
        assert_eq!(
            start(sys::rocprofiler_context_id_t { handle: 42 }),
            S::ERROR_CONTEXT_NOT_FOUND
        );
    }
    // What the tool saw inside initialize.
    let p = probes(&e.tool_results());
    assert_eq!(p["create_context"], 0);
    assert_eq!(p["callback kind 999"], 4, "KIND_NOT_FOUND");
    assert_eq!(p["callback unknown context"], 2, "CONTEXT_NOT_FOUND");
    assert_eq!(
        p["callback HIP_STREAM again"], 15,
        "SERVICE_ALREADY_CONFIGURED"
    );
    assert_eq!(p["create_buffer null id"], 19, "INVALID_ARGUMENT");
    assert_eq!(p["external request count 0"], 19, "INVALID_ARGUMENT");
    assert_eq!(p["external request"], 0);
    assert_eq!(p["start_context"], 0);
    // Shutdown calls the tool's finalize once.
    e.sim.shutdown().unwrap();
    assert_eq!(e.tool_results()["finalized"], true);
}
