#!/usr/bin/env bash
# Builds the C++ face and runs the ctest suite against the real kineto from
# torch 2.11.0 (no GPU needed):
#   1. scripts/fetch-kineto.sh              (torch wheel -> cached kineto SDK)
#   2. cmake configure (cargo builds libkineto_rocm.so + librocprofiler_sim.so)
#   3. cmake --build, ctest
# Needs: cmake (>= 3.22), g++, cargo, python3, libgtest-dev, nlohmann-json3-dev
#   (apt-get install -y cmake python3 libgtest-dev nlohmann-json3-dev).
# Environment: BUILD_DIR (default build/ctest), JOBS (default 2),
#   CARGO_TARGET_DIR (shared with `cargo test`; default <repo>/target).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR=${BUILD_DIR:-build/ctest}
JOBS=${JOBS:-2}
SDK=$(scripts/fetch-kineto.sh)
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DKINETO_SDK_DIR="$SDK"
cmake --build "$BUILD_DIR" -j"$JOBS"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$JOBS"
