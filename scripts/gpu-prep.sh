#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Fills .gpu-deps/ (ignored by git; carried to the lent GPU machine) with what that machine's
# image lacks to build ca-replay: FlatBuffers (headers, library, CMake config, flatc, and the
# flatc-generated schema header in case the carried flatc cannot run there), xxHash, Gloo's
# headers (torch's ProcessGroupGloo.hpp includes them; the wheel ships none), and the
# GoogleTest sources (built there by gpu-check.sh). Run on this development machine after
# scripts/setup.sh; then run scripts/gpu-check.sh on the GPU machine with .gpu-deps carried.
set -euo pipefail
source "$(dirname "$0")/env.sh"
deps="$CA_ROOT/.gpu-deps"
arch=x86_64-linux-gnu
rm -rf "$deps"
mkdir -p "$deps/prefix/include" "$deps/prefix/lib/$arch/cmake" "$deps/prefix/bin" "$deps/generated"
cp -r /usr/include/flatbuffers /usr/include/xxhash.h /usr/include/gloo "$deps/prefix/include/"
cp -a /usr/lib/$arch/libflatbuffers.* /usr/lib/$arch/libxxhash.so* "$deps/prefix/lib/$arch/"
cp -r /usr/lib/$arch/cmake/flatbuffers "$deps/prefix/lib/$arch/cmake/"
cp /usr/bin/flatc "$deps/prefix/bin/"
flatc --cpp --scoped-enums -o "$deps/generated" "$CA_ROOT/schema/ca_graph.fbs"
cp -r /usr/src/googletest "$deps/googletest"
log "filled $deps ($(du -sh "$deps" | cut -f1)); carry it: run(carry=[\".gpu-deps\"], command=\"scripts/gpu-check.sh\")"
