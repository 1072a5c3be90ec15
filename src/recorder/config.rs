//! What `kineto-rocm record` asks of the tool library in a program it
//! launches, through the environment (the program itself knows nothing of
//! it): where the trace goes, its format, and what opens and closes the
//! window: a timer, or the program's own ROCTX ranges.
use crate::output::pftrace::GzipLevel;
use crate::output::TraceFormat;
use std::path::PathBuf;
use std::time::Duration;

/// The trace's path: `%p` in it becomes the process id, so programs that
/// start other HIP programs get one trace each.
pub const OUT: &str = "KINETO_ROCM_RECORD_OUT";
/// `json` (default) or `pftrace`.
pub const FORMAT: &str = "KINETO_ROCM_RECORD_FORMAT";
/// pftrace's gzip level, 0 to 9 (default 1).
pub const GZIP_LEVEL: &str = "KINETO_ROCM_RECORD_GZIP_LEVEL";
/// Milliseconds from the SDK's initialisation (the program's first HIP
/// call) to the window's start (default 0).
pub const DELAY_MS: &str = "KINETO_ROCM_RECORD_DELAY_MS";
/// The window's length in milliseconds (default: until the program ends).
pub const DURATION_MS: &str = "KINETO_ROCM_RECORD_DURATION_MS";
/// A ROCTX range's message: each range the program pushes with it (on any
/// thread) opens a window, its pop closes it. Excludes the two above.
pub const ROCTX_RANGE: &str = "KINETO_ROCM_RECORD_ROCTX_RANGE";

/// What opens and closes the window.
#[derive(Clone, Debug, PartialEq)]
pub enum Trigger {
    /// Opens `delay` after the program's first HIP call, closes after
    /// `duration` (None: when the program ends).
    Timer {
        delay: Duration,
        duration: Option<Duration>,
    },
    /// Each ROCTX range pushed with this message opens a window, its pop
    /// closes it; nested or overlapping ones on other threads extend it.
    Range(String),
}

#[derive(Clone, Debug, PartialEq)]
pub struct RecordConfig {
    pub out: PathBuf,
    pub format: TraceFormat,
    pub trigger: Trigger,
}

fn millis(name: &str, value: Option<String>) -> Result<Option<Duration>, String> {
    value
        .map(|v| {
            v.trim()
                .parse::<u64>()
                .map(Duration::from_millis)
                .map_err(|_| format!("{name}={v}: expected a whole number of milliseconds"))
        })
        .transpose()
}

impl RecordConfig {
    /// `Ok(None)`: not recording (no `KINETO_ROCM_RECORD_OUT`).
    pub fn from_env() -> Result<Option<RecordConfig>, String> {
        Self::from(|name| std::env::var(name).ok())
    }

    fn from(var: impl Fn(&str) -> Option<String>) -> Result<Option<RecordConfig>, String> {
        let Some(out) = var(OUT).filter(|v| !v.is_empty()) else {
            return Ok(None);
        };
        let level = match var(GZIP_LEVEL) {
            None => GzipLevel::new(1),
            Some(v) => v
                .trim()
                .parse::<u32>()
                .map_err(|_| "expected 0 to 9".to_string())
                .and_then(GzipLevel::new)
                .map_err(|e| format!("{GZIP_LEVEL}={v}: {e}")),
        }?;
        let format = match var(FORMAT).as_deref().map(str::trim) {
            None | Some("json") => TraceFormat::Json,
            Some("pftrace") => TraceFormat::Pftrace(level),
            Some(other) => return Err(format!("{FORMAT}={other}: expected json or pftrace")),
        };
        let pid = std::process::id().to_string();
        let (delay, duration) = (
            millis(DELAY_MS, var(DELAY_MS))?,
            millis(DURATION_MS, var(DURATION_MS))?,
        );
        let trigger = match var(ROCTX_RANGE).filter(|v| !v.is_empty()) {
            Some(range) if delay.is_some() || duration.is_some() => {
                return Err(format!(
                    "{ROCTX_RANGE}={range}: the window follows the range, not {DELAY_MS} or {DURATION_MS}"
                ))
            }
            Some(range) => Trigger::Range(range),
            None => Trigger::Timer {
                delay: delay.unwrap_or_default(),
                duration,
            },
        };
        Ok(Some(RecordConfig {
            out: PathBuf::from(out.replace("%p", &pid)),
            format,
            trigger,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn config(vars: &[(&str, &str)]) -> Result<Option<RecordConfig>, String> {
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        RecordConfig::from(|name| vars.get(name).cloned())
    }

    #[test]
    fn nothing_is_recorded_without_an_output() {
        assert_eq!(config(&[(DELAY_MS, "5")]), Ok(None));
    }

    #[test]
    fn the_window_and_format_come_from_the_environment() {
        let c = config(&[
            (OUT, "/tmp/t-%p.pftrace"),
            (FORMAT, "pftrace"),
            (GZIP_LEVEL, "9"),
            (DELAY_MS, "250"),
            (DURATION_MS, "1000"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(
            c.out,
            PathBuf::from(format!("/tmp/t-{}.pftrace", std::process::id()))
        );
        assert_eq!(c.format, TraceFormat::Pftrace(GzipLevel::new(9).unwrap()));
        assert_eq!(
            c.trigger,
            Trigger::Timer {
                delay: Duration::from_millis(250),
                duration: Some(Duration::from_secs(1))
            }
        );
        let plain = config(&[(OUT, "t.json")]).unwrap().unwrap();
        assert_eq!(
            (plain.format, plain.trigger),
            (
                TraceFormat::Json,
                Trigger::Timer {
                    delay: Duration::ZERO,
                    duration: None
                }
            )
        );
        let ranged = config(&[(OUT, "t.json"), (ROCTX_RANGE, "step")]).unwrap();
        assert_eq!(ranged.unwrap().trigger, Trigger::Range("step".into()));
    }

    #[test]
    fn bad_values_are_named() {
        let e = config(&[(OUT, "t"), (DELAY_MS, "soon")]).unwrap_err();
        assert!(e.contains("KINETO_ROCM_RECORD_DELAY_MS=soon"), "{e}");
        let e = config(&[(OUT, "t"), (FORMAT, "xml")]).unwrap_err();
        assert!(e.contains("expected json or pftrace"), "{e}");
        let e = config(&[(OUT, "t"), (ROCTX_RANGE, "step"), (DELAY_MS, "5")]).unwrap_err();
        assert!(
            e.contains("KINETO_ROCM_RECORD_ROCTX_RANGE=step: the window follows the range"),
            "{e}"
        );
        let e = config(&[(OUT, "t"), (GZIP_LEVEL, "12")]).unwrap_err();
        assert!(
            e.contains("KINETO_ROCM_RECORD_GZIP_LEVEL=12") && e.contains("0 (none) to 9"),
            "{e}"
        );
    }
}
