#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Configures and builds one build folder (scripts/env.sh names it): torch CA_TORCH from its venv
# (scripts/setup.sh makes it), flavor CA_FLAVOR, and the targets named, else all of them.
#   scripts/build.sh [TARGET...]     e.g. scripts/build.sh replay capture_example
# The flags are the folder's preset in CMakePresets.json (named as the folder: release, asan,
# 2.14.1, asan-2.14.1). release: Release, what the main job, the benchmarks and the 2.14.1 suite
# use. asan: our code under ASan+UBSan at -O1 with line tables only (-g1: enough for the
# sanitizers' stack traces, and a fraction of full debug info's compile and link time); no
# benchmarks (their figures would mean nothing there). Every target reuses one precompiled header
# of libtorch's (cmake/pch.cmake).
set -euo pipefail
source "$(dirname "$0")/env.sh"
start=$(date +%s)
ca_preset_env
((CA_CUDA)) && log "CUDA build of torch: toolkit $CA_CUDA_ROOT, nvrtc $CA_NVRTC"
# `cmake --preset` reads CMakePresets.json from the working folder.
cd "$CA_ROOT"
targets=()
(($#)) && targets=(--target "$@")
log "configuring $CA_BUILD (torch $CA_TORCH, $CA_FLAVOR)"
if ((CA_BY_PRESET)); then
  cmake --preset "$CA_PRESET" ${CA_CMAKE_ARGS:-} >/dev/null
  log "building ${*:-all targets} with $CA_JOBS jobs (preset $CA_PRESET)"
  cmake --build --preset "$CA_PRESET" -j "$CA_JOBS" "${targets[@]}"
else
  # No preset of its own: the flavor's flags into CA_BUILD, and a CUDA torch's paths as the
  # 2.14.1 presets give them.
  cuda_args=()
  ((CA_CUDA)) && cuda_args=(-DCUDA_TOOLKIT_ROOT_DIR="$CA_CUDA_ROOT" -DCUDA_nvrtc_LIBRARY="$CA_NVRTC")
  cmake --preset "$CA_FLAVOR" -B "$CA_BUILD" "${cuda_args[@]}" ${CA_CMAKE_ARGS:-} >/dev/null
  log "building ${*:-all targets} with $CA_JOBS jobs (preset $CA_FLAVOR's flags)"
  cmake --build "$CA_BUILD" -j "$CA_JOBS" "${targets[@]}"
fi
log "build of $CA_BUILD done in $(( $(date +%s) - start )) s"
