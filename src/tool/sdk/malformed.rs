//! One warning per kind of malformed SDK record. The records themselves are
//! counted where every other refused record is, in the activity store's
//! drop counts (reported in each window's summary).
use super::decode::Malformed;
use std::sync::atomic::{AtomicBool, Ordering};

#[derive(Default)]
pub struct MalformedWarnings {
    warned: [AtomicBool; Malformed::ALL.len()],
}

impl MalformedWarnings {
    pub fn note(&self, defect: Malformed) {
        let index = Malformed::ALL
            .iter()
            .position(|d| *d == defect)
            .expect("ALL lists every defect");
        if !self.warned[index].swap(true, Ordering::Relaxed) {
            log::warn!(
                "kineto-rocm: skipping SDK records with {} (counted; warned once)",
                defect.describe()
            );
        }
    }
}
