//! Reads a kineto-format chrome trace back: the GPU events, the runtime
//! calls, the ac2g flow arrows and the lane names, exactly as a trace
//! consumer would see them.
//!
//! Timestamps are read exactly. Our writer (src/output/chrome_trace.rs,
//! `Micros`) prints an SDK nanosecond value `ns` as `ns / 1000` "." `ns %
//! 1000` (three digits), `ts` from the start and `dur` from `end - start`;
//! [`micros_text_to_ns`] inverts that digit for digit, so start and end come
//! back as the very nanoseconds the SDK recorded (an f64 would not: SDK
//! clocks are ~1e15 ns). The file is parsed in one pass: each event is
//! turned into a compact record as it is read, never held as a JSON tree.
use rocprofiler_sim::workload::Direction;
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use std::sync::Arc;

/// What kind of GPU event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GpuCategory {
    Kernel,
    Memcpy,
    Memset,
}

/// One GPU event (kernel, memory copy or memset) read from a trace.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuEvent {
    pub name: Arc<str>,
    pub category: GpuCategory,
    /// The lane it is drawn on: process (device) and thread (stream).
    pub pid: u64,
    pub tid: u64,
    pub start_ns: u64,
    pub end_ns: u64,
    /// The `device` arg.
    pub device: Option<u64>,
    /// The `stream` arg.
    pub stream: Option<u64>,
    pub dispatch_id: Option<u64>,
    pub correlation: Option<u64>,
    pub external_id: Option<u64>,
    /// `graph id` and `graph node id`, when both are present.
    pub graph: Option<(u64, u64)>,
    pub bytes: Option<u64>,
    /// A copy's direction, from its name (`Memcpy HtoD`).
    pub direction: Option<Direction>,
    /// Hardware counter args, by counter name, in trace order.
    pub counters: Vec<(String, f64)>,
}

impl GpuEvent {
    /// The node number: the low half of the packed graph node id.
    pub fn ordinal(&self) -> Option<u32> {
        self.graph.map(|(_, node)| (node & 0xFFFF_FFFF) as u32)
    }

    pub fn duration_ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }
}

/// A HIP runtime call drawn on a CPU thread (`cuda_runtime`).
#[derive(Clone, Debug, PartialEq)]
pub struct RuntimeEvent {
    pub name: Arc<str>,
    pub pid: u64,
    pub tid: u64,
    pub start_ns: u64,
    pub correlation: Option<u64>,
    pub external_id: Option<u64>,
}

/// One end of an ac2g flow arrow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowEnd {
    /// `s` (true) or `f` (false).
    pub start: bool,
    pub id: u64,
    pub pid: u64,
    pub tid: u64,
    pub ts_ns: u64,
}

/// What a trace says about itself.
#[derive(Debug, Default)]
pub struct Trace {
    pub events: Vec<GpuEvent>,
    pub runtime: Vec<RuntimeEvent>,
    pub flows: Vec<FlowEnd>,
    /// `thread_name` metadata: (pid, tid) -> name.
    pub lane_names: HashMap<(u64, u64), String>,
    /// The tool's summary lines (`kineto_rocm` metadata).
    pub summary: Vec<String>,
}

impl Trace {
    /// The stream a lane shows: `stream N` when the lane is named so, its
    /// tid when it is not named (kineto draws GPU work with tid = stream),
    /// and none when it is named after something else (a HW queue lane for
    /// work whose stream is unknown, a device's copies lane).
    pub fn lane_stream(&self, pid: u64, tid: u64) -> Option<u64> {
        match self.lane_names.get(&(pid, tid)) {
            None => Some(tid),
            Some(name) => name
                .strip_prefix("stream ")
                .and_then(|n| n.trim().parse().ok()),
        }
    }
}

/// The exact nanoseconds of a `ts`/`dur` written as microseconds with at
/// most three decimals; anything else (exponents, more decimals, from
/// another writer) is rounded from its f64 value.
pub fn micros_text_to_ns(text: &str) -> Option<u64> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if digits(whole) && (fraction.is_empty() || (digits(fraction) && fraction.len() <= 3)) {
        let mut ns: u64 = whole.parse::<u64>().ok()?.checked_mul(1000)?;
        if !fraction.is_empty() {
            let scale = 10u64.pow(3 - fraction.len() as u32);
            ns = ns.checked_add(fraction.parse::<u64>().ok()? * scale)?;
        }
        return Some(ns);
    }
    let value: f64 = text.parse().ok()?;
    (value >= 0.0 && value.is_finite()).then(|| (value * 1000.0).round() as u64)
}

fn direction_of(name: &str) -> Option<Direction> {
    let token = name.strip_prefix("Memcpy ")?.split_whitespace().next()?;
    match token {
        "HtoH" => Some(Direction::HostToHost),
        "HtoD" => Some(Direction::HostToDevice),
        "DtoH" => Some(Direction::DeviceToHost),
        "DtoD" => Some(Direction::DeviceToDevice),
        _ => None,
    }
}

/// The args read; the others are skipped unread.
#[derive(Default)]
struct RawArgs<'a> {
    device: Option<u64>,
    stream: Option<u64>,
    correlation: Option<u64>,
    external_id: Option<u64>,
    dispatch_id: Option<u64>,
    graph_id: Option<u64>,
    graph_node_id: Option<u64>,
    bytes: Option<u64>,
    name: Option<Cow<'a, str>>,
    /// Hardware counters: keys that start with an upper-case letter and
    /// hold a number (src/vocabulary.rs: no other key does).
    counters: Vec<(String, f64)>,
}

impl<'de: 'a, 'a> Deserialize<'de> for RawArgs<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(ArgsVisitor(std::marker::PhantomData))
    }
}

struct ArgsVisitor<'a>(std::marker::PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for ArgsVisitor<'a> {
    type Value = RawArgs<'a>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an event's args object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawArgs<'a>, A::Error> {
        let mut args = RawArgs::default();
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            let slot = match key.as_ref() {
                "device" => &mut args.device,
                "stream" => &mut args.stream,
                "correlation" => &mut args.correlation,
                "External id" => &mut args.external_id,
                "dispatch id" => &mut args.dispatch_id,
                "graph id" => &mut args.graph_id,
                "graph node id" => &mut args.graph_node_id,
                "bytes" => &mut args.bytes,
                "name" => {
                    args.name = map.next_value::<Option<Cow<'de, str>>>()?;
                    continue;
                }
                k if k.starts_with(|c: char| c.is_ascii_uppercase()) => {
                    if let Some(value) = map.next_value::<Option<f64>>()? {
                        args.counters.push((key.into_owned(), value));
                    }
                    continue;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            *slot = map.next_value::<Option<u64>>()?;
        }
        Ok(args)
    }
}

#[derive(Deserialize)]
struct RawEvent<'a> {
    #[serde(borrow)]
    ph: Option<Cow<'a, str>>,
    #[serde(borrow)]
    cat: Option<Cow<'a, str>>,
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    pid: Option<u64>,
    tid: Option<u64>,
    #[serde(borrow)]
    ts: Option<&'a RawValue>,
    #[serde(borrow)]
    dur: Option<&'a RawValue>,
    id: Option<u64>,
    #[serde(borrow)]
    args: Option<RawArgs<'a>>,
}

/// Builds the trace as events stream past.
#[derive(Default)]
struct Builder {
    trace: Trace,
    names: HashMap<String, Arc<str>>,
    error: Option<String>,
}

impl Builder {
    fn intern(&mut self, name: &str) -> Arc<str> {
        if let Some(n) = self.names.get(name) {
            return n.clone();
        }
        let n: Arc<str> = Arc::from(name);
        self.names.insert(name.to_string(), n.clone());
        n
    }

    fn time(&mut self, raw: Option<&RawValue>, what: &str) -> u64 {
        match raw.map(|r| micros_text_to_ns(r.get())) {
            Some(Some(ns)) => ns,
            Some(None) => {
                self.error
                    .get_or_insert_with(|| format!("an event's {what} is not a number"));
                0
            }
            None => 0,
        }
    }

    fn push(&mut self, raw: RawEvent) {
        let ph = raw.ph.as_deref().unwrap_or_default();
        let cat = raw.cat.as_deref().unwrap_or_default();
        let pid = raw.pid.unwrap_or(0);
        let tid = raw.tid.unwrap_or(0);
        let name = raw.name.as_deref().unwrap_or_default();
        if ph == "M" {
            if name == "thread_name" {
                if let Some(lane) = raw.args.as_ref().and_then(|a| a.name.as_deref()) {
                    self.trace.lane_names.insert((pid, tid), lane.to_string());
                }
            }
            return;
        }
        if cat == "ac2g" && (ph == "s" || ph == "f") {
            let ts_ns = self.time(raw.ts, "ts");
            if let Some(id) = raw.id {
                self.trace.flows.push(FlowEnd {
                    start: ph == "s",
                    id,
                    pid,
                    tid,
                    ts_ns,
                });
            }
            return;
        }
        let category = match cat {
            "kernel" => GpuCategory::Kernel,
            "gpu_memcpy" => GpuCategory::Memcpy,
            "gpu_memset" => GpuCategory::Memset,
            "cuda_runtime" => {
                let start_ns = self.time(raw.ts, "ts");
                let args = raw.args.as_ref();
                let event = RuntimeEvent {
                    name: self.intern(name),
                    pid,
                    tid,
                    start_ns,
                    correlation: args.and_then(|a| a.correlation),
                    external_id: args.and_then(|a| a.external_id),
                };
                self.trace.runtime.push(event);
                return;
            }
            _ => return,
        };
        let start_ns = self.time(raw.ts, "ts");
        let end_ns = start_ns + self.time(raw.dur, "dur");
        let args = raw.args.as_ref();
        let int = |f: fn(&RawArgs) -> Option<u64>| args.and_then(f);
        let event = GpuEvent {
            name: self.intern(name),
            category,
            pid,
            tid,
            start_ns,
            end_ns,
            device: int(|a| a.device),
            stream: int(|a| a.stream),
            dispatch_id: int(|a| a.dispatch_id),
            correlation: int(|a| a.correlation),
            external_id: int(|a| a.external_id),
            graph: int(|a| a.graph_id).zip(int(|a| a.graph_node_id)),
            bytes: int(|a| a.bytes),
            direction: direction_of(name),
            counters: raw.args.map(|a| a.counters).unwrap_or_default(),
        };
        self.trace.events.push(event);
    }
}

struct EventsSeed<'b>(&'b mut Builder);

impl<'de> DeserializeSeed<'de> for EventsSeed<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for EventsSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of trace events")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(event) = seq.next_element::<RawEvent<'de>>()? {
            self.0.push(event);
        }
        Ok(())
    }
}

struct FileVisitor<'b>(&'b mut Builder);

impl<'de> Visitor<'de> for FileVisitor<'_> {
    type Value = bool;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a chrome trace object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        let mut saw_events = false;
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match key.as_ref() {
                "traceEvents" => {
                    map.next_value_seed(EventsSeed(self.0))?;
                    saw_events = true;
                }
                "kineto_rocm" => self.0.trace.summary = map.next_value()?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(saw_events)
    }
}

/// Parses a trace's text.
pub fn parse(text: &str, origin: &str) -> Result<Trace, String> {
    let mut builder = Builder::default();
    let mut de = serde_json::Deserializer::from_str(text);
    let saw_events = serde::Deserializer::deserialize_map(&mut de, FileVisitor(&mut builder))
        .map_err(|e| format!("{origin}: not a chrome trace: {e}"))?;
    de.end()
        .map_err(|e| format!("{origin}: trailing text: {e}"))?;
    if !saw_events {
        return Err(format!("{origin}: no traceEvents array"));
    }
    if let Some(error) = builder.error {
        return Err(format!("{origin}: {error}"));
    }
    Ok(builder.trace)
}

pub fn read(path: &Path) -> Result<Trace, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    parse(&text, &path.display().to_string())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn microsecond_text_comes_back_as_the_exact_nanoseconds() {
        assert_eq!(micros_text_to_ns("3247526412.895"), Some(3_247_526_412_895));
        assert_eq!(micros_text_to_ns("0.005"), Some(5));
        assert_eq!(micros_text_to_ns("7"), Some(7000));
        assert_eq!(micros_text_to_ns("1.5"), Some(1500));
        // Past f64's exact range for the micro value times 1000.
        assert_eq!(
            micros_text_to_ns("9007199254740.993"),
            Some(9_007_199_254_740_993)
        );
        assert_eq!(micros_text_to_ns("1e3"), Some(1_000_000));
        assert_eq!(micros_text_to_ns("x"), None);
    }

    #[test]
    fn reads_gpu_events_runtime_calls_flows_and_lanes() {
        let text = r#"{"schemaVersion": 1, "traceEvents": [
  {"ph": "M", "name": "thread_name", "pid": 0, "tid": 3, "args": {"name": "stream 3"}},
  {"ph": "X", "cat": "cuda_runtime", "name": "hipGraphLaunch", "pid": 1000000, "tid": 77, "ts": 1.000, "dur": 2.000, "args": {"correlation": 9, "External id": 101}},
  {"ph": "s", "id": 9, "pid": 1000000, "tid": 77, "ts": 1.000, "cat": "ac2g", "name": "ac2g"},
  {"ph": "X", "cat": "kernel", "name": "k\"1", "pid": 0, "tid": 3, "ts": 1234567890.123, "dur": 4.001, "args": {"device": 0, "stream": 3, "correlation": 9, "dispatch id": 5, "External id": 101, "graph id": 1, "graph node id": 4294967300}},
  {"ph": "f", "id": 9, "pid": 0, "tid": 3, "ts": 1234567890.123, "cat": "ac2g", "name": "ac2g", "bp": "e"},
  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH", "pid": 0, "tid": 3, "ts": 2.000, "dur": 0.500, "args": {"device": 0, "stream": 3, "correlation": 9, "bytes": 4096}}
  ], "kineto_rocm": ["window 0: completeness=complete"]}"#;
        let trace = parse(text, "t").unwrap();
        assert_eq!(trace.events.len(), 2);
        let k = &trace.events[0];
        assert_eq!(&*k.name, "k\"1");
        assert_eq!(
            (k.start_ns, k.end_ns),
            (1_234_567_890_123, 1_234_567_894_124)
        );
        assert_eq!(k.graph, Some((1, 4294967300)));
        assert_eq!(k.ordinal(), Some(4));
        assert_eq!((k.dispatch_id, k.external_id), (Some(5), Some(101)));
        let c = &trace.events[1];
        assert_eq!(c.category, GpuCategory::Memcpy);
        assert_eq!(c.direction, Some(Direction::DeviceToHost));
        assert_eq!((c.bytes, c.dispatch_id), (Some(4096), None));
        assert_eq!(trace.runtime.len(), 1);
        assert_eq!(trace.runtime[0].correlation, Some(9));
        assert_eq!(trace.flows.len(), 2);
        assert!(trace.flows[0].start && !trace.flows[1].start);
        assert_eq!(trace.lane_stream(0, 3), Some(3));
        assert_eq!(trace.lane_stream(0, 8), Some(8));
        assert_eq!(trace.summary, vec!["window 0: completeness=complete"]);
    }

    #[test]
    fn a_file_without_events_is_an_error() {
        assert!(parse(r#"{"schemaVersion": 1}"#, "t").is_err());
        assert!(parse("[]", "t").is_err());
    }
}
