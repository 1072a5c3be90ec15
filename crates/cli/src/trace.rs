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
use crate::pftrace::{self, ArgValue, ChromeEvent, Decoded};
use crate::progress;
use crate::trace_file::{self, Contents};
use rocprofiler_sim::workload::Direction;
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
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
    /// Per-instance counter args (`SQ_WAVES[XCC=0,...]`: a counter key
    /// with a `[`), in trace order.
    pub counter_instances: Vec<(String, f64)>,
    /// A memset's byte value.
    pub value: Option<u64>,
    /// A demangled kernel's raw symbol.
    pub mangled_name: Option<Arc<str>>,
    /// A copy's `src device` and `dst device` (-1: the host).
    pub src_device: Option<i64>,
    pub dst_device: Option<i64>,
    /// Which kernel-replay pass it is (`replay pass`).
    pub replay_pass: Option<u64>,
    /// The files of its raw thread trace (`thread trace`), comma-separated.
    pub thread_trace: Option<Arc<str>>,
}

/// An event of the timeline beyond GPU work and runtime calls: cuda_sync,
/// cuda_event, user_annotation, gpu_user_annotation, overhead.
#[derive(Clone, Debug, PartialEq)]
pub struct TimelineEvent {
    pub category: Arc<str>,
    pub name: Arc<str>,
    pub pid: u64,
    pub tid: u64,
    pub start_ns: u64,
    pub end_ns: u64,
    pub device: Option<u64>,
    pub stream: Option<u64>,
    pub correlation: Option<u64>,
    pub wait_on_stream: Option<i64>,
    pub wait_on_record: Option<i64>,
    /// A wait's `wait_on_cuda_event_id`.
    pub wait_on_event: Option<u64>,
    pub event_id: Option<u64>,
    pub graph: Option<(u64, u64)>,
    pub external_id: Option<u64>,
    /// A host function's address (`host function`).
    pub function: Option<u64>,
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

/// One sample of a hardware counter's track: the value from `ts_ns` on.
#[derive(Clone, Debug, PartialEq)]
pub struct CounterSample {
    pub pid: u64,
    pub name: Arc<str>,
    pub ts_ns: u64,
    pub value: f64,
}

/// What a trace says about itself.
#[derive(Debug, Default)]
pub struct Trace {
    pub events: Vec<GpuEvent>,
    pub runtime: Vec<RuntimeEvent>,
    pub flows: Vec<FlowEnd>,
    pub timeline: Vec<TimelineEvent>,
    /// Graph dependency arrow ends (fwdbwd flows).
    pub dependency_flows: Vec<FlowEnd>,
    /// Hardware counter track samples ("ph": "C", `hardware_counters`).
    pub counter_samples: Vec<CounterSample>,
    /// `thread_name` metadata: (pid, tid) -> name.
    pub lane_names: HashMap<(u64, u64), String>,
    /// The tool's summary lines (`kineto_rocm` metadata).
    pub summary: Vec<String>,
    /// `distributedInfo.rank`, in a PyTorch trace of a distributed job.
    pub rank: Option<u64>,
}

impl Trace {
    /// The stream a lane shows: `stream N` when the lane is named so, its
    /// tid when it is not named (kineto draws GPU work with tid = stream),
    /// and none when it is named after something else (a HW queue lane for
    /// work whose stream is unknown, a device's copies lane).
    /// A graph branch lane (`stream N graph branch ...`) shows stream N.
    pub fn lane_stream(&self, pid: u64, tid: u64) -> Option<u64> {
        match self.lane_names.get(&(pid, tid)) {
            None => Some(tid),
            Some(name) => name
                .strip_prefix("stream ")
                .and_then(|n| n.split_whitespace().next())
                .and_then(|n| n.parse().ok()),
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
        "DtoD" | "PtoP" => Some(Direction::DeviceToDevice),
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
    replay_pass: Option<u64>,
    value: Option<u64>,
    mangled_name: Option<Cow<'a, str>>,
    thread_trace: Option<Cow<'a, str>>,
    src_device: Option<i64>,
    dst_device: Option<i64>,
    wait_on_stream: Option<i64>,
    wait_on_cuda_event_record_corr_id: Option<i64>,
    wait_on_cuda_event_id: Option<u64>,
    event_id: Option<u64>,
    function: Option<u64>,
    name: Option<Cow<'a, str>>,
    /// Hardware counters: keys that start with an upper-case letter and
    /// hold a number (src/vocabulary.rs: no other key does; kineto's own
    /// upper-case args, such as `Input Dims`, hold no number and are skipped).
    counters: Vec<(String, f64)>,
    /// Those whose key names a counter instance (src/vocabulary.rs
    /// `counter_instance_key`).
    counter_instances: Vec<(String, f64)>,
}

impl RawArgs<'_> {
    fn push_counter(&mut self, key: String, value: f64) {
        if key.contains('[') {
            self.counter_instances.push((key, value));
        } else {
            self.counters.push((key, value));
        }
    }
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
        while let Some(key) = map.next_key::<Text<'de>>()? {
            let Text(key) = key;
            let slot = match key.as_ref() {
                "device" => &mut args.device,
                "stream" => &mut args.stream,
                "correlation" => &mut args.correlation,
                "External id" => &mut args.external_id,
                "dispatch id" => &mut args.dispatch_id,
                "graph id" => &mut args.graph_id,
                "graph node id" => &mut args.graph_node_id,
                "bytes" => &mut args.bytes,
                "replay pass" => &mut args.replay_pass,
                "value" => {
                    args.value = map.next_value()?;
                    continue;
                }
                "mangled name" => {
                    args.mangled_name = map.next_value::<Option<Text>>()?.map(|t| t.0);
                    continue;
                }
                "thread trace" => {
                    args.thread_trace = map.next_value::<Option<Text>>()?.map(|t| t.0);
                    continue;
                }
                "src device" => {
                    args.src_device = map.next_value()?;
                    continue;
                }
                "dst device" => {
                    args.dst_device = map.next_value()?;
                    continue;
                }
                "wait_on_stream" => {
                    args.wait_on_stream = map.next_value()?;
                    continue;
                }
                "wait_on_cuda_event_record_corr_id" => {
                    args.wait_on_cuda_event_record_corr_id = map.next_value()?;
                    continue;
                }
                "wait_on_cuda_event_id" => {
                    args.wait_on_cuda_event_id = map.next_value()?;
                    continue;
                }
                "event_id" => {
                    args.event_id = map.next_value()?;
                    continue;
                }
                "host function" => {
                    args.function = map.next_value()?;
                    continue;
                }
                "name" => {
                    args.name = map.next_value::<Option<Text>>()?.map(|t| t.0);
                    continue;
                }
                k if k.starts_with(|c: char| c.is_ascii_uppercase()) => {
                    if let Some(value) = map.next_value::<LenientF64>()?.0 {
                        args.push_counter(key.into_owned(), value);
                    }
                    continue;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            *slot = map.next_value::<LenientU64>()?.0;
        }
        Ok(args)
    }
}

/// Text borrowed from the trace where it holds no escapes, copied where it does.
struct Text<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Text<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Text<'a>, E> {
                Ok(Text(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Text<'a>, E> {
                Ok(Text(Cow::Owned(v.to_string())))
            }
            fn visit_string<E>(self, v: String) -> Result<Text<'a>, E> {
                Ok(Text(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V(std::marker::PhantomData))
    }
}

/// An arg read through [`lenient_u64`].
struct LenientU64(Option<u64>);

impl<'de> Deserialize<'de> for LenientU64 {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        lenient_u64(d).map(LenientU64)
    }
}

/// A counter value: any number; anything else is no counter and reads as none.
struct LenientF64(Option<f64>);

impl<'de> Deserialize<'de> for LenientF64 {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Option<f64>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number, or anything else read as none")
            }
            fn visit_u64<E>(self, v: u64) -> Result<Option<f64>, E> {
                Ok(Some(v as f64))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Option<f64>, E> {
                Ok(Some(v as f64))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Option<f64>, E> {
                Ok(Some(v))
            }
            fn visit_str<E>(self, _: &str) -> Result<Option<f64>, E> {
                Ok(None)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Option<f64>, E> {
                Ok(None)
            }
            fn visit_unit<E>(self) -> Result<Option<f64>, E> {
                Ok(None)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Option<f64>, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(None)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<f64>, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(None)
            }
        }
        d.deserialize_any(V).map(LenientF64)
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
    #[serde(default, deserialize_with = "lenient_u64")]
    pid: Option<u64>,
    #[serde(default, deserialize_with = "lenient_u64")]
    tid: Option<u64>,
    #[serde(borrow)]
    ts: Option<&'a RawValue>,
    #[serde(borrow)]
    dur: Option<&'a RawValue>,
    #[serde(default, deserialize_with = "lenient_u64")]
    id: Option<u64>,
    #[serde(borrow)]
    args: Option<RawArgs<'a>>,
}

/// An id or number kineto-rocm reads: other writers put text where ours
/// puts numbers (kineto's writer names its span lanes `"pid": "Spans"`); such
/// a value is no id of ours, and reads as none rather than failing the trace.
fn lenient_u64<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    struct Lenient;
    impl<'de> Visitor<'de> for Lenient {
        type Value = Option<u64>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a number, or anything else read as none")
        }
        fn visit_u64<E>(self, v: u64) -> Result<Option<u64>, E> {
            Ok(Some(v))
        }
        fn visit_i64<E>(self, v: i64) -> Result<Option<u64>, E> {
            Ok(u64::try_from(v).ok())
        }
        fn visit_f64<E>(self, _: f64) -> Result<Option<u64>, E> {
            Ok(None)
        }
        fn visit_str<E>(self, _: &str) -> Result<Option<u64>, E> {
            Ok(None)
        }
        fn visit_bool<E>(self, _: bool) -> Result<Option<u64>, E> {
            Ok(None)
        }
        fn visit_unit<E>(self) -> Result<Option<u64>, E> {
            Ok(None)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Option<u64>, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(None)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<u64>, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(None)
        }
    }
    d.deserialize_any(Lenient)
}

/// Builds the trace as events stream past, counting them.
struct Builder<'p> {
    trace: Trace,
    names: HashMap<String, Arc<str>>,
    error: Option<String>,
    read: &'p AtomicU64,
}

impl<'p> Builder<'p> {
    fn new(read: &'p AtomicU64) -> Builder<'p> {
        Builder {
            trace: Trace::default(),
            names: HashMap::new(),
            error: None,
            read,
        }
    }

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

    fn push_json(&mut self, raw: RawEvent) {
        let ts_ns = self.time(raw.ts, "ts");
        let dur_ns = self.time(raw.dur, "dur");
        self.push(Event {
            ph: raw.ph.as_deref().unwrap_or_default(),
            cat: raw.cat.as_deref().unwrap_or_default(),
            name: raw.name.as_deref().unwrap_or_default(),
            pid: raw.pid.unwrap_or(0),
            tid: raw.tid.unwrap_or(0),
            ts_ns,
            dur_ns,
            id: raw.id,
            args: raw.args,
        });
    }

    fn push(&mut self, raw: Event) {
        self.read.fetch_add(1, Ordering::Relaxed);
        let Event {
            ph,
            cat,
            name,
            pid,
            tid,
            ts_ns,
            dur_ns,
            ..
        } = raw;
        if ph == "M" {
            if name == "thread_name" {
                if let Some(lane) = raw.args.as_ref().and_then(|a| a.name.as_deref()) {
                    self.trace.lane_names.insert((pid, tid), lane.to_string());
                }
            }
            return;
        }
        if ph == "C" {
            if cat == "hardware_counters" {
                let value = raw
                    .args
                    .as_ref()
                    .and_then(|a| a.counters.iter().find(|(key, _)| key == name))
                    .map(|(_, v)| *v);
                if let Some(value) = value {
                    let name = self.intern(name);
                    self.trace.counter_samples.push(CounterSample {
                        pid,
                        name,
                        ts_ns,
                        value,
                    });
                }
            }
            return;
        }
        if (cat == "ac2g" || cat == "fwdbwd") && (ph == "s" || ph == "f") {
            if let Some(id) = raw.id {
                let end = FlowEnd {
                    start: ph == "s",
                    id,
                    pid,
                    tid,
                    ts_ns,
                };
                if cat == "ac2g" {
                    self.trace.flows.push(end);
                } else {
                    self.trace.dependency_flows.push(end);
                }
            }
            return;
        }
        let category = match cat {
            "kernel" => GpuCategory::Kernel,
            "gpu_memcpy" => GpuCategory::Memcpy,
            "gpu_memset" => GpuCategory::Memset,
            "cuda_runtime" => {
                let args = raw.args.as_ref();
                let event = RuntimeEvent {
                    name: self.intern(name),
                    pid,
                    tid,
                    start_ns: ts_ns,
                    correlation: args.and_then(|a| a.correlation),
                    external_id: args.and_then(|a| a.external_id),
                };
                self.trace.runtime.push(event);
                return;
            }
            "cuda_sync" | "cuda_event" | "user_annotation" | "gpu_user_annotation" | "overhead" => {
                let (start_ns, end_ns) = (ts_ns, ts_ns + dur_ns);
                let args = raw.args.as_ref();
                let event = TimelineEvent {
                    category: self.intern(cat),
                    name: self.intern(name),
                    pid,
                    tid,
                    start_ns,
                    end_ns,
                    device: args.and_then(|a| a.device),
                    stream: args.and_then(|a| a.stream),
                    correlation: args.and_then(|a| a.correlation),
                    wait_on_stream: args.and_then(|a| a.wait_on_stream),
                    wait_on_record: args.and_then(|a| a.wait_on_cuda_event_record_corr_id),
                    wait_on_event: args.and_then(|a| a.wait_on_cuda_event_id),
                    event_id: args.and_then(|a| a.event_id),
                    graph: args.and_then(|a| a.graph_id.zip(a.graph_node_id)),
                    external_id: args.and_then(|a| a.external_id),
                    function: args.and_then(|a| a.function),
                };
                self.trace.timeline.push(event);
                return;
            }
            _ => return,
        };
        let args = raw.args.as_ref();
        let int = |f: fn(&RawArgs) -> Option<u64>| args.and_then(f);
        let event = GpuEvent {
            name: self.intern(name),
            category,
            pid,
            tid,
            start_ns: ts_ns,
            end_ns: ts_ns + dur_ns,
            device: int(|a| a.device),
            stream: int(|a| a.stream),
            dispatch_id: int(|a| a.dispatch_id),
            correlation: int(|a| a.correlation),
            external_id: int(|a| a.external_id),
            graph: int(|a| a.graph_id).zip(int(|a| a.graph_node_id)),
            bytes: int(|a| a.bytes),
            direction: direction_of(name),
            counters: args.map(|a| a.counters.clone()).unwrap_or_default(),
            counter_instances: args
                .map(|a| a.counter_instances.clone())
                .unwrap_or_default(),
            value: int(|a| a.value),
            mangled_name: args.and_then(|a| a.mangled_name.as_deref()).map(Arc::from),
            src_device: args.and_then(|a| a.src_device),
            dst_device: args.and_then(|a| a.dst_device),
            replay_pass: int(|a| a.replay_pass),
            thread_trace: args.and_then(|a| a.thread_trace.as_deref()).map(Arc::from),
        };
        self.trace.events.push(event);
    }
}

/// One event, from either format, with its times in nanoseconds.
struct Event<'a> {
    ph: &'a str,
    cat: &'a str,
    name: &'a str,
    pid: u64,
    tid: u64,
    ts_ns: u64,
    dur_ns: u64,
    id: Option<u64>,
    args: Option<RawArgs<'a>>,
}

/// The args the reader keeps, from a decoded pftrace event.
fn args_of(args: &[(String, ArgValue)]) -> RawArgs<'_> {
    let mut out = RawArgs::default();
    for (key, value) in args {
        let uint = match value {
            ArgValue::Uint(v) => Some(*v),
            ArgValue::Int(v) => u64::try_from(*v).ok(),
            _ => None,
        };
        match key.as_str() {
            "device" => out.device = uint,
            "stream" => out.stream = uint,
            "correlation" => out.correlation = uint,
            "External id" => out.external_id = uint,
            "dispatch id" => out.dispatch_id = uint,
            "graph id" => out.graph_id = uint,
            "graph node id" => out.graph_node_id = uint,
            "bytes" => out.bytes = uint,
            "replay pass" => out.replay_pass = uint,
            "thread trace" => {
                if let ArgValue::Str(files) = value {
                    out.thread_trace = Some(Cow::Borrowed(files.as_str()));
                }
            }
            k if k.starts_with(|c: char| c.is_ascii_uppercase()) => {
                let number = match value {
                    ArgValue::Float(v) => Some(*v),
                    ArgValue::Uint(v) => Some(*v as f64),
                    ArgValue::Int(v) => Some(*v as f64),
                    _ => None,
                };
                if let Some(v) = number {
                    out.push_counter(key.clone(), v);
                }
            }
            _ => {}
        }
    }
    out
}

fn from_decoded(decoded: &Decoded, read: &AtomicU64) -> Trace {
    let mut builder = Builder::new(read);
    for event in &decoded.events {
        match event {
            ChromeEvent::Complete {
                cat,
                name,
                pid,
                tid,
                ts_ns,
                dur_ns,
                args,
            } => builder.push(Event {
                ph: "X",
                cat,
                name,
                pid: *pid,
                tid: *tid,
                ts_ns: *ts_ns,
                dur_ns: *dur_ns,
                id: None,
                args: Some(args_of(args)),
            }),
            ChromeEvent::Flow {
                start,
                dependency,
                id,
                pid,
                tid,
                ts_ns,
            } => builder.push(Event {
                ph: if *start { "s" } else { "f" },
                cat: pftrace::flow_category(*dependency),
                name: pftrace::flow_category(*dependency),
                pid: *pid,
                tid: *tid,
                ts_ns: *ts_ns,
                dur_ns: 0,
                id: Some(*id),
                args: None,
            }),
            ChromeEvent::Counter {
                pid,
                name,
                ts_ns,
                value,
            } => {
                let args = [(name.clone(), ArgValue::Float(*value))];
                builder.push(Event {
                    ph: "C",
                    cat: "hardware_counters",
                    name,
                    pid: *pid,
                    tid: 0,
                    ts_ns: *ts_ns,
                    dur_ns: 0,
                    id: None,
                    args: Some(args_of(&args)),
                })
            }
            ChromeEvent::LaneName { pid, tid, name } => builder.push(Event {
                ph: "M",
                cat: "",
                name: if tid.is_some() {
                    "thread_name"
                } else {
                    "process_name"
                },
                pid: *pid,
                tid: tid.unwrap_or(0),
                ts_ns: 0,
                dur_ns: 0,
                id: None,
                args: Some(RawArgs {
                    name: Some(Cow::Borrowed(name)),
                    ..RawArgs::default()
                }),
            }),
        }
    }
    for (key, json) in &decoded.metadata {
        match key.as_str() {
            "kineto_rocm" => builder.trace.summary = summary_of(json),
            "distributedInfo" => builder.trace.rank = rank_of(json),
            _ => {}
        }
    }
    builder.trace
}

/// The `kineto_rocm` metadata as lines: our writer's list of lines, or the
/// object kineto's writer holds (the face's trace metadata), as `key=value`
/// lines and its notes.
fn summary_of(json: &str) -> Vec<String> {
    use serde_json::Value;
    match serde_json::from_str::<Value>(json) {
        Ok(Value::Array(lines)) => lines
            .into_iter()
            .filter_map(|l| l.as_str().map(str::to_string))
            .collect(),
        Ok(Value::Object(fields)) => fields
            .into_iter()
            .flat_map(|(key, value)| match value {
                Value::String(text) => vec![format!("{key}={text}")],
                Value::Array(notes) => notes
                    .iter()
                    .map(|n| n.as_str().map_or_else(|| n.to_string(), str::to_string))
                    .collect(),
                other => vec![format!("{key}={other}")],
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// `distributedInfo.rank` of a PyTorch trace.
fn rank_of(json: &str) -> Option<u64> {
    #[derive(Deserialize)]
    struct Info {
        rank: Option<u64>,
    }
    serde_json::from_str::<Info>(json).ok()?.rank
}

struct EventsSeed<'b, 'p>(&'b mut Builder<'p>);

impl<'de> DeserializeSeed<'de> for EventsSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for EventsSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of trace events")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(event) = seq.next_element::<RawEvent<'de>>()? {
            self.0.push_json(event);
        }
        Ok(())
    }
}

struct FileVisitor<'b, 'p>(&'b mut Builder<'p>);

impl<'de> Visitor<'de> for FileVisitor<'_, '_> {
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
                "kineto_rocm" => {
                    let summary: &RawValue = map.next_value()?;
                    self.0.trace.summary = summary_of(summary.get());
                }
                "distributedInfo" => {
                    let info: &RawValue = map.next_value()?;
                    self.0.trace.rank = rank_of(info.get());
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(saw_events)
    }
}

/// Parses a trace's text.
#[cfg(test)]
pub fn parse(text: &str, origin: &str) -> Result<Trace, String> {
    parse_counting(text, origin, &AtomicU64::new(0))
}

/// Parses a trace's text, counting events in `read`.
fn parse_counting(text: &str, origin: &str, read: &AtomicU64) -> Result<Trace, String> {
    let mut builder = Builder::new(read);
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

/// Reads a trace file in any format `trace_file` knows, with a progress
/// line when that takes more than a second.
pub fn read(path: &Path) -> Result<Trace, String> {
    let origin = path.display().to_string();
    progress::watch(
        &format!("reading {origin}"),
        "events",
        |read| match trace_file::load(path)? {
            Contents::Json(text) => parse_counting(&text, &origin, read),
            Contents::Pftrace(bytes) => pftrace::decode(&bytes, read)
                .map(|decoded| from_decoded(&decoded, &AtomicU64::new(0)))
                .map_err(|e| format!("{origin}: not a valid Perfetto trace: {e}")),
        },
    )
}

/// How many GPU events a trace holds, counted line by line without parsing
/// it whole (traces of millions of events).
#[derive(Debug, Default, PartialEq)]
pub struct EventCounts {
    pub kernels: usize,
    pub graphed: usize,
    pub copies: usize,
}

impl EventCounts {
    /// The counts of a trace already read.
    pub fn of(trace: &Trace) -> EventCounts {
        let kernels = trace
            .events
            .iter()
            .filter(|e| e.category == GpuCategory::Kernel);
        EventCounts {
            kernels: kernels.clone().count(),
            graphed: kernels.filter(|e| e.graph.is_some()).count(),
            copies: trace
                .events
                .iter()
                .filter(|e| e.category == GpuCategory::Memcpy)
                .count(),
        }
    }
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
    fn text_where_numbers_go_is_no_id() {
        // kineto's writer puts its span lanes under a named process.
        let text = r#"{"traceEvents": [
  {"ph": "X", "cat": "Trace", "ts": 1.0, "dur": 2.0, "pid": "Spans", "tid": "ctest", "name": "ctest (0)", "args": {"Op count": 0}},
  {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 3, "ts": 5.000, "dur": 4.000, "args": {"device": 0, "stream": "3", "correlation": 9}}
  ]}"#;
        let trace = parse(text, "t").unwrap();
        assert_eq!(trace.events.len(), 1);
        assert_eq!(trace.events[0].correlation, Some(9));
    }

    #[test]
    fn kineto_writers_metadata_object_reads_as_lines() {
        // As kineto's ChromeTraceLogger writes the face's metadata.
        let text = r#"{"schemaVersion": 1,
  "kineto_rocm": {"status": "collected", "attributed": 6400, "notes": ["graph attribution: 6400 attributed"]},
  "traceEvents": []}"#;
        let trace = parse(text, "t").unwrap();
        assert_eq!(
            trace.summary,
            vec![
                "attributed=6400",
                "graph attribution: 6400 attributed",
                "status=collected"
            ]
        );
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
    fn counters_are_upper_case_numbers_and_other_args_still_read() {
        // kineto's own upper-case args (`Input Dims`, `Trace name`) hold no
        // number: skipped, not counters, and not a failed read.
        let text = r#"{"traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1.0, "dur": 1.0, "args": {"Input Dims": [[2, 2]], "Trace name": "t", "External id": 3}},
  {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 3, "ts": 5.000, "dur": 4.000, "args": {"device": 0, "dispatch id": 5, "External id": 3, "mangled name": "_Z1kv\u0041", "SQ_WAVES": 1024.0, "GRBM_COUNT": 8400, "SQ_WAVES[XCC=1,INSTANCE=0]": 24, "Grid note": "x"}},
  {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0, "tid": 3, "ts": 9.000, "dur": 1.000, "args": {"dispatch id": 6, "bytes": 64, "value": 7, "SQ_WAVES": 2.5}}
  ]}"#;
        let trace = parse(text, "t").unwrap();
        let k = &trace.events[0];
        assert_eq!(
            k.counters,
            vec![
                ("SQ_WAVES".to_string(), 1024.0),
                ("GRBM_COUNT".to_string(), 8400.0)
            ]
        );
        assert_eq!(
            k.counter_instances,
            vec![("SQ_WAVES[XCC=1,INSTANCE=0]".to_string(), 24.0)],
            "an instance key is no counter of its own"
        );
        assert_eq!(k.external_id, Some(3));
        assert_eq!(k.mangled_name.as_deref(), Some("_Z1kvA"));
        let m = &trace.events[1];
        assert_eq!((m.bytes, m.value), (Some(64), Some(7)));
        assert_eq!(m.counters, vec![("SQ_WAVES".to_string(), 2.5)]);
    }

    #[test]
    fn a_file_without_events_is_an_error() {
        assert!(parse(r#"{"schemaVersion": 1}"#, "t").is_err());
        assert!(parse("[]", "t").is_err());
    }
}
