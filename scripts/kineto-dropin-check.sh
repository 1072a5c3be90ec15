#!/usr/bin/env bash
# kineto-rocm as a drop-in for kineto's ROCm backend, checked against a
# kineto source tree:
#
#   scripts/kineto-dropin-check.sh KINETO_SRC
#
# 1. copies KINETO_SRC/libkineto and puts kineto-rocm's files in place of
#    kineto's (cpp/dropin/: RocprofActivityApi.h/.cpp, RocprofLogger.cpp,
#    RocprofActivity_inl.h); every other kineto file stays as it is;
# 2. builds kineto's ROCm profiler from that tree (tests/dropin), against the
#    simulator (librocprofiler_sim.so stands in for librocprofiler-sdk.so and
#    libamdhip64.so);
# 3. runs kineto's own RocmActivityProfilerTest, unmodified;
# 4. traces tests/workloads/graph-32x200.json and
#    tests/workloads/ctest/graph-32x200-marked.json through kineto's own
#    profiler and writer (tests/dropin/dropin_trace.cpp checks kernels, graph
#    fields, keys and links against the simulator's ground truth) and reads
#    kineto's own "CPU GPU out-of-order" count from its log (must be 0);
# 5. traces the marked workload as torch.profiler asks when its
#    experimental config names profiler_metrics: every kernel with its true
#    counters, and nothing counted in the trace after it.
#
# Environment:
#   ROCM_INCLUDE       headers with hip/, hsa/, hsakmt/, rocprofiler-sdk/
#                      (default /opt/rocm/include; without ROCm, make one
#                      with scripts/rocm-headers.sh)
#   KINETO_ROCM_BUILD  kineto-rocm's CMake build (default build/ci; built here)
#   DROPIN_BUILD       where kineto is built (default build/dropin)
#   KINETO_COMMIT      the kineto commit KINETO_SRC is, for the log (read
#                      from git when KINETO_SRC is a checkout)
#   DROPIN_LOG         the run's log (default $DROPIN_BUILD/dropin-check.log)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
[ $# -eq 1 ] || { sed -n '2,30p' "$0" >&2; exit 2; }
kineto_src=$(cd "$1" && pwd)
[ -f "$kineto_src/libkineto/libkineto_defs.bzl" ] || {
  echo "kineto-dropin-check: $kineto_src is not a kineto source tree (no libkineto/libkineto_defs.bzl)" >&2; exit 1; }
rocm_include=${ROCM_INCLUDE:-/opt/rocm/include}
[ -f "$rocm_include/rocprofiler-sdk/registration.h" ] && [ -f "$rocm_include/hip/hip_runtime_api.h" ] || {
  echo "kineto-dropin-check: no rocprofiler-sdk/HIP headers in $rocm_include; set ROCM_INCLUDE (scripts/rocm-headers.sh makes one)" >&2; exit 1; }
kr_build=$(mkdir -p "${KINETO_ROCM_BUILD:-build/ci}" && cd "${KINETO_ROCM_BUILD:-build/ci}" && pwd)
dropin_build=$(mkdir -p "${DROPIN_BUILD:-build/dropin}" && cd "${DROPIN_BUILD:-build/dropin}" && pwd)
log=${DROPIN_LOG:-$dropin_build/dropin-check.log}
commit=${KINETO_COMMIT:-$(git -C "$kineto_src" rev-parse HEAD 2>/dev/null || echo "unknown (set KINETO_COMMIT)")}
sdk=$(scripts/fetch-kineto.sh)

step() { printf '\n==> %s\n' "$*"; }
{
step "kineto-rocm $(git -C "$repo" rev-parse --short HEAD) into kineto $commit ($kineto_src)"
echo "ROCm headers: $rocm_include (rocprofiler-sdk $(sed -n 's/^#define ROCPROFILER_VERSION_STRING *"\(.*\)"/\1/p' "$rocm_include/rocprofiler-sdk/version.h"), HIP $(awk '/define HIP_VERSION_(MAJOR|MINOR|PATCH) / {printf "%s%s", sep, $3; sep="."}' "$rocm_include/hip/hip_version.h")); $(c++ --version | head -1)"

step "building kineto-rocm (libkineto_rocm.so, the simulator, the bridge headers)"
cmake -S "$repo" -B "$kr_build" -DCMAKE_BUILD_TYPE=Release -DKINETO_SDK_DIR="$sdk" >/dev/null
cmake --build "$kr_build" -j2 --target kineto_rocm_cargo >/dev/null

step "kineto's tree with kineto-rocm's files in place of kineto's"
rm -rf "$dropin_build/libkineto"
cp -r "$kineto_src/libkineto" "$dropin_build/libkineto"
for f in "$repo"/cpp/dropin/*; do
  echo "  $(basename "$f") replaces libkineto/src/$(basename "$f")"
  cp "$f" "$dropin_build/libkineto/src/"
done

step "building kineto's ROCm profiler, its RocmActivityProfilerTest and dropin_trace"
cmake -S "$repo/tests/dropin" -B "$dropin_build/cmake" -DCMAKE_BUILD_TYPE=Release \
  -DKINETO_LIBKINETO="$dropin_build/libkineto" -DROCM_INCLUDE="$rocm_include" \
  -DKINETO_ROCM_BUILD="$kr_build" -DFMT_INCLUDE="$sdk/include" >/dev/null
cmake --build "$dropin_build/cmake" -j2 2>&1 | grep -E "error|warning: " || true
test -x "$dropin_build/cmake/RocmActivityProfilerTest" && test -x "$dropin_build/cmake/dropin_trace"

step "kineto's RocmActivityProfilerTest, unmodified"
(cd "$dropin_build/cmake" && KINETO_LOG_LEVEL=2 ./RocmActivityProfilerTest 2>&1 | grep -E "^\[ *(RUN|OK|FAILED|PASSED|==========) *\]")

failed=0
for workload in tests/workloads/graph-32x200.json tests/workloads/ctest/graph-32x200-marked.json; do
  name=$(basename "$workload" .json)
  step "$name through kineto's own profiler and writer"
  run_log="$dropin_build/$name.kineto.log"
  if ! KINETO_LOG_LEVEL=1 "$dropin_build/cmake/dropin_trace" "$workload" "$dropin_build/$name.trace.json" \
      >"$run_log" 2>&1; then
    failed=1
  fi
  sed -n "/^workload: /,\$p" "$run_log"
  counts=$(grep -o "Record counts: .*" "$run_log" | tail -1)
  echo "kineto: $counts"
  ooo=$(sed -n 's/.*CPU GPU out-of-order = \([0-9]*\).*/\1/p' <<<"$counts")
  if [ "$ooo" = "0" ]; then
    echo "PASS: kineto's CPU/GPU out-of-order count is 0"
  else
    echo "FAIL: kineto's CPU/GPU out-of-order count is '${ooo:-missing}'"
    failed=1
  fi
done
step "PyTorch's metrics config (profiler_metrics=SQ_WAVES,GRBM_COUNT) through kineto's own profiler"
metrics_log="$dropin_build/metrics.kineto.log"
if ! KINETO_LOG_LEVEL=1 "$dropin_build/cmake/dropin_trace" tests/workloads/ctest/graph-32x200-marked.json \
    "$dropin_build/metrics.trace.json" --metrics SQ_WAVES,GRBM_COUNT >"$metrics_log" 2>&1; then
  failed=1
fi
sed -n "/^workload: /,\$p" "$metrics_log"
step "result"
if [ "$failed" -eq 0 ]; then echo "kineto drop-in check: PASSED"; else echo "kineto drop-in check: FAILED"; fi
exit "$failed"
} 2>&1 | tee "$log"
exit "${PIPESTATUS[0]}"
