//! An event written into room made for it once, front to back.
//!
//! Why: an event written from its kept bytes (`event_shapes::KeyedShapes`)
//! is a handful of short pieces with a number between each. Appending each
//! piece to a `Vec` checked its capacity and called memcpy for a dozen
//! bytes, and each number went through a buffer of its own and a second
//! copy: under callgrind, about 45 instructions a piece or number, a third
//! of a kernel event. Here the room is made once per event, a piece is
//! copied as whole blocks of [`SLACK`] bytes (a few vector moves the
//! compiler lays out; the bytes past the piece are overwritten by what
//! follows, or cut off at the end) and digits go straight to their place.

use std::io::{self, Write};

/// Bytes a copy may move past a piece's end: a piece's source must be
/// followed by this many readable bytes, and the room must hold this many
/// past the longest event it is made for.
pub(super) const SLACK: usize = 32;

/// The most bytes one number takes: a u64's 20 digits, or microseconds
/// with three decimals (17 digits, a point and three).
pub(super) const NUMBER_MAX: usize = 21;

/// Two digits for each value below 100.
const PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Room in a byte buffer, written from the front.
pub(super) struct Room<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl<'a> Room<'a> {
    /// Room at the front of `buf`, which must hold every byte written to it
    /// plus [`SLACK`].
    pub(super) fn new(buf: &'a mut [u8]) -> Room<'a> {
        Room { buf, len: 0 }
    }

    /// Appends `src[..len]`; `src` must hold [`SLACK`] bytes past `len`.
    #[inline]
    pub(super) fn piece(&mut self, src: &[u8], len: usize) {
        let mut at = 0;
        loop {
            self.buf[self.len + at..self.len + at + SLACK].copy_from_slice(&src[at..at + SLACK]);
            at += SLACK;
            if at >= len {
                break;
            }
        }
        self.len += len;
    }

    /// Appends `v` in decimal: four digits a step into a block of its
    /// own, then the block copied whole (the digits end at `DIGITS_END`).
    #[inline]
    pub(super) fn int(&mut self, v: u64) {
        const DIGITS_END: usize = 20;
        let mut block = [0u8; DIGITS_END + SLACK];
        let mut at = DIGITS_END;
        let mut pair = |at: &mut usize, p: usize| {
            *at -= 2;
            block[*at..*at + 2].copy_from_slice(&PAIRS[p * 2..p * 2 + 2]);
        };
        let mut v = v;
        while v >= 10_000 {
            let four = (v % 10_000) as usize;
            v /= 10_000;
            pair(&mut at, four % 100);
            pair(&mut at, four / 100);
        }
        let mut v = v as usize;
        if v >= 100 {
            pair(&mut at, v % 100);
            v /= 100;
        }
        if v >= 10 {
            pair(&mut at, v);
        } else {
            at -= 1;
            block[at] = b'0' + v as u8;
        }
        self.buf[self.len..self.len + SLACK].copy_from_slice(&block[at..at + SLACK]);
        self.len += DIGITS_END - at;
    }

    /// Appends nanoseconds as microseconds with three decimals, as kineto
    /// writes them.
    #[inline]
    pub(super) fn micros(&mut self, ns: u64) {
        self.int(ns / 1000);
        let frac = (ns % 1000) as usize;
        let out = &mut self.buf[self.len..self.len + 4];
        out[0] = b'.';
        out[1] = b'0' + (frac / 100) as u8;
        out[2..4].copy_from_slice(&PAIRS[frac % 100 * 2..frac % 100 * 2 + 2]);
        self.len += 4;
    }

    /// The bytes written.
    pub(super) fn written(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

/// Bytes of events not yet handed to the writer's output, in one block
/// made once: an event from a keyed shape is written straight into it,
/// not into a scratch buffer and then copied, and the output sees writes
/// of a block each.
pub(super) struct Pending {
    bytes: Vec<u8>,
    filled: usize,
}

/// The block's size: large against an event, small against a trace.
const PENDING_BYTES: usize = 1 << 20;

impl Default for Pending {
    fn default() -> Pending {
        Pending {
            bytes: vec![0; PENDING_BYTES],
            filled: 0,
        }
    }
}

impl Pending {
    /// Room for `bytes` after what is pending; the pending bytes go to
    /// `out` first if it would not fit. Mark what was written with
    /// [`Pending::wrote`].
    pub(super) fn room(&mut self, out: &mut impl Write, bytes: usize) -> io::Result<Room<'_>> {
        let needed = bytes + SLACK;
        if self.bytes.len() - self.filled < needed {
            self.drain(out)?;
            if self.bytes.len() < needed {
                self.bytes.resize(needed, 0);
            }
        }
        Ok(Room::new(&mut self.bytes[self.filled..]))
    }

    /// `written` bytes of the last room are now pending.
    pub(super) fn wrote(&mut self, written: usize) {
        self.filled += written;
    }

    /// Appends `bytes` to what is pending.
    pub(super) fn push(&mut self, out: &mut impl Write, bytes: &[u8]) -> io::Result<()> {
        if self.bytes.len() - self.filled < bytes.len() {
            self.drain(out)?;
            if self.bytes.len() < bytes.len() {
                return out.write_all(bytes);
            }
        }
        self.bytes[self.filled..self.filled + bytes.len()].copy_from_slice(bytes);
        self.filled += bytes.len();
        Ok(())
    }

    /// Hands everything pending to `out`.
    pub(super) fn drain(&mut self, out: &mut impl Write) -> io::Result<()> {
        let filled = std::mem::take(&mut self.filled);
        out.write_all(&self.bytes[..filled])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn padded(s: &[u8]) -> Vec<u8> {
        let mut v = s.to_vec();
        v.resize(s.len() + SLACK, b'#');
        v
    }

    #[test]
    fn numbers_are_written_as_formatting_writes_them() {
        let mut values = vec![0, 9, 10, 99, 100, 999, 1_000, 1_001, u64::MAX, u64::MAX - 1];
        values.extend((0..20).map(|e| 10u64.pow(e)));
        values.extend((1..20).map(|e| 10u64.pow(e) - 1));
        values.extend((0..64).map(|b| 1u64 << b));
        values.extend((0..2_000u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (i % 64)));
        let mut buf = [0u8; 2 * NUMBER_MAX + SLACK];
        for &v in &values {
            let mut room = Room::new(&mut buf);
            room.int(v);
            room.micros(v);
            let want = format!("{v}{}.{:03}", v / 1000, v % 1000);
            assert_eq!(room.written(), want.as_bytes(), "{v}");
        }
    }

    #[test]
    fn pieces_longer_and_shorter_than_a_block_come_out_whole() {
        let text: Vec<u8> = (0..200u8).map(|i| b'a' + i % 26).collect();
        let mut want = Vec::new();
        let lengths = [0, 1, 31, 32, 33, 64, 65, 100, 7];
        let total: usize = lengths.iter().sum::<usize>() + lengths.len() * NUMBER_MAX;
        let mut buf = vec![b'!'; total + SLACK];
        let mut room = Room::new(&mut buf);
        for (i, &n) in lengths.iter().enumerate() {
            let piece = padded(&text[i..i + n]);
            room.piece(&piece, n);
            room.int(i as u64 * 1_000_003);
            want.extend_from_slice(&text[i..i + n]);
            want.extend_from_slice((i as u64 * 1_000_003).to_string().as_bytes());
        }
        assert_eq!(room.written(), &want[..]);
    }

    #[test]
    fn pending_bytes_reach_the_output_whole_and_in_order() {
        let mut out = Vec::new();
        let mut want = Vec::new();
        let mut pending = Pending::default();
        let big = vec![b'x'; PENDING_BYTES + 5];
        for i in 0..60_000u64 {
            if i % 2 == 0 {
                let mut room = pending.room(&mut out, NUMBER_MAX).unwrap();
                room.int(i);
                let written = room.written().len();
                pending.wrote(written);
                want.extend_from_slice(i.to_string().as_bytes());
            } else {
                let piece: &[u8] = if i == 30_001 { &big } else { b"-ab-" };
                pending.push(&mut out, piece).unwrap();
                want.extend_from_slice(piece);
            }
        }
        assert!(
            out.len() > PENDING_BYTES,
            "the block was handed on when full"
        );
        pending.drain(&mut out).unwrap();
        assert_eq!(out.len(), want.len());
        assert!(out == want);
    }
}
