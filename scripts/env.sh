# SPDX-License-Identifier: BSD-3-Clause
# Shared settings for the project's scripts; sourced, never run.
# CA_TORCH picks the torch release (default 2.13.0, the pinned CPU build); CA_FLAVOR the build
# (release, the default: Release; asan: our code under AddressSanitizer + UBSan). Each release
# gets its own virtual environment outside the repo (so that clean clones share it), and each
# release and flavor its own build folder: 2.13.0 keeps /opt/ca-replay/venv and build/ (asan:
# build-asan/), others use venv-<ver> and build-<ver>/ (asan: build-asan-<ver>/).
CA_TORCH="${CA_TORCH:-2.13.0}"
CA_TORCH_VERSION="$CA_TORCH"
CA_FLAVOR="${CA_FLAVOR:-release}"
CA_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
case "$CA_FLAVOR" in
  release) suffix="" ;;
  asan) suffix="-asan" ;;
  *) printf '[ca-replay] CA_FLAVOR must be release or asan, not %s\n' "$CA_FLAVOR" >&2; exit 2 ;;
esac
if [[ "$CA_TORCH" == 2.13.0 ]]; then
  CA_VENV="${CA_VENV:-/opt/ca-replay/venv}"
  CA_BUILD="${CA_BUILD:-$CA_ROOT/build$suffix}"
else
  CA_VENV="${CA_VENV:-/opt/ca-replay/venv-$CA_TORCH}"
  CA_BUILD="${CA_BUILD:-$CA_ROOT/build$suffix-$CA_TORCH}"
fi
unset suffix
if [[ "$CA_FLAVOR" == asan ]]; then
  # libtorch itself is not instrumented: leak checking is off (its allocations and static state
  # read as leaks). Every process that runs our code needs these, gtest discovery at build time
  # included, and the ASan-built tools that pytest starts.
  export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1:strict_string_checks=1}"
  export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
fi
CA_JOBS="${CA_JOBS:-$(nproc)}"
log() { printf '[ca-replay] %s\n' "$*" >&2; }
