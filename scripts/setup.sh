#!/usr/bin/env bash
# Installs everything ca-replay needs on a fresh Debian 12 machine (as root), then configures
# and builds. Safe to run again: each step checks before it installs.
set -euo pipefail
source "$(dirname "$0")/env.sh"
start=$(date +%s)

debs=(cmake g++ ninja-build python3-venv libflatbuffers-dev flatbuffers-compiler libgtest-dev
      libbenchmark-dev clang-format libxxhash-dev libcli11-dev
      nlohmann-json3-dev)
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

# The Python exporter (python/ca_export): its FlatBuffers code is generated from the schema here,
# never committed; the package is installed editable, so it is the checkout's own code.
flatc --python -o "$CA_ROOT/python/ca_export/_generated" "$CA_ROOT/schema/ca_graph.fbs"
touch "$CA_ROOT/python/ca_export/_generated/__init__.py"
if ! "$CA_VENV/bin/python" -c "import flatbuffers, xxhash" 2>/dev/null; then
  log "installing flatbuffers and xxhash into $CA_VENV"
  "$CA_VENV/bin/pip" install -q "flatbuffers==24.3.25" "xxhash==3.5.0" 2>&1 | grep -v "is ignored" || true
fi
if ! "$CA_VENV/bin/python" -c "import ca_export, sys; sys.exit(not ca_export.__file__.startswith('$CA_ROOT/'))" 2>/dev/null; then
  log "installing ca_export (editable) from $CA_ROOT/python"
  "$CA_VENV/bin/pip" install -q --no-build-isolation --no-deps -e "$CA_ROOT/python" 2>&1 | grep -v "is ignored" || true
fi
log "torch $("$CA_VENV/bin/python" -c 'import torch; print(torch.__version__)') in $CA_VENV"

torch_cmake=$("$CA_VENV/bin/python" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')
# A CUDA build of torch (2.14.1 from PyPI is one) needs the CUDA toolkit's nvcc to configure and
# the nvrtc library its wheel ships; the CUDA sources (runtime/src/cuda/) then build too.
cuda_args=()
if "$CA_VENV/bin/python" -c "import sys, torch; sys.exit(torch.version.cuda is None)"; then
  cuda_root="${CUDA_HOME:-/usr/local/cuda}"
  [[ -x "$cuda_root/bin/nvcc" ]] || { log "torch $CA_TORCH is a CUDA build: needs nvcc in $cuda_root (set CUDA_HOME)"; exit 1; }
  nvrtc=$("$CA_VENV/bin/python" "$CA_ROOT/scripts/find_nvrtc.py")
  cuda_args=(-DCUDA_TOOLKIT_ROOT_DIR="$cuda_root" -DCUDA_nvrtc_LIBRARY="$nvrtc")
  log "CUDA build of torch: toolkit $cuda_root, nvrtc $nvrtc"
fi
log "configuring $CA_BUILD"
cmake -S "$CA_ROOT" -B "$CA_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$torch_cmake" -DPython3_EXECUTABLE="$CA_VENV/bin/python" \
  -DCA_TEST_PYTHON="$CA_VENV/bin/python" -DCA_WERROR=ON "${cuda_args[@]}" ${CA_CMAKE_ARGS:-} >/dev/null
log "building with $CA_JOBS jobs"
cmake --build "$CA_BUILD" -j "$CA_JOBS"
log "set-up done in $(( $(date +%s) - start )) s"
