#!/usr/bin/env bash
# Runs every test kineto-rocm has, on a fresh Debian machine:
#   1. installs what is missing (cmake, googletest, nlohmann-json, valgrind;
#      root + apt),
#   2. fetches the real libkineto from PyPI into a cache outside the repo,
#   3. cargo test for the whole workspace, and a valgrind leak check,
#   4. builds the C++ face with CMake and runs the ctest suite against kineto,
#   5. with KINETO_SRC=<a pytorch/kineto source tree>, the drop-in check
#      (scripts/kineto-dropin-check.sh; ROCm headers from ROCM_INCLUDE, default
#      /opt/rocm/include); without it that step is reported as SKIPPED.
set -euo pipefail
cd "$(dirname "$0")/.."
step() { printf '\n==> %s\n' "$*" >&2; }

need_apt=()
command -v cmake >/dev/null || need_apt+=(cmake)
[ -f /usr/include/gtest/gtest.h ] || need_apt+=(libgtest-dev)
[ -f /usr/include/nlohmann/json.hpp ] || need_apt+=(nlohmann-json3-dev)
command -v valgrind >/dev/null || need_apt+=(valgrind)
if [ ${#need_apt[@]} -gt 0 ]; then
  step "installing ${need_apt[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    echo "test-all.sh: need ${need_apt[*]}; run as root or install them first" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# Cheap checks first: formatting and clippy (workspace lints included).
step "cargo fmt --check"
cargo fmt --all --check
step "cargo clippy -D warnings"
cargo clippy --workspace --all-targets --release -- -D warnings 2>&1

step "fetching libkineto (torch 2.11.0 wheel, cached)"
KINETO_SDK_DIR=$(scripts/fetch-kineto.sh)
export KINETO_SDK_DIR

step "cargo test --workspace"
cargo test --workspace --release 2>&1

step "loom model of the store's completeness protocol"
CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target}/loom RUSTFLAGS="--cfg loom" cargo test -p activity-store --release --test loom 2>&1

step "leak check: the 6400-dispatch workload under valgrind"
scripts/leak-check.sh

if [ -f CMakeLists.txt ]; then
  step "building the C++ face and the ctest suite"
  cmake -S . -B build/ci -DCMAKE_BUILD_TYPE=Release -DKINETO_SDK_DIR="$KINETO_SDK_DIR" >/dev/null
  cmake --build build/ci -j2
  step "ctest"
  ctest --test-dir build/ci --output-on-failure
fi

if [ -n "${KINETO_SRC:-}" ]; then
  step "kineto drop-in check against $KINETO_SRC"
  KINETO_ROCM_BUILD=build/ci scripts/kineto-dropin-check.sh "$KINETO_SRC"
else
  step "kineto drop-in check: SKIPPED (no kineto source tree; set KINETO_SRC=<pytorch/kineto checkout> and ROCM_INCLUDE, see README)"
fi
