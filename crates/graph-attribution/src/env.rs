//! The opt-out switch. Attribution is on by default; a user who distrusts it
//! (or its cost) turns it off with one variable. A value we do not recognise
//! turns it off too, because a user who set the variable most likely meant
//! to disable, and silently ignoring a typo would leave it on.

/// The variable that disables graph attribution.
pub const DISABLE_GRAPH_ATTRIBUTION_VAR: &str = "KINETO_ROCM_DISABLE_GRAPH_ATTRIBUTION";

/// Whether attribution is enabled for a value of
/// [`DISABLE_GRAPH_ATTRIBUTION_VAR`] (`None` when unset), and a warning to log
/// when the value was not understood.
///
/// `1`/`true`/`yes`/`on` (any case, surrounding whitespace ignored) disable;
/// unset, empty, `0`/`false`/`no`/`off` enable; anything else disables with a
/// warning that names the value.
pub fn graph_attribution_enabled(value: Option<&str>) -> (bool, Option<String>) {
    let Some(raw) = value else {
        return (true, None);
    };
    let word = raw.trim().to_ascii_lowercase();
    match word.as_str() {
        "" | "0" | "false" | "no" | "off" => (true, None),
        "1" | "true" | "yes" | "on" => (false, None),
        _ => (
            false,
            Some(format!(
                "{DISABLE_GRAPH_ATTRIBUTION_VAR}={raw:?} is not one of 1/true/yes/on or \
                 0/false/no/off; graph attribution is disabled"
            )),
        ),
    }
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
}
