//! A HIP runtime call as the simulated runtime makes it: traced by the SDK
//! (ENTER/EXIT, buffer record, HIP_STREAM SET for calls with a stream) and
//! recorded in the ground truth with the thread's innermost CPU-op marker.
use super::record::RunShared;
use crate::sdk::os::{lock, tid};
use crate::sdk::trace::{ApiCall, StreamRef};
use crate::truth::CallTruth;
use rocprofiler_sys as sys;
use std::cell::RefCell;

thread_local! {
    /// Names of the push_marker ops in effect on this thread.
    static MARKERS: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

pub(crate) fn push_marker(name: &str) {
    MARKERS.with(|m| m.borrow_mut().push(name.to_string()));
}

pub(crate) fn pop_marker() {
    MARKERS.with(|m| {
        m.borrow_mut().pop();
    });
}

/// A HIP call in progress on this thread.
pub(crate) struct HipCall<'r> {
    pub api: ApiCall,
    run: &'r RunShared,
    stream_id: Option<u64>,
    /// Event calls: the event, and the record a wait waited for.
    pub event: Option<u64>,
    pub waited_record: Option<u64>,
    /// hipDeviceSynchronize: the device.
    pub device: Option<u32>,
}

impl<'r> HipCall<'r> {
    pub fn enter(
        run: &'r RunShared,
        op: i32,
        args: sys::rocprofiler_hip_api_args_t,
        stream: Option<StreamRef>,
    ) -> HipCall<'r> {
        lock(&run.truth).api_calls += 1;
        HipCall {
            api: ApiCall::enter(op, args, stream),
            run,
            stream_id: stream.map(|s| s.id),
            event: None,
            waited_record: None,
            device: None,
        }
    }

    pub fn corr(&self) -> u64 {
        self.api.corr
    }

    /// EXIT with `retval` (a hipError_t).
    pub fn exit(self, retval: i32) {
        let (corr, op, enter_ns) = (self.api.corr, self.api.op, self.api.start_ns);
        let exit_ns = self.api.exit(retval);
        if !self.run.record_truth {
            return;
        }
        let marker = MARKERS.with(|m| m.borrow().last().cloned());
        lock(&self.run.truth).calls.push(CallTruth {
            correlation_id: corr,
            thread: tid(),
            operation: op,
            name: sys::hip_runtime_api_id::name(op)
                .unwrap_or("unknown")
                .to_string(),
            stream_id: self.stream_id,
            enter_ns,
            exit_ns,
            marker,
            event: self.event,
            waited_record_correlation_id: self.waited_record,
            device: self.device,
        });
    }
}
