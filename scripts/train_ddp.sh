#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Launches N ranks of a data-parallel program on this machine, with the environment torchrun
# sets (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT), and waits for all of them.
#   scripts/train_ddp.sh N [--exe PROGRAM] [PROGRAM's options...]
# PROGRAM defaults to the built apps/train_ddp/train_ddp. MASTER_PORT defaults to a free port.
# Each rank's output is prefixed with its rank; exits non-zero if any rank does.
set -euo pipefail
source "$(dirname "$0")/env.sh"
if [[ $# -lt 1 || ! $1 =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: $0 N [--exe PROGRAM] [options...]   (N ranks, N >= 1)" >&2
  exit 2
fi
world=$1
shift
exe="$CA_BUILD/apps/train_ddp/train_ddp"
if [[ ${1:-} == --exe ]]; then
  exe=$2
  shift 2
fi
[[ -x $exe ]] || { echo "$0: $exe is not built (scripts/build.sh train_ddp)" >&2; exit 2; }
port=${MASTER_PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' INT TERM
for ((r = 0; r < world; ++r)); do
  (
    RANK=$r LOCAL_RANK=$r WORLD_SIZE=$world MASTER_ADDR=${MASTER_ADDR:-127.0.0.1} \
      MASTER_PORT=$port "$exe" "$@" 2>&1 | sed -u "s/^/[rank $r] /"
    exit "${PIPESTATUS[0]}"
  ) &
  pids+=($!)
done
failed=0
for ((r = 0; r < world; ++r)); do
  wait "${pids[$r]}" || { echo "rank $r exited with an error" >&2; failed=1; }
done
exit $failed
