#!/usr/bin/env bash
# The end-to-end checks that need real PyTorch 2.11 (any build; the CUDA one
# on an H200 is what this project has), run on a machine that has it, from
# libraries built on this one:
#
#   scripts/gpu-machine-check.sh --stage          # here: copies the built libraries to build/device/lib (stripped)
#   scripts/gpu-machine-check.sh OUT_DIR          # there: runs the checks, one log per check in OUT_DIR
#
# The checks (scripts/torch_profiler_check.py, each in its own process):
#   default    the 32x200 marked graph, registered plainly: CUPTI collects
#              next to kineto-rocm and the sole-collector check reports it
#   exclusive  the same, registered with kineto_rocm_register_exclusive():
#              no built-in GPU event, graph fields and truth-checked links
#   concurrent-exclusive  tests/workloads/concurrent-8threads-marked.json:
#              8 threads, each replaying its graph inside its own
#              record_function, checked kernel by kernel against the truth
#   timeline-exclusive, timeline-default  tests/workloads/timeline.json with
#              enable_cuda_sync_events: memsets, syncs, events, host
#              functions, roctx, peer copies, names, overhead vs the truth
#   graph-events-exclusive  tests/workloads/graph-events.json: graph
#              event-record nodes as cuda_events per replay, waits on them
#   unaligned-fills-exclusive  tests/workloads/unaligned-fills.json: each
#              fill part of an unaligned memset a gpu_memset of its bytes
#   metrics-exclusive  counters asked for through PyTorch's experimental
#              config (profiler_metrics): each kernel a cuda_profiler_range
#              with its dispatch's true SQ_WAVES and GRBM_COUNT
# Each also runs `kineto-rocm report` on the trace PyTorch exported and
# checks its per-node counts and means against the truth (--report-bin).
# Then the README's concurrency table (scripts/concurrency-table.sh) on that
# machine's cores, seeds 1 and 2.
# Each log starts with the commit and the exact command.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--stage" ]; then
  mkdir -p build/device/lib
  for lib in libkineto_rocm.so libkineto_rocm_kineto.so librocprofiler_sim.so; do
    strip --strip-debug -o "build/device/lib/$lib" "build/ci/lib/$lib"
  done
  # The CLI with the libraries it loads from beside it, for the table.
  mkdir -p build/device/bin
  for f in kineto-rocm libkineto_rocm.so librocprofiler_sim.so; do
    strip --strip-debug -o "build/device/bin/$f" "target/release/$f"
  done
  git rev-parse HEAD >build/device/COMMIT
  ls -la build/device/lib
  exit 0
fi
out=${1:?usage: gpu-machine-check.sh OUT_DIR | --stage}
mkdir -p "$out"
py=python3
[ -x /opt/torch/.venv/bin/python ] && py=/opt/torch/.venv/bin/python
torch_lib=$("$py" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH="$PWD/build/device/lib:$torch_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
commit=$(cat build/device/COMMIT 2>/dev/null || git rev-parse HEAD 2>/dev/null || echo unknown)
status=0
run() { # name args...
  local name=$1
  shift
  local cmd=("$py" scripts/torch_profiler_check.py --build build/device --trace "/tmp/$name.json"
    --report-bin build/device/bin/kineto-rocm "$@")
  {
    echo "commit: $commit"
    echo "machine: $(nvidia-smi -L 2>/dev/null | head -1), $(nproc) cores"
    echo "command: ${cmd[*]}"
    echo
    "${cmd[@]}" 2>&1 || echo "EXIT $?"
  } >"$out/$name.log" 2>&1
  grep -q '^RESULT: PASS' "$out/$name.log" || status=1
  echo "$name: $(grep '^RESULT' "$out/$name.log" || echo 'no result')"
}
run torch-check-default --mode default
run torch-check-exclusive --mode exclusive
run torch-check-concurrent-exclusive --mode exclusive --workload tests/workloads/concurrent-8threads-marked.json
run torch-check-timeline-exclusive --mode exclusive --timeline
run torch-check-timeline-default --mode default --timeline
run torch-check-graph-events-exclusive --mode exclusive --timeline --workload tests/workloads/graph-events.json
run torch-check-unaligned-fills-exclusive --mode exclusive --timeline --workload tests/workloads/unaligned-fills.json
run torch-check-metrics-exclusive --mode exclusive --metrics SQ_WAVES,GRBM_COUNT
for seed in 1 2; do
  {
    echo "commit: $commit"
    echo "machine: $(nvidia-smi -L 2>/dev/null | head -1), $(nproc) cores"
    echo "command: scripts/concurrency-table.sh --seed $seed --bin build/device/bin/kineto-rocm"
    echo
    scripts/concurrency-table.sh --seed "$seed" --bin build/device/bin/kineto-rocm
  } >"$out/concurrency-table-seed$seed.log" 2>&1 || status=1
  echo "concurrency table, seed $seed: $(grep -c '^| [0-9]' "$out/concurrency-table-seed$seed.log") rows"
done
exit $status
