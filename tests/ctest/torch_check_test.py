"""The torch check's truth-based linkage and graph-key checks
(scripts/torch_profiler_check.py), on a trace kineto wrote in this suite
(graph-linked.json: graph replays inside a cpu_op, eager kernels inside a
cpu_op inside a user annotation, one kernel outside any op): the trace as
written passes, and each wrong link or key planted in it is caught. With
REPORT_BIN (the kineto-rocm CLI), so is each wrong figure planted for the
check of `kineto-rocm report` against the truth (a replay lost, a kernel
made slower), while a CUPTI kernel outside any graph ("graph id" 0) next to
ours changes nothing.

Usage: torch_check_test.py SCRIPT TRACE TRUTH [REPORT_BIN]
"""
import copy
import importlib.util
import json
import os
import sys
import tempfile


def load(script):
    spec = importlib.util.spec_from_file_location("torch_profiler_check", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main():
    script, trace_path, truth_path = sys.argv[1:4]
    report_bin = sys.argv[4] if len(sys.argv) > 4 else None
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

    def report_passes(evs):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "trace.json")
            with open(path, "w") as f:
                json.dump({"traceEvents": evs}, f)
            checks = tpc.Checks()
            tpc.check_report(report_bin, path, truth, checks)
            return checks.ok()

    kernels = [e for e in events if e.get("cat") == "kernel" and tpc.ours(e)]
    graphed = [k for k in kernels if "graph node id" in k["args"]]
    eager = [k for k in kernels if "graph node id" not in k["args"] and "External id" in k["args"]]
    unmarked = [k for k in kernels if "External id" not in k["args"]]
    spans = [e for e in events if e.get("cat") == "gpu_user_annotation"]
    assert graphed and eager and unmarked and spans, "the trace lacks a case the test needs"
    assert passes(events), "the trace as kineto wrote it fails"

    def planted(what, mutate, check=passes):
        evs = copy.deepcopy(events)
        mutate(evs)
        caught = not check(evs)
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
    if report_bin:
        assert report_passes(events), "kineto-rocm report on the trace as kineto wrote it fails"
        # CUPTI's kernel launched outside a graph, as a CUDA PyTorch writes
        # it next to ours: "graph id" 0 is no graph, so no node.
        cupti = copy.deepcopy(events)
        cupti.append({"ph": "X", "cat": "kernel", "name": "vectorized_elementwise_kernel",
                      "pid": 0, "tid": 7, "ts": graphed[0]["ts"], "dur": 1.5,
                      "args": {"device": 0, "stream": 7, "correlation": 900001,
                               "graph id": 0, "graph node id": 0}})
        assert report_passes(cupti), "a CUPTI kernel outside a graph taken for a node"

        def drop(k):
            def mutate(evs):
                del evs[index_of(k)]
            return mutate

        def slower(node_id, us):
            def mutate(evs):
                for e in evs:
                    if e.get("cat") == "kernel" and e["args"].get("graph node id") == node_id:
                        e["dur"] += us
            return mutate

        results += [
            planted("report: a replay of a node lost", drop(graphed[0]), report_passes),
            planted("report: a node's kernel 2 us slower in every replay",
                    slower(graphed[0]["args"]["graph node id"], 2.0), report_passes),
        ]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
