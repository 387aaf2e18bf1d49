#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes the per-op length rules of the installed torch's generated autograd functions.

The functional forms index `grads` and some saved size lists without checking their length
(`grads[0]`, `mm_mat1_backward`'s `sizes[1]`, `split_with_sizes_backward`'s `split_sizes[j]`).
The facts come from torch's own codegen inputs shipped in the wheel (torchgen/packaged:
derivatives.yaml, native_functions.yaml) read with torchgen itself, so they follow the torch
that is built against:
  - how many grads each op reads (`grad` is grads[0]; a named gradient is grads[k]);
  - the names of its packed args, in upstream's packing order (needs_input_grad, each tensor
    list's size, saved inputs then saved outputs sorted by name, retain_variables), so that a
    rule can name an arg by position;
  - list rules: a tensor's saved sizes and strides have one length; mm_mat{1,2}_backward reads
    two of each. Rules a formula's text does not show (a helper's own indexing) are written by
    hand in the runtime's guard table, next to the per-call checks.

usage: gen_op_rules.py OUT.cpp
"""
import os
import re
import sys

from torchgen.api.autograd import uses_retain_variables, uses_single_grad
from torchgen.api.types import TENSOR_LIST_LIKE_CTYPES

from torch_derivatives import differentiability_infos

# Ops whose formula passes the whole `grads` list to a helper, with how many grads it reads:
# split_backward / split_with_sizes_backward read grads[num_splits - 1]; linear_double_backward
# reads grads[0..2]. What those helpers read of their packed lists, and every other rule that
# names a helper's own indexing, is written by hand in the runtime's guard table
# (runtime/src/guards/guard_rows.cpp), by upstream's arg names.
WHOLE_GRADS = {
    "SplitBackward0": 1,
    "UnsafeSplitBackward0": 1,
    "SplitWithSizesBackward0": 1,
    "UnsafeSplitWithSizesBackward0": 1,
    "SplitWithSizesBackwardAutogradNestedTensor0": 1,
    "UnbindBackward0": 1,
    "LinearBackwardBackward0": 3,
}
MM_HELPERS = re.compile(r"\bmm_mat[12]_backward\(\s*[\w\[\]]+,\s*[\w\[\]]+,\s*(\w+)_sym_sizes\b")


def packed_arg_names(info):
    names = ["needs_input_grad"]
    names += [f"{a.name}_size_" for a in info.args_with_derivatives
              if a.type in TENSOR_LIST_LIKE_CTYPES]
    for saved in (info.all_saved_inputs, info.all_saved_outputs):
        names += sorted(str(s.nctype.name) for s in saved)
    if uses_retain_variables(info):
        names.append("retain_variables")
    return names


def grads_read(info):
    """Smallest grads count the op's functional form indexes safely, or None if unknown."""
    formulas = " ".join(d.formula for d in info.derivatives)
    indexed = re.findall(r"\bgrads\[\s*(\w+)\s*\]", formulas)
    if re.search(r"\bgrads\b(?!\s*\[)", formulas) or not all(i.isdigit() for i in indexed):
        return None  # a whole-list user (a helper, a loop): WHOLE_GRADS, FOREACH or nothing
    if uses_single_grad(info):
        return 1
    used = [info.available_named_gradients.index(n) for n in info.used_named_gradients]
    used += [int(i) for i in indexed]
    return max(used) + 1 if used else 0


def foreach_rules(info, names):
    """A foreach formula runs once per grad and reads element i of each saved list."""
    rules = []
    lists = [str(s.nctype.name) for s in (*info.all_saved_inputs, *info.all_saved_outputs)
             if re.search(r"TensorList|VectorCType|ArrayRefCType", str(s.nctype.type))]
    for n in lists:
        gate = 0
        for d in info.derivatives:
            if re.search(rf"\b{n}\b", d.formula):
                gate |= gate_of(info, d)
        rules.append(("kCoversGrads", n, None, gate))
    return rules


def gate_of(info, derivative):
    """Bitmask of the needs_input_grad flags under which `derivative`'s formula runs."""
    inputs = [a.name for a in info.args_with_derivatives]
    mask = 0
    for var in derivative.var_names:
        if var in inputs:
            mask |= 1 << inputs.index(var)
    return mask


def list_rules(info, names):
    """Rules over lists each formula reads, gated by the flags under which it runs."""
    rules = []
    for d in info.derivatives:
        gate = gate_of(info, d)
        used = set(re.findall(r"\w+", d.formula))
        for n in sorted(used & set(names)):
            strides = n[: -len("sizes")] + "strides"
            if n.endswith("_sym_sizes") and strides in used and strides in names:
                rules.append(("kSameLength", n, strides, gate))
        # as_strided's backwards index a TensorGeometry's strides by its sizes' dims.
        for n in sorted(used & set(names)):
            if n.endswith("_geometry"):
                rules.append(("kGeometry", n, None, gate))
            # Saved sizes of a forward tensor: the formula may allocate from them.
            elif n.endswith(("_sym_sizes", "_sym_sizes_opt")):
                rules.append(("kTensorSizes", n, None, gate))
            elif re.search(r"_args_sizes(_symint)?$", n):
                rules.append(("kTensorSizesList", n, None, gate))
            elif "_argsize_" in n:
                rules.append(("kTensorSize", n, None, gate))
        for tensor in MM_HELPERS.findall(d.formula):
            for suffix in ("_sym_sizes", "_sym_strides"):
                if tensor + suffix in names:
                    rules.append(("kLength", tensor + suffix, 2, gate))
    # A tensor list's per-element saved lists (`tensors_args_sizes`) have one entry per element
    # (`tensors_size_`): the helpers index them together, and copy_range asserts the count.
    inputs = [a.name for a in info.args_with_derivatives]
    for i, arg in enumerate(inputs):
        if arg + "_size_" not in names:
            continue
        # The op returns one grad per list element: at most the node's outputs (and memory).
        rules.append(("kAtMostOutputs", arg + "_size_", 0, 0))
        for n in names:
            if n.startswith(arg + "_args_"):
                rules.append(("kLengthIsArg", n, arg + "_size_", 1 << i))
    return rules


def main(out_path):
    table = {}
    for info in differentiability_infos():
        names = packed_arg_names(info)
        if info.op in WHOLE_GRADS:
            min_grads, rules = WHOLE_GRADS[info.op], []
        elif info.op.startswith("Foreach"):
            min_grads, rules = 0, foreach_rules(info, names) + list_rules(info, names)
        else:
            min_grads = grads_read(info)
            if min_grads is None:
                continue
            rules = list_rules(info, names)
        table[info.op] = (min_grads, names, rules)

    lines = ["// Generated by tools/gen_op_rules.py from the installed torch's derivatives.yaml.",
             '#include "guards/op_rules.h"', "", "namespace ca::detail {", "",
             "const std::vector<OpRules>& generated_op_rules() {",
             "  static const std::vector<OpRules> kRules = {"]
    for op in sorted(table):
        min_grads, names, rules = table[op]
        cells = []
        for kind, a, b, gate in rules:
            b_val = 0 if b is None else (b if isinstance(b, int) else names.index(b))
            cells.append(f"{{ListRule::{kind}, {names.index(a)}, {b_val}, {gate}u, \"{a}\"}}")
        quoted = ", ".join(f'"{n}"' for n in names)
        lines.append(f"      {{\"{op}\", {min_grads}, {len(names)}, {{{', '.join(cells)}}}, "
                     f"{{{quoted}}}}},")
    lines += ["  };", "  return kRules;", "}", "", "}  // namespace ca::detail", ""]
    tmp = out_path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines))
    os.replace(tmp, out_path)


if __name__ == "__main__":
    main(sys.argv[1])
