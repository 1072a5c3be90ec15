//! Which submission model a run uses, and the `rocm` model's parameters.
//!
//! Each parameter resolves run option > environment variable (the one HIP
//! or the simulator reads) > workload > default.
use serde::{Deserialize, Serialize};

/// How work reaches the simulated GPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SubmissionModel {
    /// As HIP and rocprofiler-sdk submit (see `runtime`): the default.
    #[default]
    Rocm,
    /// The earlier, kinder model, kept for regression: one HW queue per
    /// stream for a launch's packets, a FIFO drained by whoever holds the
    /// queue, records with the true queue and kernel count.
    Ideal,
}

impl SubmissionModel {
    pub fn name(self) -> &'static str {
        match self {
            SubmissionModel::Rocm => "rocm",
            SubmissionModel::Ideal => "ideal",
        }
    }
}

/// The `rocm` model's knobs as a workload or run options give them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RocmParams {
    /// DEBUG_HIP_GRAPH_BATCH_SIZE: packets per graph batch chunk at most.
    pub graph_batch_size: Option<u32>,
    /// DEBUG_HIP_FORCE_GRAPH_QUEUES: streams a graph exec may use.
    pub graph_streams: Option<u32>,
    /// DEBUG_HIP_GRAPH_SEGMENT_SCHEDULING: 0 off, 1 on, 2 forced.
    pub segment_scheduling: Option<u32>,
    /// DEBUG_HIP_DYNAMIC_QUEUES: 0 off, 1 depth, 2 depth + pipes.
    pub dynamic_queues: Option<u32>,
    /// ROC_AQL_QUEUE_SIZE (rocclr's AQL queue size, 16384 by default): packets
    /// a HW queue holds in flight before the intercept layer overflows to
    /// ROCr's async thread.
    pub hw_queue_slots: Option<u64>,
    /// ROCSIM_DELIVERY_LAG_NS: most extra time between a kernel's end and
    /// its record reaching the buffer.
    pub delivery_lag_ns: Option<u64>,
}

/// The resolved `rocm` parameters of one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RocmSettings {
    pub graph_batch_size: u32,
    pub graph_streams: u32,
    pub segment_scheduling: u32,
    pub dynamic_queues: u32,
    pub hw_queue_slots: u64,
    pub delivery_lag_ns: u64,
}

impl RocmParams {
    /// Checks the values; Err is (field, expectation and value).
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        let positive = |field: &'static str, v: Option<u64>| match v {
            Some(0) => Err((field, "expected at least 1, got 0".to_string())),
            _ => Ok(()),
        };
        positive("graph_batch_size", self.graph_batch_size.map(u64::from))?;
        positive("graph_streams", self.graph_streams.map(u64::from))?;
        positive("hw_queue_slots", self.hw_queue_slots)?;
        for (field, v) in [
            ("segment_scheduling", self.segment_scheduling),
            ("dynamic_queues", self.dynamic_queues),
        ] {
            if let Some(v) = v.filter(|v| *v > 2) {
                return Err((field, format!("expected 0, 1 or 2, got {v}")));
            }
        }
        Ok(())
    }
}

fn env<T: std::str::FromStr>(var: &str) -> Result<Option<T>, String> {
    match std::env::var(var) {
        Ok(v) if !v.trim().is_empty() => v.trim().parse::<T>().map(Some).map_err(|_| {
            format!("environment variable {var}: expected a non-negative integer, got {v:?}")
        }),
        _ => Ok(None),
    }
}

/// Resolves run option > environment > workload > default.
pub fn resolve(run: &RocmParams, workload: &RocmParams) -> Result<RocmSettings, String> {
    let from_env = RocmParams {
        graph_batch_size: env("DEBUG_HIP_GRAPH_BATCH_SIZE")?,
        graph_streams: env("DEBUG_HIP_FORCE_GRAPH_QUEUES")?,
        segment_scheduling: env("DEBUG_HIP_GRAPH_SEGMENT_SCHEDULING")?,
        dynamic_queues: env("DEBUG_HIP_DYNAMIC_QUEUES")?,
        hw_queue_slots: env("ROC_AQL_QUEUE_SIZE")?,
        delivery_lag_ns: env("ROCSIM_DELIVERY_LAG_NS")?,
    };
    run.check()
        .map_err(|(f, m)| format!("run options: at `rocm.{f}`: {m}"))?;
    from_env
        .check()
        .map_err(|(f, m)| format!("environment ({f}): {m}"))?;
    let pick = |r: Option<u64>, e: Option<u64>, w: Option<u64>, d: u64| r.or(e).or(w).unwrap_or(d);
    let u = |v: Option<u32>| v.map(u64::from);
    Ok(RocmSettings {
        // rocclr/utils/flags.hpp defaults (FLAGS-NEW).
        graph_batch_size: pick(
            u(run.graph_batch_size),
            u(from_env.graph_batch_size),
            u(workload.graph_batch_size),
            256,
        ) as u32,
        graph_streams: pick(
            u(run.graph_streams),
            u(from_env.graph_streams),
            u(workload.graph_streams),
            4,
        ) as u32,
        segment_scheduling: pick(
            u(run.segment_scheduling),
            u(from_env.segment_scheduling),
            u(workload.segment_scheduling),
            1,
        ) as u32,
        dynamic_queues: pick(
            u(run.dynamic_queues),
            u(from_env.dynamic_queues),
            u(workload.dynamic_queues),
            2,
        ) as u32,
        hw_queue_slots: pick(
            run.hw_queue_slots,
            from_env.hw_queue_slots,
            workload.hw_queue_slots,
            16384,
        ),
        delivery_lag_ns: pick(
            run.delivery_lag_ns,
            from_env.delivery_lag_ns,
            workload.delivery_lag_ns,
            20_000_000,
        ),
    })
}
