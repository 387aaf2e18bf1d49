# Shared settings for the project's scripts; sourced, never run.
# CA_TORCH picks the torch release (default 2.13.0, the pinned CPU build). Each release gets its
# own virtual environment outside the repo (so that clean clones share it) and its own build
# folder: 2.13.0 keeps /opt/ca-replay/venv and build/, others use venv-<ver> and build-<ver>/.
CA_TORCH="${CA_TORCH:-2.13.0}"
CA_TORCH_VERSION="$CA_TORCH"
CA_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ "$CA_TORCH" == 2.13.0 ]]; then
  CA_VENV="${CA_VENV:-/opt/ca-replay/venv}"
  CA_BUILD="${CA_BUILD:-$CA_ROOT/build}"
else
  CA_VENV="${CA_VENV:-/opt/ca-replay/venv-$CA_TORCH}"
  CA_BUILD="${CA_BUILD:-$CA_ROOT/build-$CA_TORCH}"
fi
CA_JOBS="${CA_JOBS:-$(nproc)}"
log() { printf '[ca-replay] %s\n' "$*" >&2; }
