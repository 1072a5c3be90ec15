//! Per-kernel hardware counters as counter tracks: one track per device and
//! counter, a step function over the kernels that carry the counter.
//!
//! Why a step function and which value: a counter is one number per kernel,
//! and kernels of one device can overlap (streams, graph branches). The
//! track shows, at each moment, the value of the kernel that started last
//! among those running, and 0 while none runs; a sample is written only
//! where that changes. Every kernel event still carries its own values as
//! args; the track is a view of them (`kineto-rocm validate` recomputes it
//! from the trace's kernel events).
use std::collections::BTreeSet;

/// One kernel's span and counter value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CounterSpan {
    pub start_ns: u64,
    pub end_ns: u64,
    pub value: f64,
}

/// The samples (time, value) of one track, in time order.
pub fn step_samples(spans: &[CounterSpan]) -> Vec<(u64, f64)> {
    // (time, is_start, index): ends before starts at one time, so a kernel
    // starting as another ends takes over without a 0 between them.
    let mut edges: Vec<(u64, bool, usize)> = Vec::with_capacity(spans.len() * 2);
    for (i, s) in spans.iter().enumerate() {
        // A zero-length kernel never runs long enough to be shown.
        if s.end_ns > s.start_ns {
            edges.push((s.start_ns, true, i));
            edges.push((s.end_ns, false, i));
        }
    }
    edges.sort_unstable();
    // Running kernels by (start, index): the last is the one shown.
    let mut running: BTreeSet<(u64, usize)> = BTreeSet::new();
    let mut samples: Vec<(u64, f64)> = Vec::new();
    let mut at = 0;
    while at < edges.len() {
        let ts = edges[at].0;
        while at < edges.len() && edges[at].0 == ts {
            let (_, is_start, i) = edges[at];
            if is_start {
                running.insert((spans[i].start_ns, i));
            } else {
                running.remove(&(spans[i].start_ns, i));
            }
            at += 1;
        }
        let shown = running.last().map_or(0.0, |&(_, i)| spans[i].value);
        if samples
            .last()
            .is_none_or(|&(_, last)| last.to_bits() != shown.to_bits())
        {
            samples.push((ts, shown));
        }
    }
    samples
}

#[cfg(test)]
mod tests {
    use super::{step_samples, CounterSpan};

    fn span(start_ns: u64, end_ns: u64, value: f64) -> CounterSpan {
        CounterSpan {
            start_ns,
            end_ns,
            value,
        }
    }

    #[test]
    fn back_to_back_kernels_hand_over_without_a_zero() {
        let samples = step_samples(&[span(10, 20, 3.0), span(20, 30, 5.0), span(40, 50, 5.0)]);
        assert_eq!(
            samples,
            [(10, 3.0), (20, 5.0), (30, 0.0), (40, 5.0), (50, 0.0)]
        );
    }

    #[test]
    fn overlapping_kernels_show_the_one_that_started_last() {
        // b starts inside a and ends first: a shows again until it ends.
        let samples = step_samples(&[span(10, 50, 1.0), span(20, 30, 2.0)]);
        assert_eq!(samples, [(10, 1.0), (20, 2.0), (30, 1.0), (50, 0.0)]);
    }

    #[test]
    fn equal_values_and_empty_kernels_write_no_sample() {
        let samples = step_samples(&[span(10, 20, 4.0), span(15, 25, 4.0), span(30, 30, 9.0)]);
        assert_eq!(samples, [(10, 4.0), (25, 0.0)]);
    }
}
