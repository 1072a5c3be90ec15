//! The device work of the calls of open windows, as each thread reads it
//! from its call's arguments at ENTER, kept until a window is finished.
//!
//! Why not a map by correlation id: nothing looks a call's work up until
//! its window is finished, and then all of it is taken at once. An eager
//! loop records a call per kernel, so a concurrent map paid a hash insert
//! (and the table's growth, and memory it kept after) per call for lookups
//! nobody made. Here a call appends to one of a few shards, picked by its
//! thread, under a lock another thread rarely wants.

use graph_attribution::CallWork;
use std::sync::Mutex;

/// Shards: enough that threads launching at once rarely share one.
const SHARDS: usize = 16;

#[derive(Default)]
pub struct CallWorks {
    shards: [Mutex<Vec<(u64, CallWork)>>; SHARDS],
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl CallWorks {
    /// Call `correlation_id`, on thread `thread_id`, does `work`.
    pub fn record(&self, thread_id: u64, correlation_id: u64, work: CallWork) {
        let shard = (thread_id.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 60) as usize % SHARDS;
        lock(&self.shards[shard]).push((correlation_id, work));
    }

    /// Takes the work of every call up to `last_correlation_id` (a
    /// finished window's), leaving later calls' (the next window's).
    pub fn take_through(&self, last_correlation_id: u64) -> Vec<(u64, CallWork)> {
        let mut taken = Vec::new();
        for shard in &self.shards {
            let mut shard = lock(shard);
            if shard.iter().all(|&(c, _)| c <= last_correlation_id) {
                // All of it (as when windows do not overlap): the shard
                // starts again empty, keeping no capacity from a big window.
                if taken.is_empty() {
                    taken = std::mem::take(&mut *shard);
                } else {
                    taken.append(&mut std::mem::take(&mut *shard));
                }
            } else {
                let (earlier, later): (Vec<_>, Vec<_>) = std::mem::take(&mut *shard)
                    .into_iter()
                    .partition(|&(c, _)| c <= last_correlation_id);
                taken.extend(earlier);
                *shard = later;
            }
        }
        taken
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_takes_its_calls_and_leaves_later_ones() {
        let works = CallWorks::default();
        for (thread, c) in [(1, 10), (2, 11), (1, 12), (3, 20), (2, 21)] {
            works.record(thread, c, CallWork::Barrier);
        }
        let mut first: Vec<u64> = works.take_through(12).iter().map(|&(c, _)| c).collect();
        first.sort_unstable();
        assert_eq!(first, [10, 11, 12]);
        let mut rest: Vec<u64> = works
            .take_through(u64::MAX)
            .iter()
            .map(|&(c, _)| c)
            .collect();
        rest.sort_unstable();
        assert_eq!(rest, [20, 21]);
        assert!(works.take_through(u64::MAX).is_empty());
    }
}
