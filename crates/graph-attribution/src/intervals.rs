//! Closed time intervals, sorted for "which overlap [a, b]" queries.
//!
//! Spans touching at one instant overlap: ENTER is stamped before a call's
//! body and EXIT after it, so two calls whose stamps coincide may have run
//! at the same time.

/// Intervals sorted by start, each carrying a payload id.
#[derive(Clone, Debug, Default)]
pub(crate) struct Intervals {
    starts: Vec<u64>,
    ends: Vec<u64>,
    /// Largest end among the first i+1 intervals: a backwards scan stops
    /// once it is below the query's start.
    prefix_max_end: Vec<u64>,
    ids: Vec<u32>,
}

impl Intervals {
    pub(crate) fn new(mut items: Vec<(u64, u64, u32)>) -> Intervals {
        items.sort_unstable();
        let mut out = Intervals {
            starts: Vec::with_capacity(items.len()),
            ends: Vec::with_capacity(items.len()),
            prefix_max_end: Vec::with_capacity(items.len()),
            ids: Vec::with_capacity(items.len()),
        };
        let mut max_end = 0;
        for (start, end, id) in items {
            max_end = max_end.max(end);
            out.starts.push(start);
            out.ends.push(end);
            out.prefix_max_end.push(max_end);
            out.ids.push(id);
        }
        out
    }

    pub(crate) fn len(&self) -> usize {
        self.ids.len()
    }

    /// Ids of the intervals that overlap `[a, b]`, latest start first.
    pub(crate) fn overlapping(&self, a: u64, b: u64) -> impl Iterator<Item = u32> + '_ {
        let end = self.starts.partition_point(|&s| s <= b);
        (0..end)
            .rev()
            .take_while(move |&i| self.prefix_max_end[i] >= a)
            .filter(move |&i| self.ends[i] >= a)
            .map(move |i| self.ids[i])
    }

    pub(crate) fn any_overlapping(&self, a: u64, b: u64) -> bool {
        self.overlapping(a, b).next().is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlap_queries_return_exactly_the_intervals_that_meet_the_range() {
        let items = vec![
            (0, 100, 0),
            (10, 20, 1),
            (30, 40, 2),
            (50, 50, 3),
            (60, 70, 4),
        ];
        let iv = Intervals::new(items.clone());
        for a in 0..=110u64 {
            for b in a..=110 {
                let mut got: Vec<u32> = iv.overlapping(a, b).collect();
                got.sort_unstable();
                let want: Vec<u32> = items
                    .iter()
                    .filter(|(s, e, _)| *s <= b && *e >= a)
                    .map(|(_, _, id)| *id)
                    .collect();
                assert_eq!(got, want, "[{a}, {b}]");
            }
        }
        assert!(iv.any_overlapping(20, 20), "touching counts");
        assert!(!Intervals::new(vec![(5, 6, 0)]).any_overlapping(7, 9));
    }
}
