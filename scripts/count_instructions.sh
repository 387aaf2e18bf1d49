#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Instruction counts of eager backward and of its replay, per benchmark model, split by where the
# instructions go (our runtime, the functional forms' pack/unpack, allocation, kernels, ATen
# dispatch, autograd engine, tensor bookkeeping). Counted by valgrind's callgrind, so the figures
# repeat to the instruction whatever else the machine is doing, unlike wall time here.
#   scripts/count_instructions.sh [MODEL...]     deep_narrow_mlp, cnn, transformer_block (all)
# REPS=N backwards per side (default 5); TOP=K lists each side's K costliest functions;
# KEEP=DIR keeps the callgrind dumps there (for callgrind_annotate or kcachegrind). Needs the Release build (scripts/build.sh builds
# replay_bench) and valgrind (installed here if missing). A model takes a few minutes.
set -euo pipefail
source "$(dirname "$0")/env.sh"
[[ "$CA_FLAVOR" == release ]] || { log "count instructions on the release build"; exit 2; }
if ! command -v valgrind >/dev/null; then
  log "installing valgrind"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind >/dev/null
fi
"$CA_ROOT/scripts/build.sh" replay_bench >&2
models=("$@")
((${#models[@]})) || models=(deep_narrow_mlp cnn transformer_block)
reps="${REPS:-5}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for model in "${models[@]}"; do
  log "$model: $reps eager backwards and $reps replays under callgrind"
  valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$work/$model.cg" \
    "$CA_BUILD/bench/replay_bench" --count-instructions "$model" "$reps" \
    >"$work/$model.info" 2>"$work/$model.log" || { cat "$work/$model.log" >&2; exit 1; }
  read -r _ _ _ nodes _ steps _ _ _ threads <"$work/$model.info"
  # Dumps are numbered in the order the program made them: eager first, then replay.
  echo "### $model: $nodes graph nodes ($steps run by the replay), $threads thread(s)"
  echo
  python3 "$CA_ROOT/tools/callgrind_split.py" --nodes "$nodes" --reps "$reps" \
    --top "${TOP:-0}" "$work/$model.cg.1" "$work/$model.cg.2"
  if [[ -n "${KEEP:-}" ]]; then
    mkdir -p "$KEEP"
    cp "$work/$model.cg.1" "$KEEP/$model.eager.callgrind"
    cp "$work/$model.cg.2" "$KEEP/$model.replay.callgrind"
  fi
  echo
done
