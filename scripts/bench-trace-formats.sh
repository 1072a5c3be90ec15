#!/usr/bin/env bash
# Trace size and write time, kineto's JSON against Perfetto's pftrace
# (gzip level 1, the default, and 9), on the 1M-dispatch workload (a
# 32-node graph replayed 31250 times, virtual time): one run writes the same
# windows to both files, and the tool library logs each file's write time
# and size. Prints the commit and the figures side by side with ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p kineto-rocm-cli -p kineto-rocm -p rocprofiler-sim
bin="${CARGO_TARGET_DIR:-target}/release/kineto-rocm"
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
for level in 1 9; do
  echo "1M dispatches: writing JSON and pftrace (gzip $level) ..." >&2
  KINETO_ROCM_LOG=info "$bin" run --workload "$work/graph-1m.json" --virtual-time \
      --out "$work/trace.$level.json" --out "$work/trace.$level.pftrace" --gzip-level "$level" \
      2>"$work/log.$level" >/dev/null
done
echo "commit: $(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ' (with local changes)')"
python3 - "$work" <<'PY'
import re, sys
work = sys.argv[1]
rows = {}
for level in (1, 9):
    for line in open(f"{work}/log.{level}"):
        m = re.search(r"wrote \S+\.(json|pftrace) \(\S+\): (\d+) bytes, (\d+) kernels, in ([\d.]+) s", line)
        if m:
            rows[(m[1], level)] = (int(m[2]), int(m[3]), float(m[4]))
if len(rows) != 4:
    sys.exit(f"expected 4 write lines in the logs, found {len(rows)}: {sorted(rows)}")
json_bytes, kernels, json_s = rows[("json", 1)]
print(f"{kernels} kernel events, one window, the same windows written to each file")
print(f"{'format':<18} {'size MiB':>10} {'write s':>9} {'size vs JSON':>13} {'time vs JSON':>13}")
print(f"{'JSON':<18} {json_bytes / 2**20:>10.1f} {json_s:>9.2f} {'1':>13} {'1':>13}")
for level in (1, 9):
    size, _, secs = rows[("pftrace", level)]
    json_run = rows[("json", level)][2]
    print(f"{'pftrace gzip ' + str(level):<18} {size / 2**20:>10.1f} {secs:>9.2f} "
          f"{'1/%.0f' % (json_bytes / size):>13} {secs / json_run:>12.2f}x")
PY
