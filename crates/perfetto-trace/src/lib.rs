//! The part of Perfetto's trace format (protos/perfetto/trace/, proto2) that
//! a timeline of tracks, slices and flows needs, as prost messages, and the
//! framing of a trace file: a `Trace` is the repeated field 1 of
//! `TracePacket`s, so a file can be written and read one packet at a time
//! instead of as one message held whole.
//!
//! Why its own crate: the tool library writes these messages and the CLI
//! reads them back (the report, the round-trip test); both must agree on
//! every field number, so they are declared once. Field numbers and types
//! are Perfetto's; repeated scalars are unpacked, as proto2 declares them.
use prost::encoding::{decode_key, decode_varint, WireType};
use prost::Message;

/// `TracePacket.sequence_flags`: this packet starts a sequence whose
/// interned data it and later packets define.
pub const SEQ_INCREMENTAL_STATE_CLEARED: u32 = 1;
/// `TracePacket.sequence_flags`: this packet refers to interned data.
pub const SEQ_NEEDS_INCREMENTAL_STATE: u32 = 2;

#[derive(Clone, PartialEq, Message)]
pub struct TracePacket {
    #[prost(uint64, optional, tag = "8")]
    pub timestamp: Option<u64>,
    #[prost(uint32, optional, tag = "10")]
    pub trusted_packet_sequence_id: Option<u32>,
    #[prost(message, optional, tag = "12")]
    pub interned_data: Option<InternedData>,
    #[prost(uint32, optional, tag = "13")]
    pub sequence_flags: Option<u32>,
    #[prost(oneof = "Data", tags = "11, 60")]
    pub data: Option<Data>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
pub enum Data {
    #[prost(message, tag = "11")]
    TrackEvent(TrackEvent),
    #[prost(message, tag = "60")]
    TrackDescriptor(TrackDescriptor),
}

#[derive(Clone, PartialEq, Message)]
pub struct TrackDescriptor {
    #[prost(uint64, optional, tag = "1")]
    pub uuid: Option<u64>,
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    #[prost(message, optional, tag = "3")]
    pub process: Option<ProcessDescriptor>,
    #[prost(message, optional, tag = "4")]
    pub thread: Option<ThreadDescriptor>,
    #[prost(uint64, optional, tag = "5")]
    pub parent_uuid: Option<u64>,
    /// Present on a counter track (its events carry values).
    #[prost(message, optional, tag = "8")]
    pub counter: Option<CounterDescriptor>,
}

/// Marks a track as a counter track; its unit fields are not used here.
#[derive(Clone, PartialEq, Message)]
pub struct CounterDescriptor {}

#[derive(Clone, PartialEq, Message)]
pub struct ProcessDescriptor {
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    #[prost(string, optional, tag = "6")]
    pub process_name: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct ThreadDescriptor {
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    #[prost(int32, optional, tag = "2")]
    pub tid: Option<i32>,
    #[prost(string, optional, tag = "5")]
    pub thread_name: Option<String>,
}

/// `TrackEvent.Type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum EventType {
    Unspecified = 0,
    SliceBegin = 1,
    SliceEnd = 2,
    Instant = 3,
    Counter = 4,
}

#[derive(Clone, PartialEq, Message)]
pub struct TrackEvent {
    #[prost(uint64, repeated, packed = "false", tag = "3")]
    pub category_iids: Vec<u64>,
    #[prost(message, repeated, tag = "4")]
    pub debug_annotations: Vec<DebugAnnotation>,
    #[prost(enumeration = "EventType", optional, tag = "9")]
    pub r#type: Option<i32>,
    #[prost(uint64, optional, tag = "10")]
    pub name_iid: Option<u64>,
    #[prost(uint64, optional, tag = "11")]
    pub track_uuid: Option<u64>,
    #[prost(string, repeated, tag = "22")]
    pub categories: Vec<String>,
    #[prost(string, optional, tag = "23")]
    pub name: Option<String>,
    #[prost(fixed64, repeated, packed = "false", tag = "47")]
    pub flow_ids: Vec<u64>,
    #[prost(fixed64, repeated, packed = "false", tag = "48")]
    pub terminating_flow_ids: Vec<u64>,
    /// A counter event's value.
    #[prost(double, optional, tag = "44")]
    pub double_counter_value: Option<f64>,
}

#[derive(Clone, PartialEq, Message)]
pub struct DebugAnnotation {
    #[prost(uint64, optional, tag = "1")]
    pub name_iid: Option<u64>,
    #[prost(string, optional, tag = "10")]
    pub name: Option<String>,
    #[prost(oneof = "AnnotationValue", tags = "2, 3, 4, 5, 6, 8, 9")]
    pub value: Option<AnnotationValue>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
pub enum AnnotationValue {
    #[prost(bool, tag = "2")]
    Bool(bool),
    #[prost(uint64, tag = "3")]
    Uint(u64),
    #[prost(int64, tag = "4")]
    Int(i64),
    #[prost(double, tag = "5")]
    Double(f64),
    #[prost(string, tag = "6")]
    String(String),
    #[prost(message, tag = "8")]
    Nested(NestedValue),
    /// Already JSON; Perfetto shows it parsed.
    #[prost(string, tag = "9")]
    LegacyJson(String),
}

/// `DebugAnnotation.NestedValue.NestedType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, prost::Enumeration)]
#[repr(i32)]
pub enum NestedType {
    Unspecified = 0,
    Dict = 1,
    Array = 2,
}

#[derive(Clone, PartialEq, Message)]
pub struct NestedValue {
    #[prost(enumeration = "NestedType", optional, tag = "1")]
    pub nested_type: Option<i32>,
    #[prost(message, repeated, tag = "4")]
    pub array_values: Vec<NestedValue>,
    #[prost(int64, optional, tag = "5")]
    pub int_value: Option<i64>,
}

#[derive(Clone, PartialEq, Message)]
pub struct InternedData {
    #[prost(message, repeated, tag = "1")]
    pub event_categories: Vec<InternedString>,
    #[prost(message, repeated, tag = "2")]
    pub event_names: Vec<InternedString>,
    #[prost(message, repeated, tag = "3")]
    pub debug_annotation_names: Vec<InternedString>,
}

/// `EventCategory`, `EventName` and `DebugAnnotationName` share this shape.
#[derive(Clone, PartialEq, Message)]
pub struct InternedString {
    #[prost(uint64, optional, tag = "1")]
    pub iid: Option<u64>,
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
}

/// Appends `packet` to a trace being written: field 1 of `Trace`.
pub fn encode_packet(packet: &TracePacket, out: &mut Vec<u8>) {
    prost::encoding::message::encode(1, packet, out);
}

/// Why a trace's bytes could not be read.
#[derive(Debug)]
pub struct FramingError {
    /// Byte offset of the packet that failed.
    pub offset: usize,
    pub message: String,
}

impl std::fmt::Display for FramingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "at byte {}: {}", self.offset, self.message)
    }
}

impl std::error::Error for FramingError {}

/// The packets of an uncompressed trace, one at a time. Fields of `Trace`
/// other than 1 are skipped, as a reader of a newer trace must.
pub fn packets(bytes: &[u8]) -> Packets<'_> {
    Packets { bytes, offset: 0 }
}

pub struct Packets<'a> {
    bytes: &'a [u8],
    offset: usize,
}

impl Packets<'_> {
    fn next_packet(&mut self) -> Result<Option<TracePacket>, String> {
        loop {
            let mut rest = &self.bytes[self.offset..];
            if rest.is_empty() {
                return Ok(None);
            }
            let before = rest.len();
            let (tag, wire) = decode_key(&mut rest).map_err(|e| e.to_string())?;
            let body_len = match wire {
                WireType::LengthDelimited => decode_varint(&mut rest).map_err(|e| e.to_string())?,
                WireType::Varint => {
                    decode_varint(&mut rest).map_err(|e| e.to_string())?;
                    0
                }
                WireType::SixtyFourBit => 8,
                WireType::ThirtyTwoBit => 4,
                other => return Err(format!("unexpected wire type {other:?}")),
            };
            let body_len = usize::try_from(body_len).map_err(|e| e.to_string())?;
            if body_len > rest.len() {
                return Err(format!(
                    "a field of {body_len} bytes, but {} bytes are left (truncated file?)",
                    rest.len()
                ));
            }
            let header = before - rest.len();
            let body = &rest[..body_len];
            self.offset += header + body_len;
            if tag == 1 && wire == WireType::LengthDelimited {
                return TracePacket::decode(body)
                    .map(Some)
                    .map_err(|e| e.to_string());
            }
        }
    }
}

impl Iterator for Packets<'_> {
    type Item = Result<TracePacket, FramingError>;

    fn next(&mut self) -> Option<Self::Item> {
        let offset = self.offset;
        match self.next_packet() {
            Ok(packet) => packet.map(Ok),
            Err(message) => {
                self.offset = self.bytes.len();
                Some(Err(FramingError { offset, message }))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slice(ts: u64, name: &str) -> TracePacket {
        TracePacket {
            timestamp: Some(ts),
            trusted_packet_sequence_id: Some(1),
            data: Some(Data::TrackEvent(TrackEvent {
                r#type: Some(EventType::SliceBegin as i32),
                name: Some(name.into()),
                track_uuid: Some(7),
                flow_ids: vec![u64::MAX],
                debug_annotations: vec![DebugAnnotation {
                    name: Some("grid".into()),
                    value: Some(AnnotationValue::Nested(NestedValue {
                        nested_type: Some(NestedType::Array as i32),
                        array_values: vec![NestedValue {
                            int_value: Some(4),
                            ..Default::default()
                        }],
                        int_value: None,
                    })),
                    ..Default::default()
                }],
                ..Default::default()
            })),
            ..Default::default()
        }
    }

    #[test]
    fn packets_come_back_one_by_one_in_order() {
        let mut bytes = Vec::new();
        encode_packet(&slice(5, "a"), &mut bytes);
        encode_packet(&slice(9, "b"), &mut bytes);
        let back: Vec<TracePacket> = packets(&bytes).map(Result::unwrap).collect();
        assert_eq!(back, vec![slice(5, "a"), slice(9, "b")]);
        // The framing is Trace's: decoding the whole buffer as a message of
        // repeated field 1 gives the same packets.
        #[derive(Clone, PartialEq, Message)]
        struct Trace {
            #[prost(message, repeated, tag = "1")]
            packet: Vec<TracePacket>,
        }
        assert_eq!(Trace::decode(bytes.as_slice()).unwrap().packet, back);
    }

    #[test]
    fn a_truncated_trace_is_an_error_naming_the_offset() {
        let mut bytes = Vec::new();
        encode_packet(&slice(5, "a"), &mut bytes);
        let first = bytes.len();
        encode_packet(&slice(9, "b"), &mut bytes);
        bytes.truncate(bytes.len() - 3);
        let results: Vec<_> = packets(&bytes).collect();
        assert!(results[0].is_ok());
        let error = results[1].as_ref().unwrap_err();
        assert_eq!(error.offset, first);
        assert!(error.message.contains("truncated"), "{error}");
        assert_eq!(results.len(), 2);
    }
}
