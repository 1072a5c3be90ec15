//! A seeded generator for the unit tests' random cases: the same cases on
//! every run, no dependency.

/// Numbers below `m`, from `seed` (an LCG's high bits).
pub(crate) fn below(seed: u64) -> impl FnMut(u64) -> u64 {
    let mut state = seed;
    move |m| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) % m
    }
}
