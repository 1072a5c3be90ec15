//! What `kineto-rocm record` asks of the tool library in a program it
//! launches, through the environment (the program itself knows nothing of
//! it): where the trace goes, its format, and the window.
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

#[derive(Clone, Debug, PartialEq)]
pub struct RecordConfig {
    pub out: PathBuf,
    pub format: TraceFormat,
    pub delay: Duration,
    pub duration: Option<Duration>,
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
        Ok(Some(RecordConfig {
            out: PathBuf::from(out.replace("%p", &pid)),
            format,
            delay: millis(DELAY_MS, var(DELAY_MS))?.unwrap_or_default(),
            duration: millis(DURATION_MS, var(DURATION_MS))?,
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
        assert_eq!(c.delay, Duration::from_millis(250));
        assert_eq!(c.duration, Some(Duration::from_secs(1)));
        let plain = config(&[(OUT, "t.json")]).unwrap().unwrap();
        assert_eq!(
            (plain.format, plain.delay, plain.duration),
            (TraceFormat::Json, Duration::ZERO, None)
        );
    }

    #[test]
    fn bad_values_are_named() {
        let e = config(&[(OUT, "t"), (DELAY_MS, "soon")]).unwrap_err();
        assert!(e.contains("KINETO_ROCM_RECORD_DELAY_MS=soon"), "{e}");
        let e = config(&[(OUT, "t"), (FORMAT, "xml")]).unwrap_err();
        assert!(e.contains("expected json or pftrace"), "{e}");
        let e = config(&[(OUT, "t"), (GZIP_LEVEL, "12")]).unwrap_err();
        assert!(
            e.contains("KINETO_ROCM_RECORD_GZIP_LEVEL=12") && e.contains("0 (none) to 9"),
            "{e}"
        );
    }
}
