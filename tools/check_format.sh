#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Every tracked C/C++ source and header is as clang-format (the repo's .clang-format, Debian's
# clang-format) writes it. Fails naming the files that are not; --fix formats them in place.
#   tools/check_format.sh [--fix]
set -euo pipefail
cd "$(dirname "$0")/.."
fix=0
[[ "${1:-}" == --fix ]] && fix=1
command -v clang-format >/dev/null || { echo "no clang-format: run scripts/setup.sh" >&2; exit 1; }
mapfile -t files < <(git ls-files '*.c' '*.cc' '*.cpp' '*.h' '*.hpp' '*.cu' '*.cuh' '*.h.in' |
                     while read -r f; do [[ -f "$f" ]] && echo "$f"; done)  # not deleted ones
# One clang-format for all (a process per file costs seconds); it names each file it would change.
# version.h.in is C++ with @VAR@ slots, which clang-format takes for C++ as well.
out=$(clang-format --dry-run --Werror "${files[@]}" 2>&1) && rc=0 || rc=$?
mapfile -t bad < <(sed -nE 's/^([^ :]+):[0-9]+:[0-9]+: error: .*clang-format-violations.*/\1/p' <<<"$out" | sort -u)
if ((rc && !${#bad[@]})); then
  echo "$out" >&2  # failed for another reason: a bad .clang-format, an unreadable file
  exit 1
fi
if ((${#bad[@]})); then
  if ((fix)); then
    clang-format -i "${bad[@]}"
    echo "format fixed: ${#bad[@]} files"
    exit 0
  fi
  echo "not as clang-format writes them (tools/check_format.sh --fix, or clang-format -i FILE):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "format ok: ${#files[@]} files"
