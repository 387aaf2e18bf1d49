#!/usr/bin/env bash
# Runs every test: sets up and builds first (idempotent), then the size budget, ctest and pytest,
# and ends with one summary line over all of them.
set -euo pipefail
source "$(dirname "$0")/env.sh"
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
