//! What a trace event is made of, whichever writer writes it: a complete
//! event and its args.
use crate::vocabulary::{self as vocab, MetadataKey};

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

/// What names a complete event's shape for `TraceSink::complete_shaped`:
/// words the caller packs from everything an event is written from except
/// its times and its varying integer args (see `event_shapes::varies`).
/// Two events given equal keys must be equal in all else; a key that
/// leaves out a field the event is written from gives wrong bytes, so
/// callers test their packing against unkeyed writing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShapeKey(pub [u64; 12]);

/// The words folded into one before the map's hasher sees them: hashing
/// the array word by word cost 195 instructions a kernel event, a third
/// of writing it from its shape (callgrind, scripts/bench-instructions.sh).
impl std::hash::Hash for ShapeKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        let folded = self.0.iter().fold(0u64, |h, w| {
            (h ^ w).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(23)
        });
        state.write_u64(folded);
    }
}
