"""The torch check's truth-based linkage and graph-key checks
(scripts/torch_profiler_check.py), on a trace kineto wrote in this suite
(graph-linked.json: graph replays inside a cpu_op, eager kernels inside a
cpu_op inside a user annotation, one kernel outside any op): the trace as
written passes, and each wrong link or key planted in it is caught.

Usage: torch_check_test.py SCRIPT TRACE TRUTH
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
        tpc.check_links(evs, truth, checks)
        tpc.check_graph_keys([e for e in evs if e.get("cat") == "kernel"], truth, checks)
        return checks.ok()

    kernels = [e for e in events if e.get("cat") == "kernel" and tpc.ours(e)]
    graphed = [k for k in kernels if "graph node id" in k["args"]]
    eager = [k for k in kernels if "graph node id" not in k["args"] and "External id" in k["args"]]
    unmarked = [k for k in kernels if "External id" not in k["args"]]
    spans = [e for e in events if e.get("cat") == "gpu_user_annotation"]
    assert graphed and eager and unmarked and spans, "the trace lacks a case the test needs"
    assert passes(events), "the trace as kineto wrote it fails"

    def planted(what, mutate):
        evs = copy.deepcopy(events)
        mutate(evs)
        caught = not passes(evs)
        print(("caught: " if caught else "MISSED: ") + what)
        return caught

    def index_of(k):
        return events.index(k)

    def set_arg(k, key, value):
        def mutate(evs):
            evs[index_of(k)]["args"][key] = value
        return mutate

    def drop_arg(k, key):
        def mutate(evs):
            del evs[index_of(k)]["args"][key]
        return mutate

    def stretch(span, us):
        def mutate(evs):
            evs[index_of(span)]["dur"] += us
        return mutate

    results = [
        planted("an eager kernel linked to the graph replay's op",
                set_arg(eager[0], "External id", graphed[0]["args"]["External id"])),
        planted("a graph kernel linked to the eager op",
                set_arg(graphed[0], "External id", eager[0]["args"]["External id"])),
        planted("a kernel launched outside any op given a link",
                set_arg(unmarked[0], "External id", eager[0]["args"]["External id"])),
        planted("a link dropped", drop_arg(graphed[0], "External id")),
        planted("a kernel naming another launching call",
                set_arg(graphed[0], "correlation", eager[0]["args"]["correlation"])),
        planted("a user annotation's span stretched over other work", stretch(spans[0], 50.0)),
        planted("a node id in another node's place",
                set_arg(graphed[0], "graph node id", graphed[0]["args"]["graph node id"] ^ 1)),
    ]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
