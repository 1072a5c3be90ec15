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
