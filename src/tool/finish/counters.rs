//! Counter values by dispatch: written by the dispatch counting service's
//! record callback, taken when the dispatch's kernel record is finished
//! into a window. Why keyed by dispatch id: the SDK gives the counter
//! record and the kernel record the same one, and nothing else joins them.
use dashmap::DashMap;
use once_cell::sync::OnceCell;

/// The counter group asked for and the values each dispatch counted.
pub struct CounterValues {
    /// The group, in the order asked for; values are in this order.
    names: Vec<String>,
    /// Per dispatch, one slot per name; `None` where no record came.
    by_dispatch: DashMap<u64, Vec<Option<f64>>>,
}

static VALUES: OnceCell<CounterValues> = OnceCell::new();

/// Sets the group once per process; later calls keep the first.
pub fn install(names: Vec<String>) -> &'static CounterValues {
    VALUES.get_or_init(|| CounterValues {
        names,
        by_dispatch: DashMap::new(),
    })
}

/// The group and its values, when counters are collected.
pub fn get() -> Option<&'static CounterValues> {
    VALUES.get()
}

impl CounterValues {
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Adds one instance's value: a counter's dimensions are summed.
    pub fn add(&self, dispatch_id: u64, index: usize, value: f64) {
        let mut slots = self
            .by_dispatch
            .entry(dispatch_id)
            .or_insert_with(|| vec![None; self.names.len()]);
        if let Some(slot) = slots.get_mut(index) {
            *slot = Some(slot.unwrap_or(0.0) + value);
        }
    }

    /// The dispatch's values, by name, removed from the store; counters
    /// without a record are left out (never guessed).
    pub fn take(&self, dispatch_id: u64) -> Vec<(String, f64)> {
        let Some((_, slots)) = self.by_dispatch.remove(&dispatch_id) else {
            return Vec::new();
        };
        self.names
            .iter()
            .zip(slots)
            .filter_map(|(name, value)| Some((name.clone(), value?)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values() -> CounterValues {
        CounterValues {
            names: vec!["SQ_WAVES".into(), "GRBM_COUNT".into()],
            by_dispatch: DashMap::new(),
        }
    }

    #[test]
    fn dimensions_are_summed_and_taken_once() {
        let v = values();
        v.add(7, 0, 3.0);
        v.add(7, 0, 4.0);
        v.add(7, 1, 10.0);
        assert_eq!(
            v.take(7),
            vec![("SQ_WAVES".into(), 7.0), ("GRBM_COUNT".into(), 10.0)]
        );
        assert!(v.take(7).is_empty(), "taken values are gone");
    }

    #[test]
    fn a_counter_without_a_record_is_left_out() {
        let v = values();
        v.add(3, 1, 5.0);
        v.add(3, 9, 1.0);
        assert_eq!(v.take(3), vec![("GRBM_COUNT".into(), 5.0)]);
        assert!(v.take(4).is_empty());
    }
}
