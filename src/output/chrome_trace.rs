//! Writes a trace in kineto's chrome-trace format.
//!
//! Why our own writer: the CLI and tests need kineto's output without loading
//! kineto. Field spellings follow what kineto writes and what PyTorch reads:
//! `"graph id"` and `"graph node id"` are bare decimal integers (PyTorch
//! matches `"graph node id":\s*(\d+)`), timestamps are microseconds.
use crate::vocabulary::{self as vocab, MetadataKey};
use std::io::{self, Write};

/// One argument value: numbers stay unquoted.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg<'a> {
    Int(u64),
    Signed(i64),
    Float(f64),
    Str(&'a str),
    /// `[x, y, z]`, a JSON array (kineto's typed grid and block).
    Dim3([u32; 3]),
}

/// An args key: one of the vocabulary's, whose JSON spelling each writer
/// makes once, or any other name (a counter's, kineto's "External id"),
/// escaped where it is written.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ArgKey<'a> {
    Known(MetadataKey),
    Named(&'a str),
}

impl<'a> ArgKey<'a> {
    pub fn name(self) -> &'a str {
        match self {
            ArgKey::Known(key) => vocab::name(key),
            ArgKey::Named(name) => name,
        }
    }
}

impl From<MetadataKey> for ArgKey<'_> {
    fn from(key: MetadataKey) -> Self {
        ArgKey::Known(key)
    }
}

/// A complete ("X") event.
pub struct CompleteEvent<'a> {
    pub name: &'a str,
    pub category: &'a str,
    pub pid: u64,
    pub tid: u64,
    pub start_ns: u64,
    pub end_ns: u64,
    pub args: &'a [(ArgKey<'a>, Arg<'a>)],
}

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
    /// `"key": ` for each vocabulary key, by `MetadataKey`: a trace
    /// writes a dozen keys per kernel, so each is spelled once, not
    /// escaped and quoted per event.
    known_keys: Vec<KeyJson>,
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
            known_keys,
        })
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
        self.out.write_all(&self.event)
    }

    pub fn complete(&mut self, event: &CompleteEvent) -> io::Result<()> {
        self.start_event();
        let e = &mut self.event;
        e.extend_from_slice(b"  {\"ph\": \"X\", \"cat\": ");
        push_json_string(e, event.category);
        e.extend_from_slice(b", \"name\": ");
        push_json_string(e, event.name);
        e.extend_from_slice(b", \"pid\": ");
        push_int(e, event.pid);
        e.extend_from_slice(b", \"tid\": ");
        push_int(e, event.tid);
        e.extend_from_slice(b", \"ts\": ");
        push_micros(e, event.start_ns);
        e.extend_from_slice(b", \"dur\": ");
        push_micros(e, event.end_ns.saturating_sub(event.start_ns));
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
                match value {
                    Arg::Int(v) => push_int(e, *v),
                    Arg::Signed(v) => push_int(e, *v),
                    // Always with a fraction or exponent, so readers see a float.
                    Arg::Float(v) if v.is_finite() => write!(e, "{v:?}")?,
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
            e.push(b'}');
        }
        e.push(b'}');
        self.end_event()
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
        e.extend_from_slice(b", \"cat\": ");
        push_json_string(e, category);
        e.extend_from_slice(b", \"name\": ");
        push_json_string(e, category);
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
        self.out.write_all(b"\n  ]")?;
        for (key, json) in metadata {
            self.out.write_all(b",\n  ")?;
            write_json_string(&mut self.out, key)?;
            write!(self.out, ": {json}")?;
        }
        self.out.write_all(b"\n}\n")?;
        self.out.flush()?;
        Ok(self.out)
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
