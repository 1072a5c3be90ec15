//! The tool's own allocator: large blocks straight from the kernel, the
//! rest from the system allocator; and, for benchmarks, a count of the
//! tool's live heap.
//!
//! Why: finishing a window allocates its frames, attribution and trace as
//! blocks of megabytes and frees them again. glibc serves a block above its
//! mmap threshold with mmap, but raises that threshold to the size of the
//! largest such block freed (up to 32 MiB), so from the second window on the
//! same blocks come from its heaps and per-thread arenas, where freed space
//! stays resident and fragments: peak RSS grew from 490 to 535 MiB over ten
//! 1M-dispatch windows whose live heap peaked at the same 396 MiB
//! (examples/cost.rs). Mapping blocks of 1 MiB and more ourselves gives them
//! back on free, in every window alike. This is the tool library's
//! `#[global_allocator]`, so it governs only the tool's Rust code: the
//! process's own malloc and its settings are left alone. The price: a
//! window's large blocks are fresh pages each time (page faults the system
//! allocator's reuse would have spared), and valgrind's leak check sees
//! them as mappings, not heap blocks.
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Blocks from this size on are mapped; below it the system allocator's
/// bins serve them well.
const MAPPED_FROM: usize = 1 << 20;
/// mmap aligns to pages; larger alignments go to the system allocator.
const PAGE: usize = 4096;

pub struct ToolAllocator;

#[global_allocator]
static ALLOCATOR: ToolAllocator = ToolAllocator;

static COUNTING: AtomicBool = AtomicBool::new(false);
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

/// The tool's live heap and its peak, in bytes, counted from the first
/// [`count`] on (a benchmark's view; nothing in the tool reads it).
#[derive(Clone, Copy, Debug)]
pub struct HeapUse {
    pub live: usize,
    pub peak: usize,
}

/// Starts counting (off by default: counting costs two atomics a call).
pub fn count() {
    COUNTING.store(true, Ordering::SeqCst);
}

pub fn usage() -> HeapUse {
    HeapUse {
        live: LIVE.load(Ordering::Relaxed),
        peak: PEAK.load(Ordering::Relaxed),
    }
}

fn grew(bytes: usize) {
    if COUNTING.load(Ordering::Relaxed) {
        let live = LIVE.fetch_add(bytes, Ordering::Relaxed) + bytes;
        PEAK.fetch_max(live, Ordering::Relaxed);
    }
}

fn shrank(bytes: usize) {
    if COUNTING.load(Ordering::Relaxed) {
        // Blocks allocated before counting began can be freed after it.
        let _ = LIVE.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |live| {
            Some(live.saturating_sub(bytes))
        });
    }
}

fn mapped(layout: Layout) -> bool {
    layout.size() >= MAPPED_FROM && layout.align() <= PAGE
}

fn map(size: usize) -> *mut u8 {
    // SAFETY: an anonymous private mapping at an address the kernel picks;
    // no existing memory is touched.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            size,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        std::ptr::null_mut()
    } else {
        p.cast()
    }
}

// SAFETY: every block is served whole by either mmap or the system
// allocator, and the same size test (on the layout the caller must pass
// back) sends it back to the one that served it.
unsafe impl GlobalAlloc for ToolAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = if mapped(layout) {
            map(layout.size())
        } else {
            // SAFETY: forwarded with the caller's (non-zero-size) layout.
            unsafe { System.alloc(layout) }
        };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = if mapped(layout) {
            // Anonymous mappings are zero-filled.
            map(layout.size())
        } else {
            // SAFETY: forwarded with the caller's (non-zero-size) layout.
            unsafe { System.alloc_zeroed(layout) }
        };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        shrank(layout.size());
        if mapped(layout) {
            // SAFETY: `ptr` is a mapping of exactly `layout.size()` bytes
            // made by `map` (same size test), no longer used by the caller.
            unsafe { libc::munmap(ptr.cast(), layout.size()) };
        } else {
            // SAFETY: `ptr` came from `System` with this layout.
            unsafe { System.dealloc(ptr, layout) }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller guarantees `new_size` with this alignment is a
        // valid layout.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        let p = match (mapped(layout), mapped(new_layout)) {
            // SAFETY: `ptr` came from `System` with `layout`.
            (false, false) => unsafe { System.realloc(ptr, layout, new_size) },
            (true, true) => {
                // SAFETY: `ptr` is a mapping of `layout.size()` bytes made
                // by `map`; the kernel moves or resizes it whole.
                let p = unsafe {
                    libc::mremap(ptr.cast(), layout.size(), new_size, libc::MREMAP_MAYMOVE)
                };
                if p == libc::MAP_FAILED {
                    std::ptr::null_mut()
                } else {
                    p.cast()
                }
            }
            _ => {
                // SAFETY: `new_layout` is valid and non-zero-size (the
                // caller's guarantee).
                let p = unsafe { self.alloc(new_layout) };
                if !p.is_null() {
                    // SAFETY: both blocks hold at least the smaller size and
                    // are distinct; the old one is freed with its layout.
                    unsafe {
                        std::ptr::copy_nonoverlapping(ptr, p, layout.size().min(new_size));
                        self.dealloc(ptr, layout);
                    }
                }
                return p;
            }
        };
        if !p.is_null() {
            shrank(layout.size());
            grew(new_size);
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(i: usize) -> u32 {
        (i as u32).wrapping_mul(2_654_435_761)
    }

    // One test, so no other test of this binary allocates megabytes while
    // the count is checked (the others allocate kilobytes).
    #[test]
    fn blocks_keep_their_bytes_across_the_mapped_boundary_and_are_counted() {
        count();
        let before = usage().live;
        let block = vec![1u8; 3 * MAPPED_FROM];
        let during = usage();
        assert!(during.live >= before + block.len());
        assert!(during.peak >= during.live);
        drop(block);
        assert!(usage().live + MAPPED_FROM < during.live);

        // This test binary runs on ToolAllocator: grow a vector from the
        // system allocator's sizes into mapped ones, then shrink it back.
        let mut v: Vec<u32> = Vec::new();
        for i in 0..MAPPED_FROM {
            v.push(pattern(i));
        }
        assert!(mapped(Layout::array::<u32>(v.capacity()).unwrap()));
        assert!(v.iter().enumerate().all(|(i, x)| *x == pattern(i)));
        v.truncate(1000);
        v.shrink_to_fit();
        assert!(!mapped(Layout::array::<u32>(v.capacity()).unwrap()));
        assert!(v.iter().enumerate().all(|(i, x)| *x == pattern(i)));
        let zeroed = vec![0u64; MAPPED_FROM];
        assert!(zeroed.iter().all(|x| *x == 0));
    }
}
