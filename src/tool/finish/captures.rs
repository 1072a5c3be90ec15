//! Streams being captured into a graph: while a stream is captured, its
//! calls add nodes to a graph instead of running, so they produce no records.
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// Streams being captured into a graph: their calls add nodes instead of
/// running.
#[derive(Debug, Default)]
pub struct Captures {
    streams: Mutex<Vec<u64>>,
    any: AtomicBool,
}

impl Captures {
    pub fn begin(&self, stream: u64) {
        let mut s = self.streams.lock().unwrap_or_else(|p| p.into_inner());
        s.push(stream);
        self.any.store(true, Ordering::Release);
    }

    pub fn end(&self, stream: u64) {
        let mut s = self.streams.lock().unwrap_or_else(|p| p.into_inner());
        s.retain(|&x| x != stream);
        self.any.store(!s.is_empty(), Ordering::Release);
    }

    /// Is `stream` being captured? One atomic load when nothing is.
    pub fn capturing(&self, stream: u64) -> bool {
        self.any.load(Ordering::Acquire)
            && self
                .streams
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .contains(&stream)
    }
}
