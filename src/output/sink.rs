//! What a trace writer is handed: the events of kineto's chrome trace, one
//! call per event, in the order the JSON writer writes them.
//!
//! Why a trait: the windows are turned into events once
//! (src/output/kineto_json.rs), and every format writes those same events,
//! so a category added there reaches the JSON and the Perfetto writer alike
//! without code of its own in either.
use super::chrome_trace::{Arg, ArgKey, ChromeTraceWriter, CompleteEvent, FlowEnd, ShapeKey};
use std::io::{self, Write};

pub trait TraceSink {
    /// A complete ("X") event: a slice on lane (pid, tid).
    fn complete(&mut self, event: &CompleteEvent) -> io::Result<()>;
    /// A complete event whose caller names its shape by `key` (see
    /// [`ShapeKey`]): `head` without its args (they are ignored), the
    /// varying args' `values` in args order, and `fill`, which pushes the
    /// args into `args` (cleared first) when the sink needs them. A sink
    /// that keeps no shapes writes it as [`complete`](Self::complete).
    fn complete_shaped<'a>(
        &mut self,
        key: &ShapeKey,
        head: &CompleteEvent<'a>,
        values: &[u64],
        args: &mut Vec<(ArgKey<'a>, Arg<'a>)>,
        fill: impl FnOnce(&mut Vec<(ArgKey<'a>, Arg<'a>)>),
    ) -> io::Result<()> {
        let _ = (key, values);
        args.clear();
        fill(args);
        self.complete(&CompleteEvent { args, ..*head })
    }
    /// One end of an `ac2g` flow arrow, bound to the slice that encloses
    /// `ts_ns` on lane (pid, tid).
    fn flow(&mut self, end: FlowEnd, id: u64, pid: u64, tid: u64, ts_ns: u64) -> io::Result<()>;
    /// One end of a flow arrow of `category` (a graph dependency), bound
    /// like an `ac2g` end.
    fn flow_of(
        &mut self,
        category: &str,
        end: FlowEnd,
        id: u64,
        pid: u64,
        tid: u64,
        ts_ns: u64,
    ) -> io::Result<()>;
    /// Names a process lane (`tid` None) or a thread lane.
    fn lane_name(&mut self, pid: u64, tid: Option<u64>, name: &str) -> io::Result<()>;
    /// A sample of counter `name` on process `pid`'s track of it: the value
    /// from `ts_ns` until the next sample.
    fn counter(&mut self, pid: u64, name: &str, ts_ns: u64, value: f64) -> io::Result<()>;
}

impl<W: Write> TraceSink for ChromeTraceWriter<W> {
    fn complete(&mut self, event: &CompleteEvent) -> io::Result<()> {
        ChromeTraceWriter::complete(self, event)
    }

    fn complete_shaped<'a>(
        &mut self,
        key: &ShapeKey,
        head: &CompleteEvent<'a>,
        values: &[u64],
        args: &mut Vec<(ArgKey<'a>, Arg<'a>)>,
        fill: impl FnOnce(&mut Vec<(ArgKey<'a>, Arg<'a>)>),
    ) -> io::Result<()> {
        ChromeTraceWriter::complete_shaped(self, key, head, values, args, fill)
    }

    fn flow(&mut self, end: FlowEnd, id: u64, pid: u64, tid: u64, ts_ns: u64) -> io::Result<()> {
        ChromeTraceWriter::flow(self, end, id, pid, tid, ts_ns)
    }

    fn flow_of(
        &mut self,
        category: &str,
        end: FlowEnd,
        id: u64,
        pid: u64,
        tid: u64,
        ts_ns: u64,
    ) -> io::Result<()> {
        ChromeTraceWriter::flow_of(self, category, end, id, pid, tid, ts_ns)
    }

    fn lane_name(&mut self, pid: u64, tid: Option<u64>, name: &str) -> io::Result<()> {
        ChromeTraceWriter::lane_name(self, pid, tid, name)
    }

    fn counter(&mut self, pid: u64, name: &str, ts_ns: u64, value: f64) -> io::Result<()> {
        ChromeTraceWriter::counter(self, pid, name, ts_ns, value)
    }
}
