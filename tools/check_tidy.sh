#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# clang-tidy (.clang-tidy: bugprone, performance, DESIGN.md's naming) over the project's own .cpp
# files, compiled as the release preset compiles them (build/compile_commands.json; configured, and
# its FlatBuffers header generated, when missing). That database is g++'s: its precompiled header
# (-include .../cmake_pch.hxx, a .gch clang cannot read) becomes a clang PCH of the same header,
# built once per run (parsing libtorch's headers is most of a file's cost), and g++-only flags go.
#   tools/check_tidy.sh [-j JOBS] [--no-torch] [PATH...]
# PATHs are files or folders (default: every tracked .cpp the database compiles); --no-torch adds
# every file that reaches no libtorch header (compiled without a PCH: a few seconds each, where
# one that reaches ATen or torch/torch.h takes 15-30). Prints each finding once and a count per
# check; exits 1 when there is one (another status: clang-tidy could not run).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
jobs=$(nproc)
light=0
while [[ "${1:-}" == -* ]]; do
  case "$1" in
    -j) jobs=$2; shift 2 ;;
    --no-torch) light=1; shift ;;
    *) echo "usage: tools/check_tidy.sh [-j JOBS] [--no-torch] [PATH...]" >&2; exit 2 ;;
  esac
done
command -v clang-tidy >/dev/null && command -v clang++ >/dev/null ||
  { echo "no clang-tidy or clang++: run scripts/setup.sh" >&2; exit 1; }
start=$(date +%s)
db=build/compile_commands.json
if [[ ! -f $db || ! -f build/schema/generated/ca_graph_generated.h ]]; then
  CA_TORCH=2.13.0 CA_FLAVOR=release CA_BUILD= scripts/build.sh ca_schema_gen >/dev/null || exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The database for clang: each PCH include becomes -include-pch of a clang PCH built from the
# PCH target's own command; -Werror goes (findings are counted here), and g++'s -Winvalid-pch.
python3 - "$root" "$db" "$work" "$light" "$@" <<'PY' || exit 2
import json, os, re, subprocess, sys
root, db, work, light, wanted = *sys.argv[1:4], sys.argv[4] == "1", sys.argv[5:]
# cmake/pch/empty.cpp is the PCH targets' empty source.
tracked = set(subprocess.run(["git", "ls-files", "*.cpp", ":!cmake/"], capture_output=True,
                             text=True, check=True).stdout.split())
wanted = [os.path.relpath(os.path.abspath(f), root) for f in wanted]
def asked(f, pch):
  if not wanted and not light:
    return True
  return (light and not pch) or any(f == w or f.startswith(w.rstrip("/") + "/") for w in wanted)
def clang(cmd):
  cmd = re.sub(r"^\S+", "clang++", cmd)
  return re.sub(r" -(Werror|Winvalid-pch|Wno-maybe-uninitialized)(?= )", "", cmd)
out, files, pchs = [], [], {}
for e in json.load(open(db)):
  cmd, f = e["command"], os.path.relpath(e["file"], root)
  m = re.search(r" -include \S+/ca_pch_(\w+)\.dir/cmake_pch\.hxx", cmd)
  if f.startswith("build/CMakeFiles/ca_pch_"):  # a PCH target: its flags make the clang PCH
    kind = re.search(r"ca_pch_(\w+)\.dir", f).group(1)
    flags = re.sub(r" -x c\+\+-header.*", "", clang(cmd))
    pchs[kind] = f"{flags} -Wno-unknown-warning-option -x c++-header {root}/cmake/pch/ca_pch_{kind}.h -Xclang -emit-pch -o {work}/{kind}.pch"
    continue
  if f not in tracked or f in files or not asked(f, m):
    continue  # generated sources, a file compiled by two targets, one not asked for
  if m:
    cmd = cmd.replace(m.group(0), f" -include-pch {work}/{m.group(1)}.pch")
  files.append(f)
  out.append(dict(e, command=clang(cmd)))
json.dump(out, open(f"{work}/compile_commands.json", "w"))
with open(f"{work}/files", "w") as w:
  w.write("".join(f + "\n" for f in files))
with open(f"{work}/pch.sh", "w") as w:  # only the PCHs the chosen files use
  used = {k for k in pchs if any(f"/{k}.pch" in e["command"] for e in out)}
  w.write("".join(f"cd {root}/build && {pchs[k]}\n" for k in sorted(used)))
PY
[[ -s "$work/files" ]] || { echo "no file to check" >&2; exit 2; }
nfiles=$(wc -l <"$work/files")
echo "clang-tidy: $nfiles files, $jobs jobs; clang PCH of $(grep -o 'ca_pch_[a-z]*\.h' "$work/pch.sh" | tr '\n' ' ')"
bash -e "$work/pch.sh" || exit 2
# One clang-tidy per file; each finding's lines go to that file's log. A finding in a header
# comes once per file that includes it: counted once.
export root work
xargs -a "$work/files" -P "$jobs" -I{} sh -c '
  log="$work/$(echo "{}" | tr / _).log"
  t0=$(date +%s%N)
  clang-tidy -p "$work" --quiet --extra-arg=-Wno-unknown-warning-option \
    --header-filter="^$root/(apps|bench|fuzz|ir|runtime|serializer|tests)/" "$root/{}" >"$log" 2>"$log.err" ||
    { cat "$log" "$log.err" >&2; exit 255; }
  echo "$(( ($(date +%s%N) - t0) / 1000000 )) {}" >>"$work/times"'
echo "slowest: $(sort -rn "$work/times" | sed -n 1,3p | awk '{printf "%s %.1f s; ", $2, $1 / 1000}')"
cat "$work"/*.log | awk '/: (warning|error): /{ if (seen[$0]++) skip=1; else skip=0 } !skip' >"$work/all"
findings=$(grep -E ': (warning|error): ' "$work/all" || true)
elapsed=$(( $(date +%s) - start ))
if [[ -n "$findings" ]]; then
  cat "$work/all"
  echo "clang-tidy findings by check:"
  sed -nE 's/.*\[([a-z0-9.,-]+)\]$/\1/p' <<<"$findings" | sort | uniq -c | sort -rn
  echo "clang-tidy: $(wc -l <<<"$findings") findings in $nfiles files, $elapsed s" >&2
  exit 1
fi
echo "clang-tidy ok: $nfiles files, no finding, $elapsed s"
