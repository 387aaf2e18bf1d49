#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# ctest entry: install the build into a temporary prefix, then configure, build and run the
# consumer project against that prefix alone (plus libtorch).
set -euo pipefail
build=$1 torch_cmake=$2 generator=$3
shift 3  # the rest: extra configure arguments (a CUDA build of torch needs its toolkit's)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$(dirname "$0")" -B "$work/build" -G "$generator" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/prefix;$torch_cmake" "$@" >/dev/null
cmake --build "$work/build" >/dev/null
"$work/prefix/bin/replay" --help >/dev/null
"$work/build/consumer" "$work/bwd.fb"
"$work/prefix/bin/replay" --verify "$work/bwd.fb"
