//! Hardware counter tracks ("ph": "C") against the kernel events they view.
//!
//! Each kernel event's counter values are checked against the truth
//! (validate/mod.rs); a track is a claim about those values over time: on
//! each device, the value of the kernel that started last among those
//! running, 0 while none runs, a sample where that changes. This recomputes
//! that from the trace's own kernel events and counts every sample the
//! trace has that the recomputation does not, and the other way round.
use super::Validation;
use crate::trace::Trace;
use std::collections::{BTreeSet, HashMap};

/// (start, end, value) of each event carrying the counter.
type Spans = Vec<(u64, u64, f64)>;

/// The samples one track should have.
fn expected_samples(mut spans: Spans) -> Vec<(u64, u64)> {
    spans.retain(|&(start, end, _)| end > start);
    // (time, starts after ends, span)
    let mut edges: Vec<(u64, bool, usize)> = Vec::new();
    for (i, &(start, end, _)) in spans.iter().enumerate() {
        edges.push((start, true, i));
        edges.push((end, false, i));
    }
    edges.sort_unstable();
    let mut running: BTreeSet<(u64, usize)> = BTreeSet::new();
    let mut out: Vec<(u64, u64)> = Vec::new();
    let mut at = 0;
    while at < edges.len() {
        let ts = edges[at].0;
        while at < edges.len() && edges[at].0 == ts {
            let (_, starts, i) = edges[at];
            if starts {
                running.insert((spans[i].0, i));
            } else {
                running.remove(&(spans[i].0, i));
            }
            at += 1;
        }
        let bits = running.last().map_or(0f64, |&(_, i)| spans[i].2).to_bits();
        if out.last().is_none_or(|&(_, last)| last != bits) {
            out.push((ts, bits));
        }
    }
    out
}

/// Each (device lane, counter)'s spans, from the trace's GPU events.
fn spans_of(trace: &Trace) -> HashMap<(u64, &str), Spans> {
    let mut spans: HashMap<(u64, &str), Spans> = HashMap::new();
    for e in &trace.events {
        for (name, value) in &e.counters {
            spans
                .entry((e.pid, name.as_str()))
                .or_default()
                .push((e.start_ns, e.end_ns, *value));
        }
    }
    spans
}

/// The samples the trace's GPU events call for (what a faithful writer
/// writes; the tests build traces with it).
#[cfg(test)]
pub(super) fn samples_called_for(trace: &Trace) -> Vec<crate::trace::CounterSample> {
    let mut out = Vec::new();
    for ((pid, name), spans) in spans_of(trace) {
        for (ts_ns, bits) in expected_samples(spans) {
            out.push(crate::trace::CounterSample {
                pid,
                name: name.into(),
                ts_ns,
                value: f64::from_bits(bits),
            });
        }
    }
    out
}

pub fn check(r: &mut Validation, trace: &Trace) {
    let mut spans = spans_of(trace);
    let mut shown: HashMap<(u64, &str), Vec<(u64, u64)>> = HashMap::new();
    for s in &trace.counter_samples {
        r.counter_samples += 1;
        shown
            .entry((s.pid, &s.name))
            .or_default()
            .push((s.ts_ns, s.value.to_bits()));
    }
    let mut keys: Vec<(u64, &str)> = spans.keys().chain(shown.keys()).copied().collect();
    keys.sort_unstable();
    keys.dedup();
    for key in keys {
        let expected = expected_samples(spans.remove(&key).unwrap_or_default());
        let mut got = shown.remove(&key).unwrap_or_default();
        got.sort_unstable();
        let wanted: BTreeSet<(u64, u64)> = expected.iter().copied().collect();
        let have: BTreeSet<(u64, u64)> = got.iter().copied().collect();
        r.wrong_counter_samples += have.difference(&wanted).count();
        r.missing_counter_samples += wanted.difference(&have).count();
    }
}

#[cfg(test)]
mod tests {
    use super::expected_samples;

    #[test]
    fn the_track_follows_the_kernel_that_started_last() {
        let bits = |v: f64| v.to_bits();
        let samples = expected_samples(vec![(10, 50, 1.0), (20, 30, 2.0), (50, 60, 1.0)]);
        assert_eq!(
            samples,
            [
                (10, bits(1.0)),
                (20, bits(2.0)),
                (30, bits(1.0)),
                (60, bits(0.0))
            ]
        );
    }
}
