# Shared settings for the project's scripts; sourced, never run.
# The virtual environment lives outside the repo so that clean clones share it.
CA_VENV="${CA_VENV:-/opt/ca-replay/venv}"
CA_BUILD="${CA_BUILD:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build}"
CA_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CA_TORCH_VERSION="2.13.0"
CA_JOBS="${CA_JOBS:-$(nproc)}"
log() { printf '[ca-replay] %s\n' "$*" >&2; }
