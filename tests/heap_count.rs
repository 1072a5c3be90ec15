//! The tool allocator's live-heap count (src/heap.rs), which the cost
//! benchmarks read. A binary of its own with one test: the count is
//! process-wide, so another test freeing memory while it is read would move
//! it.
use kineto_rocm::heap::{count, usage};

#[test]
fn a_mapped_block_is_counted_while_held_and_uncounted_when_freed() {
    count();
    let before = usage().live;
    let block = std::hint::black_box(vec![1u8; 3 << 20]);
    let during = usage();
    assert!(
        during.live >= before + block.len(),
        "{before} then {}",
        during.live
    );
    assert!(during.peak >= during.live);
    drop(block);
    assert!(usage().live + (1 << 20) < during.live);
}
