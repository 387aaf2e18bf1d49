#!/usr/bin/env bash
# Builds the C++ test suites with AddressSanitizer + UndefinedBehaviorSanitizer in their own
# build folder and runs them under ctest. libtorch itself is not instrumented: leak checking is
# off (its allocations and static state read as leaks), and the executables carry the ASan
# runtime themselves, so no LD_PRELOAD is needed.
#   scripts/sanitize.sh [ctest args...]     e.g. scripts/sanitize.sh -R GraphBadInput
set -euo pipefail
source "$(dirname "$0")/env.sh"
build="${CA_ASAN_BUILD:-$CA_ROOT/build-asan}"
targets=(${CA_ASAN_TARGETS:-ir_test serializer_test graph_corruption_test op_registry_test
                               functional_parity_test capture_test op_binding_test executor_test
                               executor_plan_test arg_convert_test parity_test compiled_backward_test
                               engine_hook_test compiled_grad_test hostile_graph_test
                               executor_dynamic_test device_placement_test make_seeds graph_load_replay
                               graph_replay_replay tensors_replay train_example})

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1:strict_string_checks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

torch_cmake=$("$CA_VENV/bin/python" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')
log "configuring $build (CA_SANITIZE=ON)"
cmake -S "$CA_ROOT" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_PREFIX_PATH="$torch_cmake" -DPython3_EXECUTABLE="$CA_VENV/bin/python" \
  -DCA_SANITIZE=ON -DCA_BUILD_BENCH=OFF -DCA_BUILD_TESTS=ON ${CA_CMAKE_ARGS:-} >/dev/null
# gtest_discover_tests runs each test binary after linking: it needs the options above too.
log "building ${targets[*]} with $CA_JOBS jobs"
cmake --build "$build" -j "$CA_JOBS" --target "${targets[@]}"
log "running ctest"
cd "$build"
# Targets not built here show up as "<target>_NOT_BUILT" placeholders: leave them out, and the
# install test, which needs the whole build.
ctest --output-on-failure -j "$CA_JOBS" -E '_NOT_BUILT$|^InstallConsumer' "$@"
