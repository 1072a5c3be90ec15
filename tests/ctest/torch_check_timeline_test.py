"""The torch check's timeline checks (scripts/torch_profiler_check.py,
check_timeline) on the timeline trace kineto wrote in this suite: the trace
as written passes, and each wrong field planted in it is caught.

Usage: torch_check_timeline_test.py SCRIPT TRACE TRUTH
"""
import copy
import importlib.util
import json
import sys


def load(script):
    spec = importlib.util.spec_from_file_location("torch_profiler_check", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main():
    script, trace_path, truth_path = sys.argv[1:4]
    tpc = load(script)
    with open(trace_path) as f:
        events = json.load(f)["traceEvents"]
    with open(truth_path) as f:
        truth = tpc.Truth(json.load(f))

    def passes(evs):
        checks = tpc.Checks()
        tpc.check_timeline(evs, truth, checks)
        return bool(checks.results) and checks.ok()

    assert passes(events), "the trace as kineto wrote it fails"

    def first(pred):
        for i, e in enumerate(events):
            if e.get("ph") == "X" and pred(e):
                return i
        raise AssertionError("the trace lacks a case the test needs")

    def args(e):
        return e.get("args", {})

    def plant(what, index, mutate):
        evs = copy.deepcopy(events)
        mutate(evs[index])
        caught = not passes(evs)
        print(("caught: " if caught else "MISSED: ") + what)
        return caught

    def setting(key, value):
        def mutate(e):
            e["args"][key] = value
        return mutate

    def drop(evs_index):
        def run():
            evs = copy.deepcopy(events)
            del evs[evs_index]
            caught = not passes(evs)
            print(("caught: " if caught else "MISSED: ") + "a cuda_sync span left out")
            return caught
        return run

    memset = first(lambda e: e.get("cat") == "gpu_memset")
    peer = first(lambda e: e.get("cat") == "gpu_memcpy" and args(e).get("kind") == "PtoP")
    mangled = first(lambda e: e.get("cat") == "kernel" and "mangled name" in args(e))
    wait = first(lambda e: e.get("name") == "Stream Wait Event")
    sync = first(lambda e: e.get("name") == "Stream Sync")
    record = first(lambda e: e.get("cat") == "cuda_event")
    host = first(lambda e: e.get("name") == "Host Function")
    rng = first(lambda e: e.get("cat") == "user_annotation" and e.get("dur", 0) > 0)

    def shorter(e):
        e["dur"] = e["dur"] / 2

    def longer(e):
        e["dur"] = e["dur"] * 2 + 1

    def raw_name(e):
        e["name"] = e["args"].pop("mangled name")

    results = [
        plant("a memset's value", memset, setting("value", 0)),
        plant("a memset's bytes", memset, setting("bytes", 1)),
        plant("a peer copy's source device", peer, setting("src device", 0)),
        plant("a kernel left mangled", mangled, raw_name),
        plant("a wait pointing at another record", wait,
              setting("wait_on_cuda_event_record_corr_id", 1)),
        plant("a sync span shorter than its call", sync, shorter),
        plant("an event record on another stream", record, lambda e: e.update(tid=e["tid"] + 99)),
        plant("a host function span shorter than its run", host, shorter),
        plant("a roctx range longer than its callbacks", rng, longer),
        drop(sync)(),
    ]
    print(f"{sum(results)} of {len(results)} planted errors caught")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
