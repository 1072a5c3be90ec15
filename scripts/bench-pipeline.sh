#!/usr/bin/env bash
# Window finishing against one plain copy of the same SDK buffer bytes
# (benches/pipeline.rs: 100k kernel records), as ratios from one run, with
# the stages alone (decode; decode and stage; decode, stage and finalise;
# attribution of a finalised window) and the floor of writing a kernel
# frame's bytes.
#   scripts/bench-pipeline.sh [ROUNDS]   (default 3)
#   BASELINE=REV scripts/bench-pipeline.sh ...  also builds commit REV (git
#       archive into target/baseline, as scripts/bench-cost.sh does) and
#       runs its bench in the same rounds, alternating, so before and after
#       share the machine's state; each figure is the best round's.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-3}"
target="${CARGO_TARGET_DIR:-target}"
bench_bin() { # DIR: the pipeline bench executable cargo builds there
  (cd "$1" && cargo bench -q --bench pipeline --no-run --message-format=json 2>/dev/null) |
    python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "pipeline" and m.get("executable"):
        print(m["executable"])'
}
bins=("this tree=$(bench_bin .)")
if [ -n "${BASELINE:-}" ]; then
  . scripts/baseline-source.sh
  base_target="$(cd "$target" && pwd)/baseline"
  bins=("baseline $(git rev-parse --short "$BASELINE")=$(CARGO_TARGET_DIR="$base_target" bench_bin "$base_src")" "${bins[@]}")
fi
echo "commit: $(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ' (with local changes)')"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for round in $(seq "$rounds"); do
  for entry in "${bins[@]}"; do
    echo "round $round: ${entry%%=*}" >&2
    "${entry#*=}" --bench --warm-up-time 1 --measurement-time 3 --noplot --discard-baseline 2>/dev/null |
      awk -v who="${entry%%=*}" '/^100k_kernel_records\// {name = $1}
        /time:/ {sub(/.*\[/, ""); if ($2 !~ /%/) print who "\t" name "\t" $3 " " $4}' >>"$out"
  done
done
python3 - "$out" <<'PY'
import sys, collections
unit = {"ns": 1e-6, "us": 1e-3, "µs": 1e-3, "ms": 1.0, "s": 1e3}
best = collections.defaultdict(lambda: float("inf"))
for line in open(sys.argv[1]):
    who, name, t = line.rstrip("\n").split("\t")
    value, u = t.split()
    best[who, name.split("/")[1]] = min(best[who, name.split("/")[1]], float(value) * unit[u])
# Every binary's copy is the same code: the fastest of them is the run's
# copy, so that one binary's slow copy cannot flatter its ratios.
copy = min(t for (w, n), t in best.items() if n == "copy_buffer_once")
for who in dict.fromkeys(w for w, _ in best):
    parts = ", ".join(f"{n} {best[who, n]:.2f} ms ({best[who, n] / copy:.1f} copies)"
                      for n in ("decode", "decode_write_frame_bytes", "decode_window",
                                "decode_window_finalise", "attribute", "decode_window_finalise_attribute")
                      if (who, n) in best)
    whole = best[who, "decode_window_finalise_attribute"]
    print(f"{who}: copy {best[who, 'copy_buffer_once']:.2f} ms, {parts}; the whole pipeline runs "
          f"at 1/{whole / copy:.1f} "
          f"of a copy's speed (goal: at least 1/4)")
print(f"(a copy is the run's fastest, {copy:.2f} ms, whichever binary timed it)")
PY
