#!/usr/bin/env bash
# Compiles (syntax only) every source that touches torch internals against another torch's
# installed headers, e.g. a wheel unpacked outside the repo:
#   pip download torch==2.11.0 --no-deps -d /tmp/w && unzip -q /tmp/w/torch-*.whl 'torch/include/*' -d /tmp/t211
#   tools/check_torch_headers.sh /tmp/t211/torch/include
# Linking is not checked (a CUDA wheel's libraries need the nvidia packages); the runtime's own
# sources, the generated node table, the CUDA sources and the tests that include torch/csrc are.
# Never run in CI: it needs a multi-GB download.
set -euo pipefail
inc=${1:?usage: check_torch_headers.sh TORCH_INCLUDE_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
vh="$inc/torch/headeronly/version.h"
minor=$(sed -n 's/^#define TORCH_VERSION_MINOR \([0-9]*\)/\1/p' "$vh")
version=2.$minor.$(sed -n 's/^#define TORCH_VERSION_PATCH \([0-9]*\)/\1/p' "$vh")
std=c++17; ((minor >= 14)) && std=c++20
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$root/tools/gen_node_factories.py" "$inc/torch/csrc/autograd/generated/Functions.h" \
  "$work/node_factories.cpp"
flags=(-std=$std -fsyntax-only -Wall -Wextra -Werror -Wno-array-bounds -D_GLIBCXX_USE_CXX11_ABI=1
       -I"$root/runtime/include" -I"$root/runtime/src" -I"$root/ir/include" -I"$root/tests"
       -isystem "$inc" -isystem "$inc/torch/csrc/api/include" -isystem "${CUDA_HOME:-/usr/local/cuda}/include")
[[ $std == c++20 ]] && flags+=(-Wno-restrict)
mapfile -t sources < <(cd "$root" && ls runtime/src/*/*.cpp runtime/src/*.cpp 2>/dev/null
                       grep -l "torch/csrc" tests/*.cpp)
failed=0
for src in "${sources[@]}" "$work/node_factories.cpp"; do
  [[ $src = /* ]] || src="$root/$src"
  if ! g++ "${flags[@]}" "$src" 2>"$work/err"; then
    echo "FAIL ${src#$root/}"; head -20 "$work/err"; failed=$((failed + 1))
  fi
done
echo "torch $version headers ($std): ${#sources[@]} sources + node table, $failed failed"
((failed == 0))
