//! The attribution hot path, in ns per dispatch: a graph launch's ENTER, one
//! external-correlation answer per dispatch, EXIT. "off" is the same loop
//! with attribution disabled: the tool configures no external-correlation
//! service, so the SDK's dispatch pays nothing for it.
//!
//! Run: cargo bench -p graph-attribution --bench hot_path
use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use graph_attribution::{
    ExecHandle, ExecIdentity, LaunchCall, LaunchTracker, LaunchedExec, TrackerConfig,
};

const NODES: u64 = 32;

fn launches(c: &mut Criterion) {
    let tracker = LaunchTracker::new(TrackerConfig::new(ExecIdentity::SdkGraphDomain));
    let exec = LaunchedExec::Sdk {
        graph_exec_id: 1,
        handle: ExecHandle(0x1000),
    };
    tracker.exec_created(exec);
    let mut group = c.benchmark_group("graph_launch_32_dispatches");
    group.throughput(Throughput::Elements(NODES));
    let mut correlation = 0u64;
    group.bench_function(BenchmarkId::new("attribution", "on"), |b| {
        b.iter(|| {
            correlation += 1;
            tracker.enter_launch(
                exec,
                LaunchCall {
                    correlation_id: correlation,
                    thread_id: 1,
                },
            );
            for _ in 0..NODES {
                black_box(tracker.external_for_dispatch());
            }
            tracker.exit_launch(exec);
            // The log is drained at window finish; keep it from filling here.
            if correlation.is_multiple_of(4096) {
                black_box(tracker.drain_launches());
            }
        })
    });
    group.bench_function(BenchmarkId::new("attribution", "off"), |b| {
        b.iter(|| {
            for _ in 0..NODES {
                black_box(0u64);
            }
        })
    });
    group.finish();
}

criterion_group!(benches, launches);
criterion_main!(benches);
