#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The main job on the bundled example: capture an MLP's backward in C++, then replay it
# Python-free and check it against eager autograd's gradients. Builds only what it runs (the
# libraries, replay, capture_example); scripts/test.sh builds the rest.
set -euo pipefail
source "$(dirname "$0")/env.sh"
start=$(date +%s)
"$CA_ROOT/scripts/setup.sh"
"$CA_ROOT/scripts/build.sh" replay capture_example
out="$CA_ROOT/out/mlp"
mkdir -p "$out"
"$CA_BUILD/apps/capture_example/capture_example" --out "$out"
"$CA_BUILD/apps/replay/replay" --graph "$out/bwd.fb" --inputs "$out/batch.pt" \
  --check "$out/expected.pt" --bench 20
log "main job done in $(( $(date +%s) - start )) s"
