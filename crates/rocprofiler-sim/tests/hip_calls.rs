//! The HIP runtime calls kineto's own ROCm backend makes (src/hip.rs):
//! device count before and after the runtime's first use, versions, a
//! device synchronisation that waits for every completion, and device
//! properties reported as not modelled.
mod common;
use common::*;
use rocprofiler_sim::options::RunOptions;
use rocprofiler_sim::truth::OpKind;
use std::ffi::{c_char, c_int, c_void, CStr};

#[test]
fn kinetos_hip_calls_answer_from_the_simulated_runtime() {
    let e = env();
    // SAFETY: symbols with the signatures src/hip.rs exports.
    unsafe {
        let count = e
            .sim
            .symbol::<unsafe extern "C" fn(*mut c_int) -> c_int>("hipGetDeviceCount")
            .unwrap();
        let mut n = -1;
        assert_eq!(count(&mut n), 0);
        assert_eq!(n, 4, "ROCSIM_DEVICES' default before the first workload");
        assert_eq!(count(std::ptr::null_mut()), 1, "hipErrorInvalidValue");

        let w = std::fs::read_to_string(workload("topology-fanout2.json")).unwrap();
        e.sim.run_workload(&w, &RunOptions::default()).unwrap();
        let sync = e
            .sim
            .symbol::<unsafe extern "C" fn() -> c_int>("hipDeviceSynchronize")
            .unwrap();
        assert_eq!(sync(), 0);
        // Synchronised: every dispatch that ran has reached the tool.
        let truth = e.sim.ground_truth().unwrap();
        let ran = truth.runs[0]
            .ops
            .iter()
            .filter(|op| op.kind == OpKind::Kernel)
            .count();
        assert!(ran > 0);
        assert_eq!(rows(&e.tool_results(), "dispatches").len(), ran);
        assert_eq!(count(&mut n), 0);
        assert_eq!(n, 4, "the agents the first workload fixed");

        let version = e
            .sim
            .symbol::<unsafe extern "C" fn(*mut c_int) -> c_int>("hipRuntimeGetVersion")
            .unwrap();
        let mut v = 0;
        assert_eq!(version(&mut v), 0);
        assert_eq!(v, 70_000_000);

        let props = e
            .sim
            .symbol::<unsafe extern "C" fn(*mut c_void, c_int) -> c_int>(
                "hipGetDevicePropertiesR0600",
            )
            .unwrap();
        assert_eq!(props(std::ptr::null_mut(), 0), 801);
        let text = e
            .sim
            .symbol::<unsafe extern "C" fn(c_int) -> *const c_char>("hipGetErrorString")
            .unwrap();
        assert_eq!(
            CStr::from_ptr(text(801)).to_str().unwrap(),
            "hipErrorNotSupported"
        );
    }
}
