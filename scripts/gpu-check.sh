#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The GPU check, one command on a lent GPU machine (no network), from a copy of the tree with
# .gpu-deps/ carried (scripts/gpu-prep.sh fills it here):
#   scripts/gpu-check.sh
# Builds against that machine's python3 torch (any 2.11+ CUDA build) with every core, then prints
# one summary line per check:
#   placement  the CPU-scalar movement rule (device_placement_test, CPU only)
#   parity     models built on the GPU vs eager CUDA backward; the parity table retargeted
#   scalars    CPU scalars that move, and one a custom function keeps on CPU
#   cuda-graph CUDA-graph replay == plain replay over 10 runs with new inputs
#   bench      eager vs replay vs CUDA-graph replay: deep narrow MLP (batch 8), wide MLP
#   ddp-nccl   apps/train_ddp on cuda, one rank per visible GPU, gradients averaged by NCCL
# Without a GPU (a dry run), the GPU tests skip with "no CUDA device" and the bench says so.
# Env: CA_GPU_PYTHON (python3), CA_GPU_BUILD (/tmp/ca-gpu-build; an existing build is reused),
# CA_JOBS (all cores), CA_BENCH_RUNS (50). `--configure-only` stops after configuring.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
deps="$root/.gpu-deps"
py="${CA_GPU_PYTHON:-python3}"
build="${CA_GPU_BUILD:-/tmp/ca-gpu-build}"
jobs="${CA_JOBS:-$(nproc)}"
logs="${OUT:-$build}/gpu-check-logs"
start=$(date +%s)
say() { printf '[gpu-check] %s\n' "$*"; }
elapsed() { echo "$(( $(date +%s) - start )) s"; }
mkdir -p "$build" "$logs"

torch_info=$("$py" -c 'import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available(), torch.cuda.device_count())') ||
  { say "FAIL: $py has no torch"; exit 2; }
say "torch $torch_info (version, cuda, available, devices); $(nproc) cores; build $build"

if [[ ! -f "$build/CMakeCache.txt" ]]; then
  [[ -d "$deps" ]] || { say "FAIL: $deps missing: run scripts/gpu-prep.sh and carry .gpu-deps"; exit 2; }
  # GoogleTest from the carried sources, into a prefix of its own.
  cmake -S "$deps/googletest" -B "$build/gtest" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DBUILD_GMOCK=OFF -DCMAKE_INSTALL_PREFIX="$build/gtest-prefix" >"$logs/gtest.log" 2>&1 &&
    cmake --build "$build/gtest" -j "$jobs" >>"$logs/gtest.log" 2>&1 &&
    cmake --install "$build/gtest" >>"$logs/gtest.log" 2>&1 || { say "FAIL: googletest build"; tail -20 "$logs/gtest.log"; exit 2; }
  # The carried flatc may not run on this image: then stand in with the pre-generated header.
  prefix="$build/deps-prefix"
  cp -a "$deps/prefix" "$prefix"
  if ! "$prefix/bin/flatc" --version >/dev/null 2>&1; then
    say "carried flatc does not run here: using the pre-generated schema header"
    printf '#!/bin/sh\n# stand-in for flatc --cpp ... -o DIR schema.fbs\nwhile [ $# -gt 1 ]; do [ "$1" = -o ] && out=$2; shift; done\ncp "%s"/*.h "$out"/\n' \
      "$deps/generated" >"$prefix/bin/flatc"
    chmod +x "$prefix/bin/flatc"
  fi
  torch_cmake=$("$py" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')
  nvrtc=$("$py" "$root/scripts/find_nvrtc.py") || { say "FAIL: no nvrtc in the torch wheel"; exit 2; }
  lib="$prefix/lib/x86_64-linux-gnu"
  say "configuring ($(elapsed))"
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$torch_cmake;$prefix;$build/gtest-prefix" \
    -DPython3_EXECUTABLE="$(command -v "$py")" -DCA_TEST_PYTHON="$(command -v "$py")" \
    -DCA_BUILD_BENCH=OFF -DCA_WERROR=OFF -DTORCH_CUDA_ARCH_LIST=9.0 \
    -DCUDA_TOOLKIT_ROOT_DIR="${CUDA_HOME:-/usr/local/cuda}" -DCUDA_nvrtc_LIBRARY="$nvrtc" \
    -DXXHASH_INCLUDE_DIR="$prefix/include" -DXXHASH_LIBRARY="$lib/libxxhash.so" \
    >"$logs/configure.log" 2>&1 || { say "FAIL: configure"; tail -30 "$logs/configure.log"; exit 2; }
fi

if [[ "${1:-}" == --configure-only ]]; then say "configured ($(elapsed))"; exit 0; fi
say "building ($(elapsed))"
targets=(device_placement_test cuda_replay_test cuda_bench replay train_ddp)
cmake --build "$build" -j "$jobs" --target "${targets[@]}" >"$logs/build.log" 2>&1 ||
  { say "FAIL: build"; grep -m20 -B2 -A10 "error" "$logs/build.log"; exit 2; }
say "built ($(elapsed))"

status=0
# One gtest binary, filtered; prints "check NAME: PASS|FAIL|SKIP (...)" plus its own lines.
check() {
  local name=$1 bin=$2 filter=$3 out="$logs/$1.log"
  "$build/tests/$bin" --gtest_filter="$filter" >"$out" 2>&1
  local rc=$? detail
  detail=$(grep -h '^\[cuda' "$out" | sed 's/^/    /')
  if grep -q "no CUDA device" "$out" && ((rc == 0)); then
    say "check $name: SKIP (no CUDA device)"
  elif ((rc == 0)); then
    say "check $name: PASS ($(grep -o '[0-9]* tests\? from [0-9]* test suites\? ran' "$out"))"
  else
    say "check $name: FAIL (rc $rc)"; grep -m10 -A5 "Failure" "$out"; status=1
  fi
  [[ -n $detail ]] && echo "$detail"
}
check placement device_placement_test 'DevicePlacement.*'
check parity cuda_replay_test 'CudaReplay.ModelsOnTheGpu*:CudaReplay.ParityTable*'
check scalars cuda_replay_test 'CudaReplay.CpuScalars*'
check cuda-graph cuda_replay_test 'CudaReplay.CudaGraph*'
"$build/bench/cuda/cuda_bench" "${CA_BENCH_RUNS:-50}" >"$logs/bench.log" 2>&1 ||
  { say "check bench: FAIL"; status=1; }
sed 's/^\[bench\]/[gpu-check] check bench:/' "$logs/bench.log" | grep "check bench"
# Data-parallel on NCCL: as many ranks as GPUs (NCCL takes one GPU per rank).
gpus=$("$py" -c 'import torch; print(torch.cuda.device_count())')
if ((gpus == 0)); then
  say "check ddp-nccl: SKIP (no CUDA device)"
elif CA_BUILD="$build" CA_DIST_TIMEOUT_S=120 "$root/scripts/train_ddp.sh" "$gpus" \
    --exe "$build/apps/train_ddp/train_ddp" --device cuda --steps 30 --vary-graph \
    >"$logs/ddp-nccl.log" 2>&1 && grep -q "backend nccl" "$logs/ddp-nccl.log"; then
  say "check ddp-nccl: PASS ($(grep -m1 'gradient buckets' "$logs/ddp-nccl.log" | sed 's/^.*\] //'))"
else
  say "check ddp-nccl: FAIL"; tail -20 "$logs/ddp-nccl.log"; status=1
fi
say "done in $(elapsed): $([[ $status == 0 ]] && echo all checks passed || echo FAILURES)"
exit $status
