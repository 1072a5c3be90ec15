#!/usr/bin/env bash
# Runs the 6400-dispatch graph workload (the whole path: simulator, tool
# library, windows, verification, trace writing, teardown) under valgrind's
# leak checker and fails on any definitely or indirectly lost block.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "leak-check.sh: valgrind is not installed" >&2; exit 1; }
cargo build --release -q -p kineto-rocm-cli -p kineto-rocm -p rocprofiler-sim
bin="${CARGO_TARGET_DIR:-target}/release/kineto-rocm"
out=$(mktemp --suffix=.json)
log=$(mktemp)
trap 'rm -f "$out" "$log"' EXIT
valgrind --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect \
  --error-exitcode=3 --log-file="$log" \
  "$bin" run --workload tests/workloads/graph-32x200.json --out "$out" >/dev/null 2>&1 || status=$?
grep -E "definitely lost|indirectly lost|still reachable|ERROR SUMMARY" "$log" | sed 's/^==[0-9]*== *//'
exit "${status:-0}"
