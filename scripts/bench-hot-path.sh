#!/usr/bin/env bash
# The attribution hot path (graph launch ENTER, one external-correlation
# answer per dispatch, EXIT), measured two ways:
#   1. criterion: ns per dispatch, attribution on and off side by side;
#   2. callgrind: instructions per dispatch, from the difference between
#      2000 and 1000 launches of a 32-node graph (setup cancels out).
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
echo "commit: $(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo " (with local changes)")"
cargo bench -q -p graph-attribution --bench hot_path -- --warm-up-time 1 --measurement-time 3 2>&1 \
  | grep -E "graph_launch|time:|thrpt:"
cargo build -q --release -p graph-attribution --example hot_path_loop
loop="$target/release/examples/hot_path_loop"
count() {
  local out; out=$(mktemp)
  valgrind --tool=callgrind --callgrind-out-file="$out" "$loop" "$1" 32 "$2" >/dev/null 2>&1
  callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'
  rm -f "$out"
}
for mode in on off; do
  small=$(count 1000 "$mode"); large=$(count 2000 "$mode")
  python3 -c "print(f'callgrind, attribution $mode: {($large - $small) / (1000 * 32):.1f} instructions per dispatch')"
done
