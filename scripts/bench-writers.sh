#!/usr/bin/env bash
# Trace writing, events per second: our JSON writer (src/output/kineto_json.rs)
# against kineto's ChromeTraceLogger (torch 2.11's libkineto, fed through the
# C++ face's conversion, cpp/src/ActivityConvert.cpp), on the same events in
# one run of one process (tests/ctest/bench_writers.cpp): the shipped 32x200
# graph workload scaled to 1M kernel dispatches (31250 launches of the
# 32-node graph), virtual time. The simulated HW queues are made deeper
# than the window (ROC_AQL_QUEUE_SIZE, which the simulated runtime and the
# tool both read), so the evidence rules can prove every key and every
# kernel carries its graph id, node id and correlation, as at the shipped
# 32x200 scale (with the default depth they withhold all 1M: "queue may
# have overflowed"). Only writing is timed, each writer REPS times
# (default 3); the best run counts. Prints the commit, the events, each
# writer's events/s and bytes, and the ratio.
#   scripts/bench-writers.sh [REPS]
# Needs what the ctest suite needs (cmake, g++, googletest, nlohmann-json;
# scripts/test-all.sh installs them). Builds in build/bench
# (KINETO_ROCM_BENCH_BUILD to change it); CMAKE_BUILD_PARALLEL_LEVEL and
# CARGO_BUILD_JOBS limit the build's jobs.
set -euo pipefail
cd "$(dirname "$0")/.."
reps="${1:-3}"
# The bench is built in the ctest tree (it reuses tests/ctest/harness.cpp).
for need in cmake g++ /usr/include/gtest/gtest.h /usr/include/nlohmann/json.hpp; do
  command -v "$need" >/dev/null || [ -f "$need" ] || {
    echo "bench-writers.sh: $need is missing (scripts/test-all.sh installs it)" >&2
    exit 1
  }
done
sdk=$(scripts/fetch-kineto.sh)
build="${KINETO_ROCM_BENCH_BUILD:-build/bench}"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DKINETO_SDK_DIR="$sdk" >/dev/null
cmake --build "$build" --target kineto_rocm_bench_writers >/dev/null
# The traces go to memory (tmpfs), so that the disk's writeback, not the
# writers, does not set the pace; KINETO_ROCM_BENCH_DIR to change it.
work=$(mktemp -d -p "${KINETO_ROCM_BENCH_DIR:-/dev/shm}")
trap 'rm -rf "$work"' EXIT
python3 - tests/workloads/graph-32x200.json "$work/graph-32x1m.json" <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))
for op in w["threads"][0]["ops"]:
    if "launch" in op:
        op["launch"]["times"] = 1_000_000 // len(w["graphs"][0]["nodes"])
json.dump(w, open(sys.argv[2], "w"))
PY
ROC_AQL_QUEUE_SIZE=4194304 KINETO_ROCM_LOG=info KINETO_LOG_LEVEL=2 \
  "$build/tests/ctest/kineto_rocm_bench_writers" "$work/graph-32x1m.json" "$work" "$reps" \
  >"$work/result.json"
echo "commit: $(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ' (with local changes)')"
python3 - "$work/result.json" <<'PY'
import json, sys
result = json.load(open(sys.argv[1]))

def count(path):
    data = open(path, "rb").read()
    return {
        "kernel": data.count(b'"cat": "kernel"'),
        "cuda_runtime": data.count(b'"cat": "cuda_runtime"'),
        "flow start": data.count(b'"ph": "s"'),
        "flow end": data.count(b'"ph": "f"'),
        "graph node id": data.count(b'"graph node id": '),
        "json events": data.count(b'"ph": '),
    }

ours, kineto = result["ours"], result["kineto"]
for writer in (ours, kineto):
    writer["count"] = count(writer["path"])
    writer["best"] = min(writer["seconds"])
same = ("kernel", "cuda_runtime", "graph node id")
for key in same:
    if ours["count"][key] != kineto["count"][key]:
        sys.exit(f"the writers were not given the same events: {key} "
                 f"{ours['count'][key]} (ours) against {kineto['count'][key]} (kineto)")
events = ours["count"]["kernel"] + ours["count"]["cuda_runtime"]
if ours["count"]["graph node id"] != ours["count"]["kernel"]:
    sys.exit(f"only {ours['count']['graph node id']} of {ours['count']['kernel']} kernels have graph ids")
print(f"{events} events: {ours['count']['kernel']} kernels (each with graph id, node id and "
      f"correlation) and {ours['count']['cuda_runtime']} HIP runtime calls, with their flow arrows; "
      f"best of {len(ours['seconds'])} writes each")
print(f"{'writer':<28} {'events/s':>12} {'best s':>8} {'runs s':>22} {'MiB':>7} {'JSON events':>12}")
for name, w in (("ours (kineto_json.rs)", ours), ("kineto ChromeTraceLogger", kineto)):
    runs = " ".join(f"{s:.3f}" for s in w["seconds"])
    print(f"{name:<28} {events / w['best']:>12,.0f} {w['best']:>8.3f} {runs:>22} "
          f"{w['bytes'] / 2**20:>7.1f} {w['count']['json events']:>12}")
print(f"bytes written: ours {ours['bytes']}, kineto {kineto['bytes']}")
print(f"ratio ours/kineto: {kineto['best'] / ours['best']:.2f}x events/s (goal: at least 2x)")
PY
