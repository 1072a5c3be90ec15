//! Small tables of the distinct values a window's rows name by index.
//!
//! Why: most of a kernel record repeats (a graph's launches run the same
//! kernels with the same shapes on the same queues, and a launch's kernels
//! share one CPU side), so staging and frames keep each distinct value once
//! and a 4-byte index per row.

use rustc_hash::FxHashMap;

/// The distinct values seen, numbered in order of first appearance. A
/// direct-mapped cache of recent ones spares most lookups their hashing.
#[derive(Clone, Debug)]
pub(crate) struct Interner<T> {
    values: Vec<T>,
    ids: FxHashMap<T, u32>,
    recent: [u32; 64],
}

impl<T: Copy + Eq + std::hash::Hash> Default for Interner<T> {
    fn default() -> Self {
        Self {
            values: Vec::new(),
            ids: FxHashMap::default(),
            recent: [u32::MAX; 64],
        }
    }
}

/// Two tables are equal when they hold the same values in the same order:
/// the lookup map and the cache are how they were built, not what they say.
impl<T: PartialEq> PartialEq for Interner<T> {
    fn eq(&self, other: &Self) -> bool {
        self.values == other.values
    }
}

impl<T: Eq> Eq for Interner<T> {}

impl<T: Copy + Eq + std::hash::Hash> Interner<T> {
    /// `value`'s index. `hint` picks the cache entry: values with equal
    /// hints share one.
    #[inline]
    pub(crate) fn id(&mut self, value: T, hint: u64) -> u32 {
        let slot = (hint.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58) as usize;
        let cached = self.recent[slot];
        if self.values.get(cached as usize) == Some(&value) {
            return cached;
        }
        let next = u32::try_from(self.values.len()).expect("fewer than 2^32 distinct values");
        let id = *self.ids.entry(value).or_insert(next);
        if id == next {
            self.values.push(value);
        }
        self.recent[slot] = id;
        id
    }

    #[inline]
    pub(crate) fn get(&self, id: u32) -> &T {
        &self.values[id as usize]
    }

    #[inline]
    pub(crate) fn values(&self) -> &[T] {
        &self.values
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_values_share_an_index_whatever_the_hint() {
        let mut table = Interner::default();
        let a = table.id((1u64, 2u64), 7);
        let b = table.id((3, 4), 7);
        assert_eq!(table.id((1, 2), 99), a, "a cache miss still finds it");
        assert_eq!(table.id((3, 4), 7), b);
        assert_ne!(a, b);
        assert_eq!(table.values(), &[(1, 2), (3, 4)]);
        assert_eq!(*table.get(b), (3, 4));
    }
}
