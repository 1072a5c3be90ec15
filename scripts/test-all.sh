#!/usr/bin/env bash
# Runs every test kineto-rocm has, on a fresh Debian machine:
#   1. installs what is missing (python3 + pip, g++ and make, cmake,
#      googletest, nlohmann-json, valgrind; root + apt). Required and not
#      installed: a Rust toolchain, cargo/rustc >= 1.88 (rustup);
#   2. fetches the real libkineto from PyPI into a cache outside the repo
#      (every wheel checked against PyPI's sha256),
#   3. cargo test --release for the whole workspace, the loom model, and the
#      seeded property tests and the adversarial suite once more under a
#      fresh random seed (printed; KINETO_ROCM_FRESH_SEED=<seed> reruns it),
#   4. a valgrind leak check,
#   5. builds the C++ face with CMake and runs the ctest suite against kineto,
#   6. with KINETO_SRC=<a pytorch/kineto source tree>, the drop-in check
#      (scripts/kineto-dropin-check.sh; ROCm headers from ROCM_INCLUDE, default
#      /opt/rocm/include); without it that stage is reported as skipped.
# With ROCPROFILER_SDK_INCLUDE_DIR=<headers from scripts/rocm-headers.sh>
# (libclang is then installed), the SDK layout test compares our declarations
# with the real headers; without it that test is reported as skipped.
#
# Ends with a summary: passed, failed and skipped per stage (an ignored cargo
# test and a ctest GTEST_SKIP count as skipped, and are named), and a total
# line. Exit status 0 only if no stage failed. Each stage's output is kept in
# TEST_ALL_LOGS (default: a fresh /tmp/kineto-rocm-test-all.* directory).
set -euo pipefail
cd "$(dirname "$0")/.."
step() { printf '\n==> %s\n' "$*" >&2; }

need_apt=()
command -v python3 >/dev/null || need_apt+=(python3)
python3 -m pip --version >/dev/null 2>&1 || need_apt+=(python3-pip)
command -v g++ >/dev/null || need_apt+=(g++)
command -v make >/dev/null || need_apt+=(make)
command -v cmake >/dev/null || need_apt+=(cmake)
[ -f /usr/include/gtest/gtest.h ] || need_apt+=(libgtest-dev)
[ -f /usr/include/nlohmann/json.hpp ] || need_apt+=(nlohmann-json3-dev)
command -v valgrind >/dev/null || need_apt+=(valgrind)
if [ -n "${ROCPROFILER_SDK_INCLUDE_DIR:-}" ] && ! ls /usr/lib/llvm-*/lib/libclang.so >/dev/null 2>&1; then
  need_apt+=(libclang-dev)
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  step "installing ${need_apt[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    echo "test-all.sh: need ${need_apt[*]}; run as root or install them first" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
command -v cargo >/dev/null || {
  echo "test-all.sh: cargo (Rust >= 1.88) is required; install it with rustup" >&2
  exit 1
}

LOGS=${TEST_ALL_LOGS:-$(mktemp -d /tmp/kineto-rocm-test-all.XXXXXX)}
mkdir -p "$LOGS"
LOGS=$(cd "$LOGS" && pwd)
# One line per stage: name, how its log is counted, log file, exit status.
STAGES="$LOGS/stages.tsv"
: >"$STAGES"

# stage NAME KIND CMD...: runs CMD, its output to the terminal and to the
# stage's log, and records how it ended; a failed stage does not stop the
# run. KIND: cargo (libtest's result lines), ctest (its JUnit file, the
# log's path with .xml), check (one check: the exit status).
stage() {
  local name=$1 kind=$2 log rc=0
  shift 2
  log="$LOGS/$(wc -l <"$STAGES").log"
  step "$name"
  set +e
  "$@" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  set -e
  printf '%s\t%s\t%s\t%s\n' "$name" "$kind" "$log" "$rc" >>"$STAGES"
  return 0
}
skipped_stage() {
  step "$1: SKIPPED ($2)"
  printf '%s\tskip\t%s\t0\n' "$1" "$2" >>"$STAGES"
}

summary() {
  python3 - "$STAGES" <<'PY'
import re, sys, xml.etree.ElementTree as ET

total = [0, 0, 0]
failed_stages = 0
rows, notes = [], []
for line in open(sys.argv[1]):
    name, kind, log, rc = line.rstrip("\n").split("\t")
    rc = int(rc)
    passed = failed = skipped = 0
    if kind == "skip":
        skipped = 1
        notes.append(f"  {name}: skipped: {log}")
    elif kind == "cargo":
        binary = ""
        for l in open(log, errors="replace"):
            m = re.match(r"\s*Running (\S+)", l) or re.match(r"\s*Doc-tests (\S+)", l)
            if m:
                binary = m.group(1)
            m = re.match(r"test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored", l)
            if m:
                passed += int(m.group(1))
                failed += int(m.group(2))
                skipped += int(m.group(3))
            m = re.match(r"test (\S+) \.\.\. ignored(?:, (?:skipped: )?(.*))?$", l.rstrip())
            if m:
                notes.append(f"  {name}: {binary} {m.group(1)}: skipped"
                             + (f": {m.group(2)}" if m.group(2) else ""))
    elif kind == "ctest":
        try:
            for case in ET.parse(log[:-4] + ".xml").getroot().iter("testcase"):
                status = case.get("status")
                if status == "run":
                    passed += 1
                elif status in ("notrun", "disabled"):
                    skipped += 1
                    reason = case.find("skipped")
                    notes.append(f"  {name}: {case.get('name')}: skipped"
                                 + (f": {reason.get('message')}" if reason is not None
                                    and reason.get("message") else ""))
                else:
                    failed += 1
        except (OSError, ET.ParseError):
            pass
    else:
        passed, failed = (1, 0) if rc == 0 else (0, 1)
    ok = rc == 0 and failed == 0
    if not ok and failed == 0:
        failed = 1  # it did not finish (a build error, a crash): one failure
    failed_stages += not ok
    result = "skipped" if kind == "skip" else "ok" if ok else f"FAILED (exit {rc})"
    rows.append((name, passed, failed, skipped, result))
    total = [total[0] + passed, total[1] + failed, total[2] + skipped]

width = max([len(r[0]) for r in rows] + [5])
print(f"\n==> summary\n{'stage':<{width}}  {'passed':>7} {'failed':>7} {'skipped':>7}  result")
for name, p, f, s, result in rows:
    print(f"{name:<{width}}  {p:>7} {f:>7} {s:>7}  {result}")
for note in notes:
    print(note)
print(f"total: {total[0]} passed, {total[1]} failed, {total[2]} skipped")
sys.exit(1 if failed_stages else 0)
PY
}

# Cheap checks first: formatting and clippy (workspace lints included).
stage "cargo fmt --check" check cargo fmt --all --check
stage "cargo clippy -D warnings" check cargo clippy --workspace --all-targets --release -- -D warnings

step "fetching libkineto (torch 2.11.0 wheel, cached, sha256 checked)"
KINETO_SDK_DIR=$(scripts/fetch-kineto.sh)
export KINETO_SDK_DIR

# --no-fail-fast: every test binary runs, so the summary counts them all.
stage "cargo test --workspace --release" cargo cargo test --workspace --release --no-fail-fast

stage "loom model of the store's completeness protocol" cargo \
  env CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/loom" RUSTFLAGS="--cfg loom" \
  cargo test -p activity-store --release --no-fail-fast --test loom

# The seeded property tests, the decoder fuzz and the adversarial suite run
# with their default seeds above; once more under a seed nobody chose.
SEED=${KINETO_ROCM_FRESH_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
stage "fresh seed $SEED (KINETO_ROCM_FRESH_SEED=$SEED reruns it)" cargo \
  env GA_MODEL_SEED="$SEED" KINETO_ROCM_TEST_SEEDS="$SEED,$((SEED + 1))" \
  KINETO_ROCM_FUZZ_SEED="$SEED" KINETO_ROCM_STRESS_SEED="$SEED" \
  cargo test --release --no-fail-fast -p graph-attribution --test model -p activity-store --test stress \
  -p kineto-rocm --test decode_fuzz -p rocprofiler-sim --test rocm_model --test fidelity \
  -p kineto-rocm-cli --test adversarial

stage "leak check: the 6400-dispatch workload under valgrind" check scripts/leak-check.sh

# The README's first command, word for word, as a person on a fresh machine
# types it: it once ran nothing at all (cargo could not tell the CLI from a
# second binary of its crate) while every test passed.
readme_main_command() {
  local cmd
  cmd=$(awk '/^## Two commands on a fresh machine/ { inside = 1 }
    inside && /^```sh/ { getline; sub(/ *#.*/, ""); print; exit }' README.md)
  [ -n "$cmd" ] || { echo "README.md: no first command under 'Two commands on a fresh machine'"; return 1; }
  echo "$ $cmd"
  rm -f kineto-rocm-demo.json
  bash -c "$cmd" >/dev/null || return 1
  [ -s kineto-rocm-demo.json ] || { echo "it wrote no kineto-rocm-demo.json"; return 1; }
  echo "kineto-rocm-demo.json: $(wc -c <kineto-rocm-demo.json) bytes"
}
stage "the README's first command" check readme_main_command

if [ -f CMakeLists.txt ]; then
  build_face() {
    cmake -S . -B build/ci -DCMAKE_BUILD_TYPE=Release -DKINETO_SDK_DIR="$KINETO_SDK_DIR" >/dev/null &&
      cmake --build build/ci -j2
  }
  stage "build the C++ face and the ctest suite" check build_face
  ctest_log="$LOGS/$(wc -l <"$STAGES").log"
  stage "ctest" ctest ctest --test-dir build/ci --output-on-failure --output-junit "${ctest_log%.log}.xml"
fi

if [ -n "${KINETO_SRC:-}" ]; then
  stage "kineto drop-in check against $KINETO_SRC" check \
    env KINETO_ROCM_BUILD=build/ci scripts/kineto-dropin-check.sh "$KINETO_SRC"
else
  skipped_stage "kineto drop-in check" "no kineto source tree; set KINETO_SRC=<pytorch/kineto checkout> and ROCM_INCLUDE, see README"
fi

summary
