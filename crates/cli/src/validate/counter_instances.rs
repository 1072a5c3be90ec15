//! Per-instance counter values (`--counter-dimensions`) against the truth.
//!
//! An event's instance key (src/vocabulary.rs `counter_instance_key`:
//! `SQ_WAVES[XCC=0,SHADER_ENGINE=1,INSTANCE=0]`) is read back into its
//! counter and its position per dimension, and must name an instance the
//! truth says the dispatch recorded, with that instance's value; a key that
//! cannot be read proves nothing and is wrong. With dimensions asked for,
//! every instance the truth has must be shown.
use super::Validation;
use rocprofiler_sim::truth::CounterInstanceTruth;
use std::collections::{BTreeMap, HashSet};

/// A counter and its position by dimension name (without `DIMENSION_`).
type Instance = (String, BTreeMap<String, usize>);

/// Reads an instance key; `None` if it is not one.
fn parse(key: &str) -> Option<Instance> {
    let (counter, rest) = key.split_once('[')?;
    let inner = rest.strip_suffix(']')?;
    let mut dims = BTreeMap::new();
    for part in inner.split(',') {
        let (name, pos) = part.split_once('=')?;
        if name.is_empty() || dims.insert(name.to_string(), pos.parse().ok()?).is_some() {
            return None;
        }
    }
    (!counter.is_empty() && !dims.is_empty()).then(|| (counter.to_string(), dims))
}

fn of_truth(i: &CounterInstanceTruth) -> Instance {
    let dims = i
        .dimensions
        .iter()
        .map(|(name, pos)| (name.trim_start_matches("DIMENSION_").to_string(), *pos))
        .collect();
    (i.counter.clone(), dims)
}

/// Checks one event's instance values against its dispatch's truth;
/// `expected`: dimensions were asked for, so each truth instance must show.
pub fn check(
    report: &mut Validation,
    shown: &[(String, f64)],
    truth: &[CounterInstanceTruth],
    expected: bool,
) {
    if shown.is_empty() && !expected {
        return;
    }
    let values: BTreeMap<Instance, f64> = truth.iter().map(|i| (of_truth(i), i.value)).collect();
    let mut matched: HashSet<&Instance> = HashSet::new();
    for (key, value) in shown {
        report.counter_instance_values += 1;
        // A key shown once is shown, right or wrong; its value must be the
        // truth's.
        let right = match parse(key).and_then(|i| values.get_key_value(&i)) {
            Some((instance, truth_value)) => matched.insert(instance) && truth_value == value,
            None => false,
        };
        if !right {
            report.wrong_counter_instance_values += 1;
        }
    }
    if expected {
        report.missing_counter_instance_values += values.len() - matched.len();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_read_back_into_counter_and_positions_and_malformed_ones_do_not() {
        let (counter, dims) = parse("SQ_WAVES[XCC=7,SHADER_ENGINE=3,INSTANCE=0]").unwrap();
        assert_eq!(counter, "SQ_WAVES");
        assert_eq!(dims["XCC"], 7);
        assert_eq!(dims["SHADER_ENGINE"], 3);
        for bad in [
            "SQ_WAVES",
            "SQ_WAVES[]",
            "[XCC=0]",
            "X[XCC=a]",
            "X[XCC=0",
            "X[XCC=0,XCC=1]",
            "X[=0]",
        ] {
            assert!(parse(bad).is_none(), "{bad}");
        }
    }
}
