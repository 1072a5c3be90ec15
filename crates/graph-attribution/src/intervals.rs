//! Closed time intervals, sorted for "which overlap [a, b]" queries.
//!
//! Spans touching at one instant overlap: ENTER is stamped before a call's
//! body and EXIT after it, so two calls whose stamps coincide may have run
//! at the same time.
//!
//! The rules ask about calls mostly in time order (a window's records
//! arrive as their calls ran), so a query searches outward from where the
//! last one ended: a few comparisons instead of a binary search over every
//! call, which an eager window (a call per record) pays per record.

use std::cell::Cell;

/// Intervals sorted by start, each carrying a payload id.
#[derive(Clone, Debug, Default)]
pub(crate) struct Intervals {
    starts: Vec<u64>,
    ends: Vec<u64>,
    /// Largest end among the first i+1 intervals: a backwards scan stops
    /// once it is below the query's start.
    prefix_max_end: Vec<u64>,
    ids: Vec<u32>,
    /// Where the last query's intervals ended: the next one searches from
    /// here.
    cursor: Cell<usize>,
}

impl Intervals {
    pub(crate) fn new(mut items: Vec<(u64, u64, u32)>) -> Intervals {
        items.sort_unstable();
        let mut out = Intervals {
            starts: Vec::with_capacity(items.len()),
            ends: Vec::with_capacity(items.len()),
            prefix_max_end: Vec::with_capacity(items.len()),
            ids: Vec::with_capacity(items.len()),
            cursor: Cell::new(0),
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
        let end = self.starting_by(b);
        (0..end)
            .rev()
            .take_while(move |&i| self.prefix_max_end[i] >= a)
            .filter(move |&i| self.ends[i] >= a)
            .map(move |i| self.ids[i])
    }

    /// How many intervals start at or before `b`, searched outward from
    /// the last query's answer.
    fn starting_by(&self, b: u64) -> usize {
        let end = gallop(self.starts.len(), self.cursor.get(), |i| {
            self.starts[i] <= b
        });
        self.cursor.set(end);
        end
    }

    pub(crate) fn any_overlapping(&self, a: u64, b: u64) -> bool {
        // Most windows have no edge spans and no call of unknown work: ask
        // nothing of an empty set.
        !self.ids.is_empty() && self.overlapping(a, b).next().is_some()
    }
}

/// The partition point of `0..n` under `pred` (true for a prefix, false
/// after), searched outward from `from`: exponential steps, then a binary
/// search within the last step. A few comparisons when the answer is near
/// `from`, as it is for queries made in order.
fn gallop(n: usize, from: usize, pred: impl Fn(usize) -> bool) -> usize {
    let from = from.min(n);
    let (lo, hi) = if from == 0 || pred(from - 1) {
        // The answer is `from` or later: pred holds below lo.
        let (mut lo, mut step) = (from, 1);
        let hi = loop {
            let probe = lo + step - 1;
            if probe >= n {
                break n;
            }
            if !pred(probe) {
                break probe;
            }
            lo = probe + 1;
            step *= 2;
        };
        (lo, hi)
    } else {
        // The answer is before `from`: pred fails at hi.
        let (mut hi, mut step) = (from - 1, 1);
        let lo = loop {
            if hi < step {
                break 0;
            }
            let probe = hi - step;
            if pred(probe) {
                break probe + 1;
            }
            hi = probe;
            step *= 2;
        };
        (lo, hi)
    };
    // Binary search in lo..hi.
    let (mut lo, mut hi) = (lo, hi);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
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
        // Queries in any order, each searching from where the last ended,
        // find what a full search finds.
        let mut next = crate::test_rng::below(11);
        for n in [0usize, 1, 2, 3, 17, 200] {
            let items: Vec<(u64, u64, u32)> = (0..n as u32)
                .map(|i| {
                    let a = next(300);
                    (a, a + next(40), i)
                })
                .collect();
            let iv = Intervals::new(items.clone());
            for _ in 0..2_000 {
                let a = next(360);
                let b = a + next(30);
                let mut got: Vec<u32> = iv.overlapping(a, b).collect();
                got.sort_unstable();
                let mut want: Vec<u32> = items
                    .iter()
                    .filter(|(s, e, _)| *s <= b && *e >= a)
                    .map(|(_, _, id)| *id)
                    .collect();
                want.sort_unstable();
                assert_eq!(got, want, "{n} intervals, [{a}, {b}]");
            }
        }
        assert!(!Intervals::new(vec![(5, 6, 0)]).any_overlapping(7, 9));
    }

    #[test]
    fn galloping_from_anywhere_finds_the_partition_point() {
        for n in 0..40usize {
            for point in 0..=n {
                for from in 0..=n + 2 {
                    assert_eq!(gallop(n, from, |i| i < point), point, "n {n} from {from}");
                }
            }
        }
    }
}
