//! Finished windows as a Perfetto trace (`.pftrace`): the same events as the
//! JSON trace, as protobuf packets, gzip-compressed.
//!
//! Why: Perfetto's UI and trace processor load protobuf traces of millions
//! of events that a JSON viewer cannot, and draw overlapping slices of one
//! lane faithfully. Two passes over the same events (src/output/sink.rs):
//! the layout, then the packets, streamed through gzip.
mod encode;
mod layout;

use super::kineto_json::emit_windows;
use crate::window::FinishedWindow;
use flate2::write::GzEncoder;
use std::io::{self, Write};

/// The bit that marks a flow id as a graph dependency arrow (category
/// `fwdbwd`) rather than a runtime call's `ac2g` arrow: Perfetto's flow ids
/// carry no category. The CLI's reader (crates/cli/src/pftrace.rs) knows it.
pub const DEPENDENCY_FLOW_ID: u64 = 1 << 63;

/// How hard to gzip the protobuf: 0 writes it uncompressed, 1 (the
/// default, fast) to 9 (smallest).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GzipLevel(u32);

impl GzipLevel {
    pub fn new(level: u32) -> Result<GzipLevel, String> {
        if level <= 9 {
            Ok(GzipLevel(level))
        } else {
            Err(format!("gzip level {level}: expected 0 (none) to 9"))
        }
    }

    pub fn get(self) -> u32 {
        self.0
    }
}

/// Writes `windows` as a Perfetto trace and returns the number of kernel
/// events written.
pub fn write_windows<W: Write>(
    windows: &[FinishedWindow],
    out: W,
    level: GzipLevel,
) -> io::Result<usize> {
    let mut layout = layout::LayoutPass::default();
    emit_windows(windows, &mut layout)?;
    let layout = layout.finish();
    if level.get() == 0 {
        return encode(windows, layout, out);
    }
    let mut gzip = GzEncoder::new(out, flate2::Compression::new(level.get()));
    let kernels = encode(windows, layout, &mut gzip)?;
    gzip.finish()?.flush()?;
    Ok(kernels)
}

fn encode<W: Write>(
    windows: &[FinishedWindow],
    layout: layout::Layout,
    out: W,
) -> io::Result<usize> {
    let mut encoder = encode::Encoder::begin(layout, out)?;
    let emitted = emit_windows(windows, &mut encoder)?;
    encoder.finish(&emitted.metadata)?;
    Ok(emitted.kernels)
}
