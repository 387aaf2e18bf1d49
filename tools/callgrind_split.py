# SPDX-License-Identifier: BSD-3-Clause
"""Splits callgrind dumps of eager backward and of its replay by where the instructions go.

    python3 tools/callgrind_split.py --nodes N EAGER_DUMP REPLAY_DUMP [--reps R] [--json]
                                     [--top K]

Each dump is a callgrind output file (scripts/count_instructions.sh makes them). Every
function's self cost (instructions executed in it, not in what it calls) is put in the first
category whose pattern its "object:function" matches; the table gives instructions per node of
one backward (dump total / reps / N) on each side and the ratio replay / eager. "ca-replay
runtime" is everything executed in our libraries, torch's inline header code compiled into them
included. Dispatcher wrappers are told apart by their own name's prefix, before the template
arguments that may name a kernel.
"""
import argparse
import collections
import json
import os
import re
import sys

STRIPPED = "match the function's own name, without template arguments or parameters"
# (category, pattern on "object:function"[, STRIPPED]); the first match wins: order matters.
CATEGORIES = [
    ("ca-replay runtime", re.compile(r"(^|/)libca_[a-z]+\.so[^:]*:|:ca::")),
    ("functional forms (pack/unpack)",
     re.compile(r"apply_functional|IValuePacker|PackedArgs|dynamo::autograd")),
    ("memory allocation",
     re.compile(r"malloc|(^|[^a-z_])free|operator new|operator delete|alloc_cpu|free_cpu|"
                r"CPUAllocator|CPUCachingAllocator|posix_memalign|tcache|_int_")),
    ("ATen dispatch and boxing",  # by the name's own prefix: see stripped()
     re.compile(r":(c10::impl::|c10::Dispatcher|c10::KernelFunction|c10::BoxedKernel|"
                r"c10::OperatorHandle|at::_ops::)"), STRIPPED),
    ("kernels and math",  # ???:0x... is code generated at run time: oneDNN's JIT kernels
     re.compile(r"^\?\?\?:0x|at::native::|at::vec::|at::internal::|Vectorized|cpu_kernel|sleef|Sleef|"
                r"mkl|dnnl|gemm|blas|GOMP|omp_|libgomp|libm[.-]|memcpy|memset|memmove|"
                r"libiomp|kmp_")),
    ("thread-locals and locks",
     re.compile(r"__tls_get_addr|ThreadLocal|TLS|_tls_|tls_|get_tls|autocast|AutogradState|"
                r"pthread_|std::mutex|condition_variable|getStepCallbacks|hasCallbacks|"
                r"getAccelerator")),
    ("ATen dispatch and boxing",
     re.compile(r"c10::Dispatcher|c10::impl::|c10::KernelFunction|c10::BoxedKernel|"
                r"c10::OperatorHandle|at::_ops::|RecordFunction|c10::DispatchKey|at::redispatch|"
                r"wrap_kernel_functor|make_boxed|at::\(anonymous namespace\)::|"
                r"at::compositeexplicitautograd|at::cpu::|at::meta::|TensorIterator|"
                r"at::Tensor::|at::[a-z_0-9]+\(")),
    ("autograd engine and nodes", re.compile(r"torch::autograd::")),
    ("tensors, IValues, refcounts",
     re.compile(r"c10::TensorImpl|c10::intrusive_ptr|c10::IValue|at::TensorBase|c10::SymInt|"
                r"c10::StorageImpl|c10::TensorOptions|SmallVector|c10::ivalue|c10::List|"
                r"c10::Type|c10::Symbol|std::")),
]
OTHER = "other"

NAME_REF = re.compile(r"^\((\d+)\)(?: (.*))?$")


def stripped(where):
    """ "obj:ns::f<args>(params)" without template arguments and parameters: "obj:ns::f"."""
    return re.split(r"[<(]", where, maxsplit=1)[0]


def self_costs(path):
    """{"object:function": self instructions} and the dump's total, from one callgrind file."""
    names = {"ob": {}, "fn": {}}
    cost_column = 1  # after the position columns the "positions:" header names
    ob = fn = ""
    costs = collections.Counter()
    total = None
    skip_next_cost = False  # the cost line after calls= is the call's inclusive cost

    def resolve(kind, value):
        m = NAME_REF.match(value)
        if not m:
            return value
        key, name = m.group(1), m.group(2)
        if name is not None:
            names[kind][key] = name
        return names[kind].get(key, value)

    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            if line.startswith("ob="):
                ob = resolve("ob", line[3:])
            elif line.startswith("fn="):
                fn = resolve("fn", line[3:])
            elif line.startswith("cob="):
                resolve("ob", line[4:])
            elif line.startswith("cfn="):
                resolve("fn", line[4:])
            elif line.startswith("calls="):
                skip_next_cost = True
            elif line.startswith("positions:"):
                cost_column = len(line.split(":", 1)[1].split())
            elif line.startswith(("summary:", "totals:")):
                total = int(line.split(":", 1)[1].split()[0])
            elif line[0].isdigit() or line[0] in "+-*":
                fields = line.split()
                if len(fields) <= cost_column:
                    continue
                if skip_next_cost:
                    skip_next_cost = False
                    continue
                costs[f"{os.path.basename(ob)}:{fn}"] += int(fields[cost_column])
    if total is None:
        total = sum(costs.values())
    return costs, total


def category_of(where):
    for name, pattern, *on in CATEGORIES:
        if pattern.search(stripped(where) if on == [STRIPPED] else where):
            return name
    return OTHER


def categorize(costs):
    out = collections.Counter()
    for where, n in costs.items():
        out[category_of(where)] += n
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("eager")
    ap.add_argument("replay")
    ap.add_argument("--nodes", type=int, required=True, help="nodes of the captured graph")
    ap.add_argument("--reps", type=int, default=1, help="backwards in each dump")
    ap.add_argument("--json", action="store_true", help="one JSON object instead of a table")
    ap.add_argument("--top", type=int, default=0, metavar="K",
                    help="also list each side's K costliest functions (self Ir/node)")
    a = ap.parse_args(argv)
    per = a.nodes * a.reps
    sides, top = {}, {}
    for side in ("eager", "replay"):
        costs, total = self_costs(getattr(a, side))
        sides[side] = (categorize(costs), total)
        top[side] = costs.most_common(a.top)
    rows = list(dict.fromkeys(entry[0] for entry in CATEGORIES)) + [OTHER]
    if a.json:
        json.dump({side: {"total_per_node": total / per,
                          "per_node": {r: cats[r] / per for r in rows}}
                   for side, (cats, total) in sides.items()}, sys.stdout)
        print()
        return 0
    (ec, et), (rc, rt) = sides["eager"], sides["replay"]
    print(f"| where | eager Ir/node | replay Ir/node |")
    print(f"|---|---:|---:|")
    for r in rows:
        print(f"| {r} | {ec[r] / per:,.0f} | {rc[r] / per:,.0f} |")
    print(f"| **total** | **{et / per:,.0f}** | **{rt / per:,.0f}** |")
    print(f"\nreplay / eager instructions: {rt / et:.3f} ({a.reps} backward(s) of {a.nodes} "
          f"nodes each side)")
    for side in ("eager", "replay") if a.top else ():
        print(f"\n{side}: the {a.top} costliest functions (self Ir/node)")
        for where, n in top[side]:
            print(f"  {n / per:9,.0f}  [{category_of(where)}]  {where[:150]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
