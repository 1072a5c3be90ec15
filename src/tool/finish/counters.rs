//! Counter values by dispatch and pass: written by the dispatch counting
//! service's record callback, taken when the dispatch's kernel record is
//! finished into a window. Why keyed by dispatch id: the SDK gives the
//! counter record and the kernel record the same one, and nothing else
//! joins them; and by pass, because kernel replay gives every pass of a
//! dispatch that same id (a dispatch not replayed is pass 0).
//! Each dispatch keeps the names of the group it was counted with, since
//! the group asked for can change between traces.
use dashmap::DashMap;
use once_cell::sync::Lazy;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A counter group: counter names in the order asked for.
pub type GroupNames = Arc<[String]>;

/// Per dispatch: its group, and one slot per name (`None` where no record
/// came).
type Counted = (GroupNames, Vec<Option<f64>>);

static BY_DISPATCH: Lazy<DashMap<(u64, u32), Counted>> = Lazy::new(DashMap::new);
/// Set once anything was counted: until then finishing looks nothing up.
static EVER: AtomicBool = AtomicBool::new(false);

/// Adds one instance's value of counter `index` of `group` for a dispatch's
/// pass: a counter's dimensions are summed.
pub fn add(dispatch_id: u64, pass: u32, group: &GroupNames, index: usize, value: f64) {
    EVER.store(true, Ordering::Relaxed);
    let mut counted = BY_DISPATCH
        .entry((dispatch_id, pass))
        .or_insert_with(|| (group.clone(), vec![None; group.len()]));
    if let Some(slot) = counted.1.get_mut(index) {
        *slot = Some(slot.unwrap_or(0.0) + value);
    }
}

/// The values of a dispatch's pass, by name, removed from the store;
/// counters without a record are left out (never guessed).
pub fn take(dispatch_id: u64, pass: u32) -> Vec<(String, f64)> {
    if !EVER.load(Ordering::Relaxed) {
        return Vec::new();
    }
    let Some((_, (names, slots))) = BY_DISPATCH.remove(&(dispatch_id, pass)) else {
        return Vec::new();
    };
    names
        .iter()
        .zip(slots)
        .filter_map(|(name, value)| Some((name.clone(), value?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(names: &[&str]) -> GroupNames {
        names.iter().map(|n| n.to_string()).collect()
    }

    // Dispatch ids are process-wide: each test uses ids of its own.
    #[test]
    fn dimensions_are_summed_and_taken_once() {
        let g = group(&["SQ_WAVES", "GRBM_COUNT"]);
        add(1_007, 0, &g, 0, 3.0);
        add(1_007, 0, &g, 0, 4.0);
        add(1_007, 0, &g, 1, 10.0);
        assert_eq!(
            take(1_007, 0),
            vec![("SQ_WAVES".into(), 7.0), ("GRBM_COUNT".into(), 10.0)]
        );
        assert!(take(1_007, 0).is_empty(), "taken values are gone");
    }

    #[test]
    fn a_counter_without_a_record_is_left_out() {
        let g = group(&["SQ_WAVES", "GRBM_COUNT"]);
        add(2_003, 0, &g, 1, 5.0);
        add(2_003, 0, &g, 9, 1.0);
        assert_eq!(take(2_003, 0), vec![("GRBM_COUNT".into(), 5.0)]);
        assert!(take(2_004, 0).is_empty());
    }

    #[test]
    fn each_pass_of_a_replayed_dispatch_keeps_its_own_values() {
        add(4_001, 1, &group(&["SQ_WAVES"]), 0, 1.0);
        add(4_001, 2, &group(&["GRBM_COUNT"]), 0, 2.0);
        assert!(take(4_001, 0).is_empty());
        assert_eq!(take(4_001, 2), vec![("GRBM_COUNT".into(), 2.0)]);
        assert_eq!(take(4_001, 1), vec![("SQ_WAVES".into(), 1.0)]);
    }

    #[test]
    fn each_dispatch_keeps_the_group_it_was_counted_with() {
        add(3_001, 0, &group(&["SQ_WAVES"]), 0, 1.0);
        add(3_002, 0, &group(&["GPU_UTIL"]), 0, 2.0);
        assert_eq!(take(3_001, 0), vec![("SQ_WAVES".into(), 1.0)]);
        assert_eq!(take(3_002, 0), vec![("GPU_UTIL".into(), 2.0)]);
    }
}
