#!/usr/bin/env bash
# The README's concurrency table: the first round's workload (one exec per
# thread, 100 replays, 4 HW queues) for 1-16 threads, equal and mixed graph
# sizes, under both submission models, run through `kineto-rocm validate`
# with the evidence method, and the launch-stack method (the first round's
# per-thread stack, taken as it is) beside it. Prints a markdown table; every
# row's command is printed too. --seed seeds the simulator's jitter.
#
#   scripts/concurrency-table.sh [--seed N]
set -euo pipefail
cd "$(dirname "$0")/.."
seed=1
[ "${1:-}" = "--seed" ] && seed=$2
cargo build --release -q --workspace
bin=target/release/kineto-rocm

row() { # file model method
  "$bin" validate --workload "$1" --submission-model "$2" --attribution-method "$3" \
      --seed "$seed" --json 2>/dev/null | python3 -c '
import json, sys
t = sys.stdin.read()
v = json.loads(t[t.index("{"):])
wrong = sum(v[k] for k in v if k.startswith("wrong_")) + v["aliased_keys"]
graph = v["carrying_both_fields"] + v["withheld_records"]
print(graph, v["carrying_both_fields"], v["withheld_records"], wrong, v["aliased_keys"], v["linked_events"] + v["unlinked_events"] - v["unlinked_events"], v["unlinked_events"])'
}

echo "| threads | sizes | model | graph kernels | attributed | withheld | wrong (keys + links + lanes) | unlinked | launch-stack method: aliased keys |"
echo "|---|---|---|---|---|---|---|---|---|"
for n in 1 2 3 4 8 16; do
  for sizes in equal mixed; do
    f=tests/workloads/concurrent-${n}threads.json
    [ "$sizes" = mixed ] && f=tests/workloads/concurrent-mixed-${n}threads.json
    for model in rocm ideal; do
      read -r graph attributed withheld wrong _ _ unlinked < <(row "$f" "$model" evidence)
      read -r _ _ _ _ stack_aliased _ _ < <(row "$f" "$model" launch-stack)
      echo "| $n | $sizes | $model | $graph | $attributed | $withheld | $wrong | $unlinked | $stack_aliased |"
    done
  done
done
echo
echo "Each row: $bin validate --workload FILE --submission-model MODEL --attribution-method evidence|launch-stack --seed $seed --json"
