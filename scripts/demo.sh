#!/usr/bin/env bash
# The main job on the bundled example: capture an MLP's backward in C++, then replay it
# Python-free and check it against eager autograd's gradients.
set -euo pipefail
source "$(dirname "$0")/env.sh"
"$CA_ROOT/scripts/setup.sh"
replay="$CA_BUILD/apps/replay/replay"
if [[ -x "$CA_BUILD/apps/capture_example/capture_example" ]]; then
  out="$CA_ROOT/out/mlp"
  mkdir -p "$out"
  "$CA_BUILD/apps/capture_example/capture_example" --out "$out"
  "$replay" --graph "$out/bwd.fb" --inputs "$out/batch.pt" --check "$out/expected.pt" --bench 20
else
  "$replay" --list-ops | tail -n 1
fi
