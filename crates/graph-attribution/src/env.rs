//! The opt-out switch. Attribution is on by default; a user who distrusts it
//! (or its cost) turns it off with one variable. A value we do not recognise
//! turns it off too, because a user who set the variable most likely meant
//! to disable, and silently ignoring a typo would leave it on.

/// The variable that disables graph attribution.
pub const DISABLE_GRAPH_ATTRIBUTION_VAR: &str = "KINETO_ROCM_DISABLE_GRAPH_ATTRIBUTION";

/// A yes/no switch's value (`None` when unset): whether it is set, and a
/// warning to log when the value was not understood.
///
/// `1`/`true`/`yes`/`on` (any case, surrounding whitespace ignored) set it;
/// unset, empty, `0`/`false`/`no`/`off` leave it unset; anything else is
/// taken as `unknown`, with a warning that names the variable, the value
/// and `consequence`.
pub fn switch_value(
    var: &str,
    value: Option<&str>,
    unknown: bool,
    consequence: &str,
) -> (bool, Option<String>) {
    let Some(raw) = value else {
        return (false, None);
    };
    let word = raw.trim().to_ascii_lowercase();
    match word.as_str() {
        "" | "0" | "false" | "no" | "off" => (false, None),
        "1" | "true" | "yes" | "on" => (true, None),
        _ => (
            unknown,
            Some(format!(
                "{var}={raw:?} is not one of 1/true/yes/on or 0/false/no/off; {consequence}"
            )),
        ),
    }
}

/// Whether attribution is enabled for a value of
/// [`DISABLE_GRAPH_ATTRIBUTION_VAR`] (`None` when unset), and a warning to log
/// when the value was not understood.
///
/// `1`/`true`/`yes`/`on` (any case, surrounding whitespace ignored) disable;
/// unset, empty, `0`/`false`/`no`/`off` enable; anything else disables with a
/// warning that names the value.
pub fn graph_attribution_enabled(value: Option<&str>) -> (bool, Option<String>) {
    let (disabled, warning) = switch_value(
        DISABLE_GRAPH_ATTRIBUTION_VAR,
        value,
        true,
        "graph attribution is disabled",
    );
    (!disabled, warning)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unset_and_empty_enable() {
        assert_eq!(graph_attribution_enabled(None), (true, None));
        assert_eq!(graph_attribution_enabled(Some("")), (true, None));
        assert_eq!(graph_attribution_enabled(Some("   ")), (true, None));
    }

    #[test]
    fn every_spelling_of_no_enables() {
        for v in [
            "0", "false", "FALSE", "False", "no", "No", "off", "OFF", " off\n", "\t0 ",
        ] {
            assert_eq!(graph_attribution_enabled(Some(v)), (true, None), "{v:?}");
        }
    }

    #[test]
    fn every_spelling_of_yes_disables_without_warning() {
        for v in [
            "1", "true", "TRUE", "True", "yes", "YES", "on", "On", " yes ", "1\n",
        ] {
            assert_eq!(graph_attribution_enabled(Some(v)), (false, None), "{v:?}");
        }
    }

    #[test]
    fn anything_else_disables_and_the_warning_names_the_value() {
        for v in ["2", "enable", "disable", "y", "n", "tru", "1.0", "-1"] {
            let (enabled, warning) = graph_attribution_enabled(Some(v));
            assert!(!enabled, "{v:?}");
            let warning = warning.expect("a warning");
            assert!(warning.contains(&format!("{v:?}")), "{warning}");
            assert!(warning.contains(DISABLE_GRAPH_ATTRIBUTION_VAR));
        }
    }

    #[test]
    fn a_switch_that_defaults_off_stays_off_on_an_unknown_value() {
        let var = "KINETO_ROCM_COUNTER_DIMENSIONS";
        assert_eq!(switch_value(var, None, false, "x"), (false, None));
        assert_eq!(switch_value(var, Some(" On "), false, "x"), (true, None));
        assert_eq!(switch_value(var, Some("off"), false, "x"), (false, None));
        let (set, warning) = switch_value(var, Some("sure"), false, "dimensions are summed");
        assert!(!set);
        let warning = warning.expect("a warning");
        assert!(
            warning.contains("\"sure\"") && warning.contains(var),
            "{warning}"
        );
        assert!(warning.ends_with("dimensions are summed"), "{warning}");
    }
}
