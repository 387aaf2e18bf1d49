#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Every source file (C++, Python, shell, CMake, FlatBuffers schema) carries the project's license
# line near its top (after a #! line). Fails naming the files without; --fix adds it to them.
#   tools/check_spdx.sh [--fix]
set -euo pipefail
cd "$(dirname "$0")/.."
tag="SPDX-License-Identifier: BSD-3-Clause"
fix=0
[[ "${1:-}" == --fix ]] && fix=1
mapfile -t files < <(git ls-files --cached --others --exclude-standard \
  '*.cpp' '*.h' '*.cu' '*.fbs' '*.h.in' '*.py' '*.sh' '*.cmake' '*.cmake.in' 'CMakeLists.txt' \
  '*/CMakeLists.txt' '*.toml' '.ci/run' | sort -u)
missing=()
for f in "${files[@]}"; do
  [[ -f "$f" ]] || continue
  head -n 3 "$f" | grep -q "$tag" && continue
  missing+=("$f")
  ((fix)) || continue
  case "$f" in
    *.cpp | *.h | *.cu | *.fbs | *.h.in) line="// $tag" ;;
    *) line="# $tag" ;;
  esac
  if head -n 1 "$f" | grep -q '^#!'; then
    sed -i "1a $line" "$f"
  else
    sed -i "1i $line" "$f"
  fi
done
if ((${#missing[@]} && !fix)); then
  printf 'no "%s" line in the first 3 lines of:\n' "$tag" >&2
  printf '  %s\n' "${missing[@]}" >&2
  echo "run tools/check_spdx.sh --fix to add it" >&2
  exit 1
fi
echo "spdx ok: ${#files[@]} files$( ((fix && ${#missing[@]})) && echo ", added to ${#missing[@]}")"
