//! The Perfetto writer against the JSON writer: one run writes the same
//! windows as both, the pftrace is decoded back (slices paired by time per
//! track, as a trace processor pairs them) and rewritten as JSON by
//! `kineto-rocm convert`, and every event, arg and metadata line must be
//! the JSON trace's. Each case runs in its own process.
use rocprofiler_sim::workload::shipped;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kineto-rocm-pftrace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn kineto_rocm(args: &[&std::ffi::OsStr], arrows: bool) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_kineto-rocm"))
        .args(args)
        .env_remove("KINETO_ROCM_DISABLE_GRAPH_ATTRIBUTION")
        .env(
            "KINETO_ROCM_GRAPH_DEPENDENCY_ARROWS",
            if arrows { "1" } else { "0" },
        )
        .output()
        .expect("run kineto-rocm");
    assert!(
        output.status.success(),
        "kineto-rocm {args:?} failed ({}):\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn read(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every event as canonical text, sorted: the trace as a multiset.
fn events(trace: &Value) -> Vec<String> {
    let mut out: Vec<String> = trace["traceEvents"]
        .as_array()
        .expect("traceEvents")
        .iter()
        .map(Value::to_string)
        .collect();
    out.sort();
    out
}

/// Runs `workload` once writing JSON and pftrace (at `gzip_level`), and
/// returns (the JSON trace, the pftrace converted back, pftrace bytes).
fn both(workload: &str, gzip_level: &str) -> (Value, Value, Vec<u8>) {
    both_with(workload, gzip_level, false, &[])
}

/// `both`, with graph dependency arrows asked for or not, and more `run`
/// arguments (files named apart from `both`'s).
fn both_with(
    workload: &str,
    gzip_level: &str,
    arrows: bool,
    more: &[&std::ffi::OsStr],
) -> (Value, Value, Vec<u8>) {
    let stem = match (arrows, more.is_empty()) {
        (false, true) => format!("{workload}.{gzip_level}"),
        _ => format!("{workload}.{gzip_level}.with"),
    };
    let json = scratch(&format!("{stem}.json"));
    let pftrace = scratch(&format!("{stem}.pftrace"));
    let back = scratch(&format!("{stem}.back.json"));
    let file = shipped::path(&format!("{workload}.json"));
    let mut args: Vec<&std::ffi::OsStr> = vec![
        "run".as_ref(),
        "--workload".as_ref(),
        file.as_os_str(),
        "--out".as_ref(),
        json.as_os_str(),
        "--out".as_ref(),
        pftrace.as_os_str(),
        "--gzip-level".as_ref(),
        gzip_level.as_ref(),
    ];
    args.extend_from_slice(more);
    kineto_rocm(&args, arrows);
    kineto_rocm(
        &["convert".as_ref(), pftrace.as_os_str(), back.as_os_str()],
        false,
    );
    let bytes = std::fs::read(&pftrace).unwrap();
    (read(&json), read(&back), bytes)
}

fn assert_same(workload: &str, json: &Value, back: &Value) {
    let (a, b) = (events(json), events(back));
    let missing: Vec<&String> = a
        .iter()
        .filter(|e| b.binary_search(e).is_err())
        .take(3)
        .collect();
    let extra: Vec<&String> = b
        .iter()
        .filter(|e| a.binary_search(e).is_err())
        .take(3)
        .collect();
    assert!(
        a == b,
        "{workload}: {} JSON events, {} back from pftrace; missing {missing:?}, extra {extra:?}",
        a.len(),
        b.len()
    );
    assert_eq!(
        json["kineto_rocm"], back["kineto_rocm"],
        "{workload}: metadata"
    );
}

#[test]
fn graph_replays_come_back_event_for_event() {
    let (json, back, bytes) = both("graph-32x200", "1");
    assert_same("graph-32x200", &json, &back);
    let kernels = events(&json)
        .iter()
        .filter(|e| e.contains("\"cat\":\"kernel\""))
        .count();
    assert_eq!(kernels, 6400);
    assert_eq!(&bytes[..2], &[0x1f, 0x8b], "gzip by default");
}

#[test]
fn concurrent_linked_replays_with_flows_come_back_event_for_event() {
    let (json, back, _) = both("concurrent-8threads-marked", "1");
    assert_same("concurrent-8threads-marked", &json, &back);
    let flows = events(&json)
        .iter()
        .filter(|e| e.contains("\"cat\":\"ac2g\""))
        .count();
    assert!(flows > 100, "only {flows} flow ends");
}

#[test]
fn copies_memsets_and_several_devices_come_back_at_every_gzip_level() {
    for (workload, level) in [
        ("blits-2streams", "0"),
        ("two-devices", "9"),
        ("random-dag", "1"),
    ] {
        let (json, back, bytes) = both(workload, level);
        assert_same(workload, &json, &back);
        assert_eq!(
            bytes.starts_with(&[0x1f, 0x8b]),
            level != "0",
            "{workload} at {level}"
        );
    }
}

/// The timeline (memsets, syncs, events, host functions, roctx, overhead)
/// with graph dependency arrows: the arrows' flow ids are marked apart from
/// `ac2g` ones in the protobuf and come back as `fwdbwd` flows.
#[test]
fn the_timeline_and_graph_dependency_arrows_come_back_event_for_event() {
    let (json, back, _) = both_with("timeline", "1", true, &[]);
    assert_same("timeline", &json, &back);
    let count = |cat: &str| {
        events(&json)
            .iter()
            .filter(|e| e.contains(&format!("\"cat\":\"{cat}\"")))
            .count()
    };
    assert!(count("fwdbwd") > 0, "no dependency arrow in the JSON");
    assert!(count("ac2g") > 0, "no ac2g arrow in the JSON");
    for cat in ["gpu_memset", "cuda_sync", "cuda_event", "overhead"] {
        assert!(count(cat) > 0, "no {cat} event");
    }
}

/// Hardware counters asked for by a job file: on every kernel event's args
/// and as counter tracks, which come back as the same "ph": "C" samples.
#[test]
fn counter_tracks_come_back_event_for_event() {
    let jobs = shipped::dir().join("../jobs/one-group.yaml");
    let (json, back, _) = both_with(
        "graph-32x200",
        "1",
        false,
        &["--jobs".as_ref(), jobs.as_os_str()],
    );
    assert_same("graph-32x200", &json, &back);
    let samples: Vec<String> = events(&json)
        .into_iter()
        .filter(|e| e.contains("\"ph\":\"C\""))
        .collect();
    for counter in ["SQ_WAVES", "GRBM_COUNT", "GPU_UTIL"] {
        assert!(
            samples
                .iter()
                .any(|s| s.contains(&format!("\"name\":\"{counter}\""))),
            "no {counter} track"
        );
    }
}
