#!/usr/bin/env bash
# Runs every test: sets up and builds first (idempotent), then the size budget, ctest and pytest,
# and ends with one summary line over all of them.
# CI runs it against every torch in CA_TORCHES (default "2.13.0 2.14.1": the pinned CPU build,
# then a CUDA build, whose CUDA sources then compile and whose GPU tests skip without a GPU),
# then the C++ suites again under ASan+UBSan (scripts/sanitize.sh, the pinned torch; skip with
# CA_SANITIZE_TESTS=0). CA_TORCH=X runs one release only, without the sanitizer pass.
set -euo pipefail
if [[ -z "${CA_TORCH:-}" ]]; then
  total=0
  out=$(mktemp)
  trap 'rm -f "$out"' EXIT
  for v in ${CA_TORCHES:-2.13.0 2.14.1}; do
    # Not `tee /dev/stderr`: where stderr is a file, reopening it truncates what came before.
    CA_TORCH=$v "$0" | tee "$out"
    total=$(( total + $(tail -n 1 "$out" | cut -d' ' -f2) ))
  done
  if [[ "${CA_SANITIZE_TESTS:-1}" != 0 ]]; then
    start=$(date +%s)
    "$(dirname "$0")/sanitize.sh" | tee "$out"
    asan=$(sed -n 's/.*tests passed, 0 tests failed out of \([0-9]*\).*/\1/p' "$out")
    printf '[ca-replay] sanitizer pass: %s tests in %s s\n' "${asan:-0}" \
      "$(( $(date +%s) - start ))" >&2
    total=$(( total + ${asan:-0} ))
  fi
  echo "tests: $total passed, 0 failed"
  exit 0
fi
source "$(dirname "$0")/env.sh"
log "torch $CA_TORCH: venv $CA_VENV, build $CA_BUILD"
"$CA_ROOT/scripts/setup.sh"
start=$(date +%s)
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

log "size budget"
"$CA_ROOT/tools/check_sizes.sh"

log "ctest"
ctest --test-dir "$CA_BUILD" --output-on-failure -j "$CA_JOBS" | tee "$logs/ctest.log"
ctest_passed=$(sed -n 's/.*tests passed, 0 tests failed out of \([0-9]*\).*/\1/p' "$logs/ctest.log")

py_passed=0
if compgen -G "$CA_ROOT/tests/python/test_*.py" >/dev/null; then
  log "pytest"
  CA_BUILD="$CA_BUILD" "$CA_VENV/bin/python" -m pytest -q "$CA_ROOT/tests/python" |
    tee "$logs/pytest.log"
  py_passed=$(grep -Eo '[0-9]+ passed' "$logs/pytest.log" | tail -n 1 | cut -d' ' -f1)
fi

log "all tests passed in $(( $(date +%s) - start )) s (ctest ${ctest_passed:-0}, pytest ${py_passed:-0})"
echo "tests: $(( ${ctest_passed:-0} + ${py_passed:-0} )) passed, 0 failed"
