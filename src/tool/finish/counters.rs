//! Counter values by dispatch and pass: written by the dispatch counting
//! service's record callback, taken when the dispatch's kernel record is
//! finished into a window. Why keyed by dispatch id: the SDK gives the
//! counter record and the kernel record the same one, and nothing else
//! joins them; and by pass, because kernel replay gives every pass of a
//! dispatch that same id (a dispatch not replayed is pass 0).
//! Each dispatch keeps the names of the group it was counted with, since
//! the group asked for can change between traces. With counter dimensions
//! asked for (`KINETO_ROCM_COUNTER_DIMENSIONS`), each instance's value is
//! kept too, in a slot the agent's config gave it, under its args key.
use dashmap::DashMap;
use once_cell::sync::Lazy;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A counter group: counter names in the order asked for.
pub type GroupNames = Arc<[String]>;

/// An agent's counter instances for a group: each one's args key
/// (src/vocabulary.rs `counter_instance_key`), by slot.
pub type InstanceKeys = Arc<[String]>;

/// One dispatch pass's values: its group and one slot per name, and its
/// instance keys and one slot per instance (`None` where no record came).
struct Counted {
    names: GroupNames,
    sums: Vec<Option<f64>>,
    instances: Option<(InstanceKeys, Vec<Option<f64>>)>,
}

/// What a dispatch pass counted, by name: the sums, and each instance's
/// value (empty unless dimensions were asked for).
#[derive(Debug, Default, PartialEq)]
pub struct Taken {
    pub sums: Vec<(String, f64)>,
    pub instances: Vec<(String, f64)>,
}

static BY_DISPATCH: Lazy<DashMap<(u64, u32), Counted>> = Lazy::new(DashMap::new);
/// Set once anything was counted: until then finishing looks nothing up.
static EVER: AtomicBool = AtomicBool::new(false);

/// Adds one instance's value of counter `index` of `group` for a dispatch's
/// pass: a counter's dimensions are summed; `instance`, when dimensions
/// are asked for, also keeps the value in its slot.
pub fn add(
    dispatch_id: u64,
    pass: u32,
    group: &GroupNames,
    index: usize,
    value: f64,
    instance: Option<(&InstanceKeys, usize)>,
) {
    EVER.store(true, Ordering::Relaxed);
    let mut counted = BY_DISPATCH
        .entry((dispatch_id, pass))
        .or_insert_with(|| Counted {
            names: group.clone(),
            sums: vec![None; group.len()],
            instances: None,
        });
    if let Some(slot) = counted.sums.get_mut(index) {
        *slot = Some(slot.unwrap_or(0.0) + value);
    }
    if let Some((keys, slot)) = instance {
        let (_, values) = counted
            .instances
            .get_or_insert_with(|| (keys.clone(), vec![None; keys.len()]));
        if let Some(v) = values.get_mut(slot) {
            *v = Some(value);
        }
    }
}

fn present(names: &[String], values: Vec<Option<f64>>) -> Vec<(String, f64)> {
    names
        .iter()
        .zip(values)
        .filter_map(|(name, value)| Some((name.clone(), value?)))
        .collect()
}

/// The values of a dispatch's pass, removed from the store; counters and
/// instances without a record are left out (never guessed).
#[inline]
pub fn take(dispatch_id: u64, pass: u32) -> Taken {
    if !EVER.load(Ordering::Relaxed) {
        return Taken::default();
    }
    take_recorded(dispatch_id, pass)
}

/// `take` once something was recorded; out of line, so a session
/// that counts nothing pays one load per record.
fn take_recorded(dispatch_id: u64, pass: u32) -> Taken {
    let Some((_, counted)) = BY_DISPATCH.remove(&(dispatch_id, pass)) else {
        return Taken::default();
    };
    Taken {
        sums: present(&counted.names, counted.sums),
        instances: counted
            .instances
            .map(|(keys, values)| present(&keys, values))
            .unwrap_or_default(),
    }
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
        add(1_007, 0, &g, 0, 3.0, None);
        add(1_007, 0, &g, 0, 4.0, None);
        add(1_007, 0, &g, 1, 10.0, None);
        assert_eq!(
            take(1_007, 0).sums,
            vec![("SQ_WAVES".into(), 7.0), ("GRBM_COUNT".into(), 10.0)]
        );
        assert!(take(1_007, 0).sums.is_empty(), "taken values are gone");
    }

    #[test]
    fn a_counter_without_a_record_is_left_out() {
        let g = group(&["SQ_WAVES", "GRBM_COUNT"]);
        add(2_003, 0, &g, 1, 5.0, None);
        add(2_003, 0, &g, 9, 1.0, None);
        assert_eq!(take(2_003, 0).sums, vec![("GRBM_COUNT".into(), 5.0)]);
        assert!(take(2_004, 0).sums.is_empty());
    }

    #[test]
    fn each_pass_of_a_replayed_dispatch_keeps_its_own_values() {
        add(4_001, 1, &group(&["SQ_WAVES"]), 0, 1.0, None);
        add(4_001, 2, &group(&["GRBM_COUNT"]), 0, 2.0, None);
        assert!(take(4_001, 0).sums.is_empty());
        assert_eq!(take(4_001, 2).sums, vec![("GRBM_COUNT".into(), 2.0)]);
        assert_eq!(take(4_001, 1).sums, vec![("SQ_WAVES".into(), 1.0)]);
    }

    #[test]
    fn instances_keep_their_own_values_beside_the_sum() {
        let g = group(&["SQ_WAVES", "GRBM_COUNT"]);
        let keys: InstanceKeys =
            group(&["SQ_WAVES[XCC=0]", "SQ_WAVES[XCC=1]", "GRBM_COUNT[XCC=0]"]);
        add(5_001, 0, &g, 0, 3.0, Some((&keys, 1)));
        add(5_001, 0, &g, 0, 4.0, Some((&keys, 0)));
        add(5_001, 0, &g, 1, 6.0, None);
        let taken = take(5_001, 0);
        assert_eq!(
            taken.sums,
            vec![("SQ_WAVES".into(), 7.0), ("GRBM_COUNT".into(), 6.0)]
        );
        assert_eq!(
            taken.instances,
            vec![
                ("SQ_WAVES[XCC=0]".into(), 4.0),
                ("SQ_WAVES[XCC=1]".into(), 3.0)
            ],
            "in slot order; an instance without a record is left out"
        );
    }

    #[test]
    fn each_dispatch_keeps_the_group_it_was_counted_with() {
        add(3_001, 0, &group(&["SQ_WAVES"]), 0, 1.0, None);
        add(3_002, 0, &group(&["GPU_UTIL"]), 0, 2.0, None);
        assert_eq!(take(3_001, 0).sums, vec![("SQ_WAVES".into(), 1.0)]);
        assert_eq!(take(3_002, 0).sums, vec![("GPU_UTIL".into(), 2.0)]);
    }
}
