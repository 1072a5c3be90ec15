//! Counts records the decoder skipped, warning once per kind of defect.
use super::decode::Malformed;
use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Default)]
pub struct MalformedCounts {
    counts: [AtomicU64; Malformed::ALL.len()],
}

impl MalformedCounts {
    pub fn record(&self, defect: Malformed) {
        let slot = &self.counts[Self::index(defect)];
        if slot.fetch_add(1, Ordering::Relaxed) == 0 {
            log::warn!(
                "kineto-rocm: skipping SDK records with {} (counted; warned once)",
                defect.describe()
            );
        }
    }

    pub fn count(&self, defect: Malformed) -> u64 {
        self.counts[Self::index(defect)].load(Ordering::Relaxed)
    }

    pub fn total(&self) -> u64 {
        Malformed::ALL.iter().map(|d| self.count(*d)).sum()
    }

    fn index(defect: Malformed) -> usize {
        Malformed::ALL
            .iter()
            .position(|d| *d == defect)
            .expect("ALL lists every defect")
    }
}
