# SPDX-License-Identifier: BSD-3-Clause
"""aten nodes (from regions whose forward was torch.compile'd): an OpOverload call in the FX graph
becomes the full boxed stack the dispatcher expects, typed by the op's own schema."""
from __future__ import annotations

from typing import Any, List

import torch

from .ir import Arg, ArgType
from .typed_args import ExportError, typed_arg

# torch._C JIT type kinds -> ArgTypeKind names (Python schemas show ScalarType etc. as int).
_KINDS = {"TensorType": "Tensor", "IntType": "Int", "SymIntType": "SymInt", "FloatType": "Float",
          "SymFloatType": "SymFloat", "BoolType": "Bool", "NumberType": "Number",
          "StringType": "String", "ComplexType": "Complex", "NoneType": "None",
          "DeviceObjType": "Device", "ScalarTypeType": "ScalarType", "LayoutType": "Layout",
          "MemoryFormatType": "MemoryFormat", "AnyType": "Any", "OptionalType": "Optional",
          "ListType": "List", "TupleType": "Tuple"}


def arg_type(jit_type: Any, where: str) -> ArgType:
    kind = _KINDS.get(jit_type.kind())
    if kind is None:
        raise ExportError(f"{where}: schema type {jit_type} is not supported")
    return ArgType(kind, tuple(arg_type(c, where) for c in jit_type.containedTypes()))


def boxed_stack(op: torch._ops.OpOverload, args: tuple, kwargs: dict, where: str) -> List[Arg]:
    """Positional args, then kwargs by name, then defaults: one Arg per schema argument."""
    schema = op._schema
    out = []
    for k, a in enumerate(schema.arguments):
        if k < len(args) and not a.kwarg_only:
            value = args[k]
        elif a.name in kwargs:
            value = kwargs[a.name]
        elif a.has_default_value():
            value = a.default_value
        else:
            raise ExportError(f"{where}: argument '{a.name}' of {schema.name} is missing")
        out.append(typed_arg(value, arg_type(a.type, where), f"{where}.{a.name}"))
    return out


def num_returns(op: torch._ops.OpOverload, where: str) -> int:
    """How many tensors the op leaves on the stack; ops returning lists are refused."""
    for r in op._schema.returns:
        if r.type.kind() != "TensorType":
            raise ExportError(f"{where}: {op._schema.name} returns {r.type}, the executor takes "
                              "tensor results only")
    return len(op._schema.returns)
