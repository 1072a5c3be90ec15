#!/usr/bin/env bash
# Fetch the real libkineto that ships inside PyTorch's PyPI wheel, plus the
# few shared libraries it needs to load, into a cache outside the repository.
#
#   scripts/fetch-kineto.sh            -> prints the SDK directory on stdout
#
# Layout produced (nothing here is ever committed):
#   $CACHE/wheels/                       downloaded wheels (kept; downloads happen once)
#   $CACHE/kineto-sdk/include/kineto/    kineto public headers (libkineto.h, ...)
#   $CACHE/kineto-sdk/include/fmt/       fmt headers (use -DFMT_HEADER_ONLY)
#   $CACHE/kineto-sdk/lib/               libtorch_cpu.so libc10.so libgomp.so.1
#                                        libcudart.so.13 libcupti.so.13
#   $CACHE/kineto-sdk/VERSIONS           what was extracted from where
#
# Every wheel, downloaded or cached, is checked against the sha256 PyPI
# publishes for it (pinned below, from https://pypi.org/simple/<name>/);
# a mismatch stops with the file, the expected and the actual hash.
#
# libtorch_cpu.so carries RPATH $ORIGIN, so keeping every library in one
# directory makes it load without LD_LIBRARY_PATH. No GPU is needed: the CUDA
# libraries are only load-time dependencies.
#
# Environment:
#   KINETO_ROCM_CACHE   cache root (default: $HOME/.cache/kineto-rocm)
#   KINETO_TORCH_PYVER  python version used to pick the torch wheel
#                       (default 3.11; libtorch_cpu.so does not link libpython,
#                       so any CPython wheel of the same release works)
#   PYTHON              python interpreter providing pip (default: python3)
set -euo pipefail

TORCH_VERSION=2.11.0
CUDART_PKG=nvidia-cuda-runtime
CUDART_VERSION=13.0.96
CUPTI_PKG=nvidia-cuda-cupti
CUPTI_VERSION=13.0.85

# PyPI's sha256 of each wheel this script may fetch (the torch wheel depends
# on KINETO_TORCH_PYVER).
declare -A SHA256=(
  [torch-2.11.0-cp310-cp310-manylinux_2_28_x86_64.whl]=1b32ceda909818a03b112006709b02be1877240c31750a8d9c6b7bf5f2d8a6e5
  [torch-2.11.0-cp311-cp311-manylinux_2_28_x86_64.whl]=7aa2f9bbc6d4595ba72138026b2074be1233186150e9292865e04b7a63b8c67a
  [torch-2.11.0-cp312-cp312-manylinux_2_28_x86_64.whl]=0f68f4ac6d95d12e896c3b7a912b5871619542ec54d3649cf48cc1edd4dd2756
  [torch-2.11.0-cp313-cp313-manylinux_2_28_x86_64.whl]=cc89b9b173d9adfab59fd227f0ab5e5516d9a52b658ae41d64e59d2e55a418db
  [torch-2.11.0-cp314-cp314-manylinux_2_28_x86_64.whl]=4dc8b3809469b6c30b411bb8c4cad3828efd26236153d9beb6a3ec500f211a60
  [nvidia_cuda_runtime-13.0.96-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl]=7f82250d7782aa23b6cfe765ecc7db554bd3c2870c43f3d1821f1d18aebf0548
  [nvidia_cuda_cupti-13.0.85-py3-none-manylinux_2_25_x86_64.whl]=4eb01c08e859bf924d222250d2e8f8b8ff6d3db4721288cf35d14252a4d933c8
)

CACHE="${KINETO_ROCM_CACHE:-$HOME/.cache/kineto-rocm}"
PYVER="${KINETO_TORCH_PYVER:-3.11}"
PYTHON="${PYTHON:-python3}"
WHEELS="$CACHE/wheels"
SDK="$CACHE/kineto-sdk"
MARKER="$SDK/.complete"

log() { printf 'fetch-kineto: %s\n' "$*" >&2; }
die() { printf 'fetch-kineto: error: %s\n' "$*" >&2; exit 1; }

sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d' ' -f1
  else
    "$PYTHON" -c 'import hashlib, sys
h = hashlib.sha256()
with open(sys.argv[1], "rb") as f:
    for block in iter(lambda: f.read(1 << 20), b""):
        h.update(block)
print(h.hexdigest())' "$1"
  fi
}

# verify WHEEL: its sha256 is the one PyPI publishes, or stop.
verify() {
  local file=$1 name expected got
  name=$(basename "$file")
  expected=${SHA256[$name]:-}
  [[ -n "$expected" ]] || die "$file: no pinned sha256 for $name (add PyPI's, from https://pypi.org/simple/, to SHA256 in $0)"
  got=$(sha256_of "$file")
  [[ "$got" == "$expected" ]] || die "$file: sha256 mismatch: expected $expected, got $got (delete the file to download it again)"
}

command -v "$PYTHON" >/dev/null 2>&1 || die "'$PYTHON' not found (set PYTHON=...)"
"$PYTHON" -m pip --version >/dev/null 2>&1 || die "'$PYTHON -m pip' is not available"
mkdir -p "$WHEELS" || die "cannot create cache directory $WHEELS"

pyabi="cp${PYVER/./}"
# pip does not widen an explicit --platform to older manylinux tags, so list
# every tag these wheels are published under.
platforms=(--platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64
           --platform manylinux_2_25_x86_64 --platform manylinux_2_17_x86_64
           --platform manylinux2014_x86_64)

# find_wheel GLOB -> prints the single matching wheel path, or nothing
find_wheel() {
  local matches=()
  shopt -s nullglob
  matches=("$WHEELS"/$1)
  shopt -u nullglob
  if ((${#matches[@]})); then printf '%s\n' "${matches[0]}"; fi
}

# download NAME VERSION GLOB [extra pip args...]
download() {
  local name=$1 version=$2 glob=$3
  shift 3
  if [[ -n "$(find_wheel "$glob")" ]]; then
    log "have $name==$version"
    return 0
  fi
  log "downloading $name==$version (once)"
  "$PYTHON" -m pip download --no-deps --only-binary=:all: --disable-pip-version-check \
      --dest "$WHEELS" "${platforms[@]}" "$@" "$name==$version" >&2 \
    || die "pip download of $name==$version failed (network? index?)"
  [[ -n "$(find_wheel "$glob")" ]] || die "pip reported success but no $glob in $WHEELS"
}

[[ -n "$(find_wheel "torch-$TORCH_VERSION-$pyabi-$pyabi-manylinux*_x86_64.whl")" ]] \
  || log "torch wheel is ~530 MB; kept in $WHEELS so this happens once"
download torch "$TORCH_VERSION" "torch-$TORCH_VERSION-$pyabi-$pyabi-manylinux*_x86_64.whl" \
  --python-version "$PYVER" --implementation cp --abi "$pyabi"
download "$CUDART_PKG" "$CUDART_VERSION" "nvidia_cuda_runtime-$CUDART_VERSION-*.whl"
download "$CUPTI_PKG" "$CUPTI_VERSION" "nvidia_cuda_cupti-$CUPTI_VERSION-*.whl"

TORCH_WHL=$(find_wheel "torch-$TORCH_VERSION-$pyabi-$pyabi-manylinux*_x86_64.whl")
CUDART_WHL=$(find_wheel "nvidia_cuda_runtime-$CUDART_VERSION-*.whl")
CUPTI_WHL=$(find_wheel "nvidia_cuda_cupti-$CUPTI_VERSION-*.whl")
[[ -n "$TORCH_WHL" ]] || die "no torch $TORCH_VERSION $pyabi wheel in $WHEELS"
for whl in "$TORCH_WHL" "$CUDART_WHL" "$CUPTI_WHL"; do
  verify "$whl"
done
# Any CPython wheel of the release gives the same SDK (see KINETO_TORCH_PYVER).
STAMP="torch=$TORCH_VERSION $CUDART_PKG=$CUDART_VERSION $CUPTI_PKG=$CUPTI_VERSION layout=1"

if [[ -f "$MARKER" && "$(cat "$MARKER")" == "$STAMP" ]]; then
  log "already prepared ($STAMP), wheels verified"
  printf '%s\n' "$SDK"
  exit 0
fi

STAGE=$(mktemp -d "$CACHE/.kineto-sdk.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT

log "extracting headers and libraries"
"$PYTHON" - "$STAGE" "$TORCH_WHL" "$CUDART_WHL" "$CUPTI_WHL" <<'PY' || die "extraction failed"
import os, shutil, sys, zipfile

stage, torch_whl, cudart_whl, cupti_whl = sys.argv[1:5]
inc = os.path.join(stage, "include")
lib = os.path.join(stage, "lib")
os.makedirs(inc)
os.makedirs(lib)

def copy(zf, member, dest):
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    with zf.open(member) as src, open(dest, "wb") as out:
        shutil.copyfileobj(src, out, 1 << 20)

with zipfile.ZipFile(torch_whl) as zf:
    names = zf.namelist()
    for prefix in ("torch/include/kineto/", "torch/include/fmt/"):
        members = [n for n in names if n.startswith(prefix) and not n.endswith("/")]
        if not members:
            sys.exit(f"{torch_whl}: no {prefix}")
        for n in members:
            copy(zf, n, os.path.join(inc, n[len("torch/include/"):]))
    for so in ("libtorch_cpu.so", "libc10.so", "libgomp.so.1"):
        member = "torch/lib/" + so
        if member not in names:
            sys.exit(f"{torch_whl}: no {member}")
        copy(zf, member, os.path.join(lib, so))

for whl, so in ((cudart_whl, "libcudart.so.13"), (cupti_whl, "libcupti.so.13")):
    with zipfile.ZipFile(whl) as zf:
        hits = [n for n in zf.namelist() if n.endswith("/lib/" + so)]
        if not hits:
            sys.exit(f"{whl}: no {so}")
        copy(zf, hits[0], os.path.join(lib, so))

for so in os.listdir(lib):
    os.chmod(os.path.join(lib, so), 0o755)
PY

# The libraries must resolve among themselves plus the base system.
if command -v ldd >/dev/null 2>&1; then
  missing=$(ldd "$STAGE/lib/libtorch_cpu.so" 2>&1 | grep 'not found' || true)
  [[ -z "$missing" ]] || die "libtorch_cpu.so has unresolved dependencies:
$missing"
fi

{
  echo "$STAMP"
  echo "torch wheel:   $(basename "$TORCH_WHL")"
  echo "cudart wheel:  $(basename "$CUDART_WHL")"
  echo "cupti wheel:   $(basename "$CUPTI_WHL")"
  echo "compile with:  -I$SDK/include/kineto -I$SDK/include -DFMT_HEADER_ONLY -D_GLIBCXX_USE_CXX11_ABI=1"
  echo "link with:     -L$SDK/lib -ltorch_cpu -lc10 -Wl,-rpath,$SDK/lib"
} > "$STAGE/VERSIONS"

rm -rf "$SDK"
chmod 755 "$STAGE"
mv "$STAGE" "$SDK"
trap - EXIT
printf '%s\n' "$STAMP" > "$MARKER"
log "ready: $SDK"
printf '%s\n' "$SDK"
