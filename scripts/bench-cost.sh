#!/usr/bin/env bash
# What the tool costs a process per dispatch, side by side in one run:
#   no tool / tool with graph attribution off / tool with attribution on,
# on the shipped 32x200 graph workload scaled to 1M dispatches per window
# (virtual time, no jitter). SHAPE says how it is scaled:
#   steps (default)  625 steps of 50 launches, each step ending in
#                    hipStreamSynchronize, as a training loop's do: every
#                    record gets its graph keys, so "on" is the cost of
#                    attributing;
#   launches         31,250 launches back to back: the queue backs up, and
#                    rules::backlog withholds every record (as it must),
#                    so "on" is the cost of withholding;
#   eager            the graph's kernels launched one hipLaunchKernel
#                    each, in the same 625 steps: a call per dispatch.
# Each mode runs examples/cost.rs, which links
# the tool in and counts its own heap with a counting allocator (the
# simulator's allocations are not counted); the tool modes write each
# window's JSON trace as it closes.
# The machine is shared, so each mode runs REPS times (default 3): the run
# with the least CPU counts, and beside it the median of each round's own
# difference (a round runs the modes back to back).
#   scripts/bench-cost.sh [WINDOWS [REPS]]   (WINDOWS default 1; 10 shows
#                         whether CPU and the tool's heap stay flat per window)
#   BASELINE=REV scripts/bench-cost.sh ...  also builds commit REV (from git
#                         archive, in target/baseline) and runs its two tool
#                         modes in the same rounds, so before and after are
#                         measured side by side on this shared machine (both
#                         on this tree's simulator).
#   SHAPE=launches scripts/bench-cost.sh ...  the other scaling (above).
#   TRACE_DIR=DIR scripts/bench-cost.sh ...  where the traces are written
#                         (each deleted once written). Default: /dev/shm
#                         when it is a writable tmpfs, as bench-writers.sh
#                         writes, else the run's temporary directory. On
#                         this project's VMs a page written to the ext4
#                         disk cost from 1 to 11 us depending on writeback
#                         (--kernel-costs), which moved "writing" by up to
#                         0.7 us a dispatch between runs of the same tree.
set -euo pipefail
cd "$(dirname "$0")/.."
windows="${1:-1}"
reps="${2:-3}"
target="${CARGO_TARGET_DIR:-target}"
. scripts/cost-setup.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
traces="${TRACE_DIR:-}"
if [ -z "$traces" ]; then
  traces="$work"
  if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] && [ -w /dev/shm ]; then
    traces=$(mktemp -d /dev/shm/bench-cost.XXXXXX)
    trap 'rm -rf "$work" "$traces"' EXIT
  fi
fi
echo "traces written to $traces" >&2
shape="${SHAPE:-steps}"
scale_workload "$shape" 1000000 "$work/graph-32x1m.json"
for rep in $(seq "$reps"); do
  "$bin" --kernel-costs "$traces" >"$work/kernel.$rep.json"
  echo "run $rep of $reps: no tool, tool with graph attribution off, on ..." >&2
  "$bin" "$work/graph-32x1m.json" none "$windows" >"$work/none.$rep.json"
  KINETO_ROCM_DISABLE_GRAPH_ATTRIBUTION=1 \
    "$bin" "$work/graph-32x1m.json" tool "$windows" "$traces" >"$work/off.$rep.json"
  "$bin" "$work/graph-32x1m.json" tool "$windows" "$traces" >"$work/on.$rep.json"
  if [ -n "$base_bin" ]; then
    echo "run $rep of $reps: baseline $base_rev, attribution off, on ..." >&2
    KINETO_ROCM_DISABLE_GRAPH_ATTRIBUTION=1 \
      "$base_bin" "$work/graph-32x1m.json" tool "$windows" "$traces" >"$work/base-off.$rep.json"
    "$base_bin" "$work/graph-32x1m.json" tool "$windows" "$traces" >"$work/base-on.$rep.json"
  fi
done
echo "commit: $(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ' (with local changes)')"
if [ -n "$base_bin" ]; then
  python3 - "$work" "$base_rev" <<'PY'
import json, sys, glob
cpu = lambda r: r["user_s"] + r["sys_s"]
least = lambda mode: min((json.load(open(f)) for f in glob.glob(f"{sys.argv[1]}/{mode}.*.json")), key=cpu)
none, n = least("none"), least("on")["dispatches"]
f = lambda r, k: sum(w[k] for w in r["windows"]) / n * 1e6
for label, prefix in ((f"baseline {sys.argv[2]}", "base-"), ("this tree", "")):
    off, on = least(prefix + "off"), least(prefix + "on")
    assert off["dispatches"] == on["dispatches"] == n, "every run sees every dispatch"
    print(f"{label}: tool with attribution off +{(cpu(off) - cpu(none)) / n * 1e6:.2f} us, "
          f"on +{(cpu(on) - cpu(none)) / n * 1e6:.2f} us per dispatch; finishing "
          f"{f(off, 'finish_s'):.2f} / {f(on, 'finish_s'):.2f} us, writing {f(off, 'write_s'):.2f} / {f(on, 'write_s'):.2f} us (off / on)"
          + "".join(f"; page faults finishing and writing, {m}: {sum(w['faults'] for w in r['windows'])}"
                    for m, r in (("off", off), ("on", on)) if "faults" in r["windows"][0]))
PY
fi
python3 - "$work" "$shape" ${base_bin:+"$base_rev"} <<'PY'
import json, sys
import glob
cpu = lambda r: r["user_s"] + r["sys_s"]
def least(mode):
    runs = [json.load(open(f)) for f in glob.glob(f"{sys.argv[1]}/{mode}.*.json")]
    return min(runs, key=cpu)
none, off, on = least("none"), least("off"), least("on")
n = on["dispatches"]
assert n == off["dispatches"] and n > 0, "both tool runs see every dispatch"
shape = {"steps": "625 steps of 50 launches, each ending in hipStreamSynchronize",
         "launches": "31,250 launches back to back",
         "eager": "625 steps of 50 x 32 hipLaunchKernel calls, each step ending in hipStreamSynchronize"}[sys.argv[2]]
print(f"{n} dispatches in {len(on['windows'])} window(s), 32x200 scaled to 1M per window as {shape}; "
      f"least CPU of {len(glob.glob(sys.argv[1] + '/on.*.json'))} runs per mode")
none_to_give = " (eager work: no record has a graph key to give)" if sys.argv[2] == "eager" else \
    " (every one withheld: what \"on\" costs here is withholding)"
print(f"graph keys given with attribution on: {on['attributed']} of {n} records"
      + ("" if on["attributed"] else none_to_give))
print(f"CPU per dispatch, whole process: no tool {cpu(none) / n * 1e6:.2f} us (the simulator), "
      f"tool with attribution off +{(cpu(off) - cpu(none)) / n * 1e6:.2f} us, "
      f"on +{(cpu(on) - cpu(none)) / n * 1e6:.2f} us (goal: at most +1.00)")
# The least CPU of each mode leans on the one quietest no-tool run. Each
# round runs every mode back to back, so a round's own difference shares
# that round's state of the machine: their median is the steadier figure.
import statistics
reps = sorted(int(f.rsplit(".", 2)[-2]) for f in glob.glob(f"{sys.argv[1]}/none.*.json"))
run = lambda mode, rep: json.load(open(f"{sys.argv[1]}/{mode}.{rep}.json"))
paired = lambda mode: statistics.median(cpu(run(mode, r)) - cpu(run("none", r)) for r in reps) / n * 1e6
medians = lambda prefix: f"off +{paired(prefix + 'off'):.2f} us, on +{paired(prefix + 'on'):.2f} us"
baseline = (f"; baseline {sys.argv[3]} {medians('base-')}" if len(sys.argv) > 3 else "")
print(f"  the median of the {len(reps)} rounds' own differences (each round runs the modes back to back): "
      f"{medians('')}{baseline}")
# Each round's own differences beside that round's probe of a first touch
# in a huge page: on this project's VMs some rounds touch fresh memory at
# tens of times the usual cost, and this shows which.
own = lambda mode, rep: (cpu(run(mode, rep)) - cpu(run("none", rep))) / n * 1e6
probe = lambda rep: json.load(open(f"{sys.argv[1]}/kernel.{rep}.json"))["first_touch_huge_us_per_page"]
print("  per round, off / on, and the probe's first touch in a huge page: " + "; ".join(
    f"{rep}: +{own('off', rep):.2f} / +{own('on', rep):.2f} us, {probe(rep):.2f} us a 4 KiB page" for rep in reps))
for name, r in (("off", off), ("on", on)):
    finish = sum(w["finish_s"] for w in r["windows"]) / n * 1e6
    write = sum(w["write_s"] for w in r["windows"]) / n * 1e6
    faults = sum(w["faults"] for w in r["windows"])
    print(f"  attribution {name}: of which finishing windows {finish:.2f} us, writing traces {write:.2f} us per dispatch "
          f"({faults} minor page faults on that thread)")
print(f"tool heap per dispatch with the window open: attribution off {off['held_bytes_per_dispatch']} B, "
      f"on {on['held_bytes_per_dispatch']} B (goal: at most 100)")
print(f"tool heap peak (finishing and writing a window): off {off['tool_peak_bytes'] / 2**20:.0f} MiB, "
      f"on {on['tool_peak_bytes'] / 2**20:.0f} MiB; peak RSS no tool {none['maxrss_kib'] // 1024} MiB, "
      f"off {off['maxrss_kib'] // 1024} MiB, on {on['maxrss_kib'] // 1024} MiB")
# What the kernel charges for the window's size on this machine: the
# least of each rep's measure (examples/cost.rs --kernel-costs).
kernel = [json.load(open(f)) for f in glob.glob(f"{sys.argv[1]}/kernel.*.json")]
touch = min(k["first_touch_us_per_page"] for k in kernel)
touch_huge = min(k["first_touch_huge_us_per_page"] for k in kernel)
resident = min(k["resident_us_per_page"] for k in kernel)
page_write = min(k["file_write_us_per_page"] for k in kernel)
print(f"this machine's kernel, per 4 KiB page: a first touch {touch:.2f} us, in a huge page {touch_huge:.2f} us "
      f"(writing it once resident "
      f"{resident:.2f} us), writing it into a file where the traces go {page_write:.2f} us")
for name, r in (("off", off), ("on", on)):
    faults = (r["minflt"] - none["minflt"]) / n
    pages = r["trace_bytes"] / 4096 / n
    user = (r["user_s"] - none["user_s"]) / n * 1e6
    system = (r["sys_s"] - none["sys_s"]) / n * 1e6
    print(f"  attribution {name}: user +{user:.2f} us, system +{system:.2f} us per dispatch; "
          f"{faults:.3f} more minor page faults (one for each 2 MiB huge page, else for each 4 KiB) "
          f"and {pages:.3f} pages of trace per dispatch")
after = [w["heap_after"] / 2**20 for w in on["windows"]]
per_window = [w["cpu_s"] for w in on["windows"]]
print("attribution on, per window: tool heap after it (MiB) " + " ".join(f"{h:.1f}" for h in after)
      + "; process CPU (s) " + " ".join(f"{c:.2f}" for c in per_window))
PY
