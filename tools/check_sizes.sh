#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Prints the largest source files and fails when one passes the size budget (DESIGN.md, style 11).
#   tools/check_sizes.sh [MAX_LINES]   (default 400)
set -euo pipefail
cd "$(dirname "$0")/.."
max="${1:-400}"
mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.py' '*.sh' '*.fbs' 'CMakeLists.txt' '*/CMakeLists.txt')
# sed, not head, reads all of sort's output: head's early exit would SIGPIPE sort (pipefail).
wc -l "${files[@]}" | grep -v ' total$' | sort -rn | sed -n 1,5p
over=$(wc -l "${files[@]}" | grep -v ' total$' | awk -v m="$max" '$1 > m {print}')
if [[ -n "$over" ]]; then
  echo "files over the $max-line budget:" >&2
  echo "$over" >&2
  exit 1
fi
echo "size budget ok: no file over $max lines"
