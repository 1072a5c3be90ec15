//! Writes a trace in kineto's chrome-trace format.
//!
//! Why our own writer: the CLI and tests need kineto's output without loading
//! kineto. Field spellings follow what kineto writes and what PyTorch reads:
//! `"graph id"` and `"graph node id"` are bare decimal integers (PyTorch
//! matches `"graph node id":\s*(\d+)`), timestamps are microseconds.
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

/// A complete ("X") event.
pub struct CompleteEvent<'a> {
    pub name: &'a str,
    pub category: &'a str,
    pub pid: u64,
    pub tid: u64,
    pub start_ns: u64,
    pub end_ns: u64,
    pub args: &'a [(&'a str, Arg<'a>)],
}

/// Which end of a CPU -> GPU flow arrow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowEnd {
    Start,
    Finish,
}

/// Streams events into `{"traceEvents": [...], ...}`.
pub struct ChromeTraceWriter<W: Write> {
    out: W,
    first: bool,
}

impl<W: Write> ChromeTraceWriter<W> {
    pub fn begin(mut out: W) -> io::Result<Self> {
        out.write_all(b"{\n  \"schemaVersion\": 1,\n  \"traceEvents\": [\n")?;
        Ok(ChromeTraceWriter { out, first: true })
    }

    fn separator(&mut self) -> io::Result<()> {
        if self.first {
            self.first = false;
            Ok(())
        } else {
            self.out.write_all(b",\n")
        }
    }

    pub fn complete(&mut self, event: &CompleteEvent) -> io::Result<()> {
        self.separator()?;
        write!(self.out, "  {{\"ph\": \"X\", \"cat\": ")?;
        write_json_string(&mut self.out, event.category)?;
        write!(self.out, ", \"name\": ")?;
        write_json_string(&mut self.out, event.name)?;
        write!(
            self.out,
            ", \"pid\": {}, \"tid\": {}, \"ts\": {}, \"dur\": {}",
            event.pid,
            event.tid,
            Micros(event.start_ns),
            Micros(event.end_ns.saturating_sub(event.start_ns))
        )?;
        if !event.args.is_empty() {
            write!(self.out, ", \"args\": {{")?;
            for (i, (key, value)) in event.args.iter().enumerate() {
                if i > 0 {
                    self.out.write_all(b", ")?;
                }
                write_json_string(&mut self.out, key)?;
                self.out.write_all(b": ")?;
                match value {
                    Arg::Int(v) => write!(self.out, "{v}")?,
                    Arg::Signed(v) => write!(self.out, "{v}")?,
                    // Always with a fraction or exponent, so readers see a float.
                    Arg::Float(v) if v.is_finite() => write!(self.out, "{v:?}")?,
                    Arg::Float(_) => self.out.write_all(b"null")?,
                    Arg::Str(s) => write_json_string(&mut self.out, s)?,
                    Arg::Dim3([x, y, z]) => write!(self.out, "[{x}, {y}, {z}]")?,
                }
            }
            self.out.write_all(b"}")?;
        }
        self.out.write_all(b"}")
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
        self.separator()?;
        let (ph, binding) = match end {
            FlowEnd::Start => ("s", ""),
            FlowEnd::Finish => ("f", ", \"bp\": \"e\""),
        };
        write!(
            self.out,
            "  {{\"ph\": \"{ph}\", \"id\": {id}, \"pid\": {pid}, \"tid\": {tid}, \"ts\": {}, \"cat\": \"ac2g\", \"name\": \"ac2g\"{binding}}}",
            Micros(ts_ns)
        )
    }

    /// A flow arrow end of category `category` (a graph dependency).
    pub fn flow_of(
        &mut self,
        category: &str,
        end: FlowEnd,
        id: u64,
        pid: u64,
        tid: u64,
        ts_ns: u64,
    ) -> io::Result<()> {
        self.separator()?;
        let (ph, binding) = match end {
            FlowEnd::Start => ("s", ""),
            FlowEnd::Finish => ("f", ", \"bp\": \"e\""),
        };
        write!(
            self.out,
            "  {{\"ph\": \"{ph}\", \"id\": {id}, \"pid\": {pid}, \"tid\": {tid}, \"ts\": {}, \"cat\": ",
            Micros(ts_ns)
        )?;
        write_json_string(&mut self.out, category)?;
        write!(self.out, ", \"name\": ")?;
        write_json_string(&mut self.out, category)?;
        write!(self.out, "{binding}}}")
    }

    /// A metadata event naming a process (device) or thread (stream) lane.
    pub fn lane_name(&mut self, pid: u64, tid: Option<u64>, name: &str) -> io::Result<()> {
        self.separator()?;
        match tid {
            None => write!(self.out, "  {{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": {pid}, \"tid\": 0, \"args\": {{\"name\": ")?,
            Some(tid) => write!(self.out, "  {{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": {pid}, \"tid\": {tid}, \"args\": {{\"name\": ")?,
        }
        write_json_string(&mut self.out, name)?;
        self.out.write_all(b"}}")
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

/// Nanoseconds shown as microseconds with three decimals, as kineto does.
struct Micros(u64);

impl std::fmt::Display for Micros {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{:03}", self.0 / 1000, self.0 % 1000)
    }
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
                    ("graph id", Arg::Int(1)),
                    ("graph node id", Arg::Int(packed)),
                    ("grid", Arg::Dim3([4, 1, 1])),
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
    }
}
