#!/usr/bin/env bash
# The tool's own instructions per dispatch, under callgrind: figures that do
# not drift with the machine's load, beside bench-cost.sh's CPU times
# (which on a shared VM move by a third of a microsecond between runs).
# Runs examples/cost.rs (tool with graph attribution off, then on) on the
# shipped 32x200 workload scaled to 99,200 dispatches as bench-cost.sh
# scales it by default (62 steps of 50 launches, each ending in
# hipStreamSynchronize: every record gets its graph keys),
# counting only instructions executed inside the tool's entry points and
# what they call (--toggle-collect on the SDK callbacks it registers and the
# session calls examples/cost.rs makes; they never call one another), not
# the simulator's own work. Prints, per dispatch, the total
# and its parts: writing the JSON trace (output::write_trace_file),
# finishing the window (session::take_finished_windows) and the rest
# (collection: the SDK callbacks).
#   scripts/bench-instructions.sh
#   SHAPE=eager scripts/bench-instructions.sh   the same kernels launched
#       eagerly, a hipLaunchKernel per dispatch (scripts/cost-setup.sh);
#       SHAPE=launches likewise
#   BASELINE=REV scripts/bench-instructions.sh   also builds commit REV (as
#       bench-cost.sh does, on this tree's simulator) and prints its figures
#       first.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || {
  echo "bench-instructions.sh: valgrind is missing (apt-get install valgrind)" >&2
  exit 1
}
target="${CARGO_TARGET_DIR:-target}"
. scripts/cost-setup.sh
bins=("this tree=$bin")
if [ -n "$base_bin" ]; then bins=("baseline $base_rev=$base_bin" "${bins[@]}"); fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
scale_workload "${SHAPE:-steps}" 99200 "$work/w.json"
echo "commit: $(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ' (with local changes)')"
# The tool's entry points: the callbacks it gives the SDK (src/tool/sdk) and
# the session calls of examples/cost.rs.
toggles=()
for f in tool::sdk::callbacks::on_callback tool::sdk::callbacks::on_roctx_window_range \
  tool::sdk::callbacks::on_buffer tool::sdk::counting::on_dispatch tool::sdk::counting::on_record \
  tool::sdk::counting::collect_ids tool::sdk::thread_trace::on_dispatch \
  tool::sdk::thread_trace::on_shader_data tool::sdk::external_correlation::on_request \
  tool::sdk::kernel_replay::on_replay tool::sdk::kernel_replay::pass_count \
  tool::sdk::agents::collect_agents tool::sdk::configure::rocprofiler_configure \
  tool::sdk::configure::tool_initialize tool::sdk::configure::tool_finalize \
  session::start_collection session::stop_collection session::take_finished_windows \
  output::write_trace_file; do
  toggles+=("--toggle-collect=kineto_rocm::$f")
done
run() { # LABEL BIN MODE: one callgrind run, its summary line in $work
  local label=$1 bin=$2 mode=$3 out="$work/$(echo "$1.$3" | tr -c 'a-zA-Z0-9.\n' _)"
  local env=()
  [ "$mode" = off ] && env=(KINETO_ROCM_DISABLE_GRAPH_ATTRIBUTION=1)
  env "${env[@]}" valgrind --tool=callgrind --collect-atstart=no "${toggles[@]}" \
    --callgrind-out-file="$out.cg" "$bin" "$work/w.json" tool 1 "$work" >"$out.json" 2>/dev/null
  callgrind_annotate --inclusive=yes "$out.cg" 2>/dev/null >"$out.txt"
  python3 - "$out" "$label" "$mode" >"$out.line" <<'PY'
import json, re, sys
out, label, mode = sys.argv[1:]
run = json.load(open(out + ".json"))
text = open(out + ".txt").read()
count = lambda s: int(s.replace(",", ""))
total = count(re.search(r"^\s*([\d,]+) .*PROGRAM TOTALS", text, re.M).group(1))
def part(function):
    hits = [count(m.group(1)) for m in re.finditer(r"^\s*([\d,]+) \([ \d.]+%\)  \S*:" + re.escape(function) + r" \[", text, re.M)]
    return max(hits, default=0)
n = run["dispatches"]
write, finish = part("kineto_rocm::output::write_trace_file"), part("kineto_rocm::session::take_finished_windows")
keys = f" ({run['attributed']} of {n} records with graph keys)" if "attributed" in run else ""
print(f"{label}, attribution {mode}: {total / n:,.0f} instructions a dispatch: writing {write / n:,.0f}, "
      f"finishing {finish / n:,.0f}, collection {(total - write - finish) / n:,.0f}{keys}")
PY
}
for entry in "${bins[@]}"; do
  echo "callgrind: ${entry%%=*}, attribution off and on ..." >&2
  run "${entry%%=*}" "${entry#*=}" off &
  run "${entry%%=*}" "${entry#*=}" on &
  wait
done
for entry in "${bins[@]}"; do
  for mode in off on; do
    cat "$work/$(echo "${entry%%=*}.$mode" | tr -c 'a-zA-Z0-9.\n' _).line"
  done
done
