#!/usr/bin/env bash
# Peak memory of `kineto-rocm run` on the simulated runtime (virtual time):
#   1M dispatches in one trace window, then 10M dispatches as 10 windows of
#   1M (a profiler schedule), each written as soon as it stops.
# The claim checked: memory is bounded by the records one window keeps, not
# by how many launches the session made. Prints the commit, peak RSS for
# both and the ratio, and exits 1 if ten windows take more than 1.05 times
# the memory of one (issue 14's goal; a leak per window grows far past
# it). Traces go to a temporary directory, removed after.
# BASELINE=REV scripts/bench-memory.sh also builds commit REV (git archive
# into target/baseline, as scripts/bench-cost.sh does) and measures it the
# same way first, for before/after figures from one session.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
cargo build --release -q -p kineto-rocm-cli -p kineto-rocm -p rocprofiler-sim
bin="$target/release/kineto-rocm"
if [ -n "${BASELINE:-}" ]; then
  . scripts/baseline-source.sh
  (cd "$base_src" && CARGO_TARGET_DIR="$(cd ../ && pwd)" \
    cargo build --release -q -p kineto-rocm-cli -p kineto-rocm -p rocprofiler-sim)
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work/graph-1m.json" <<'PY'
import json, sys
nodes = [{"kernel": f"big_k{i:02d}", **({"deps": [i - 1]} if i else {})} for i in range(32)]
json.dump({"sdk_version": "1.3.0", "devices": 1, "graphs": [{"name": "g", "nodes": nodes}],
           "threads": [{"name": "main", "ops": [{"create_stream": {"name": "s"}},
                                                {"instantiate": {"graph": "g", "as": "e"}},
                                                {"launch": {"exec": "e", "stream": "s", "times": 31250}},
                                                {"destroy": {"exec": "e"}}]}]}, open(sys.argv[1], "w"))
PY
peak() { /usr/bin/time -f "%M" "$@" 2>&1 >/dev/null | tail -1; }
measure() { # BINARY: sets one and ten
  echo "1M dispatches, one window ..." >&2
  one=$(peak "$1" run --workload "$work/graph-1m.json" --virtual-time --out "$work/one.json")
  rm -f "$work"/one*.json
  echo "10M dispatches, ten windows of 1M ..." >&2
  ten=$(peak "$1" run --workload "$work/graph-1m.json" --virtual-time --steps 10 \
        --profile-steps 0,1,2,3,4,5,6,7,8,9 --trace-per-window --out "$work/ten.json")
  rm -f "$work"/ten*.json
}
if [ -n "${BASELINE:-}" ]; then
  measure "$target/baseline/release/kineto-rocm"
  echo "baseline $base_rev: peak RSS $((one / 1024)) MiB in 1 window, $((ten / 1024)) MiB in 10 windows," \
    "ratio $(python3 -c "print(f'{$ten / $one:.2f}')")"
fi
measure "$bin"
echo "commit: $(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ' (with local changes)')"
echo "peak RSS, 1M dispatches in 1 window:   $((one / 1024)) MiB"
echo "peak RSS, 10M dispatches in 10 windows: $((ten / 1024)) MiB"
python3 - "$one" "$ten" <<'PY'
import sys
one, ten = map(int, sys.argv[1:])
print(f"ratio 10M/1M: {ten / one:.2f} (1.00 = nothing grows with the number of launches)")
sys.exit(0 if ten <= 1.05 * one else 1)
PY
