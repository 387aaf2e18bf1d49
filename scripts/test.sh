#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs every test: sets up and builds first (idempotent), then the size budget, ctest and pytest,
# and ends with one summary line over all of them.
# CI runs each suite of CA_SUITES (default "2.13.0:asan 2.14.1:release"): the pinned CPU build
# with our code under ASan+UBSan (every test that can run there does), then a CUDA build of torch
# in Release (its CUDA sources compile, its GPU tests skip without a GPU, and the few tests that
# cannot run under the sanitizers run there: see tests/CMakeLists.txt). The plain Release build of
# 2.13.0 (build/) is the main job's and the benchmarks'. CA_TORCH=X [CA_FLAVOR=asan] runs that one
# suite (release by default). Extra arguments go to ctest, e.g. scripts/test.sh -R Parity.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if [[ -z "${CA_TORCH:-}" ]]; then
  total=0
  start=$(date +%s)
  out=$(mktemp)
  trap 'rm -f "$out"' EXIT
  for suite in ${CA_SUITES:-2.13.0:asan 2.14.1:release}; do
    # Not `tee /dev/stderr`: where stderr is a file, reopening it truncates what came before.
    CA_TORCH=${suite%%:*} CA_FLAVOR=${suite#*:} "$0" "$@" | tee "$out"
    total=$(( total + $(tail -n 1 "$out" | cut -d' ' -f2) ))
  done
  # clang-tidy once per run, after the first suite's set-up installed it, on what fits CI's
  # budget (about 9 minutes of 2 cores): the product's code (ir, serializer, the runtime, the
  # replay CLI) and every file that reaches no libtorch header. The rest (tests, benchmarks,
  # examples) adds about 15 minutes (a file that reaches ATen costs about 15 s, torch/torch.h
  # 30 s): tools/check_tidy.sh, by hand. A finding fails the run, as a failing test does.
  printf '[ca-replay] clang-tidy\n' >&2
  "$here/../tools/check_tidy.sh" --no-torch ir serializer runtime/src apps/replay >&2
  printf '[ca-replay] every suite passed in %s s\n' "$(( $(date +%s) - start ))" >&2
  echo "tests: $total passed, 0 failed"
  exit 0
fi
source "$here/env.sh"
log "suite: torch $CA_TORCH, $CA_FLAVOR build, venv $CA_VENV, build $CA_BUILD"
start=$(date +%s)
"$CA_ROOT/scripts/setup.sh"
"$CA_ROOT/scripts/build.sh"
built=$(date +%s)
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
# Tests that passed in a JUnit file (ctest --output-junit, pytest --junitxml).
junit_passed() {
  python3 - "$1" <<'PY'
import sys, xml.etree.ElementTree as ET
cases = ET.parse(sys.argv[1]).getroot().iter("testcase")
print(sum(1 for c in cases if c.get("status", "run") == "run"
          and not any(ch.tag in ("failure", "error", "skipped") for ch in c)))
PY
}

log "size budget, license lines and format"
"$CA_ROOT/tools/check_sizes.sh"
"$CA_ROOT/tools/check_spdx.sh"
"$CA_ROOT/tools/check_format.sh"

log "ctest"
# The folder's test preset (CMakePresets.json; ctest reads it from the source folder), else the
# folder itself.
where=(--test-dir "$CA_BUILD")
((CA_BY_PRESET)) && where=(--preset "$CA_PRESET")
(cd "$CA_ROOT" && ctest "${where[@]}" --output-on-failure -j "$CA_JOBS" \
  --output-junit "$logs/ctest.xml" "$@")
ctest_passed=$(junit_passed "$logs/ctest.xml")

py_passed=0
if (($# == 0)) && compgen -G "$CA_ROOT/tests/python/test_*.py" >/dev/null; then
  log "pytest"
  CA_BUILD="$CA_BUILD" "$CA_VENV/bin/python" -m pytest -q "$CA_ROOT/tests/python" \
    --junitxml "$logs/pytest.xml"
  py_passed=$(junit_passed "$logs/pytest.xml")
fi

now=$(date +%s)
log "torch $CA_TORCH ($CA_FLAVOR): set-up and build $(( built - start )) s, tests $(( now - built )) s (ctest $ctest_passed, pytest $py_passed)"
echo "tests: $(( ctest_passed + py_passed )) passed, 0 failed"
