//! Reads a Perfetto trace written by kineto-rocm's writer back into the
//! chrome-trace events it was made from: slices become complete events (a
//! BEGIN and its END paired per track after ordering by time, as a trace
//! processor pairs them), thread and process tracks become lanes with their
//! names, flow ids become `ac2g` flow ends at their slice's start (`fwdbwd`
//! graph dependency arrows where the writer marked the id), and the
//! `metadata` instants the trace's top-level metadata.
//!
//! Why: `report` reads pftrace like JSON, and `convert` turns it back into
//! JSON, which the round-trip test compares event for event with the JSON
//! trace of the same run.
use perfetto_trace::{
    packets, AnnotationValue, Data, DebugAnnotation, EventType, InternedData, NestedValue,
    TrackDescriptor, TrackEvent, SEQ_INCREMENTAL_STATE_CLEARED,
};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

/// An arg as the JSON writer types it.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgValue {
    Uint(u64),
    Int(i64),
    Float(f64),
    Str(String),
    IntArray(Vec<i64>),
    /// Already JSON text.
    Json(String),
}

/// One chrome-trace event.
#[derive(Clone, Debug, PartialEq)]
pub enum ChromeEvent {
    Complete {
        cat: String,
        name: String,
        pid: u64,
        tid: u64,
        ts_ns: u64,
        dur_ns: u64,
        args: Vec<(String, ArgValue)>,
    },
    Flow {
        start: bool,
        /// A graph dependency arrow (`fwdbwd`), not a runtime call's `ac2g`.
        dependency: bool,
        id: u64,
        pid: u64,
        tid: u64,
        ts_ns: u64,
    },
    /// `process_name` (tid None) or `thread_name` metadata.
    LaneName {
        pid: u64,
        tid: Option<u64>,
        name: String,
    },
    /// A sample of a hardware counter's track on process `pid` ("ph": "C").
    Counter {
        pid: u64,
        name: String,
        ts_ns: u64,
        value: f64,
    },
}

/// A whole trace: its events and its top-level metadata (key, JSON text).
#[derive(Debug, Default)]
pub struct Decoded {
    pub events: Vec<ChromeEvent>,
    pub metadata: Vec<(String, String)>,
}

/// What a track stands for.
#[derive(Clone, Debug)]
enum Track {
    Process(u64),
    Lane(u64, u64),
    /// A counter track: its parent (a process track) and its counter.
    Counter(u64, String),
    /// An extra sub-track of a lane, or any other named track.
    Child(u64),
    Named(String),
}

#[derive(Default)]
struct Strings {
    categories: HashMap<u64, String>,
    names: HashMap<u64, String>,
    keys: HashMap<u64, String>,
}

impl Strings {
    fn add(&mut self, interned: InternedData) {
        let put = |table: &mut HashMap<u64, String>,
                   entries: Vec<perfetto_trace::InternedString>| {
            for entry in entries {
                if let (Some(iid), Some(name)) = (entry.iid, entry.name) {
                    table.insert(iid, name);
                }
            }
        };
        put(&mut self.categories, interned.event_categories);
        put(&mut self.names, interned.event_names);
        put(&mut self.keys, interned.debug_annotation_names);
    }
}

/// A track event as read, with its strings resolved.
struct Read {
    ts: u64,
    order: usize,
    track: u64,
    kind: EventType,
    cat: String,
    name: String,
    args: Vec<(String, ArgValue)>,
    flows: Vec<u64>,
    terminating: Vec<u64>,
    counter: Option<f64>,
}

fn arg_value(value: AnnotationValue) -> Result<ArgValue, String> {
    Ok(match value {
        AnnotationValue::Bool(b) => ArgValue::Json(b.to_string()),
        AnnotationValue::Uint(v) => ArgValue::Uint(v),
        AnnotationValue::Int(v) => ArgValue::Int(v),
        AnnotationValue::Double(v) => ArgValue::Float(v),
        AnnotationValue::String(s) => ArgValue::Str(s),
        AnnotationValue::LegacyJson(s) => ArgValue::Json(s),
        AnnotationValue::Nested(NestedValue { array_values, .. }) => ArgValue::IntArray(
            array_values
                .into_iter()
                .map(|v| v.int_value.ok_or("a nested value that is not an integer"))
                .collect::<Result<_, _>>()?,
        ),
    })
}

fn resolve(event: TrackEvent, ts: u64, order: usize, strings: &Strings) -> Result<Read, String> {
    let lookup = |table: &HashMap<u64, String>, iid: Option<u64>, direct: Option<String>| {
        direct
            .or_else(|| iid.and_then(|i| table.get(&i).cloned()))
            .unwrap_or_default()
    };
    let cat = event
        .categories
        .first()
        .cloned()
        .or_else(|| {
            event
                .category_iids
                .first()
                .and_then(|i| strings.categories.get(i).cloned())
        })
        .unwrap_or_default();
    let name = lookup(&strings.names, event.name_iid, event.name);
    let mut args = Vec::with_capacity(event.debug_annotations.len());
    for DebugAnnotation {
        name_iid,
        name,
        value,
    } in event.debug_annotations
    {
        let key = lookup(&strings.keys, name_iid, name);
        let value = value.ok_or_else(|| format!("arg `{key}` has no value"))?;
        args.push((key, arg_value(value)?));
    }
    let kind = event
        .r#type
        .and_then(|t| EventType::try_from(t).ok())
        .unwrap_or(EventType::Unspecified);
    Ok(Read {
        ts,
        order,
        track: event.track_uuid.unwrap_or(0),
        kind,
        cat,
        name,
        args,
        flows: event.flow_ids,
        terminating: event.terminating_flow_ids,
        counter: event.double_counter_value,
    })
}

/// Decodes an uncompressed pftrace. Errors name the byte offset or the
/// track that is wrong.
pub fn decode(bytes: &[u8], progress: &AtomicU64) -> Result<Decoded, String> {
    let mut strings = Strings::default();
    let mut tracks: HashMap<u64, Track> = HashMap::new();
    let mut decoded = Decoded::default();
    let mut read: Vec<Read> = Vec::new();
    for (order, packet) in packets(bytes).enumerate() {
        let packet = packet.map_err(|e| e.to_string())?;
        progress.fetch_add(1, Ordering::Relaxed);
        if packet.sequence_flags.unwrap_or(0) & SEQ_INCREMENTAL_STATE_CLEARED != 0 {
            strings = Strings::default();
        }
        if let Some(interned) = packet.interned_data {
            strings.add(interned);
        }
        match packet.data {
            Some(Data::TrackDescriptor(descriptor)) => {
                let (uuid, track, lane) = track_of(descriptor)?;
                if let Some(lane) = lane {
                    decoded.events.push(lane);
                }
                tracks.insert(uuid, track);
            }
            Some(Data::TrackEvent(event)) => {
                let ts = packet.timestamp.unwrap_or(0);
                read.push(resolve(event, ts, order, &strings)?);
            }
            None => {}
        }
    }
    let lane_of = |uuid: u64| -> Result<Option<(u64, u64)>, String> {
        let mut at = uuid;
        for _ in 0..8 {
            match tracks.get(&at) {
                Some(Track::Lane(pid, tid)) => return Ok(Some((*pid, *tid))),
                Some(Track::Child(parent)) => at = *parent,
                Some(Track::Named(_) | Track::Process(_) | Track::Counter(..)) => return Ok(None),
                None => {
                    return Err(format!(
                        "an event on track {uuid}, which no descriptor names"
                    ))
                }
            }
        }
        Err(format!("track {uuid}: parents nest too deep"))
    };
    read.sort_by_key(|r| (r.ts, r.order));
    let mut open: HashMap<u64, Vec<Read>> = HashMap::new();
    let mut completed: Vec<(usize, ChromeEvent, Vec<ChromeEvent>)> = Vec::new();
    for event in read {
        match event.kind {
            EventType::SliceBegin => open.entry(event.track).or_default().push(event),
            EventType::SliceEnd => {
                let begin = open
                    .get_mut(&event.track)
                    .and_then(Vec::pop)
                    .ok_or_else(|| {
                        format!(
                            "an END at {} ns on track {} without a BEGIN",
                            event.ts, event.track
                        )
                    })?;
                let (pid, tid) = lane_of(begin.track)?
                    .ok_or_else(|| format!("a slice on track {}, which is no lane", begin.track))?;
                let flows = flow_ends(&begin, pid, tid, begin.ts);
                completed.push((
                    begin.order,
                    ChromeEvent::Complete {
                        cat: begin.cat,
                        name: begin.name,
                        pid,
                        tid,
                        ts_ns: begin.ts,
                        dur_ns: event.ts - begin.ts,
                        args: begin.args,
                    },
                    flows,
                ));
            }
            EventType::Instant => match tracks.get(&event.track) {
                Some(Track::Named(name)) if name == METADATA_TRACK => {
                    let json = event
                        .args
                        .into_iter()
                        .find_map(|(key, value)| match (key.as_str(), value) {
                            ("value", ArgValue::Json(json)) => Some(json),
                            _ => None,
                        })
                        .ok_or_else(|| format!("metadata `{}` without a value", event.name))?;
                    decoded.metadata.push((event.name, json));
                }
                _ => {
                    let (pid, tid) = lane_of(event.track)?.ok_or_else(|| {
                        format!("an instant on track {}, which is no lane", event.track)
                    })?;
                    let mut flows = flow_ends(&event, pid, tid, event.ts);
                    if flows.is_empty() {
                        return Err(format!("an instant `{}` that carries no flow", event.name));
                    }
                    let first = flows.remove(0);
                    completed.push((event.order, first, flows));
                }
            },
            EventType::Counter => {
                let Some(Track::Counter(parent, name)) = tracks.get(&event.track) else {
                    return Err(format!(
                        "a counter event on track {}, which is no counter track",
                        event.track
                    ));
                };
                let Some(Track::Process(pid)) = tracks.get(parent) else {
                    return Err(format!("counter track {} not under a process", event.track));
                };
                let value = event
                    .counter
                    .ok_or_else(|| format!("a counter event of `{name}` without a value"))?;
                completed.push((
                    event.order,
                    ChromeEvent::Counter {
                        pid: *pid,
                        name: name.clone(),
                        ts_ns: event.ts,
                        value,
                    },
                    Vec::new(),
                ));
            }
            other => {
                return Err(format!(
                    "an event of type {other:?}, which this writer never writes"
                ))
            }
        }
    }
    if let Some((track, _)) = open.iter().find(|(_, slices)| !slices.is_empty()) {
        return Err(format!("a slice on track {track} never ends"));
    }
    completed.sort_by_key(|c| c.0);
    for (_, event, flows) in completed {
        decoded.events.push(event);
        decoded.events.extend(flows);
    }
    Ok(decoded)
}

/// Where the writer puts the trace's metadata (src/output/pftrace/encode.rs).
const METADATA_TRACK: &str = "trace metadata";

/// The bit the writer sets on a graph dependency arrow's flow id
/// (src/output/pftrace/mod.rs `DEPENDENCY_FLOW_ID`).
const DEPENDENCY_FLOW_ID: u64 = 1 << 63;

fn flow_ends(event: &Read, pid: u64, tid: u64, ts_ns: u64) -> Vec<ChromeEvent> {
    let flow = |start: bool, id: &u64| ChromeEvent::Flow {
        start,
        dependency: id & DEPENDENCY_FLOW_ID != 0,
        id: id & !DEPENDENCY_FLOW_ID,
        pid,
        tid,
        ts_ns,
    };
    event
        .flows
        .iter()
        .map(|id| flow(true, id))
        .chain(event.terminating.iter().map(|id| flow(false, id)))
        .collect()
}

/// A descriptor's track, and the lane-name event it stands for.
fn track_of(descriptor: TrackDescriptor) -> Result<(u64, Track, Option<ChromeEvent>), String> {
    let uuid = descriptor.uuid.ok_or("a track descriptor without a uuid")?;
    let id = |v: Option<i32>, what: &str| -> Result<u64, String> {
        v.and_then(|v| u64::try_from(v).ok())
            .ok_or_else(|| format!("track {uuid}: no valid {what}"))
    };
    if let Some(thread) = descriptor.thread {
        let (pid, tid) = (id(thread.pid, "pid")?, id(thread.tid, "tid")?);
        let lane = thread.thread_name.map(|name| ChromeEvent::LaneName {
            pid,
            tid: Some(tid),
            name,
        });
        return Ok((uuid, Track::Lane(pid, tid), lane));
    }
    if let Some(process) = descriptor.process {
        let pid = id(process.pid, "pid")?;
        let lane = process.process_name.map(|name| ChromeEvent::LaneName {
            pid,
            tid: None,
            name,
        });
        return Ok((uuid, Track::Process(pid), lane));
    }
    if descriptor.counter.is_some() {
        let parent = descriptor
            .parent_uuid
            .ok_or_else(|| format!("counter track {uuid} without a process"))?;
        let name = descriptor
            .name
            .ok_or_else(|| format!("counter track {uuid} without a name"))?;
        return Ok((uuid, Track::Counter(parent, name), None));
    }
    let track = match (descriptor.parent_uuid, descriptor.name) {
        (Some(parent), _) => Track::Child(parent),
        (None, name) => Track::Named(name.unwrap_or_default()),
    };
    Ok((uuid, track, None))
}

/// Writes a decoded trace as kineto-format JSON, in our writer's layout.
pub fn write_json(decoded: &Decoded, out: &mut impl std::io::Write) -> std::io::Result<()> {
    let text = |s: &str| serde_json::to_string(s).expect("strings serialise");
    writeln!(out, "{{\n  \"schemaVersion\": 1,\n  \"traceEvents\": [")?;
    for (i, event) in decoded.events.iter().enumerate() {
        let separator = if i == 0 { "" } else { ",\n" };
        write!(out, "{separator}  ")?;
        match event {
            ChromeEvent::Complete {
                cat,
                name,
                pid,
                tid,
                ts_ns,
                dur_ns,
                args,
            } => {
                write!(
                    out,
                    "{{\"ph\": \"X\", \"cat\": {}, \"name\": {}, \"pid\": {pid}, \"tid\": {tid}, \"ts\": {}, \"dur\": {}",
                    text(cat),
                    text(name),
                    micros(*ts_ns),
                    micros(*dur_ns)
                )?;
                if !args.is_empty() {
                    let fields: Vec<String> = args
                        .iter()
                        .map(|(key, value)| format!("{}: {}", text(key), json_value(value)))
                        .collect();
                    write!(out, ", \"args\": {{{}}}", fields.join(", "))?;
                }
                write!(out, "}}")?;
            }
            ChromeEvent::Flow {
                start,
                dependency,
                id,
                pid,
                tid,
                ts_ns,
            } => {
                let (ph, binding) = if *start {
                    ("s", "")
                } else {
                    ("f", ", \"bp\": \"e\"")
                };
                let cat = flow_category(*dependency);
                write!(
                    out,
                    "{{\"ph\": \"{ph}\", \"id\": {id}, \"pid\": {pid}, \"tid\": {tid}, \"ts\": {}, \"cat\": \"{cat}\", \"name\": \"{cat}\"{binding}}}",
                    micros(*ts_ns)
                )?;
            }
            ChromeEvent::Counter {
                pid,
                name,
                ts_ns,
                value,
            } => {
                write!(
                    out,
                    "{{\"ph\": \"C\", \"cat\": \"hardware_counters\", \"name\": {}, \"pid\": {pid}, \"tid\": 0, \"ts\": {}, \"args\": {{{}: {}}}}}",
                    text(name),
                    micros(*ts_ns),
                    text(name),
                    json_value(&ArgValue::Float(*value))
                )?;
            }
            ChromeEvent::LaneName { pid, tid, name } => {
                let (what, tid) = match tid {
                    None => ("process_name", 0),
                    Some(tid) => ("thread_name", *tid),
                };
                write!(
                    out,
                    "{{\"ph\": \"M\", \"name\": \"{what}\", \"pid\": {pid}, \"tid\": {tid}, \"args\": {{\"name\": {}}}}}",
                    text(name)
                )?;
            }
        }
    }
    write!(out, "\n  ]")?;
    for (key, json) in &decoded.metadata {
        write!(out, ",\n  {}: {json}", text(key))?;
    }
    writeln!(out, "\n}}")
}

/// A flow end's category (and name), as the JSON writer gives it.
pub fn flow_category(dependency: bool) -> &'static str {
    if dependency {
        "fwdbwd"
    } else {
        "ac2g"
    }
}

fn micros(ns: u64) -> String {
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

fn json_value(value: &ArgValue) -> String {
    match value {
        ArgValue::Uint(v) => v.to_string(),
        ArgValue::Int(v) => v.to_string(),
        ArgValue::Float(v) if v.is_finite() => format!("{v:?}"),
        ArgValue::Float(_) => "null".into(),
        ArgValue::Str(s) => serde_json::to_string(s).expect("strings serialise"),
        ArgValue::IntArray(values) => {
            let items: Vec<String> = values.iter().map(i64::to_string).collect();
            format!("[{}]", items.join(", "))
        }
        ArgValue::Json(json) => json.clone(),
    }
}
