//! The tracker as the tool library drives it: warnings once per cause,
//! re-keying and forgetting end to end, and independent stacks per thread.

use std::sync::{Arc, Barrier, Mutex, Once};
use std::thread::ThreadId;

use graph_attribution::{
    Anomaly, AttributionId, ExecHandle, ExecIdentity, GraphKey, LaunchCall, LaunchTracker,
    LaunchedExec, NodeId, TrackerConfig,
};

/// Captures warnings per thread, so parallel tests see only their own.
struct Capture;

static WARNINGS: Mutex<Vec<(ThreadId, String)>> = Mutex::new(Vec::new());

impl log::Log for Capture {
    fn enabled(&self, metadata: &log::Metadata) -> bool {
        metadata.level() <= log::Level::Warn
    }
    fn log(&self, record: &log::Record) {
        if self.enabled(record.metadata()) {
            WARNINGS
                .lock()
                .unwrap()
                .push((std::thread::current().id(), record.args().to_string()));
        }
    }
    fn flush(&self) {}
}

fn capture_warnings() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        log::set_logger(&Capture).unwrap();
        log::set_max_level(log::LevelFilter::Warn);
    });
}

fn my_warnings() -> Vec<String> {
    let me = std::thread::current().id();
    WARNINGS
        .lock()
        .unwrap()
        .iter()
        .filter(|(thread, _)| *thread == me)
        .map(|(_, text)| text.clone())
        .collect()
}

fn sdk(id: u64, handle: u64) -> LaunchedExec {
    LaunchedExec::Sdk {
        graph_exec_id: id,
        handle: ExecHandle(handle),
    }
}

fn call(correlation_id: u64) -> LaunchCall {
    LaunchCall {
        correlation_id,
        thread_id: 1,
    }
}

fn key(id: u32, ordinal: u32) -> u64 {
    GraphKey::new(AttributionId::new(id).unwrap(), NodeId(ordinal)).pack()
}

/// Launch `exec` once, requesting `n` dispatches; returns their slots.
fn replay(t: &LaunchTracker, exec: LaunchedExec, corr: u64, n: usize) -> Vec<u64> {
    t.enter_launch(exec, call(corr));
    let slots = (0..n).map(|_| t.external_for_dispatch()).collect();
    t.exit_launch(exec);
    slots
}

#[test]
fn an_id_too_wide_to_pack_gets_no_pair_and_one_warning() {
    capture_warnings();
    let t = LaunchTracker::new(TrackerConfig::new(ExecIdentity::SdkGraphDomain));
    let wide = sdk(1 << 32, 0xA);
    t.exec_created(wide);
    for corr in 0..5 {
        assert_eq!(replay(&t, wide, corr, 3), vec![0, 0, 0]);
    }
    let warnings = my_warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("32 bits"), "{}", warnings[0]);
    assert_eq!(t.anomalies().count(Anomaly::ExecIdTooWide), 6);
}

#[test]
fn an_id_colliding_with_the_rekey_range_gets_no_pair_and_one_warning() {
    capture_warnings();
    let t = LaunchTracker::new(TrackerConfig::new(ExecIdentity::SdkGraphDomain));
    let updated = sdk(1, 0xA);
    t.exec_created(updated);
    assert_eq!(
        t.exec_updated(ExecHandle(0xA)).map(AttributionId::get),
        Some(0xFFFF_FFFF)
    );
    let colliding = sdk(0xFFFF_FFFF, 0xB);
    assert_eq!(t.exec_created(colliding), None);
    assert_eq!(replay(&t, colliding, 1, 2), vec![0, 0]);
    assert_eq!(replay(&t, colliding, 2, 2), vec![0, 0]);
    // The updated exec alone owns that id.
    assert_eq!(
        replay(&t, updated, 3, 2),
        vec![key(0xFFFF_FFFF, 0), key(0xFFFF_FFFF, 1)]
    );
    assert_eq!(my_warnings().len(), 1, "{:?}", my_warnings());
}

#[test]
fn exit_anomalies_warn_once_per_cause() {
    capture_warnings();
    let t = LaunchTracker::new(TrackerConfig::new(ExecIdentity::SdkGraphDomain));
    for _ in 0..3 {
        t.exit_launch(sdk(1, 0xA)); // no ENTER
    }
    t.enter_launch(sdk(1, 0xA), call(1));
    for _ in 0..3 {
        t.exit_launch(sdk(2, 0xB)); // not on the stack
    }
    t.exit_launch(sdk(1, 0xA));
    assert_eq!(my_warnings().len(), 2, "{:?}", my_warnings());
    assert_eq!(t.drain_launches().len(), 1);
}

#[test]
fn update_then_destroy_then_reuse_of_the_address_never_shares_a_key() {
    let t = LaunchTracker::new(TrackerConfig::new(ExecIdentity::SdkGraphDomain));
    let first = sdk(1, 0xA);
    t.exec_created(first);
    let before = replay(&t, first, 1, 4);
    t.exec_updated(ExecHandle(0xA));
    let after = replay(&t, first, 2, 4);
    t.exec_destroyed(ExecHandle(0xA));
    let third = sdk(2, 0xA); // HIP reuses the address
    t.exec_created(third);
    let reused = replay(&t, third, 3, 4);
    assert_eq!(before, (0..4).map(|n| key(1, n)).collect::<Vec<_>>());
    assert_eq!(
        after,
        (0..4).map(|n| key(0xFFFF_FFFF, n)).collect::<Vec<_>>()
    );
    assert_eq!(reused, (0..4).map(|n| key(2, n)).collect::<Vec<_>>());
    let retired: Vec<u32> = t
        .take_retired_attributions()
        .into_iter()
        .map(AttributionId::get)
        .collect();
    assert_eq!(retired, vec![1, 0xFFFF_FFFF]);
}

#[test]
fn runtime_api_identities_forget_a_destroyed_handle() {
    let t = LaunchTracker::new(TrackerConfig::new(ExecIdentity::RuntimeApi));
    let exec = LaunchedExec::Runtime {
        handle: ExecHandle(0xA),
    };
    assert_eq!(t.exec_created(exec).map(AttributionId::get), Some(1));
    assert_eq!(replay(&t, exec, 1, 1), vec![key(1, 0)]);
    t.exec_updated(ExecHandle(0xA));
    assert_eq!(replay(&t, exec, 2, 1), vec![key(0xFFFF_FFFF, 0)]);
    t.exec_destroyed(ExecHandle(0xA));
    assert_eq!(t.exec_created(exec).map(AttributionId::get), Some(2));
    assert_eq!(replay(&t, exec, 3, 1), vec![key(2, 0)]);
}

#[test]
fn each_thread_has_its_own_stack() {
    let t = Arc::new(LaunchTracker::new(TrackerConfig::new(
        ExecIdentity::SdkGraphDomain,
    )));
    let threads = 8u64;
    let barrier = Arc::new(Barrier::new(threads as usize));
    let handles: Vec<_> = (1..=threads)
        .map(|i| {
            let t = Arc::clone(&t);
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                let exec = sdk(i, 0x1000 * i);
                t.enter_launch(
                    exec,
                    LaunchCall {
                        correlation_id: i,
                        thread_id: i,
                    },
                );
                // Everyone is inside a launch at once.
                barrier.wait();
                let mut slots = Vec::new();
                for _ in 0..100 {
                    slots.push(t.external_for_dispatch());
                    std::thread::yield_now();
                }
                barrier.wait();
                t.exit_launch(exec);
                assert_eq!(t.depth_on_this_thread(), 0);
                slots
            })
        })
        .collect();
    for (i, handle) in (1..=threads).zip(handles) {
        let expected: Vec<u64> = (0..100).map(|n| key(i as u32, n)).collect();
        assert_eq!(handle.join().unwrap(), expected);
    }
    let mut records = t.drain_launches();
    records.sort_by_key(|r| r.correlation_id);
    assert_eq!(records.len(), threads as usize);
    for (i, r) in (1..=threads).zip(&records) {
        assert_eq!((r.thread_id, r.credited_dispatches), (i, 100));
    }
    // The main thread never entered a launch.
    assert_eq!(t.external_for_dispatch(), 0);
}
