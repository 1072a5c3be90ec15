//! A complete event's bytes, less its times and ids, kept for the next
//! event of the same shape.
//!
//! Why: a trace is millions of events that repeat one another. Every
//! dispatch of a graph node has the node's lane, name, queue, kind, grid,
//! block and graph id, and differs only in its times, correlation, dispatch
//! id and External id; formatting the rest again was most of a kernel
//! event's instructions. So the writer keeps, per shape, the event's bytes
//! with those values cut out, and writes a later event of that shape as the
//! kept bytes with its own values put back.
//!
//! A shape is compared with the event field by field before it is used:
//! whatever a caller passes, an event is written exactly as formatting it
//! would write it (the tests compare both).

use super::event::{Arg, ArgKey, CompleteEvent, ShapeKey};
use super::room::{Room, NUMBER_MAX, SLACK};
use crate::vocabulary::MetadataKey;
use activity_store::FastMap;

/// Sets of the cache; each holds two shapes.
const SETS: usize = 512;

/// Is this arg's value one that changes from event to event of one shape?
/// Such values are cut out of the kept bytes; the rest must be equal for
/// the shape to be used. Only the hit rate depends on this choice, never
/// what is written.
pub(super) fn varies(key: ArgKey<'_>, value: &Arg<'_>) -> bool {
    match value {
        Arg::Float(_) => true,
        Arg::Int(_) | Arg::Signed(_) => matches!(
            key,
            ArgKey::Known(
                MetadataKey::Correlation | MetadataKey::DispatchId | MetadataKey::GraphNodeId
            ) | ArgKey::Named("External id")
        ),
        Arg::Str(_) | Arg::Dim3(_) => false,
    }
}

#[derive(Debug, PartialEq)]
enum OwnedKey {
    Known(MetadataKey),
    Named(Box<str>),
}

impl OwnedKey {
    fn of(key: ArgKey<'_>) -> OwnedKey {
        match key {
            ArgKey::Known(key) => OwnedKey::Known(key),
            ArgKey::Named(name) => OwnedKey::Named(name.into()),
        }
    }

    fn is(&self, key: ArgKey<'_>) -> bool {
        match (self, key) {
            (OwnedKey::Known(a), ArgKey::Known(b)) => *a == b,
            (OwnedKey::Named(a), ArgKey::Named(b)) => **a == *b,
            _ => false,
        }
    }
}

/// An arg's value as a shape holds it: cut out (with the type it had, as
/// whether a value varies depends on it), or kept and compared.
#[derive(Debug, PartialEq)]
enum Kept {
    VariesInt,
    VariesSigned,
    VariesFloat,
    Int(u64),
    Signed(i64),
    Str(Box<str>),
    Dim3([u32; 3]),
}

impl Kept {
    fn of(key: ArgKey<'_>, value: &Arg<'_>) -> Kept {
        match (varies(key, value), value) {
            (true, Arg::Int(_)) => Kept::VariesInt,
            (true, Arg::Signed(_)) => Kept::VariesSigned,
            (true, _) => Kept::VariesFloat,
            (false, Arg::Int(v)) => Kept::Int(*v),
            (false, Arg::Signed(v)) => Kept::Signed(*v),
            (false, Arg::Str(s)) => Kept::Str((*s).into()),
            (false, Arg::Dim3(d)) => Kept::Dim3(*d),
            (false, Arg::Float(_)) => unreachable!("a float always varies"),
        }
    }

    /// Does `value`, under the key this was made with, fit? Whether a value
    /// varies depends only on its key and its type, so a value of the type
    /// that made a hole fills it, and a value of a kept type must equal it.
    fn admits(&self, value: &Arg<'_>) -> bool {
        match (self, value) {
            (Kept::VariesInt, Arg::Int(_))
            | (Kept::VariesSigned, Arg::Signed(_))
            | (Kept::VariesFloat, Arg::Float(_)) => true,
            (Kept::Int(a), Arg::Int(b)) => a == b,
            (Kept::Signed(a), Arg::Signed(b)) => a == b,
            (Kept::Str(a), Arg::Str(b)) => **a == **b,
            (Kept::Dim3(a), Arg::Dim3(b)) => a == b,
            _ => false,
        }
    }
}

/// Where, in an event's bytes, its times and varying values were written:
/// (start, end) spans, `ts` and `dur` first, then one per varying arg in
/// order.
pub(super) type Holes = [(u32, u32)];

/// One kept shape.
#[derive(Debug)]
pub(super) struct Shape {
    category: Box<str>,
    name: Box<str>,
    pid: u64,
    tid: u64,
    args: Box<[(OwnedKey, Kept)]>,
    /// The event's bytes without its holes.
    bytes: Box<[u8]>,
    /// Where each hole goes in `bytes`, ascending.
    cuts: Box<[u32]>,
    /// The arg (by index) each hole past the first two takes its value from.
    holes: Box<[u16]>,
    last_used: u64,
}

impl Shape {
    fn matches(&self, event: &CompleteEvent<'_>) -> bool {
        if self.pid != event.pid
            || self.tid != event.tid
            || self.args.len() != event.args.len()
            || *self.name != *event.name
            || *self.category != *event.category
        {
            return false;
        }
        for ((key, kept), (k, v)) in self.args.iter().zip(event.args) {
            if !key.is(*k) || !kept.admits(v) {
                return false;
            }
        }
        true
    }

    /// The event as this shape with the event's own values in its holes.
    /// `value` writes one hole's value.
    fn write(
        &self,
        event: &CompleteEvent<'_>,
        out: &mut Vec<u8>,
        mut value: impl FnMut(&mut Vec<u8>, Hole<'_>),
    ) {
        let mut at = 0;
        for (i, &cut) in self.cuts.iter().enumerate() {
            out.extend_from_slice(&self.bytes[at..cut as usize]);
            at = cut as usize;
            match i {
                0 => value(out, Hole::Micros(event.start_ns)),
                1 => value(
                    out,
                    Hole::Micros(event.end_ns.saturating_sub(event.start_ns)),
                ),
                _ => value(out, Hole::Arg(&event.args[self.holes[i - 2] as usize].1)),
            }
        }
        out.extend_from_slice(&self.bytes[at..]);
    }
}

/// An event's `bytes` with its `holes` cut out, and where each was.
fn cut_out(bytes: &[u8], holes: &Holes) -> (Box<[u8]>, Box<[u32]>) {
    let mut kept = Vec::with_capacity(bytes.len());
    let mut cuts = Vec::with_capacity(holes.len());
    let mut at = 0;
    for &(start, end) in holes {
        kept.extend_from_slice(&bytes[at..start as usize]);
        cuts.push(kept.len() as u32);
        at = end as usize;
    }
    kept.extend_from_slice(&bytes[at..]);
    (kept.into_boxed_slice(), cuts.into_boxed_slice())
}

/// What goes into one hole.
pub(super) enum Hole<'a> {
    Micros(u64),
    Arg(&'a Arg<'a>),
}

/// The kept shapes: a two-way set-associative cache, the set picked from
/// the event's name and lane. A shape is kept when its pick is one of the
/// last two its set missed with, so a stream of events that never repeat
/// costs a comparison each, not a copy, and two shapes that alternate in
/// one set are both kept.
#[derive(Debug)]
pub(super) struct Shapes {
    ways: Vec<[Option<Shape>; 2]>,
    /// Per set, the picks of its last two misses.
    last_misses: Vec<[u64; 2]>,
    clock: u64,
}

impl Default for Shapes {
    fn default() -> Self {
        Shapes {
            ways: (0..SETS).map(|_| [None, None]).collect(),
            last_misses: vec![[0; 2]; SETS],
            clock: 0,
        }
    }
}

/// A cheap mix of what most tells shapes apart: the name (its length, first
/// and last eight bytes), the lane, the number of args, and the args a
/// shape must match (a string's length and ends, a dimension, a fixed
/// integer). The args count: one thread's kernel launches share a name and
/// a lane, and without them every launched kernel's call would crowd into
/// one two-way set, each evicting the last.
fn pick(event: &CompleteEvent<'_>) -> u64 {
    let word = |bytes: &[u8]| {
        let mut w = [0u8; 8];
        w[..bytes.len()].copy_from_slice(bytes);
        u64::from_le_bytes(w)
    };
    let ends = |bytes: &[u8]| {
        let n = bytes.len();
        word(&bytes[..n.min(8)]) ^ word(&bytes[n.saturating_sub(8)..]).rotate_left(17) ^ n as u64
    };
    let mix = |h: u64, x: u64| (h ^ x).wrapping_mul(0x2127_599B_F432_5C37).rotate_left(29);
    let mut h = 0x9E37_79B9_7F4A_7C15u64;
    for x in [
        ends(event.name.as_bytes()),
        event.pid,
        event.tid,
        event.args.len() as u64,
    ] {
        h = mix(h, x);
    }
    for (key, value) in event.args {
        let x = match value {
            _ if varies(*key, value) => continue,
            Arg::Str(s) => ends(s.as_bytes()),
            Arg::Dim3([x, y, z]) => u64::from(*x) ^ u64::from(*y) << 21 ^ u64::from(*z) << 42,
            Arg::Int(v) => *v,
            Arg::Signed(v) => *v as u64,
            Arg::Float(_) => continue,
        };
        h = mix(h, x);
    }
    h | 1
}

impl Shapes {
    /// Writes `event` from its kept shape and returns true, or returns
    /// false when none matches (and writes nothing).
    pub(super) fn write_if_kept(
        &mut self,
        event: &CompleteEvent<'_>,
        out: &mut Vec<u8>,
        value: impl FnMut(&mut Vec<u8>, Hole<'_>),
    ) -> bool {
        let set = (pick(event) as usize >> 7) % SETS;
        self.clock += 1;
        for shape in self.ways[set].iter_mut().flatten() {
            if shape.matches(event) {
                shape.last_used = self.clock;
                shape.write(event, out, value);
                return true;
            }
        }
        false
    }

    /// After `event` missed and was formatted as `bytes` with its `holes`:
    /// keep it, if its set missed with the same pick lately.
    pub(super) fn offer(&mut self, event: &CompleteEvent<'_>, bytes: &[u8], holes: &Holes) {
        let pick = pick(event);
        let set = (pick as usize >> 7) % SETS;
        let misses = &mut self.last_misses[set];
        if !misses.contains(&pick) {
            *misses = [pick, misses[0]];
            return;
        }
        let (bytes, cuts) = cut_out(bytes, holes);
        let shape = Shape {
            category: event.category.into(),
            name: event.name.into(),
            pid: event.pid,
            tid: event.tid,
            args: event
                .args
                .iter()
                .map(|(k, v)| (OwnedKey::of(*k), Kept::of(*k, v)))
                .collect(),
            bytes,
            cuts,
            holes: event
                .args
                .iter()
                .enumerate()
                .filter(|(_, (k, v))| varies(*k, v))
                .map(|(i, _)| i as u16)
                .collect(),
            last_used: self.clock,
        };
        let ways = &mut self.ways[set];
        let victim = match ways {
            [None, _] => 0,
            [_, None] => 1,
            [Some(a), Some(b)] => usize::from(b.last_used < a.last_used),
        };
        ways[victim] = Some(shape);
    }
}

/// Keyed shapes kept, at most: a window's kernels have a few shapes per
/// graph node; past this, events are formatted.
const KEYED_MAX: usize = 1 << 14;

/// An event's bytes without its holes, for later events of its key: every
/// hole past `ts` and `dur` an integer.
#[derive(Debug)]
pub(super) struct KeyedShape {
    /// The bytes, then [`SLACK`] more for [`Room::piece`]'s block copies.
    bytes: Box<[u8]>,
    /// Where each hole goes in `bytes`, ascending.
    cuts: Box<[u32]>,
}

impl KeyedShape {
    fn new((mut bytes, cuts): (Box<[u8]>, Box<[u32]>)) -> KeyedShape {
        let mut padded = std::mem::take(&mut bytes).into_vec();
        padded.resize(padded.len() + SLACK, b' ');
        KeyedShape {
            bytes: padded.into_boxed_slice(),
            cuts,
        }
    }

    /// The most bytes an event of this shape takes.
    pub(super) fn most_bytes(&self) -> usize {
        self.bytes.len() - SLACK + self.cuts.len() * NUMBER_MAX
    }

    /// Writes the event into `room` (made for [`KeyedShape::most_bytes`]),
    /// with `start_ns`, `end_ns` and `values` (the varying args, in args
    /// order) in its holes.
    #[inline]
    pub(super) fn write(
        &self,
        room: &mut Room<'_>,
        (start_ns, end_ns): (u64, u64),
        values: &[u64],
    ) {
        let mut at = 0;
        for (i, &cut) in self.cuts.iter().enumerate() {
            let cut = cut as usize;
            room.piece(&self.bytes[at..], cut - at);
            at = cut;
            match i {
                0 => room.micros(start_ns),
                1 => room.micros(end_ns.saturating_sub(start_ns)),
                _ => room.int(values[i - 2]),
            }
        }
        room.piece(&self.bytes[at..], self.bytes.len() - SLACK - at);
    }
}

/// Shapes by the caller's key ([`ShapeKey`]): a lookup instead of comparing
/// the event's fields with a kept shape's, and no args built to compare.
#[derive(Debug, Default)]
pub(super) struct KeyedShapes {
    shapes: FastMap<ShapeKey, KeyedShape>,
}

impl KeyedShapes {
    /// The shape kept for events of `key`.
    pub(super) fn kept(&self, key: &ShapeKey) -> Option<&KeyedShape> {
        self.shapes.get(key)
    }

    /// After `event` of `key` was formatted as `bytes` with its `holes`:
    /// keep it, if its varying args are exactly `values`, all integers (so
    /// that a later event's values fill its holes as formatting would).
    pub(super) fn offer(
        &mut self,
        key: ShapeKey,
        event: &CompleteEvent<'_>,
        values: &[u64],
        bytes: &[u8],
        holes: &Holes,
    ) {
        if self.shapes.len() >= KEYED_MAX {
            return;
        }
        let mut varying = event.args.iter().filter(|(k, v)| varies(*k, v));
        let fits = holes.len() == 2 + values.len()
            && values
                .iter()
                .all(|value| matches!(varying.next(), Some((_, Arg::Int(v))) if v == value))
            && varying.next().is_none();
        if !fits {
            return;
        }
        self.shapes
            .insert(key, KeyedShape::new(cut_out(bytes, holes)));
    }
}
