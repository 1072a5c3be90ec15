#!/usr/bin/env bash
# The README's concurrency table: the seed's concurrency workload (one exec
# per thread, 100 replays, 4 HW queues) for 1-16 threads, with equal graph
# sizes (tests/workloads/concurrent-Nthreads.json), mixed ones
# (concurrent-mixed-Nthreads.json) and mixed ones built from the same kernels
# on every thread (concurrent-shared-Nthreads.json; all three made by
# scripts/concurrency-workloads.py), under both submission models, through
# `kineto-rocm validate` with the evidence method and with the seed's method
# (launch-stack: its per-thread launch stack taken as it is) beside it.
#
# "wrong" counts every claim validate found false: aliased keys, wrong keys,
# devices, correlations, External ids, lanes, flow arrows and runtime events.
# crates/cli/tests/readme_figures.rs re-runs each row and compares it with
# the README.
#
#   scripts/concurrency-table.sh [--seed N] [--bin PATH]
#     --bin: a kineto-rocm binary already built, with its libraries beside
#     it (scripts/gpu-machine-check.sh stages one); default: build one.
set -euo pipefail
cd "$(dirname "$0")/.."
seed=1
bin=
while [ $# -gt 0 ]; do
  case $1 in
    --seed) seed=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    *) echo "concurrency-table.sh: unknown argument $1 (--seed N, --bin PATH)" >&2; exit 2 ;;
  esac
done
if [ -z "$bin" ]; then
  cargo build --release -q --workspace
  bin=target/release/kineto-rocm
fi

row() { # file model method -> "graph attributed withheld wrong"
  "$bin" validate --workload "$1" --submission-model "$2" --attribution-method "$3" \
      --seed "$seed" --json 2>/dev/null | python3 -c '
import json, sys
t = sys.stdin.read()
v = json.loads(t[t.index("{"):])
wrong = v["aliased_keys"] + sum(v[k] for k in v if k.startswith("wrong_"))
print(v["carrying_both_fields"] + v["withheld_records"], v["carrying_both_fields"], v["withheld_records"], wrong)'
}

echo "| threads | graph sizes | graph kernels | rocm | ideal | launch-stack, rocm | launch-stack, ideal |"
echo "|---|---|---|---|---|---|---|"
# A cell with withheld records is marked ~: which packets meet depends on
# scheduling, so its split moves from run to run (README.md says so).
cell() { # attributed withheld wrong
  if [ "$2" -gt 0 ]; then echo "~$1 / ~$2 / $3"; else echo "$1 / $2 / $3"; fi
}
# The launch-stack method's wrong claims depend on whether threads overlap,
# which scheduling decides: a nonzero count is marked ~.
varies() { if [ "$1" -gt 0 ]; then echo "~$1"; else echo "$1"; fi; }
for n in 1 2 3 4 8 16; do
  for sizes in equal mixed shared; do
    f=tests/workloads/concurrent-${n}threads.json
    [ "$sizes" = equal ] || f=tests/workloads/concurrent-${sizes}-${n}threads.json
    read -r graph ra rw rx < <(row "$f" rocm evidence)
    read -r _ ia iw ix < <(row "$f" ideal evidence)
    read -r _ sra _ srx < <(row "$f" rocm launch-stack)
    read -r _ sia _ six < <(row "$f" ideal launch-stack)
    echo "| $n | $sizes | $graph | $(cell "$ra" "$rw" "$rx") | $(cell "$ia" "$iw" "$ix") | $sra / $(varies "$srx") | $sia / $(varies "$six") |"
  done
done
echo
echo "Each cell: $bin validate --workload tests/workloads/concurrent[-mixed|-shared]-Nthreads.json --submission-model rocm|ideal --attribution-method evidence|launch-stack --seed $seed --json"
