# Sourced by bench-cost.sh and bench-instructions.sh: builds examples/cost
# (and, with BASELINE=REV, commit REV's beside it), and scales the shipped
# 32x200 workload.
# Needs: $target (the cargo target dir). Sets: bin, and with BASELINE
# base_bin, base_src, base_rev. Defines: scale_workload.
# Two commands: with --example, cargo would build only the example and
# leave target/release/librocprofiler_sim.so (what the example loads) stale.
cargo build --release -q -p rocprofiler-sim
cargo build --release -q -p kineto-rocm --example cost
bin="$target/release/examples/cost"
base_bin=""
if [ -n "${BASELINE:-}" ]; then
  . scripts/baseline-source.sh
  (cd "$base_src" && export CARGO_TARGET_DIR="$(cd ../ && pwd)" &&
    cargo build --release -q -p rocprofiler-sim &&
    cargo build --release -q -p kineto-rocm --example cost)
  base_bin="$target/baseline/release/examples/cost"
  # Both trees' tools run on this tree's simulator, so the two sides see the
  # same SDK and runtime and differ only in the tool (host.rs
  # `locate_library` takes the newest copy beside the binary).
  for lib in "$target/baseline/release" "$target/baseline/release/deps"; do
    cp -f "$target/release/librocprofiler_sim.so" "$lib/librocprofiler_sim.so"
  done
fi

# scale_workload SHAPE DISPATCHES OUT: the 32x200 workload with about
# DISPATCHES dispatches, as `steps` (steps of 50 launches, each ending in
# hipStreamSynchronize), `launches` (all back to back) or `eager` (the
# graph's kernels launched one hipLaunchKernel each, in node order, in the
# same steps: a call per dispatch, as an eager training loop makes).
scale_workload() {
  python3 - tests/workloads/graph-32x200.json "$3" "$1" "$2" <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))
ops = w["threads"][0]["ops"]
at = next(i for i, op in enumerate(ops) if "launch" in op)
launch = ops[at]["launch"]
launches = int(sys.argv[4]) // len(w["graphs"][0]["nodes"])
if sys.argv[3] == "launches":
    ops[at] = {"launch": dict(launch, times=launches)}
elif sys.argv[3] == "steps":
    step = [{"launch": dict(launch, times=50)}, {"synchronize_stream": {"stream": launch["stream"]}}]
    ops[at:at + 1] = step * (launches // 50)
elif sys.argv[3] == "eager":
    kernels = [{"kernel": {"name": node["kernel"], "stream": launch["stream"]}}
               for node in w["graphs"][0]["nodes"]]
    step = kernels * 50 + [{"synchronize_stream": {"stream": launch["stream"]}}]
    ops[at:at + 1] = step * (launches // 50)
else:
    sys.exit(f"SHAPE={sys.argv[3]!r}: expected steps, launches or eager")
json.dump(w, open(sys.argv[2], "w"))
PY
}
