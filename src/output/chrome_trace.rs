//! Writes a trace in kineto's chrome-trace format.
//!
//! Why our own writer: the CLI and tests need kineto's output without loading
//! kineto. Field spellings follow what kineto writes and what PyTorch reads:
//! `"graph id"` and `"graph node id"` are bare decimal integers (PyTorch
//! matches `"graph node id":\s*(\d+)`), timestamps are microseconds.
pub use super::event::{Arg, ArgKey, CompleteEvent, ShapeKey};
use super::event_shapes::{self, Hole, KeyedShapes, Shapes};
use super::room::{Pending, SLACK};
use crate::vocabulary as vocab;
use std::io::{self, Write};

/// Which end of a CPU -> GPU flow arrow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowEnd {
    Start,
    Finish,
}

/// Streams events into `{"traceEvents": [...], ...}`.
///
/// Events are formatted into a scratch buffer with integer formatting
/// (`itoa`) and plain byte copies, then handed to `out` whole: a trace is
/// millions of events, and `write!` through `fmt` costs several times more
/// per field.
pub struct ChromeTraceWriter<W: Write> {
    out: W,
    first: bool,
    event: Vec<u8>,
    /// Events not yet handed to `out`.
    pending: Pending,
    /// `"key": ` for each vocabulary key, by `MetadataKey`: a trace
    /// writes a dozen keys per kernel, so each is spelled once, not
    /// escaped and quoted per event.
    known_keys: Vec<KeyJson>,
    /// Complete events' bytes by shape, for the next event of each.
    shapes: Shapes,
    /// Complete events' bytes by their caller's key.
    keyed: KeyedShapes,
    /// Where the event being formatted has its holes (`Shapes::offer`).
    holes: Vec<(u32, u32)>,
    from_kept_shapes: u64,
    /// A flow event's `, "cat": …, "name": …` per category: a trace has a
    /// flow or two per launch and one or two categories, so each is
    /// quoted and escaped once.
    flow_tails: Vec<(String, Vec<u8>)>,
}

/// A vocabulary key's JSON, in a block of fixed size: copying the whole
/// block is a few stores the compiler lays out, where a copy of the key's
/// own length is a call to memcpy, and the bytes past the key are cut
/// off again.
struct KeyJson {
    block: [u8; KEY_JSON_BLOCK],
    len: usize,
}

/// Room for the longest vocabulary key's `"key": ` (a test checks).
const KEY_JSON_BLOCK: usize = 48;

/// What goes between two events, as [`Room::piece`] copies it.
const SEPARATOR: [u8; 2 + SLACK] = {
    let mut block = [b' '; 2 + SLACK];
    block[0] = b',';
    block[1] = b'\n';
    block
};

impl KeyJson {
    fn new(name: &str) -> KeyJson {
        let mut json = Vec::new();
        push_json_string(&mut json, name);
        json.extend_from_slice(b": ");
        let mut block = [b' '; KEY_JSON_BLOCK];
        block[..json.len()].copy_from_slice(&json);
        KeyJson {
            block,
            len: json.len(),
        }
    }

    fn push(&self, out: &mut Vec<u8>) {
        let end = out.len() + self.len;
        out.extend_from_slice(&self.block);
        out.truncate(end);
    }
}

impl<W: Write> ChromeTraceWriter<W> {
    pub fn begin(mut out: W) -> io::Result<Self> {
        out.write_all(b"{\n  \"schemaVersion\": 1,\n  \"traceEvents\": [\n")?;
        let known_keys = vocab::CATALOG
            .iter()
            .map(|spec| KeyJson::new(spec.name))
            .collect();
        Ok(ChromeTraceWriter {
            out,
            first: true,
            event: Vec::with_capacity(1024),
            pending: Pending::default(),
            known_keys,
            shapes: Shapes::default(),
            keyed: KeyedShapes::default(),
            holes: Vec::new(),
            from_kept_shapes: 0,
            flow_tails: Vec::new(),
        })
    }

    /// How many complete events were written from a kept shape, compared
    /// or keyed (src/output/event_shapes.rs), rather than formatted field
    /// by field.
    pub fn events_from_kept_shapes(&self) -> u64 {
        self.from_kept_shapes
    }

    /// Starts the next event in the scratch buffer.
    fn start_event(&mut self) {
        self.event.clear();
        if self.first {
            self.first = false;
        } else {
            self.event.extend_from_slice(b",\n");
        }
    }

    fn end_event(&mut self) -> io::Result<()> {
        self.pending.push(&mut self.out, &self.event)
    }

    pub fn complete(&mut self, event: &CompleteEvent) -> io::Result<()> {
        self.start_event();
        if self.shapes.write_if_kept(event, &mut self.event, push_hole) {
            self.from_kept_shapes += 1;
            return self.end_event();
        }
        let from = self.format(event);
        self.shapes.offer(event, &self.event[from..], &self.holes);
        self.end_event()
    }

    /// A complete event of shape `key` (see [`ShapeKey`]) with its times
    /// and its varying args' `values`: written from the key's kept bytes,
    /// else formatted from the args `fill` pushes into `args` (cleared
    /// first) and kept for the next event of its key.
    pub fn complete_shaped<'a>(
        &mut self,
        key: &ShapeKey,
        head: &CompleteEvent<'a>,
        values: &[u64],
        args: &mut Vec<(ArgKey<'a>, Arg<'a>)>,
        fill: impl FnOnce(&mut Vec<(ArgKey<'a>, Arg<'a>)>),
    ) -> io::Result<()> {
        if let Some(shape) = self.keyed.kept(key) {
            let bytes = SEPARATOR.len() + shape.most_bytes();
            let mut room = self.pending.room(&mut self.out, bytes)?;
            if !std::mem::take(&mut self.first) {
                room.piece(&SEPARATOR, 2);
            }
            shape.write(&mut room, (head.start_ns, head.end_ns), values);
            let written = room.written().len();
            self.pending.wrote(written);
            self.from_kept_shapes += 1;
            return Ok(());
        }
        self.start_event();
        args.clear();
        fill(args);
        let event = CompleteEvent { args, ..*head };
        let from = self.format(&event);
        self.keyed
            .offer(*key, &event, values, &self.event[from..], &self.holes);
        self.end_event()
    }

    /// Formats `event` field by field after what the scratch buffer holds,
    /// noting its holes; returns where it starts.
    fn format(&mut self, event: &CompleteEvent) -> usize {
        let from = self.event.len();
        let holes = &mut self.holes;
        holes.clear();
        let e = &mut self.event;
        let hole = |e: &Vec<u8>, start: usize| ((start - from) as u32, (e.len() - from) as u32);
        e.extend_from_slice(b"  {\"ph\": \"X\", \"cat\": ");
        push_json_string(e, event.category);
        e.extend_from_slice(b", \"name\": ");
        push_json_string(e, event.name);
        e.extend_from_slice(b", \"pid\": ");
        push_int(e, event.pid);
        e.extend_from_slice(b", \"tid\": ");
        push_int(e, event.tid);
        e.extend_from_slice(b", \"ts\": ");
        let start = e.len();
        push_micros(e, event.start_ns);
        holes.push(hole(e, start));
        e.extend_from_slice(b", \"dur\": ");
        let start = e.len();
        push_micros(e, event.end_ns.saturating_sub(event.start_ns));
        holes.push(hole(e, start));
        if !event.args.is_empty() {
            e.extend_from_slice(b", \"args\": {");
            for (i, (key, value)) in event.args.iter().enumerate() {
                if i > 0 {
                    e.extend_from_slice(b", ");
                }
                match key {
                    ArgKey::Known(key) => self.known_keys[*key as usize].push(e),
                    ArgKey::Named(name) => {
                        push_json_string(e, name);
                        e.extend_from_slice(b": ");
                    }
                }
                let start = e.len();
                push_value(e, value);
                if event_shapes::varies(*key, value) {
                    holes.push(hole(e, start));
                }
            }
            e.push(b'}');
        }
        e.push(b'}');
        from
    }

    /// A kineto "ac2g" flow arrow end, linking a runtime call to its kernel.
    pub fn flow(
        &mut self,
        end: FlowEnd,
        id: u64,
        pid: u64,
        tid: u64,
        ts_ns: u64,
    ) -> io::Result<()> {
        self.flow_of("ac2g", end, id, pid, tid, ts_ns)
    }

    /// A flow arrow end of category `category` ("ac2g", or a graph
    /// dependency), named after its category as kineto names them.
    pub fn flow_of(
        &mut self,
        category: &str,
        end: FlowEnd,
        id: u64,
        pid: u64,
        tid: u64,
        ts_ns: u64,
    ) -> io::Result<()> {
        self.start_event();
        let e = &mut self.event;
        e.extend_from_slice(match end {
            FlowEnd::Start => b"  {\"ph\": \"s\", \"id\": ",
            FlowEnd::Finish => b"  {\"ph\": \"f\", \"id\": ",
        });
        push_int(e, id);
        e.extend_from_slice(b", \"pid\": ");
        push_int(e, pid);
        e.extend_from_slice(b", \"tid\": ");
        push_int(e, tid);
        e.extend_from_slice(b", \"ts\": ");
        push_micros(e, ts_ns);
        let tail = match self.flow_tails.iter().position(|(c, _)| c == category) {
            Some(known) => &self.flow_tails[known].1,
            None => {
                let mut tail = b", \"cat\": ".to_vec();
                push_json_string(&mut tail, category);
                tail.extend_from_slice(b", \"name\": ");
                push_json_string(&mut tail, category);
                self.flow_tails.push((category.to_string(), tail));
                &self.flow_tails.last().expect("just pushed").1
            }
        };
        e.extend_from_slice(tail);
        if end == FlowEnd::Finish {
            e.extend_from_slice(b", \"bp\": \"e\"");
        }
        e.push(b'}');
        self.end_event()
    }

    /// A sample of counter `name` on process `pid`'s counter track (a
    /// Chrome counter event: one series, named like the counter).
    pub fn counter(&mut self, pid: u64, name: &str, ts_ns: u64, value: f64) -> io::Result<()> {
        self.start_event();
        let e = &mut self.event;
        e.extend_from_slice(b"  {\"ph\": \"C\", \"cat\": ");
        push_json_string(e, vocab::COUNTER_CATEGORY);
        e.extend_from_slice(b", \"name\": ");
        push_json_string(e, name);
        e.extend_from_slice(b", \"pid\": ");
        push_int(e, pid);
        e.extend_from_slice(b", \"tid\": 0, \"ts\": ");
        push_micros(e, ts_ns);
        e.extend_from_slice(b", \"args\": {");
        push_json_string(e, name);
        e.extend_from_slice(b": ");
        if value.is_finite() {
            write!(e, "{value:?}")?;
        } else {
            e.extend_from_slice(b"null");
        }
        e.extend_from_slice(b"}}");
        self.end_event()
    }

    /// A metadata event naming a process (device) or thread (stream) lane.
    pub fn lane_name(&mut self, pid: u64, tid: Option<u64>, name: &str) -> io::Result<()> {
        self.start_event();
        let e = &mut self.event;
        match tid {
            None => write!(e, "  {{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": {pid}, \"tid\": 0, \"args\": {{\"name\": ")?,
            Some(tid) => write!(e, "  {{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": {pid}, \"tid\": {tid}, \"args\": {{\"name\": ")?,
        }
        push_json_string(e, name);
        e.extend_from_slice(b"}}");
        self.end_event()
    }

    /// Closes the event list and appends top-level metadata, already JSON.
    pub fn finish(mut self, metadata: &[(&str, String)]) -> io::Result<W> {
        let mut tail = b"\n  ]".to_vec();
        for (key, json) in metadata {
            tail.extend_from_slice(b",\n  ");
            write_json_string(&mut tail, key)?;
            write!(tail, ": {json}")?;
        }
        tail.extend_from_slice(b"\n}\n");
        self.pending.push(&mut self.out, &tail)?;
        self.pending.drain(&mut self.out)?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// One arg's value.
fn push_value(e: &mut Vec<u8>, value: &Arg) {
    match value {
        Arg::Int(v) => push_int(e, *v),
        Arg::Signed(v) => push_int(e, *v),
        // Always with a fraction or exponent, so readers see a float.
        // Writing into a Vec cannot fail.
        Arg::Float(v) if v.is_finite() => {
            let _ = write!(e, "{v:?}");
        }
        Arg::Float(_) => e.extend_from_slice(b"null"),
        Arg::Str(s) => push_json_string(e, s),
        Arg::Dim3([x, y, z]) => {
            e.push(b'[');
            push_int(e, *x);
            e.extend_from_slice(b", ");
            push_int(e, *y);
            e.extend_from_slice(b", ");
            push_int(e, *z);
            e.push(b']');
        }
    }
}

/// A kept shape's hole: a time or a varying arg's value.
fn push_hole(e: &mut Vec<u8>, hole: Hole<'_>) {
    match hole {
        Hole::Micros(ns) => push_micros(e, ns),
        Hole::Arg(value) => push_value(e, value),
    }
}

/// A single digit is pushed as one byte: most of a kernel's integers are
/// (device, pid, a grid's and a block's y and z, shared and scratch
/// memory), and formatting and copying one costs ten times more.
fn push_int<T: itoa::Integer + TryInto<u8>>(out: &mut Vec<u8>, v: T) {
    match v.try_into() {
        Ok(digit) if digit < 10 => out.push(b'0' + digit),
        _ => out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes()),
    }
}

/// Nanoseconds shown as microseconds with three decimals, as kineto does.
fn push_micros(out: &mut Vec<u8>, ns: u64) {
    push_int(out, ns / 1000);
    let frac = (ns % 1000) as u16;
    out.extend_from_slice(&[
        b'.',
        b'0' + (frac / 100) as u8,
        b'0' + (frac / 10 % 10) as u8,
        b'0' + (frac % 10) as u8,
    ]);
}

/// `s` as a JSON string. Names are almost always plain: copied whole unless
/// a byte may need escaping (a quote, a backslash, a control character:
/// below 0x20, DEL, or the lead byte of U+0080..U+009F).
fn push_json_string(out: &mut Vec<u8>, s: &str) {
    if may_need_escaping(s.as_bytes()) {
        // Writing into a Vec cannot fail.
        let _ = write_json_string(out, s);
    } else {
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
    }
}

fn may_need_escaping_byte(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\' || b == 0x7f || b == 0xc2
}

/// [`may_need_escaping_byte`] for any byte of `s`, tested eight bytes at a
/// time (every kernel name is scanned, once per event and twice when
/// mangled). The tail shorter than a word is tested as one more word: the last eight
/// bytes (overlapping the words before), or, in a string of four to seven
/// bytes, its first four and last four; most keys and names are short, and
/// a byte at a time cost more than the rest of the test.
fn may_need_escaping(s: &[u8]) -> bool {
    let word = |bytes: &[u8]| u64::from_ne_bytes(bytes.try_into().expect("eight bytes"));
    let half = |bytes: &[u8]| u32::from_ne_bytes(bytes.try_into().expect("four bytes"));
    let n = s.len();
    if n >= 8 {
        let mut words = s.chunks_exact(8);
        if words.any(|w| word_may_need_escaping(word(w))) {
            return true;
        }
        !words.remainder().is_empty() && word_may_need_escaping(word(&s[n - 8..]))
    } else if n >= 4 {
        let x = u64::from(half(&s[..4])) | (u64::from(half(&s[n - 4..])) << 32);
        word_may_need_escaping(x)
    } else {
        s.iter().any(|&b| may_need_escaping_byte(b))
    }
}

/// [`may_need_escaping_byte`] for any of a word's eight bytes: a byte below
/// 0x20, or equal to one of the four, makes a zero byte in one of the words
/// below, and the bit trick finds a zero byte exactly.
fn word_may_need_escaping(x: u64) -> bool {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    let below = |x: u64, n: u8| x.wrapping_sub(ONES * u64::from(n)) & !x & HIGHS;
    let equal = |x: u64, b: u8| below(x ^ (ONES * u64::from(b)), 1);
    below(x, 0x20) | equal(x, b'"') | equal(x, b'\\') | equal(x, 0x7f) | equal(x, 0xc2) != 0
}

pub fn write_json_string<W: Write>(out: &mut W, s: &str) -> io::Result<()> {
    out.write_all(b"\"")?;
    let mut rest = s;
    while let Some(pos) = rest.find(|c: char| c == '"' || c == '\\' || c.is_control()) {
        out.write_all(&rest.as_bytes()[..pos])?;
        let c = rest[pos..].chars().next().expect("found a char");
        match c {
            '"' => out.write_all(b"\\\"")?,
            '\\' => out.write_all(b"\\\\")?,
            '\n' => out.write_all(b"\\n")?,
            '\t' => out.write_all(b"\\t")?,
            c => write!(out, "\\u{:04x}", c as u32)?,
        }
        rest = &rest[pos + c.len_utf8()..];
    }
    out.write_all(rest.as_bytes())?;
    out.write_all(b"\"")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocabulary::MetadataKey;

    #[test]
    fn the_word_scan_finds_every_byte_the_byte_test_finds() {
        // Each byte value at each place of strings of 0 to 17 bytes, in
        // plain text and next to a byte that is at its word's edge.
        for len in 1..=17usize {
            for at in 0..len {
                for b in 0..=255u8 {
                    for fill in [b'a', 0xff, 0x21, 0x80] {
                        let mut bytes = vec![fill; len];
                        bytes[at] = b;
                        let want = bytes.iter().any(|&b| may_need_escaping_byte(b));
                        assert_eq!(may_need_escaping(&bytes), want, "{bytes:?}");
                    }
                }
            }
        }
        assert!(!may_need_escaping(b""));
    }

    #[test]
    fn every_vocabulary_key_fits_its_fixed_block() {
        for spec in vocab::CATALOG {
            let key = KeyJson::new(spec.name);
            assert!(key.len <= KEY_JSON_BLOCK, "{}", spec.name);
            let mut out = b"{".to_vec();
            key.push(&mut out);
            assert_eq!(out, format!("{{\"{}\": ", spec.name).into_bytes());
        }
    }

    /// The text of a finished trace's event list.
    fn events_of(writer: ChromeTraceWriter<Vec<u8>>) -> String {
        let text = String::from_utf8(writer.finish(&[]).unwrap()).unwrap();
        let body = text.split_once("[\n").unwrap().1;
        body.rsplit_once("\n  ]").unwrap().0.to_string()
    }

    /// Every event of a stream that repeats shapes, alternates them in
    /// one cache set and changes one field at a time, written by one
    /// writer (kept shapes), is byte for byte what a fresh writer writes
    /// for it alone (formatted).
    #[test]
    fn an_event_written_from_a_kept_shape_is_the_event_formatted() {
        let names = ["k00", "k01", "a\"quoted\\name", "graph32_k17", "x"];
        let strings = ["Dispatch Kernel", "Memset", "c\u{1}d"];
        let mut events = Vec::new();
        for i in 0..2_000u64 {
            // Mostly one of 12 shapes; one event in 16 of its own.
            let shape = if i % 16 == 5 { i } else { (i * 7 + i / 5) % 12 };
            let pick = |n: u64| (shape.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (n * 7)) % 5;
            let mut args = vec![
                (MetadataKey::Device.into(), Arg::Int(pick(1) % 2)),
                (MetadataKey::Correlation.into(), Arg::Int(i / 3)),
                (MetadataKey::DispatchId.into(), Arg::Int(i)),
                (
                    MetadataKey::Kind.into(),
                    Arg::Str(strings[pick(2) as usize % 3]),
                ),
                (
                    MetadataKey::Grid.into(),
                    Arg::Dim3([1 + pick(3) as u32 % 2, 1, 1]),
                ),
            ];
            match pick(4) {
                0 => args.push((ArgKey::Named("SQ_WAVES"), Arg::Float(i as f64 / 7.0))),
                1 => args.push((ArgKey::Named("External id"), Arg::Int(i * 11))),
                2 => args.push((ArgKey::Named("External id"), Arg::Signed(-(i as i64)))),
                3 => args.push((MetadataKey::GraphNodeId.into(), Arg::Str("n"))),
                _ => args.push((MetadataKey::Stream.into(), Arg::Float(f64::NAN))),
            }
            events.push((names[pick(0) as usize], pick(5) % 3, args, i));
        }
        type Spec = (&'static str, u64, Vec<(ArgKey<'static>, Arg<'static>)>, u64);
        fn event(spec: &Spec) -> CompleteEvent<'_> {
            let (name, tid, args, i) = spec;
            CompleteEvent {
                name,
                category: if name.len() == 1 {
                    "gpu_memset"
                } else {
                    "kernel"
                },
                pid: 0,
                tid: *tid,
                start_ns: 1_000 + i * 999,
                end_ns: 1_000 + i * 999 + i % 4_000,
                args,
            }
        }
        let mut kept = ChromeTraceWriter::begin(Vec::new()).unwrap();
        let mut alone = Vec::new();
        for e in &events {
            kept.complete(&event(e)).unwrap();
            let mut fresh = ChromeTraceWriter::begin(Vec::new()).unwrap();
            fresh.complete(&event(e)).unwrap();
            alone.push(events_of(fresh));
        }
        let hits = kept.events_from_kept_shapes();
        assert!(hits > 1_500, "{hits} of 2000 events came from kept shapes");
        let body = events_of(kept);
        for (i, (got, want)) in body.split(",\n").zip(&alone).enumerate() {
            assert_eq!(got, want, "event {i}");
        }
        assert_eq!(body.split(",\n").count(), events.len());
    }

    #[test]
    fn graph_fields_are_bare_integers_pytorch_can_read() {
        let mut writer = ChromeTraceWriter::begin(Vec::new()).unwrap();
        let packed = (1u64 << 32) | 4;
        writer
            .complete(&CompleteEvent {
                name: "k\"1",
                category: "kernel",
                pid: 0,
                tid: 3,
                start_ns: 1_500,
                end_ns: 4_250,
                args: &[
                    (MetadataKey::GraphId.into(), Arg::Int(1)),
                    (MetadataKey::GraphNodeId.into(), Arg::Int(packed)),
                    (ArgKey::Named("grid"), Arg::Dim3([4, 1, 1])),
                ],
            })
            .unwrap();
        // A named key first, and one that needs escaping, after a known one.
        writer
            .complete(&CompleteEvent {
                name: "k2",
                category: "kernel",
                pid: 0,
                tid: 3,
                start_ns: 5_000,
                end_ns: 6_000,
                args: &[
                    (ArgKey::Named("SQ_WAVES"), Arg::Float(2.0)),
                    (MetadataKey::Device.into(), Arg::Int(0)),
                    (ArgKey::Named("a\"b"), Arg::Int(7)),
                ],
            })
            .unwrap();
        let text =
            String::from_utf8(writer.finish(&[("kineto_rocm", "{}".into())]).unwrap()).unwrap();
        assert!(text.contains("\"graph node id\": 4294967300"), "{text}");
        assert!(text.contains("\"ts\": 1.500, \"dur\": 2.750"), "{text}");
        let parsed: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
        let event = &parsed["traceEvents"][0];
        assert_eq!(event["name"], "k\"1");
        assert_eq!(event["args"]["graph id"], 1);
        assert_eq!(event["args"]["grid"], serde_json::json!([4, 1, 1]));
        let second = &parsed["traceEvents"][1]["args"];
        assert_eq!(second["SQ_WAVES"], 2.0);
        assert_eq!(second["device"], 0);
        assert_eq!(second["a\"b"], 7);
    }
}
