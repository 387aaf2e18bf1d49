#!/usr/bin/env bash
# Runs every test: sets up and builds first (idempotent), then ctest, then pytest.
set -euo pipefail
source "$(dirname "$0")/env.sh"
"$CA_ROOT/scripts/setup.sh"
start=$(date +%s)
log "ctest"
ctest --test-dir "$CA_BUILD" --output-on-failure -j "$CA_JOBS"
if compgen -G "$CA_ROOT/tests/python/test_*.py" >/dev/null; then
  log "pytest"
  CA_BUILD="$CA_BUILD" "$CA_VENV/bin/python" -m pytest -q "$CA_ROOT/tests/python"
fi
log "all tests passed in $(( $(date +%s) - start )) s"
