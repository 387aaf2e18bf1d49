#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Configures and builds one build folder (scripts/env.sh names it): torch CA_TORCH from its venv
# (scripts/setup.sh makes it), flavor CA_FLAVOR, and the targets named, else all of them.
#   scripts/build.sh [TARGET...]     e.g. scripts/build.sh replay capture_example
# release: -O2, what the main job, the benchmarks and the 2.14.1 suite use. asan: our code under
# ASan+UBSan at -O1 with line tables only (-g1: enough for the sanitizers' stack traces, and a
# fraction of full debug info's compile and link time); no benchmarks (their figures would mean
# nothing there). Every target reuses one precompiled header of libtorch's (cmake/pch.cmake).
set -euo pipefail
source "$(dirname "$0")/env.sh"
start=$(date +%s)
[[ -x "$CA_VENV/bin/python" ]] || { log "no venv at $CA_VENV: run scripts/setup.sh first"; exit 1; }
torch_cmake=$("$CA_VENV/bin/python" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')

# A CUDA build of torch (2.14.1 from PyPI is one) needs the CUDA toolkit's nvcc to configure and
# the nvrtc library its wheel ships; the CUDA sources (runtime/src/cuda/) then build too.
cuda_args=()
if "$CA_VENV/bin/python" -c "import sys, torch; sys.exit(torch.version.cuda is None)"; then
  cuda_root="${CUDA_HOME:-/usr/local/cuda}"
  [[ -x "$cuda_root/bin/nvcc" ]] || { log "torch $CA_TORCH is a CUDA build: needs nvcc in $cuda_root (set CUDA_HOME)"; exit 1; }
  nvrtc=$("$CA_VENV/bin/python" "$CA_ROOT/scripts/find_nvrtc.py")
  cuda_args=(-DCUDA_TOOLKIT_ROOT_DIR="$cuda_root" -DCUDA_nvrtc_LIBRARY="$nvrtc")
  log "CUDA build of torch: toolkit $cuda_root, nvrtc $nvrtc"
fi
case "$CA_FLAVOR" in
  release) flavor_args=(-DCMAKE_BUILD_TYPE=Release -DCA_SANITIZE=OFF) ;;
  # GCC's maybe-uninitialized analysis misfires at -O1 in libtorch's headers; Release checks it.
  asan) flavor_args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo
                     "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -Wno-maybe-uninitialized"
                     -DCA_SANITIZE=ON -DCA_BUILD_BENCH=OFF) ;;
esac
log "configuring $CA_BUILD (torch $CA_TORCH, $CA_FLAVOR)"
cmake -S "$CA_ROOT" -B "$CA_BUILD" -G Ninja "${flavor_args[@]}" \
  -DCMAKE_PREFIX_PATH="$torch_cmake" -DPython3_EXECUTABLE="$CA_VENV/bin/python" \
  -DCA_TEST_PYTHON="$CA_VENV/bin/python" -DCA_WERROR=ON "${cuda_args[@]}" ${CA_CMAKE_ARGS:-} >/dev/null
targets=()
(($#)) && targets=(--target "$@")
log "building ${*:-all targets} with $CA_JOBS jobs"
cmake --build "$CA_BUILD" -j "$CA_JOBS" "${targets[@]}"
log "build of $CA_BUILD done in $(( $(date +%s) - start )) s"
