//! What a run records, shared with device work that completes after the
//! run's threads finished: the ground truth, and when a finished op's
//! record reaches the buffers.
use super::rng::mix;
use super::work::{DeviceOp, OpWork};
use crate::sdk::buffer::Rec;
use crate::sdk::completion::{schedule, Completion};
use crate::sdk::counters::{counter_dimensions, counter_name};
use crate::sdk::dimensions::position;
use crate::sdk::dispatch_counting::request;
use crate::sdk::dispatch_counting::{Counted, CounterValues, Counting};
use crate::sdk::intercept::{dispatch_record, submit_dispatch, Deliveries, DispatchInfo};
use crate::sdk::os::lock;
use crate::sdk::thread_trace::{self, Traced};
use crate::truth::{CounterInstanceTruth, OpKind, OpTruth, RunTruth};
use std::sync::Mutex;

pub(crate) struct RunShared {
    pub truth: Mutex<RunTruth>,
    pub record_truth: bool,
    pub virtual_time: bool,
    /// Most extra delay between an op's end and its record's delivery.
    pub delivery_lag_ns: u64,
    pub seed: u64,
}

/// What the SDK captured when it intercepted an op, delivered when the op
/// completes: where its record goes, and what counting services asked.
pub(crate) struct Captured {
    pub deliveries: Deliveries,
    pub counting: Counting,
    pub traced: Traced,
}

impl Captured {
    /// One submission of an intercepted kernel packet (each kernel-replay
    /// pass is one; `pass` 0 when not replayed), on the processing thread:
    /// the external-correlation request, then the counting and thread-trace
    /// services' answers.
    pub fn kernel_submission(info: &DispatchInfo, pass: u32) -> Captured {
        Captured {
            deliveries: submit_dispatch(info.corr),
            counting: request(info),
            traced: thread_trace::request(info, pass),
        }
    }
}

/// How the SDK saw an op: where and when it was processed.
#[derive(Clone)]
pub(crate) struct Processed {
    pub dispatch_id: u64,
    pub copy_id: u64,
    pub corr: u64,
    pub thread: u64,
    pub agent: u64,
    pub queue_id: u64,
    pub queue_index: u32,
    pub publish_ns: u64,
    pub process_ns: u64,
    pub async_processed: bool,
    /// The kernel replay pass this record is, if replayed.
    pub replay_pass: Option<u32>,
}

impl RunShared {
    /// When the record of an op that ended at `end` is delivered: ROCr's
    /// async signal handler reads the timestamps and writes the record after
    /// the completion signal fires (SDK-1.0 hsa/queue.cpp
    /// `AsyncSignalHandler`), up to tens of ms later as measured: here up to
    /// `delivery_lag_ns`, uniform from the run's seed and `key`; at once
    /// under virtual time.
    fn deliver_ns(&self, end: u64, key: u64) -> u64 {
        if self.virtual_time || self.delivery_lag_ns == 0 {
            return end;
        }
        end + mix(self.seed ^ key.wrapping_mul(0x2545_f491_4f6c_dd1d)) % (self.delivery_lag_ns + 1)
    }

    /// Hands a finished op's record to the completion thread (announced
    /// with `completion::expect`) and records the op's truth.
    pub fn finish(
        &self,
        op: &DeviceOp,
        p: &Processed,
        rec: Rec,
        captured: Captured,
        start: u64,
        end: u64,
    ) {
        let counted = captured.counting.count(start, end);
        self.record(op, p, &counted, captured.traced.bytes(), start, end);
        schedule(Completion {
            deliver_ns: self.deliver_ns(end, p.dispatch_id ^ (p.copy_id << 40)),
            wait: !self.virtual_time,
            corr: p.corr,
            rec,
            deliveries: captured.deliveries,
            counted,
            traced: captured.traced,
        });
    }

    /// `finish` for a kernel whose record `info` describes.
    pub fn finish_kernel(
        &self,
        op: &DeviceOp,
        p: &Processed,
        info: &DispatchInfo,
        captured: Captured,
        start: u64,
        end: u64,
    ) {
        let rec = Rec::Kernel(dispatch_record(info, start, end));
        self.finish(op, p, rec, captured, start, end);
    }

    /// Records an op's ground truth.
    pub fn record(
        &self,
        op: &DeviceOp,
        p: &Processed,
        counted: &Counted,
        thread_trace_bytes: u64,
        start: u64,
        end: u64,
    ) {
        if !self.record_truth {
            return;
        }
        let o = &op.origin;
        let mut t = OpTruth {
            kind: OpKind::Kernel,
            blit: false,
            dispatch_id: p.dispatch_id,
            copy_id: p.copy_id,
            record_correlation_id: p.corr,
            processing_thread: p.thread,
            launch_correlation_id: o.launch_corr,
            launching_thread: o.launching_thread,
            exec_handle: o.exec_handle,
            graph_exec_id: o.graph_exec_id,
            exec_epoch: o.exec_epoch,
            graph: o.graph.as_ref().map(|g| g.to_string()),
            node_index: op.node_index,
            submission_ordinal: op.ordinal,
            kernel_name: None,
            kernel_id: 0,
            grid: [0; 3],
            block: [0; 3],
            bytes: 0,
            direction: None,
            value: None,
            src_device: None,
            dst_device: None,
            device: op.device,
            agent_id: p.agent,
            queue_index: p.queue_index,
            queue_id: p.queue_id,
            stream_id: o.stream_id,
            exec_stream_id: op.exec_stream_id,
            publish_ns: p.publish_ns,
            process_ns: p.process_ns,
            start_ns: start,
            end_ns: end,
            async_processed: p.async_processed,
            replay_pass: p.replay_pass,
            thread_trace_bytes,
            counters: counted
                .values()
                .filter_map(|c| {
                    let sum = c.instances.iter().map(|(_, v)| v).sum();
                    Some((counter_name(c.counter)?.to_string(), sum))
                })
                .collect(),
            counter_instances: counted.values().flat_map(instance_truths).collect(),
        };
        match &op.work {
            OpWork::Kernel {
                kernel_id,
                name,
                grid,
                workgroup,
                blit,
                bytes,
                direction,
                value,
            } => {
                t.value = *value;
                t.blit = *blit;
                t.kernel_id = *kernel_id;
                t.kernel_name = Some(name.to_string());
                t.grid = *grid;
                t.block = *workgroup;
                t.bytes = *bytes;
                t.direction = *direction;
            }
            OpWork::Copy {
                bytes,
                direction,
                peer,
            } => {
                t.src_device = peer.map(|p| p.0);
                t.dst_device = peer.map(|p| p.1);
                t.kind = OpKind::Memcpy;
                t.bytes = *bytes;
                t.direction = Some(*direction);
            }
        }
        lock(&self.truth).ops.push(t);
    }
}

/// A counter's instance values as the ground truth keeps them: each
/// instance's position in each dimension, decoded from its id.
fn instance_truths(c: &CounterValues) -> Vec<CounterInstanceTruth> {
    let (Some(name), Some(dims)) = (counter_name(c.counter), counter_dimensions(c.counter)) else {
        return Vec::new();
    };
    c.instances
        .iter()
        .map(|&(id, value)| CounterInstanceTruth {
            counter: name.to_string(),
            dimensions: dims
                .iter()
                .map(|d| {
                    let name = d.name.to_str().unwrap_or_default().to_string();
                    (name, position(id, d.id) as usize)
                })
                .collect(),
            value,
        })
        .collect()
}
