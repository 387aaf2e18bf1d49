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
# The CMake preset (CMakePresets.json) of each folder is named as the folder: release, asan,
# 2.14.1, asan-2.14.1. CA_BY_PRESET=0 where there is none (CA_BUILD elsewhere, or a torch without
# presets): build.sh then configures that folder with the flavor's preset (-B) and builds by path.
if [[ "$CA_TORCH" == 2.13.0 ]]; then
  CA_VENV="${CA_VENV:-/opt/ca-replay/venv}"
  preset_build="$CA_ROOT/build$suffix"
  CA_PRESET="$CA_FLAVOR"
else
  CA_VENV="${CA_VENV:-/opt/ca-replay/venv-$CA_TORCH}"
  preset_build="$CA_ROOT/build$suffix-$CA_TORCH"
  CA_PRESET="${suffix#-}${suffix:+-}$CA_TORCH"
fi
preset_build="$(realpath -m "$preset_build")"
CA_BUILD="$(realpath -m "${CA_BUILD:-$preset_build}")"  # absolute: the scripts cd
CA_BY_PRESET=0
if [[ "$CA_BUILD" == "$preset_build" ]] && grep -qF "\"name\": \"$CA_PRESET\"" "$CA_ROOT/CMakePresets.json"; then
  CA_BY_PRESET=1
fi
unset suffix preset_build
if [[ "$CA_FLAVOR" == asan ]]; then
  # libtorch itself is not instrumented: leak checking is off (its allocations and static state
  # read as leaks). Every process that runs our code needs these, gtest discovery at build time
  # included, and the ASan-built tools that pytest starts.
  export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1:strict_string_checks=1}"
  export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
fi
CA_JOBS="${CA_JOBS:-$(nproc)}"
log() { printf '[ca-replay] %s\n' "$*" >&2; }

# Exports the machine's paths that the presets read from the environment (CMakePresets.json:
# CA_PYTHON and CA_TORCH_CMAKE, and for a CUDA build of torch CA_CUDA_ROOT and CA_NVRTC). A CUDA
# build (2.14.1 from PyPI is one) needs the toolkit's nvcc to configure and the nvrtc its wheel
# ships; the CUDA sources (runtime/src/cuda/) then build too. Sets CA_CUDA=1 for one.
ca_preset_env() {
  export CA_PYTHON="$CA_VENV/bin/python"
  [[ -x "$CA_PYTHON" ]] || { log "no venv at $CA_VENV: run scripts/setup.sh first"; exit 1; }
  CA_TORCH_CMAKE=$("$CA_PYTHON" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')
  export CA_TORCH_CMAKE
  CA_CUDA=0
  if "$CA_PYTHON" -c "import sys, torch; sys.exit(torch.version.cuda is None)"; then
    CA_CUDA=1
    export CA_CUDA_ROOT="${CUDA_HOME:-/usr/local/cuda}"
    [[ -x "$CA_CUDA_ROOT/bin/nvcc" ]] || { log "torch $CA_TORCH is a CUDA build: needs nvcc in $CA_CUDA_ROOT (set CUDA_HOME)"; exit 1; }
    CA_NVRTC=$("$CA_PYTHON" "$CA_ROOT/scripts/find_nvrtc.py")
    export CA_NVRTC
  fi
}
