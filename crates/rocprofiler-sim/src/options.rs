//! Options of one workload run (the `options_json` of `rocsim_run_workload`).
pub use crate::model::{RocmParams, SubmissionModel};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunOptions {
    /// Names the workload in error messages and in the ground truth.
    pub source_name: Option<String>,
    /// HW queues per device; overrides GPU_MAX_HW_QUEUES and the workload.
    pub hw_queues: Option<u32>,
    /// Overrides the workload's `submission_model`.
    pub submission_model: Option<SubmissionModel>,
    /// Overrides the `rocm` model's parameters (and their environment
    /// variables, and the workload's `rocm` object).
    pub rocm: RocmParams,
    /// Compute timestamps without waiting for them: completions are delivered
    /// as soon as they are submitted (for million-dispatch benchmarks).
    pub virtual_time: bool,
    /// Seed of the submission jitter (each thread derives its own stream)
    /// and of the `rocm` model's record delivery lag.
    pub seed: u64,
    /// Upper bound of the random busy-wait a thread spends writing each
    /// packet (and, under `ideal`, between queuing and trying the queue
    /// lock). It makes contention happen on a 2-core machine; 0 disables it.
    pub jitter_ns: u64,
    /// Keep per-dispatch and per-call ground truth (turn off for huge
    /// benchmarks).
    pub record_truth: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            source_name: None,
            hw_queues: None,
            submission_model: None,
            rocm: RocmParams::default(),
            virtual_time: false,
            seed: 0x5eed,
            jitter_ns: 2_000,
            record_truth: true,
        }
    }
}
