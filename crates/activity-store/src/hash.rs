//! A fast hasher for correlation-id keys.
//!
//! Correlation ids are process-local sequential integers chosen by the SDK,
//! not attacker input, so the DoS resistance of the standard SipHash buys
//! nothing here while it costs on every join lookup at finalisation. One
//! multiply by an odd constant spreads sequential ids over the high bits
//! that hashbrown reads.

use std::hash::{BuildHasherDefault, Hasher};

#[derive(Default, Clone, Copy)]
pub(crate) struct CorrelationHasher(u64);

impl Hasher for CorrelationHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only reached for non-u64 keys, which this crate does not use;
        // kept correct anyway.
        for &byte in bytes {
            self.write_u64(u64::from(byte));
        }
    }

    fn write_u64(&mut self, value: u64) {
        self.0 = (self.0.rotate_left(5) ^ value).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

pub(crate) type BuildCorrelationHasher = BuildHasherDefault<CorrelationHasher>;
