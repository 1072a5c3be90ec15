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
//! (examples/cost.rs). Mapping blocks of 256 KiB and more ourselves gives them
//! back on free, in every window alike. This is the tool library's
//! `#[global_allocator]`, so it governs only the tool's Rust code: the
//! process's own malloc and its settings are left alone. Fresh mappings
//! cost a page fault per page on first touch (in the window pipeline
//! benchmark, about 40% of staging and finalising), so up to
//! `CACHE_BYTES` of freed blocks are kept mapped and handed to the next
//! large allocation: a bound of its own, and all are given back before
//! windows are taken ([`give_back_kept`]), so no window's peak sits on top
//! of blocks kept from the last. Valgrind's leak check sees these blocks as
//! mappings, not heap blocks.
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

/// Blocks from this size on are mapped; below it the system allocator's
/// bins serve them well. A 100k-record window's columns are blocks of
/// 800 KB: below 1 MiB, glibc served them from the top of its heap and
/// trimmed it again on free, so each window faulted them in afresh. A
/// window's staging chunks (then 160 KiB of `activity_store`'s kernel
/// rows) did the same whenever they ended up at the top of glibc's heap,
/// which depended on what else the process had allocated: the pipeline
/// benchmark's staging took 1.7 times as long in one layout as in another.
const MAPPED_FROM: usize = 128 << 10;
/// mmap aligns to pages; larger alignments go to the system allocator.
const PAGE: usize = 4096;
/// Freed mapped bytes kept for reuse, at most: small against a window's
/// peak (hundreds of MiB at 1M dispatches), enough for a 100k-record
/// window's large blocks.
const CACHE_BYTES: usize = 64 << 20;
const CACHE_SLOTS: usize = 64;
/// Mappings from this size on are asked for transparent huge pages.
const HUGE_FROM: usize = 2 << 20;

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

/// The length of the mapping that serves `size` bytes.
fn pages(size: usize) -> usize {
    size.div_ceil(PAGE) * PAGE
}

/// Freed mappings, as (address, length); length 0 is an empty slot.
struct Cache {
    blocks: [(usize, usize); CACHE_SLOTS],
    bytes: usize,
}

static CACHE: Mutex<Cache> = Mutex::new(Cache {
    blocks: [(0, 0); CACHE_SLOTS],
    bytes: 0,
});

impl Cache {
    /// Keeps a freed mapping, making room by giving back smaller kept ones
    /// (a large block spares more faults than a small one); `false` when it
    /// is not kept.
    fn put(&mut self, addr: usize, len: usize) -> bool {
        if len > CACHE_BYTES {
            return false;
        }
        loop {
            let free_slot = self.blocks.iter().position(|(_, l)| *l == 0);
            if let (Some(slot), true) = (free_slot, len <= CACHE_BYTES - self.bytes) {
                self.blocks[slot] = (addr, len);
                self.bytes += len;
                return true;
            }
            let smallest = self
                .blocks
                .iter()
                .enumerate()
                .filter(|(_, (_, l))| *l > 0 && *l < len)
                .min_by_key(|(_, (_, l))| *l)
                .map(|(i, _)| i);
            let Some(smallest) = smallest else {
                return false;
            };
            let (old, old_len) = std::mem::take(&mut self.blocks[smallest]);
            self.bytes -= old_len;
            // SAFETY: a kept mapping of `old_len` bytes that nothing uses,
            // now out of the cache.
            unsafe { libc::munmap(old as *mut libc::c_void, old_len) };
        }
    }

    /// The smallest kept mapping of `len` to twice `len` bytes, else (when
    /// `or_shorter`) the largest of half `len` to `len`. A block of another
    /// size is left for a request of its own size. Cut down to serve a
    /// small request, a large block leaves the next large request to fault
    /// all its pages in afresh; grown to serve a large one, a small block
    /// spares few faults and leaves the next small request none to reuse.
    /// In the pipeline benchmark, the 160 KiB staging chunks of the time
    /// and the window's 9 MB blocks turned into each other this way at
    /// every window, and attribution took up to twice as long.
    fn take(&mut self, len: usize, or_shorter: bool) -> Option<(usize, usize)> {
        let kept = self.blocks.iter().enumerate().filter(|(_, (_, l))| *l > 0);
        let best = kept
            .clone()
            .filter(|(_, (_, l))| *l >= len && *l / 2 <= len)
            .min_by_key(|(_, (_, l))| *l)
            .or_else(|| {
                kept.filter(|(_, (_, l))| or_shorter && *l < len && *l >= len / 2)
                    .max_by_key(|(_, (_, l))| *l)
            })
            .map(|(i, _)| i)?;
        let block = std::mem::take(&mut self.blocks[best]);
        self.bytes -= block.1;
        Some(block)
    }
}

/// Gives every kept block back to the kernel. Called before windows are
/// taken (finished): reuse pays within a window's staging, finishing and
/// writing, but blocks kept since the last window would otherwise stay
/// resident on top of this window's own peak, so ten windows would peak
/// higher than one.
pub fn give_back_kept() {
    let mut cache = cache();
    for (addr, len) in &mut cache.blocks {
        if *len > 0 {
            // SAFETY: a kept mapping of `len` bytes that nothing uses, taken
            // out of the cache under its lock.
            unsafe { libc::munmap(*addr as *mut libc::c_void, *len) };
            *len = 0;
        }
    }
    cache.bytes = 0;
}

fn cache() -> std::sync::MutexGuard<'static, Cache> {
    // Every update is complete before anything can panic; a poisoned lock
    // holds a consistent cache.
    CACHE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A kept mapping of `len` bytes cut to `want` (at most `len`).
fn cut(addr: usize, len: usize, want: usize) -> *mut u8 {
    if len > want {
        // SAFETY: the tail past `want` is part of this kept mapping, which
        // nothing else uses.
        unsafe { libc::munmap((addr + want) as *mut libc::c_void, len - want) };
    }
    addr as *mut u8
}

/// A mapping for `size` bytes, reusing a kept one when there is one: cut
/// to length if longer, grown (its resident pages kept) if shorter. With
/// `zeroed`, a kept block's old bytes are cleared: writing resident pages
/// costs less than faulting in fresh zero pages.
fn map_reusing(size: usize, zeroed: bool) -> *mut u8 {
    let want = pages(size);
    let Some((addr, len)) = cache().take(want, true) else {
        return map(size);
    };
    if zeroed {
        // SAFETY: the first `min(len, want)` bytes are this kept mapping's,
        // which nothing else uses; pages added by growing it are fresh.
        unsafe { std::ptr::write_bytes(addr as *mut u8, 0, len.min(want)) };
    }
    if len >= want {
        return cut(addr, len, want);
    }
    // SAFETY: `addr` is a kept mapping of `len` bytes that nothing else
    // uses; the kernel moves or grows it whole.
    let p = unsafe { libc::mremap(addr as *mut libc::c_void, len, want, libc::MREMAP_MAYMOVE) };
    if p == libc::MAP_FAILED {
        // SAFETY: as above; the mapping is left unchanged on failure.
        unsafe { libc::munmap(addr as *mut libc::c_void, len) };
        map(size)
    } else {
        advise_huge(p, want);
        p.cast()
    }
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
        return std::ptr::null_mut();
    }
    advise_huge(p, size);
    p.cast()
}

/// Asks for transparent huge pages on a mapping of `len` bytes, so that
/// first touches fault once per 2 MiB instead of once per 4 KiB: touching
/// 512 MiB cost 1.9 us a 4 KiB page without and 0.75 us with on this VM
/// (`scripts/bench-cost.sh` measures both). The kernel ignores the advice
/// where THP is off (`never`). A block grown by mremap from one below
/// [`HUGE_FROM`] was never advised, so growing advises again.
fn advise_huge(p: *mut libc::c_void, len: usize) {
    if len >= HUGE_FROM {
        // SAFETY: advice on a mapping of `len` bytes this allocator just
        // made; it changes no byte of it, and failure leaves it as it was.
        unsafe { libc::madvise(p, len, libc::MADV_HUGEPAGE) };
    }
}

// SAFETY: every block is served whole by either mmap or the system
// allocator, and the same size test (on the layout the caller must pass
// back) sends it back to the one that served it.
unsafe impl GlobalAlloc for ToolAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = if mapped(layout) {
            map_reusing(layout.size(), false)
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
            map_reusing(layout.size(), true)
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
            if !cache().put(ptr as usize, pages(layout.size())) {
                // SAFETY: `ptr` is a mapping of exactly `layout.size()`
                // bytes (rounded up to pages) made by `map` or
                // `map_reusing` (same size test), no longer used by the
                // caller.
                unsafe { libc::munmap(ptr.cast(), layout.size()) };
            }
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
                // Growing into a kept block copies resident bytes instead
                // of faulting in the new pages; the old block is kept.
                let want = pages(new_size);
                let kept = (want > pages(layout.size()))
                    .then(|| cache().take(want, false))
                    .flatten();
                if let Some((addr, len)) = kept {
                    let p = cut(addr, len, want);
                    // SAFETY: `ptr` holds `layout.size()` bytes, the kept
                    // block more, and they are distinct mappings; the old
                    // one is freed with its layout.
                    unsafe {
                        std::ptr::copy_nonoverlapping(ptr, p, layout.size());
                        self.dealloc(ptr, layout);
                    }
                    grew(new_size);
                    return p;
                }
                // SAFETY: `ptr` is a mapping of `layout.size()` bytes made
                // by `map` or `map_reusing`; the kernel moves or resizes it
                // whole.
                let p = unsafe {
                    libc::mremap(ptr.cast(), layout.size(), new_size, libc::MREMAP_MAYMOVE)
                };
                if p == libc::MAP_FAILED {
                    std::ptr::null_mut()
                } else {
                    advise_huge(p, new_size);
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

    // The live count is checked in tests/heap_count.rs, a binary of its
    // own: here other tests free blocks while it would be read.
    #[test]
    fn blocks_keep_their_bytes_across_the_mapped_boundary() {
        let block = vec![1u8; 3 * MAPPED_FROM];
        assert!(mapped(Layout::array::<u8>(block.len()).unwrap()));
        assert!(block.iter().all(|x| *x == 1));
        drop(block);

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

    #[test]
    fn a_kept_block_serves_only_requests_of_half_to_twice_its_size() {
        // A cache of its own, never given back: take and put (with room to
        // spare) only move these addresses around, never touch them.
        let mut cache = Cache {
            blocks: [(0, 0); CACHE_SLOTS],
            bytes: 0,
        };
        let unit = MAPPED_FROM;
        assert!(cache.put(0x1000_0000, 10 * unit));
        assert_eq!(cache.take(unit, true), None, "left for a request its size");
        assert_eq!(cache.take(6 * unit, true), Some((0x1000_0000, 10 * unit)));
        assert!(cache.put(0x2000_0000, 2 * unit));
        assert_eq!(
            cache.take(3 * unit, true),
            Some((0x2000_0000, 2 * unit)),
            "a shorter one is grown"
        );
        assert!(cache.put(0x3000_0000, unit));
        assert_eq!(cache.take(3 * unit, true), None, "nor one under half");
        assert_eq!(cache.take(unit, true), Some((0x3000_0000, unit)));
        assert_eq!(cache.bytes, 0);
    }

    #[test]
    fn kept_blocks_serve_shorter_and_longer_requests_whole() {
        // Freed, each block is kept; the next one is cut from it or grown
        // from it. Every byte of it must be its own and writable.
        let block = |mib: usize, salt: u8| -> Vec<u8> {
            let mut v = Vec::with_capacity(mib * MAPPED_FROM);
            v.extend((0..mib * MAPPED_FROM).map(|i| i as u8 ^ salt));
            v
        };
        for (first, second) in [(6, 2), (2, 6), (3, 3)] {
            drop(block(first, 0));
            let b = block(second, 1);
            let c = block(second, 2);
            assert!(b.iter().enumerate().all(|(i, x)| *x == i as u8 ^ 1));
            assert!(c.iter().enumerate().all(|(i, x)| *x == i as u8 ^ 2));
        }
    }
}
