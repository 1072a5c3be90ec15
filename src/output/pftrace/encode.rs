//! The second pass: every event as Perfetto packets, on the tracks the
//! layout chose. A chrome lane (pid, tid) becomes a thread track under a
//! process track; a slice a BEGIN and an END packet with its category, name
//! and args (debug annotations, typed as the JSON writer types them); an
//! `ac2g` flow end a flow id on the slice it binds to; the trace metadata
//! instant events named by their key, carrying the JSON value; a counter
//! sample a counter event on its (process, counter) counter track.
//!
//! Nothing here knows a category: whatever the events carry is written.
use super::layout::{LaneKey, Layout};
use crate::output::chrome_trace::{Arg, ArgKey, CompleteEvent, FlowEnd};
use crate::output::sink::TraceSink;
use perfetto_trace::{
    encode_packet, AnnotationValue, CounterDescriptor, Data, DebugAnnotation, EventType,
    InternedData, InternedString, NestedType, NestedValue, ProcessDescriptor, ThreadDescriptor,
    TracePacket, TrackDescriptor, TrackEvent, SEQ_INCREMENTAL_STATE_CLEARED,
    SEQ_NEEDS_INCREMENTAL_STATE,
};
use std::collections::HashMap;
use std::io::{self, Write};

/// Every packet is on this one sequence (its interned strings are shared).
const SEQUENCE: u32 = 1;
/// Packets are buffered up to about this many bytes before each write.
const CHUNK: usize = 1 << 16;
/// The track of the trace metadata instants.
const METADATA_TRACK_NAME: &str = "trace metadata";

/// Strings named once per sequence, then by number.
#[derive(Default)]
struct Interned(HashMap<String, u64>);

impl Interned {
    /// The string's id, and the entry to emit when it is new.
    fn id(&mut self, s: &str) -> (u64, Option<InternedString>) {
        if let Some(&iid) = self.0.get(s) {
            return (iid, None);
        }
        let iid = self.0.len() as u64 + 1;
        self.0.insert(s.to_string(), iid);
        let entry = InternedString {
            iid: Some(iid),
            name: Some(s.to_string()),
        };
        (iid, Some(entry))
    }
}

pub struct Encoder<W: Write> {
    out: W,
    buffer: Vec<u8>,
    layout: Layout,
    /// Per lane index: the uuid of each of its sub-tracks.
    tracks: Vec<Vec<u64>>,
    lane_tracks: HashMap<LaneKey, u32>,
    /// Per counter track (the layout's order): its uuid.
    counter_tracks: Vec<u64>,
    metadata_track: u64,
    categories: Interned,
    names: Interned,
    keys: Interned,
    slices: u32,
}

impl<W: Write> Encoder<W> {
    /// Writes every track descriptor, then takes the events.
    pub fn begin(layout: Layout, out: W) -> io::Result<Encoder<W>> {
        let mut next_uuid = 0u64;
        let mut uuid = || {
            next_uuid += 1;
            next_uuid
        };
        let mut descriptors = Vec::new();
        let mut process_tracks: HashMap<u64, u64> = HashMap::new();
        let mut pids: Vec<u64> = layout.lanes.iter().map(|l| l.key.0).collect();
        pids.extend(layout.process_names.keys());
        pids.extend(layout.counters.iter().map(|(pid, _)| *pid));
        pids.sort_unstable();
        pids.dedup();
        for pid in pids {
            let track = uuid();
            process_tracks.insert(pid, track);
            descriptors.push(TrackDescriptor {
                uuid: Some(track),
                process: Some(ProcessDescriptor {
                    pid: Some(id32(pid)?),
                    process_name: layout.process_names.get(&pid).cloned(),
                }),
                ..Default::default()
            });
        }
        let mut tracks = Vec::with_capacity(layout.lanes.len());
        let mut lane_tracks = HashMap::new();
        for (index, lane) in layout.lanes.iter().enumerate() {
            let (pid, tid) = lane.key;
            let main = uuid();
            descriptors.push(TrackDescriptor {
                uuid: Some(main),
                parent_uuid: Some(process_tracks[&pid]),
                thread: Some(ThreadDescriptor {
                    pid: Some(id32(pid)?),
                    tid: Some(id32(tid)?),
                    thread_name: lane.name.clone(),
                }),
                ..Default::default()
            });
            let mut uuids = vec![main];
            // Slices that overlap without nesting go on children of the
            // lane's track; siblings of one name are drawn as one row.
            let name = lane.name.clone().unwrap_or_else(|| format!("{tid}"));
            for _ in 1..lane.subtracks {
                let extra = uuid();
                descriptors.push(TrackDescriptor {
                    uuid: Some(extra),
                    parent_uuid: Some(main),
                    name: Some(format!("{name} (overlapping)")),
                    ..Default::default()
                });
                uuids.push(extra);
            }
            tracks.push(uuids);
            lane_tracks.insert(lane.key, index as u32);
        }
        // A counter track under its process, named after its counter.
        let mut counter_tracks = Vec::with_capacity(layout.counters.len());
        for (pid, counter) in &layout.counters {
            let track = uuid();
            descriptors.push(TrackDescriptor {
                uuid: Some(track),
                parent_uuid: Some(process_tracks[pid]),
                name: Some(counter.clone()),
                counter: Some(CounterDescriptor {}),
                ..Default::default()
            });
            counter_tracks.push(track);
        }
        let metadata_track = uuid();
        descriptors.push(TrackDescriptor {
            uuid: Some(metadata_track),
            name: Some(METADATA_TRACK_NAME.into()),
            ..Default::default()
        });
        let mut encoder = Encoder {
            out,
            buffer: Vec::with_capacity(CHUNK * 2),
            layout,
            tracks,
            lane_tracks,
            counter_tracks,
            metadata_track,
            categories: Interned::default(),
            names: Interned::default(),
            keys: Interned::default(),
            slices: 0,
        };
        for (i, descriptor) in descriptors.into_iter().enumerate() {
            encoder.packet(TracePacket {
                trusted_packet_sequence_id: Some(SEQUENCE),
                sequence_flags: (i == 0).then_some(SEQ_INCREMENTAL_STATE_CLEARED),
                data: Some(Data::TrackDescriptor(descriptor)),
                ..Default::default()
            })?;
        }
        Ok(encoder)
    }

    fn packet(&mut self, packet: TracePacket) -> io::Result<()> {
        encode_packet(&packet, &mut self.buffer);
        if self.buffer.len() >= CHUNK {
            self.out.write_all(&self.buffer)?;
            self.buffer.clear();
        }
        Ok(())
    }

    /// A track event at `ts` with its interned strings.
    fn event(&mut self, ts: u64, event: TrackEvent, interned: InternedData) -> io::Result<()> {
        let has_interned = !(interned.event_categories.is_empty()
            && interned.event_names.is_empty()
            && interned.debug_annotation_names.is_empty());
        self.packet(TracePacket {
            timestamp: Some(ts),
            trusted_packet_sequence_id: Some(SEQUENCE),
            sequence_flags: Some(SEQ_NEEDS_INCREMENTAL_STATE),
            interned_data: has_interned.then_some(interned),
            data: Some(Data::TrackEvent(event)),
        })
    }

    /// Category, name and args of an event, interned.
    fn named(
        &mut self,
        category: &str,
        name: &str,
        args: &[(ArgKey, Arg)],
        interned: &mut InternedData,
    ) -> TrackEvent {
        let (category_iid, new) = self.categories.id(category);
        interned.event_categories.extend(new);
        let (name_iid, new) = self.names.id(name);
        interned.event_names.extend(new);
        let mut annotations = Vec::with_capacity(args.len());
        for (key, value) in args {
            let (key_iid, new) = self.keys.id(key.name());
            interned.debug_annotation_names.extend(new);
            annotations.push(DebugAnnotation {
                name_iid: Some(key_iid),
                name: None,
                value: Some(annotation_value(value)),
            });
        }
        TrackEvent {
            category_iids: vec![category_iid],
            name_iid: Some(name_iid),
            debug_annotations: annotations,
            ..Default::default()
        }
    }

    /// Writes the unbound flow ends and the metadata, then flushes.
    pub fn finish(mut self, metadata: &[(&str, String)]) -> io::Result<W> {
        for flow in std::mem::take(&mut self.layout.unbound_flows) {
            let lane = self.lane_tracks[&flow.lane];
            let mut interned = InternedData::default();
            let mut event = self.named("ac2g", "ac2g", &[], &mut interned);
            event.r#type = Some(EventType::Instant as i32);
            event.track_uuid = Some(self.tracks[lane as usize][0]);
            flow_ids(&mut event, &[(flow.end, flow.id)]);
            self.event(flow.ts_ns, event, interned)?;
        }
        let ts = self.layout.first_ts_ns;
        for (key, json) in metadata {
            let mut interned = InternedData::default();
            let mut event = self.named("metadata", key, &[], &mut interned);
            event.r#type = Some(EventType::Instant as i32);
            event.track_uuid = Some(self.metadata_track);
            let (key_iid, new) = self.keys.id("value");
            interned.debug_annotation_names.extend(new);
            event.debug_annotations.push(DebugAnnotation {
                name_iid: Some(key_iid),
                name: None,
                value: Some(AnnotationValue::LegacyJson(json.clone())),
            });
            self.event(ts, event, interned)?;
        }
        self.out.write_all(&self.buffer)?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Perfetto's pid and tid are 32-bit, as kineto's lane ids are; a wider
/// one is refused rather than shown on another lane.
fn id32(id: u64) -> io::Result<i32> {
    i32::try_from(id).map_err(|_| {
        io::Error::other(format!(
            "lane id {id} does not fit Perfetto's 32-bit pid/tid"
        ))
    })
}

fn annotation_value(arg: &Arg) -> AnnotationValue {
    match *arg {
        Arg::Int(v) => AnnotationValue::Uint(v),
        Arg::Signed(v) => AnnotationValue::Int(v),
        Arg::Float(v) => AnnotationValue::Double(v),
        Arg::Str(s) => AnnotationValue::String(s.to_string()),
        Arg::Dim3(values) => AnnotationValue::Nested(NestedValue {
            nested_type: Some(NestedType::Array as i32),
            array_values: values
                .iter()
                .map(|&v| NestedValue {
                    int_value: Some(v.into()),
                    ..Default::default()
                })
                .collect(),
            int_value: None,
        }),
    }
}

/// A flow's start goes in `flow_ids`, its finish in `terminating_flow_ids`.
fn flow_ids(event: &mut TrackEvent, flows: &[(FlowEnd, u64)]) {
    for &(end, id) in flows {
        match end {
            FlowEnd::Start => event.flow_ids.push(id),
            FlowEnd::Finish => event.terminating_flow_ids.push(id),
        }
    }
}

impl<W: Write> TraceSink for Encoder<W> {
    fn complete(&mut self, event: &CompleteEvent) -> io::Result<()> {
        let gen = self.slices;
        self.slices += 1;
        let (lane, subtrack) = self.layout.placement[gen as usize];
        let track = self.tracks[lane as usize][subtrack as usize];
        let mut interned = InternedData::default();
        let mut begin = self.named(event.category, event.name, event.args, &mut interned);
        begin.r#type = Some(EventType::SliceBegin as i32);
        begin.track_uuid = Some(track);
        if let Some(flows) = self.layout.bound_flows.remove(&gen) {
            flow_ids(&mut begin, &flows);
        }
        self.event(event.start_ns, begin, interned)?;
        let end = TrackEvent {
            r#type: Some(EventType::SliceEnd as i32),
            track_uuid: Some(track),
            ..Default::default()
        };
        self.event(
            event.end_ns.max(event.start_ns),
            end,
            InternedData::default(),
        )
    }

    /// Bound by the layout to its slice, already written with it.
    fn flow(&mut self, _: FlowEnd, _: u64, _: u64, _: u64, _: u64) -> io::Result<()> {
        Ok(())
    }

    /// Bound by the layout to its slice, already written with it.
    fn flow_of(&mut self, _: &str, _: FlowEnd, _: u64, _: u64, _: u64, _: u64) -> io::Result<()> {
        Ok(())
    }

    /// Written with the track descriptors.
    fn lane_name(&mut self, _: u64, _: Option<u64>, _: &str) -> io::Result<()> {
        Ok(())
    }

    fn counter(&mut self, pid: u64, name: &str, ts_ns: u64, value: f64) -> io::Result<()> {
        let index = self
            .layout
            .counter_index
            .get(&pid)
            .and_then(|by_name| by_name.get(name))
            .copied()
            .ok_or_else(|| {
                io::Error::other(format!("counter `{name}` of pid {pid} was not laid out"))
            })?;
        let event = TrackEvent {
            r#type: Some(EventType::Counter as i32),
            track_uuid: Some(self.counter_tracks[index as usize]),
            double_counter_value: Some(value),
            ..Default::default()
        };
        self.event(ts_ns, event, InternedData::default())
    }
}
