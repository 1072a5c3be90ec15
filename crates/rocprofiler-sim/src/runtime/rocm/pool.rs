//! HW queues of a device (ROCm/clr rocclr/device/rocm/rocdevice.cpp,
//! DEV-NEW 01280b9d: `acquireQueue`, `getQueueFromPool`): every stream
//! (user streams and each exec's parallel streams) takes a queue from its
//! device's normal-priority pool. Below GPU_MAX_HW_QUEUES a new queue is
//! created for it; after that the least loaded queue is shared. The load is
//! `GetLoadMetric` = (queue depth << 4) + refCount when
//! DEBUG_HIP_DYNAMIC_QUEUES is 1 or 2, the refCount alone when it is 0;
//! excluded queues come last; ties go to the lowest queue id (the pool is
//! ordered by id). Left out: the pipe-distribution tie break
//! (`id % num_pipes`; the sources read give no pipe count) and the
//! dedicated-queue penalty (+2048; the workload format has no op on the
//! null stream, so the simulator never creates it).
//!
//! Pools belong to the process: queues, and the work queued on them,
//! persist across runs. A run with another GPU_MAX_HW_QUEUES stands for a
//! differently configured process and gets a pool of its own.
use super::hwqueue::HwQueue;
use crate::sdk::agents::agent_handle;
use crate::sdk::os::lock;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

pub(crate) struct Pool {
    device: u32,
    pub max: u32,
    /// Queues in creation (= id) order with their reference counts.
    queues: Vec<(Arc<HwQueue>, u32)>,
    /// Live streams on the device (DEV-NEW `num_queues_`).
    pub streams: u32,
}

/// The process's pool of `device` under GPU_MAX_HW_QUEUES = `max`.
pub(crate) fn pool(device: u32, max: u32) -> Arc<Mutex<Pool>> {
    type Pools = Mutex<HashMap<(u32, u32), Arc<Mutex<Pool>>>>;
    static POOLS: OnceLock<Pools> = OnceLock::new();
    lock(POOLS.get_or_init(|| Mutex::new(HashMap::new())))
        .entry((device, max))
        .or_insert_with(|| {
            Arc::new(Mutex::new(Pool {
                device,
                max,
                queues: Vec::new(),
                streams: 0,
            }))
        })
        .clone()
}

fn new_queue_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    0x7f10_0000_0000 + (NEXT.fetch_add(1, Ordering::Relaxed) << 12)
}

impl Pool {
    /// A queue for a stream; `exclude` = queue ids it should avoid.
    pub fn acquire(&mut self, dynamic_queues: u32, exclude: &[u64]) -> Arc<HwQueue> {
        if (self.queues.len() as u32) < self.max {
            let q = Arc::new(HwQueue::new(
                new_queue_id(),
                self.queues.len() as u32,
                agent_handle(self.device + 1),
            ));
            self.queues.push((q.clone(), 1));
            return q;
        }
        let (i, _) = self
            .queues
            .iter()
            .enumerate()
            .min_by_key(|(i, (q, refs))| {
                let load = if dynamic_queues >= 1 {
                    (q.depth() << 4) + u64::from(*refs)
                } else {
                    u64::from(*refs)
                };
                (exclude.contains(&q.id), load, *i)
            })
            .expect("a full pool has queues");
        self.queues[i].1 += 1;
        self.queues[i].0.clone()
    }

    /// A stream gives its queue back.
    pub fn release(&mut self, q: &HwQueue) {
        if let Some(e) = self.queues.iter_mut().find(|(x, _)| x.id == q.id) {
            e.1 = e.1.saturating_sub(1);
        }
    }
}
