#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The suite of one torch (CA_TORCH, default 2.13.0) with our code under ASan+UBSan: builds every
# target into build-asan/ and runs ctest and pytest there (scripts/test.sh with CA_FLAVOR=asan;
# CI's 2.13.0 suite is this run). Extra arguments go to ctest, e.g. scripts/sanitize.sh -R Graph.
set -euo pipefail
CA_TORCH="${CA_TORCH:-2.13.0}" CA_FLAVOR=asan exec "$(dirname "$0")/test.sh" "$@"
