#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Builds the libFuzzer targets with clang (ASan + UBSan + coverage on our code; libtorch is not
# instrumented) into build-fuzz/ and runs each for a given time, seeded from graphs and batches
# the project produces (make_seeds). Installs clang and libclang-rt-14-dev when missing.
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]   targets: graph_load graph_replay tensors
# Crashing inputs land in build-fuzz/artifacts/<target>/: reproduce with
#   build-fuzz/fuzz/fuzz_<target> FILE, fix, then keep FILE in fuzz/regressions/<target>/
# (ctest replays that folder with a plain build).
set -euo pipefail
source "$(dirname "$0")/env.sh"
seconds="${1:-60}"
shift || true
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(graph_load graph_replay tensors)
build="$(realpath -m "${CA_FUZZ_BUILD:-$CA_ROOT/build-fuzz}")"

if ! command -v clang++ >/dev/null || ! compgen -G "/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a" >/dev/null; then
  log "installing clang and libclang-rt-14-dev"
  apt-get update -qq
  apt-get install -y -qq clang libclang-rt-14-dev >/dev/null
fi
"$CA_VENV/bin/python" -c "import torch, yaml" 2>/dev/null || "$CA_ROOT/scripts/setup.sh"

ca_preset_env
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# The flags are the fuzz preset's (CMakePresets.json); CA_FUZZ_BUILD elsewhere gets them too.
cd "$CA_ROOT"
where=(--preset fuzz)
[[ "$build" == "$CA_ROOT/build-fuzz" ]] || where=("$build")
log "configuring $build (clang, CA_BUILD_FUZZERS=ON)"
cmake --preset fuzz -B "$build" "${launcher[@]}" ${CA_CMAKE_ARGS:-} >/dev/null
log "building ${targets[*]} with $CA_JOBS jobs"
cmake --build "${where[@]}" -j "$CA_JOBS" --target make_seeds "${targets[@]/#/fuzz_}"

# libtorch's allocations and static state read as leaks; a huge allocation a hostile graph asks
# for must come back as torch's error, not abort the run.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:allocator_may_return_null=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
seeds="$build/seeds"
"$build/fuzz/make_seeds" "$seeds" >/dev/null
for t in "${targets[@]}"; do
  case "$t" in tensors) kind=tensors ;; *) kind=graph ;; esac
  corpus="$build/corpus/$t"
  mkdir -p "$corpus" "$build/artifacts/$t"
  log "fuzzing $t for ${seconds}s (corpus $corpus)"
  nice -n 19 "$build/fuzz/fuzz_$t" "$corpus" "$seeds/$kind" "$CA_ROOT/fuzz/regressions/$t" \
    -max_total_time="$seconds" -timeout=30 -rss_limit_mb=4096 -malloc_limit_mb=4096 \
    -artifact_prefix="$build/artifacts/$t/" -print_final_stats=1 2>"$build/fuzz_$t.log" || {
    log "$t found a crash: see $build/fuzz_$t.log and $build/artifacts/$t/"
    tail -n 40 "$build/fuzz_$t.log" >&2
    exit 1
  }
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$build/fuzz_$t.log")
  log "$t: $runs executions in ${seconds}s, no finding"
done
