//! Reads a kineto-format chrome trace back: the GPU events the per-node table
//! and the validator need, exactly as a trace consumer would see them.
use serde_json::Value;
use std::path::Path;

/// One GPU event (kernel or memory copy) read from a trace.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuEvent {
    pub name: String,
    pub category: String,
    pub device: u64,
    pub duration_ns: u64,
    pub dispatch_id: Option<u64>,
    pub correlation: Option<u64>,
    pub external_id: Option<u64>,
    pub graph: Option<(u64, u64)>,
}

impl GpuEvent {
    /// The node ordinal: the low half of the packed graph node id.
    pub fn ordinal(&self) -> Option<u32> {
        self.graph.map(|(_, node)| (node & 0xFFFF_FFFF) as u32)
    }
}

/// What a trace says about itself: GPU events and the tool's summary lines.
pub struct Trace {
    pub events: Vec<GpuEvent>,
    pub summary: Vec<String>,
}

pub fn read(path: &Path) -> Result<Trace, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    let root: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: not JSON: {e}", path.display()))?;
    let events = root
        .get("traceEvents")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("{}: no traceEvents array", path.display()))?;
    let mut out = Vec::new();
    for event in events {
        let category = event.get("cat").and_then(Value::as_str).unwrap_or_default();
        if category != "kernel" && category != "gpu_memcpy" {
            continue;
        }
        let args = event.get("args");
        let int = |key: &str| args.and_then(|a| a.get(key)).and_then(Value::as_u64);
        let graph = match (int("graph id"), int("graph node id")) {
            (Some(g), Some(n)) => Some((g, n)),
            _ => None,
        };
        let dur_us = event.get("dur").and_then(Value::as_f64).unwrap_or(0.0);
        out.push(GpuEvent {
            name: event
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            category: category.to_string(),
            device: event.get("pid").and_then(Value::as_u64).unwrap_or(0),
            duration_ns: (dur_us * 1000.0).round() as u64,
            dispatch_id: int("dispatch id"),
            correlation: int("correlation"),
            external_id: int("External id"),
            graph,
        });
    }
    let summary = root
        .get("kineto_rocm")
        .and_then(Value::as_array)
        .map(|lines| {
            lines
                .iter()
                .filter_map(|l| l.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    Ok(Trace {
        events: out,
        summary,
    })
}

/// How many GPU events a trace holds, counted line by line without parsing
/// it whole (traces of millions of events).
#[derive(Debug, Default, PartialEq)]
pub struct EventCounts {
    pub kernels: usize,
    pub graphed: usize,
    pub copies: usize,
}

/// Counts events in a trace written by this backend (one event per line).
pub fn count_gpu_events(path: &Path) -> Result<EventCounts, String> {
    use std::io::BufRead;
    let file =
        std::fs::File::open(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    let mut counts = EventCounts::default();
    for line in std::io::BufReader::new(file).lines() {
        let line = line.map_err(|e| format!("{}: {e}", path.display()))?;
        if line.contains("\"cat\": \"kernel\"") {
            counts.kernels += 1;
            if line.contains("\"graph node id\": ") {
                counts.graphed += 1;
            }
        } else if line.contains("\"cat\": \"gpu_memcpy\"") {
            counts.copies += 1;
        }
    }
    Ok(counts)
}
