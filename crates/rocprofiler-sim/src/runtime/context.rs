//! What every part of a run reads: the workload, the options, the resolved
//! settings, the kernel symbols, the graphs built so far, and the run's
//! record.
use super::graphs::Built;
use super::record::RunShared;
use super::work::KernelTable;
use crate::model::RocmSettings;
use crate::options::RunOptions;
use crate::workload::Workload;
use std::sync::{Arc, OnceLock};

/// What every part of a run reads.
pub(crate) struct Ctx<'w> {
    pub w: &'w Workload,
    pub opts: RunOptions,
    pub shared: Arc<RunShared>,
    pub kernels: KernelTable,
    pub graph_names: Vec<Arc<str>>,
    /// Graphs, by graph index, once built (see `graphs::built`).
    pub built: Vec<OnceLock<Built>>,
    /// GPU_MAX_HW_QUEUES of this run.
    pub hw_queues: u32,
    pub rocm: RocmSettings,
}

/// Resolves the HW queue count: run option, then GPU_MAX_HW_QUEUES, then the
/// workload, then 4 (rocclr/utils/flags.hpp `GPU_MAX_HW_QUEUES`, 4: "The
/// maximum number of HW queues allocated per device").
pub(crate) fn hw_queues(w: &Workload, opts: &RunOptions) -> u32 {
    opts.hw_queues
        .or_else(|| {
            std::env::var("GPU_MAX_HW_QUEUES")
                .ok()
                .and_then(|v| v.trim().parse::<u32>().ok())
                .filter(|v| *v > 0)
        })
        .or(w.hw_queues_per_device)
        .unwrap_or(4)
        .max(1)
}
