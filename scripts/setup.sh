#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Installs everything ca-replay needs on a fresh Debian 12 machine (as root): Debian's packages,
# the virtual environment of torch CA_TORCH and the exporter. Safe to run again: each step checks
# before it installs. It builds nothing: scripts/build.sh does.
set -euo pipefail
source "$(dirname "$0")/env.sh"
start=$(date +%s)

# clang-format, clang-tidy and clang (the PCH clang-tidy reads) for the test command's checks.
debs=(cmake g++ ninja-build python3-venv libflatbuffers-dev flatbuffers-compiler libgtest-dev
      libbenchmark-dev clang-format clang-tidy clang libxxhash-dev libcli11-dev libgloo-dev
      iproute2 nlohmann-json3-dev graphviz)
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

# The Python exporter (python/ca_export), installed editable, so it is the checkout's own code. It
# needs only torch: graph files are written by the C++ writer (`replay --encode`).
# Reinstalled when it is another checkout's or its recorded version is not CMake's.
version=$(sed -nE 's/^project\(ca_replay VERSION ([0-9.]+).*/\1/p' "$CA_ROOT/CMakeLists.txt")
if ! "$CA_VENV/bin/python" -c "import ca_export, sys; sys.exit(not ca_export.__file__.startswith('$CA_ROOT/') or ca_export.__version__ != '$version')" 2>/dev/null; then
  log "installing ca_export $version (editable) from $CA_ROOT/python"
  "$CA_VENV/bin/pip" install -q --no-build-isolation --no-deps -e "$CA_ROOT/python" 2>&1 | grep -v "is ignored" || true
fi
log "torch $("$CA_VENV/bin/python" -c 'import torch; print(torch.__version__)') in $CA_VENV"

log "set-up done in $(( $(date +%s) - start )) s"
