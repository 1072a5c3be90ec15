//! A fixed number of graph launches through the attribution hot path, for
//! instruction counting under callgrind (scripts/bench-hot-path.sh): ENTER,
//! one external-correlation answer per dispatch, EXIT. Usage:
//! `hot_path_loop LAUNCHES NODES [on|off]`.
use graph_attribution::{
    ExecHandle, ExecIdentity, LaunchCall, LaunchTracker, LaunchedExec, TrackerConfig,
};
use std::hint::black_box;

fn main() {
    let mut args = std::env::args().skip(1);
    let launches: u64 = args.next().and_then(|v| v.parse().ok()).unwrap_or(1000);
    let nodes: u64 = args.next().and_then(|v| v.parse().ok()).unwrap_or(32);
    let on = args.next().as_deref() != Some("off");
    let tracker = LaunchTracker::new(TrackerConfig::new(ExecIdentity::SdkGraphDomain));
    let exec = LaunchedExec::Sdk {
        graph_exec_id: 1,
        handle: ExecHandle(0x1000),
    };
    tracker.exec_created(exec);
    let mut checksum = 0u64;
    for correlation in 1..=launches {
        if on {
            tracker.enter_launch(
                exec,
                LaunchCall {
                    correlation_id: correlation,
                    thread_id: 1,
                },
            );
            for _ in 0..nodes {
                checksum = checksum.wrapping_add(black_box(tracker.external_for_dispatch()));
            }
            tracker.exit_launch(exec);
        } else {
            for _ in 0..nodes {
                checksum = checksum.wrapping_add(black_box(0));
            }
        }
        if correlation.is_multiple_of(4096) {
            black_box(tracker.drain_launches());
        }
    }
    println!("{checksum}");
}
