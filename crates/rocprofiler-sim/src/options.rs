//! Options of one workload run (the `options_json` of `rocsim_run_workload`).
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunOptions {
    /// Names the workload in error messages and in the ground truth.
    pub source_name: Option<String>,
    /// HW queues per device; overrides GPU_MAX_HW_QUEUES and the workload.
    pub hw_queues: Option<u32>,
    /// Compute timestamps without waiting for them: completions are delivered
    /// as soon as they are submitted (for million-dispatch benchmarks).
    pub virtual_time: bool,
    /// Seed of the submission jitter (each thread derives its own stream).
    pub seed: u64,
    /// Upper bound of the random busy-wait a writer spends per packet while it
    /// holds a HW queue, and a launcher between queuing and trying the lock.
    /// It makes contention happen on a 2-core machine; 0 disables it.
    pub jitter_ns: u64,
    /// Keep per-dispatch ground truth (turn off for huge benchmarks).
    pub record_truth: bool,
    /// How HIP submits work and the SDK sees it; overrides the workload's
    /// `submission_model` (default `rocm`). Left out of the JSON when unset,
    /// so a host can drive a simulator built before the field existed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub submission_model: Option<SubmissionModel>,
}

/// How the simulated HIP runtime submits work (specs/sim-rocm-model.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SubmissionModel {
    /// As HIP and rocprofiler-sdk do: segment-scheduled graph batches on
    /// several HW queues, packets processed by whichever thread rings.
    Rocm,
    /// The seed's model: a launch queues all its packets, the queue's
    /// holder writes everything pending inside its own call.
    Ideal,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            source_name: None,
            hw_queues: None,
            virtual_time: false,
            seed: 0x5eed,
            jitter_ns: 2_000,
            record_truth: true,
            submission_model: None,
        }
    }
}
