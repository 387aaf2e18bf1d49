#!/usr/bin/env bash
# Installs everything ca-replay needs on a fresh Debian 12 machine (as root), then configures
# and builds. Safe to run again: each step checks before it installs.
set -euo pipefail
source "$(dirname "$0")/env.sh"
start=$(date +%s)

debs=(cmake g++ ninja-build python3-venv libflatbuffers-dev flatbuffers-compiler libgtest-dev
      libbenchmark-dev clang-format libxxhash-dev)
missing=()
for p in "${debs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if ((${#missing[@]})); then
  log "installing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
else
  log "Debian packages present"
fi

if [[ ! -x "$CA_VENV/bin/python" ]]; then
  log "creating virtual environment at $CA_VENV"
  mkdir -p "$(dirname "$CA_VENV")"
  python3 -m venv "$CA_VENV"
fi
if ! "$CA_VENV/bin/python" -c "import torch, sys; import yaml; sys.exit(torch.__version__.split('+')[0] != '$CA_TORCH_VERSION')" 2>/dev/null; then
  log "installing torch==$CA_TORCH_VERSION and the build's and tests' packages (PyYAML for torchgen) into $CA_VENV"
  "$CA_VENV/bin/pip" install -q "torch==$CA_TORCH_VERSION" numpy pytest pyyaml 2>&1 | grep -v "is ignored" || true
fi
"$CA_VENV/bin/python" -c "import torch, numpy, pytest, yaml" || { log "venv is incomplete"; exit 1; }
log "torch $("$CA_VENV/bin/python" -c 'import torch; print(torch.__version__)') in $CA_VENV"

torch_cmake=$("$CA_VENV/bin/python" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')
log "configuring $CA_BUILD"
cmake -S "$CA_ROOT" -B "$CA_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$torch_cmake" -DPython3_EXECUTABLE="$CA_VENV/bin/python" \
  -DCA_WERROR=ON ${CA_CMAKE_ARGS:-} >/dev/null
log "building with $CA_JOBS jobs"
cmake --build "$CA_BUILD" -j "$CA_JOBS"
log "set-up done in $(( $(date +%s) - start )) s"
