//! Seedable randomness: submission jitter and record delivery lag.
use crate::sdk::os::now_ns;

const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// splitmix64's output function.
fn scramble(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A well-mixed hash of `z` (one splitmix64 step).
pub(crate) fn mix(z: u64) -> u64 {
    scramble(z.wrapping_add(GOLDEN))
}

/// One thread's jitter stream.
pub(crate) struct Rng(u64);

impl Rng {
    /// The stream of application thread `ti` under `seed`.
    pub fn for_thread(seed: u64, ti: usize) -> Rng {
        Rng(seed ^ ((ti as u64 + 1).wrapping_mul(0xa076_1d64_78bd_642f)))
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GOLDEN);
        scramble(self.0)
    }

    /// Busy-waits up to `max_ns` (sometimes yielding first): the time a
    /// thread spends writing a packet, which makes interleavings happen on
    /// a machine with few cores. 0 does nothing.
    pub fn jitter(&mut self, max_ns: u64) {
        if max_ns == 0 {
            return;
        }
        let r = self.next();
        if r.is_multiple_of(8) {
            std::thread::yield_now();
        }
        let until = now_ns() + (r >> 8) % max_ns;
        while now_ns() < until {
            std::hint::spin_loop();
        }
    }
}
