"""`kineto-rocm report` on a trace kineto's own ChromeTraceLogger wrote (the
writer PyTorch's profiler exports with), here the 32x200 graph's from the
GraphIdsOn32x200Replays case: every node of the workload's graph is in the
report, replayed as often as the workload launches it, with its kernel and
the duration the workload gives that kernel as mean, p50 and p99. The trace
is read plain and gzipped.

Usage: report_check.py KINETO_ROCM TRACE WORKLOAD
"""
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile


def report(binary, trace):
    out = subprocess.run([binary, "report", "--json", trace],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"kineto-rocm report {trace} failed: {out.stderr}")
    return json.loads(out.stdout)


def main():
    binary, trace, workload_path = sys.argv[1:4]
    with open(workload_path) as f:
        workload = json.load(f)
    durations = workload.get("durations", {})
    default_ns = durations.get("default_kernel_ns", 4000)
    kernel_ns = durations.get("kernel_ns", {})
    (graph,) = workload["graphs"]
    launches = sum(op["launch"].get("times", 1) for t in workload["threads"]
                   for op in t["ops"] if "launch" in op)
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        zipped = os.path.join(tmp, "trace.json.gz")
        with open(trace, "rb") as src, gzip.open(zipped, "wb") as dst:
            shutil.copyfileobj(src, dst)
        plain, from_gzip = report(binary, trace), report(binary, zipped)
    nodes = plain["nodes"]
    if [n["ranks"] for n in nodes] != [n["ranks"] for n in from_gzip["nodes"]]:
        failures.append("the gzipped trace reads differently")
    if len(nodes) != len(graph["nodes"]):
        failures.append(f"{len(nodes)} nodes in the report, {len(graph['nodes'])} in the graph")
    for node in nodes:
        index = node["node"]
        kernel = graph["nodes"][index]["kernel"]
        ns = kernel_ns.get(kernel, default_ns)
        stats = node["ranks"][0]
        got = (node["kernel"], stats["count"], stats["mean_ns"], stats["p50_ns"], stats["p99_ns"])
        want = (kernel, launches, float(ns), ns, ns)
        if got != want:
            failures.append(f"node {index}: report says {got}, the workload {want}")
    for f in failures:
        print("FAIL:", f)
    print(f"{len(nodes)} nodes x {launches} replays checked against {workload_path}: "
          f"{len(failures)} wrong")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
