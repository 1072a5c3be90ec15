//! Dispatches kernel replay ran more than once. The SDK gives every pass
//! of a dispatch the same dispatch id and correlation id (kernel_replay.h),
//! so to everything that reads a window's records a replayed dispatch would
//! look like one launch that ran its kernel N times. So only the first of a
//! dispatch's records to arrive goes into the window, where attribution and
//! linkage see one record per launch, as for any dispatch; the others wait
//! here, and finishing shows each pass as its own kernel with the first's
//! links (`passes_of`).
use activity_store::{KernelBatch, KernelDispatch};
use dashmap::DashMap;
use once_cell::sync::Lazy;
use std::sync::atomic::{AtomicBool, Ordering};

/// A replayed dispatch: how many passes CONFIG set, whether its first
/// record came, and the records of the other passes.
struct Replayed {
    passes: u32,
    first_seen: bool,
    others: Vec<KernelDispatch>,
}

static REPLAYED: Lazy<DashMap<u64, Replayed>> = Lazy::new(DashMap::new);
/// Set once any dispatch was replayed: until then records are not looked up.
static EVER: AtomicBool = AtomicBool::new(false);

/// Kernel replay will run dispatch `dispatch_id` `passes` times.
pub fn expect_passes(dispatch_id: u64, passes: u32) {
    EVER.store(true, Ordering::Release);
    REPLAYED.insert(
        dispatch_id,
        Replayed {
            passes,
            first_seen: false,
            others: Vec::new(),
        },
    );
}

/// Keeps in `kernels` the first record of each replayed dispatch (and every
/// record of the others); holds back the rest.
pub fn hold_back_repeats(kernels: &mut KernelBatch) {
    if !EVER.load(Ordering::Acquire) {
        return;
    }
    kernels.retain(|k| {
        let Some(mut replayed) = REPLAYED.get_mut(&k.dispatch_id) else {
            return true;
        };
        if !replayed.first_seen {
            replayed.first_seen = true;
            return true;
        }
        replayed.others.push(*k);
        false
    });
}

/// One pass of a replayed dispatch as shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pass {
    pub start_ns: u64,
    pub end_ns: u64,
    /// Its number, 0-based; `None` when not every pass's record came, so
    /// the numbering could not be proven.
    pub number: Option<u32>,
    pub passes: u32,
}

/// The passes of a dispatch whose window record ran from `start_ns` to
/// `end_ns`, in pass order; `None` for a dispatch not replayed. Taken once.
/// Passes run one after another (the SDK waits for each before the next),
/// so start order is pass order.
#[inline]
pub fn passes_of(dispatch_id: u64, start_ns: u64, end_ns: u64) -> Option<Vec<Pass>> {
    if !EVER.load(Ordering::Acquire) {
        return None;
    }
    passes_recorded(dispatch_id, start_ns, end_ns)
}

/// `passes_of` once something was recorded; out of line, so a session
/// that replays nothing pays one load per record.
fn passes_recorded(dispatch_id: u64, start_ns: u64, end_ns: u64) -> Option<Vec<Pass>> {
    let (_, replayed) = REPLAYED.remove(&dispatch_id)?;
    let mut times: Vec<(u64, u64)> = std::iter::once((start_ns, end_ns))
        .chain(replayed.others.iter().map(|k| (k.start_ns, k.end_ns)))
        .collect();
    times.sort_unstable();
    let whole = times.len() == replayed.passes as usize;
    Some(
        times
            .into_iter()
            .enumerate()
            .map(|(i, (start_ns, end_ns))| Pass {
                start_ns,
                end_ns,
                number: whole.then_some(i as u32),
                passes: replayed.passes,
            })
            .collect(),
    )
}

/// Forgets every replayed dispatch not finished yet (a session cleared).
pub fn clear() {
    REPLAYED.clear();
}

#[cfg(test)]
mod tests {
    use super::*;
    use activity_store::AgentId;

    fn record(dispatch_id: u64, start_ns: u64) -> KernelDispatch {
        KernelDispatch {
            dispatch_id,
            start_ns,
            end_ns: start_ns + 5,
            agent: AgentId(1),
            ..Default::default()
        }
    }

    // Dispatch ids are process-wide: each test uses ids of its own.
    #[test]
    fn the_first_record_stays_and_every_pass_comes_back_in_start_order() {
        expect_passes(9_001, 3);
        let mut batch: KernelBatch = [record(9_001, 100), record(5, 50), record(9_001, 120)]
            .into_iter()
            .collect();
        hold_back_repeats(&mut batch);
        let kept: Vec<KernelDispatch> = (0..batch.len()).map(|i| batch.get(i)).collect();
        assert_eq!(kept, vec![record(9_001, 100), record(5, 50)]);
        let mut later: KernelBatch = [record(9_001, 110)].into_iter().collect();
        hold_back_repeats(&mut later);
        assert!(later.is_empty());
        let passes = passes_of(9_001, 100, 105).unwrap();
        let shown: Vec<(u64, Option<u32>)> =
            passes.iter().map(|p| (p.start_ns, p.number)).collect();
        assert_eq!(shown, vec![(100, Some(0)), (110, Some(1)), (120, Some(2))]);
        assert_eq!(passes_of(9_001, 100, 105), None, "taken once");
        assert_eq!(passes_of(5, 50, 55), None, "not replayed");
    }

    #[test]
    fn a_missing_pass_leaves_every_pass_unnumbered() {
        expect_passes(9_101, 3);
        let mut batch: KernelBatch = [record(9_101, 100), record(9_101, 130)]
            .into_iter()
            .collect();
        hold_back_repeats(&mut batch);
        let passes = passes_of(9_101, 100, 105).unwrap();
        assert_eq!(passes.len(), 2);
        assert!(passes.iter().all(|p| p.number.is_none() && p.passes == 3));
    }
}
