//! Workload errors name the file, the path to the field and the expectation.
use rocprofiler_sim::workload::Workload;

fn err(text: &str) -> String {
    Workload::parse(text, "bad.json").unwrap_err().to_string()
}

#[test]
fn type_errors_name_file_path_and_expectation() {
    let e = err(
        r#"{"sdk_version": "1.3.0", "threads": [{"ops": [{"create_stream": {"name": "s"}},
        {"launch": {"exec": "e", "stream": "s", "times": "many"}}]}]}"#,
    );
    assert!(e.contains("bad.json"), "{e}");
    assert!(e.contains("threads[0].ops[1].launch.times"), "{e}");
    assert!(e.contains("expected u64"), "{e}");
}

#[test]
fn unknown_fields_and_ops_are_rejected() {
    let e = err(r#"{"sdk_version": "1.3.0", "threads": [], "colour": 1}"#);
    assert!(e.contains("colour") && e.contains("expected one of"), "{e}");
    let e = err(r#"{"sdk_version": "1.3.0", "threads": [{"ops": [{"launch_twice": {}}]}]}"#);
    assert!(
        e.contains("threads[0].ops[0]") && e.contains("launch_twice"),
        "{e}"
    );
    let e = err(
        r#"{"sdk_version": "1.3.0", "threads": [{"ops": [{"create_stream": {"name": "s", "prio": 1}}]}]}"#,
    );
    assert!(
        e.contains("threads[0].ops[0].create_stream") && e.contains("prio"),
        "{e}"
    );
}

#[test]
fn bad_version_and_semantic_errors() {
    let e = err(r#"{"sdk_version": "1.3", "threads": []}"#);
    assert!(
        e.contains("sdk_version") && e.contains("MAJOR.MINOR.PATCH"),
        "{e}"
    );
    let e = err(
        r#"{"sdk_version": "1.3.0", "graphs": [{"name": "g", "nodes": [{"kernel": "a", "deps": [0]}]}],
        "threads": [{"ops": []}]}"#,
    );
    assert!(
        e.contains("graphs[0].nodes[0].deps[0]") && e.contains("earlier node"),
        "{e}"
    );
    let e = err(
        r#"{"sdk_version": "1.3.0", "threads": [{"ops": [{"create_stream": {"name": "s"}},
        {"launch": {"exec": "nope", "stream": "s"}}]}]}"#,
    );
    assert!(
        e.contains("threads[0].ops[1].launch.exec") && e.contains("instantiated earlier"),
        "{e}"
    );
    let e = err(
        r#"{"sdk_version": "1.3.0", "graphs": [{"name": "g", "nodes": [{"kernel": "a", "memcpy": {"bytes": 1, "direction": "host_to_device"}}]}], "threads": [{"ops": []}]}"#,
    );
    assert!(
        e.contains("graphs[0].nodes[0]") && e.contains("exactly one"),
        "{e}"
    );
}

#[test]
fn every_shipped_workload_parses() {
    let dir = rocprofiler_sim::workload::shipped::dir();
    let mut n = 0;
    for f in std::fs::read_dir(dir).unwrap() {
        let p = f.unwrap().path();
        if p.extension().is_some_and(|e| e == "json") {
            Workload::load(&p).unwrap_or_else(|e| panic!("{e}"));
            n += 1;
        }
    }
    assert!(n >= 13);
}

#[test]
fn new_fields_are_checked() {
    let shared = r#""graphs": [{"name": "g", "nodes": [{"kernel": "a"}]}],
        "shared_execs": [{"name": "e", "graph": "g"}]"#;
    let e = err(&format!(
        r#"{{"sdk_version": "1.3.0", {shared}, "threads": [{{"ops": [{{"update": {{"exec": "e", "graph": "g"}}}}]}}]}}"#
    ));
    assert!(
        e.contains("threads[0].ops[0].update.exec") && e.contains("shared_execs[0]"),
        "{e}"
    );
    let e = err(&format!(
        r#"{{"sdk_version": "1.3.0", {shared}, "threads": [{{"ops": [{{"destroy": {{"exec": "e"}}}}]}}]}}"#
    ));
    assert!(e.contains("threads[0].ops[0].destroy.exec"), "{e}");
    // A shared exec may be launched, and a thread-local one shadows it.
    Workload::parse(
        &format!(
            r#"{{"sdk_version": "1.3.0", {shared}, "threads": [{{"ops": [{{"create_stream": {{"name": "s"}}}},
            {{"launch": {{"exec": "e", "stream": "s"}}}}, {{"instantiate": {{"graph": "g", "as": "e"}}}},
            {{"update": {{"exec": "e", "graph": "g"}}}}]}}]}}"#
        ),
        "ok.json",
    )
    .unwrap();
    let e = err(
        r#"{"sdk_version": "1.3.0", "shared_execs": [{"name": "e", "graph": "nope"}], "threads": [{"ops": []}]}"#,
    );
    assert!(e.contains("shared_execs[0].graph"), "{e}");
    let e = err(
        r#"{"sdk_version": "1.3.0", "graphs": [{"name": "g", "nodes": [{"memset": {"bytes": 8}, "grid": [1, 1, 1]}]}], "threads": [{"ops": []}]}"#,
    );
    assert!(
        e.contains("graphs[0].nodes[0].grid") && e.contains("kernel node"),
        "{e}"
    );
    let e = err(
        r#"{"sdk_version": "1.3.0", "graphs": [{"name": "g", "nodes": [{"kernel": "a"}, {"kernel": "b", "deps": [0, 0]}]}], "threads": [{"ops": []}]}"#,
    );
    assert!(
        e.contains("graphs[0].nodes[1].deps[1]") && e.contains("distinct"),
        "{e}"
    );
    let e = err(
        r#"{"sdk_version": "1.3.0", "threads": [{"ops": [{"create_stream": {"name": "s"}}, {"kernel": {"name": "k", "stream": "s", "block": [0, 1, 1]}}]}]}"#,
    );
    assert!(e.contains("threads[0].ops[1].kernel.block"), "{e}");
    let e = err(
        r#"{"sdk_version": "1.3.0", "rocm": {"segment_scheduling": 3}, "threads": [{"ops": []}]}"#,
    );
    assert!(
        e.contains("rocm.segment_scheduling") && e.contains("0, 1 or 2"),
        "{e}"
    );
    let e =
        err(r#"{"sdk_version": "1.3.0", "rocm": {"hw_queue_slot": 3}, "threads": [{"ops": []}]}"#);
    assert!(e.contains("rocm") && e.contains("hw_queue_slot"), "{e}");
    let e =
        err(r#"{"sdk_version": "1.3.0", "submission_model": "fast", "threads": [{"ops": []}]}"#);
    assert!(
        e.contains("submission_model") && e.contains("rocm") && e.contains("ideal"),
        "{e}"
    );
}

#[test]
fn event_nodes_name_an_event_and_are_one_kind() {
    let e = err(
        r#"{"sdk_version": "1.3.0", "graphs": [{"name": "g", "nodes": [{"event_record": ""}]}], "threads": [{"ops": []}]}"#,
    );
    assert!(
        e.contains("graphs[0].nodes[0].event_record") && e.contains("event name"),
        "{e}"
    );
    let e = err(
        r#"{"sdk_version": "1.3.0", "graphs": [{"name": "g", "nodes": [{"event_record": "e", "event_wait": "e"}]}], "threads": [{"ops": []}]}"#,
    );
    assert!(
        e.contains("graphs[0].nodes[0]") && e.contains("exactly one"),
        "{e}"
    );
}
