//! The first round's exec-lifecycle cases, replayed through the tracker exactly as
//! the SDK 1.0 path drives it (instantiate, launch, update, destroy by
//! handle), counting keys from the raw external slots the tracker answered,
//! before any verification. With the handling, no key covers two kernels;
//! with it left out (the first round's first version) its 4 aliased keys
//! come back: the counting can fail.
use graph_attribution::{
    ExecHandle, ExecIdentity, GraphKey, LaunchCall, LaunchTracker, LaunchedExec, NaiveLaunchStack,
    TrackerConfig,
};
use std::collections::{HashMap, HashSet};

const HANDLE: ExecHandle = ExecHandle(0x7f00_1000);

struct Replay<'a> {
    tracker: &'a LaunchTracker,
    correlation: u64,
    /// key -> the kernels it was answered for.
    keys: HashMap<u64, HashSet<String>>,
}

impl Replay<'_> {
    fn launch(&mut self, kernels: &[&str], times: u32) {
        let exec = LaunchedExec::Runtime { handle: HANDLE };
        for _ in 0..times {
            self.correlation += 1;
            self.tracker.enter_launch(
                exec,
                LaunchCall {
                    correlation_id: self.correlation,
                    thread_id: 1,
                },
            );
            for kernel in kernels {
                let slot = self.tracker.external_for_dispatch();
                assert!(
                    GraphKey::unpack(slot).is_some(),
                    "every dispatch inside a launch is answered"
                );
                self.keys
                    .entry(slot)
                    .or_default()
                    .insert(kernel.to_string());
            }
            self.tracker.exit_launch(exec);
        }
    }

    fn graph_ids(&self) -> usize {
        self.keys
            .keys()
            .map(|k| k >> 32)
            .collect::<HashSet<_>>()
            .len()
    }

    fn aliased(&self) -> usize {
        self.keys
            .values()
            .filter(|kernels| kernels.len() > 1)
            .count()
    }
}

const FIRST: [&str; 4] = ["a0", "a1", "a2", "a3"];
const UPDATED: [&str; 4] = ["b0", "b1", "b2", "b3"];
const THIRD: [&str; 4] = ["c0", "c1", "c2", "c3"];

/// 4-node chain x150, hipGraphExecUpdate to four other kernels, x150; then
/// destroy and instantiate a third graph at the same address, x150.
fn first_round_cases(naive: NaiveLaunchStack) -> ((usize, usize, usize), (usize, usize, usize)) {
    let tracker = LaunchTracker::naive(TrackerConfig::new(ExecIdentity::RuntimeApi), naive);
    let mut replay = Replay {
        tracker: &tracker,
        correlation: 0,
        keys: HashMap::new(),
    };
    tracker.exec_created(LaunchedExec::Runtime { handle: HANDLE });
    replay.launch(&FIRST, 150);
    tracker.exec_updated(HANDLE);
    replay.launch(&UPDATED, 150);
    let update = (replay.graph_ids(), replay.keys.len(), replay.aliased());
    tracker.exec_destroyed(HANDLE);
    tracker.exec_created(LaunchedExec::Runtime { handle: HANDLE });
    replay.launch(&THIRD, 150);
    let reuse = (replay.graph_ids(), replay.keys.len(), replay.aliased());
    (update, reuse)
}

#[test]
fn with_the_handling_no_key_aliases() {
    let (update, reuse) = first_round_cases(NaiveLaunchStack::default());
    assert_eq!(update, (2, 8, 0), "exec update: graph ids, keys, aliased");
    assert_eq!(reuse, (3, 12, 0), "address reuse: graph ids, keys, aliased");
}

#[test]
fn without_update_handling_every_ordinal_covers_two_kernels() {
    let (update, _) = first_round_cases(NaiveLaunchStack {
        ignore_updates: true,
        ..NaiveLaunchStack::default()
    });
    assert_eq!(
        update,
        (1, 4, 4),
        "the first round's table: 1 graph id, 4 keys, 4 aliased"
    );
}

#[test]
fn without_forgetting_a_reused_address_inherits_the_updated_id() {
    let (update, reuse) = first_round_cases(NaiveLaunchStack {
        ignore_create_and_destroy: true,
        ..NaiveLaunchStack::default()
    });
    assert_eq!(update, (2, 8, 0));
    assert_eq!(
        reuse,
        (2, 8, 4),
        "the first round's table: 2 graph ids, 8 keys, 4 aliased"
    );
}
