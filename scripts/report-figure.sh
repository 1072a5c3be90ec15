#!/usr/bin/env bash
# The report's figure in docs/: two "ranks" of the same job, run on the
# simulated runtime, where rank 1's second node (report_b) takes 24 us
# instead of 16 us; `kineto-rocm report` prints the table and draws the
# plots (docs/report-two-ranks.svg). Prints the commit and the table.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p kineto-rocm-cli -p kineto-rocm -p rocprofiler-sim
bin="${CARGO_TARGET_DIR:-target}/release/kineto-rocm"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - tests/workloads/report-durations.json "$work/rank1.json" <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))
w["durations"]["kernel_ns"]["report_b"] = 24000
json.dump(w, open(sys.argv[2], "w"))
PY
mkdir "$work/traces"
"$bin" run --virtual-time --workload tests/workloads/report-durations.json \
    --out "$work/traces/rank0.json" >/dev/null 2>&1
"$bin" run --virtual-time --workload "$work/rank1.json" --out "$work/traces/rank1.json" >/dev/null 2>&1
echo "commit: $(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ' (with local changes)')"
(cd "$work/traces" && "$OLDPWD/$bin" report rank0.json rank1.json --node 1:1 \
    --svg "$OLDPWD/docs/report-two-ranks.svg")
