//! A fast hasher for correlation-id keys, and for the tool's other
//! per-record maps of integer keys (ids, handles, lanes).
//!
//! Correlation ids are process-local sequential integers chosen by the SDK,
//! not attacker input, so the DoS resistance of the standard SipHash buys
//! nothing here while it costs on every join lookup at finalisation. One
//! multiply by an odd constant spreads sequential ids over the high bits
//! that hashbrown reads; folding the high half into the low one keeps
//! aligned keys (queue handles, addresses) from sharing their low bits.

use std::hash::{BuildHasherDefault, Hasher};

#[derive(Default, Clone, Copy, Debug)]
pub struct CorrelationHasher(u64);

impl Hasher for CorrelationHasher {
    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 32)
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only reached for keys other than integers (strings, slices); kept
        // correct, not fast.
        for &byte in bytes {
            self.write_u64(u64::from(byte));
        }
    }

    fn write_u8(&mut self, value: u8) {
        self.write_u64(value.into());
    }

    fn write_u32(&mut self, value: u32) {
        self.write_u64(value.into());
    }

    fn write_usize(&mut self, value: usize) {
        self.write_u64(value as u64);
    }

    fn write_u64(&mut self, value: u64) {
        self.0 = (self.0.rotate_left(5) ^ value).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

pub type BuildCorrelationHasher = BuildHasherDefault<CorrelationHasher>;

/// A map or set of the tool's integer keys on [`CorrelationHasher`].
pub type FastMap<K, V> = std::collections::HashMap<K, V, BuildCorrelationHasher>;
pub type FastSet<T> = std::collections::HashSet<T, BuildCorrelationHasher>;
