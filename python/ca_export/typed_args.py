# SPDX-License-Identifier: BSD-3-Clause
"""Python packed values -> typed ir.Args. Compiled autograd hands packed args over untyped
(ScalarType and Layout as plain ints, empty lists without an element type); the op's schema from
the C++ registry says what each one is, exactly as the C++ packer would have produced it."""
from __future__ import annotations

import dataclasses
from typing import Any

import torch

from .ir import NO_VALUE, Arg, ArgType


class ExportError(RuntimeError):
    """The graph holds something ca-replay cannot represent; the message names the node."""


@dataclasses.dataclass(frozen=True)
class TensorRef:
    """A tensor value of the graph being built."""
    id: int


@dataclasses.dataclass(frozen=True)
class SymRef:
    """An int graph input: a symbolic size (dynamic shapes)."""
    id: int


_DTYPES = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16,
           torch.float32, torch.float64, torch.complex32, torch.complex64, torch.complex128,
           torch.bool, torch.qint8, torch.quint8, torch.qint32, torch.bfloat16]
_LAYOUTS = [torch.strided, torch.sparse_coo, torch.sparse_csr, torch._mkldnn, torch.sparse_csc,
            torch.sparse_bsr, torch.sparse_bsc, torch.jagged]  # c10::Layout order
_MEMORY_FORMATS = [torch.contiguous_format, torch.preserve_format, torch.channels_last,
                   torch.channels_last_3d]
_DEVICE_TYPES = {"cpu": 0, "cuda": 1}

INT = ArgType("Int")
SYMINT = ArgType("SymInt")


def scalar_type_code(dtype: torch.dtype) -> int:
    """c10::ScalarType of a torch dtype."""
    try:
        return _DTYPES.index(dtype)
    except ValueError:
        raise ExportError(f"dtype {dtype} has no c10::ScalarType code known to ca_export") from None


def device_arg(device: torch.device) -> Arg:
    if device.type not in _DEVICE_TYPES:
        raise ExportError(f"device {device} is not supported (cpu and cuda are)")
    return Arg("Device", i=_DEVICE_TYPES[device.type],
               device_index=-1 if device.index is None else device.index)


def _enum_code(value: Any, table: list, what: str, where: str) -> int:
    if isinstance(value, int):
        return value
    if value in table:
        return table.index(value)
    if isinstance(value, torch.dtype):
        return scalar_type_code(value)
    raise ExportError(f"{where}: expected a {what}, got {value!r}")


def untyped_arg(value: Any, where: str) -> Arg:
    """An Arg for a value whose declared type is Any: its own Python type decides."""
    if isinstance(value, (TensorRef, SymRef)) or value is None or isinstance(value, bool):
        return typed_arg(value, ArgType("Any"), where)
    if isinstance(value, int):
        return Arg("Int", i=value)
    if isinstance(value, float):
        return Arg("Double", d=value)
    if isinstance(value, complex):
        return Arg("Complex", c=value)
    if isinstance(value, str):
        return Arg("String", s=value)
    if isinstance(value, torch.device):
        return device_arg(value)
    if isinstance(value, torch.dtype):
        return Arg("ScalarType", i=scalar_type_code(value))
    if isinstance(value, tuple):
        return Arg("Tuple", items=[untyped_arg(v, f"{where}.{k}") for k, v in enumerate(value)])
    if isinstance(value, list):
        return _list([untyped_arg(v, f"{where}[{k}]") for k, v in enumerate(value)], ArgType("Any"))
    raise ExportError(f"{where}: a packed value of type {type(value).__name__} cannot be stored")


def _list(items: list, elem: ArgType) -> Arg:
    # Lists of sizes: concrete ones are int lists, as c10 packs a concrete SymInt vector.
    if elem == SYMINT and not any(a.kind == "SymInt" for a in items):
        elem = INT
    return Arg("List", type=elem, items=items)


def typed_arg(value: Any, t: ArgType, where: str) -> Arg:
    """The Arg the C++ packer would have produced for `value` declared as `t`."""
    k = t.kind
    if k == "Optional":
        return Arg("None") if value is None else typed_arg(value, t.contained[0], where)
    if isinstance(value, TensorRef):
        if k not in ("Tensor", "Any"):
            raise ExportError(f"{where}: a tensor where the schema declares {t}")
        return Arg("Tensor", ref=value.id)
    if isinstance(value, SymRef):
        if k not in ("SymInt", "Int", "Any", "Number"):
            raise ExportError(f"{where}: a symbolic size where the schema declares {t}")
        return Arg("SymInt", ref=value.id)
    if k == "Tensor":
        if value is None:
            return Arg("Tensor", ref=NO_VALUE)  # an undefined tensor
        raise ExportError(f"{where}: expected a tensor, got {value!r}")
    if value is None:
        return Arg("None")
    if k == "Any":
        return untyped_arg(value, where)
    if k == "Bool":
        return Arg("Bool", b=bool(value))
    if k in ("Int", "SymInt"):
        # Python schemas show ScalarType, Layout and MemoryFormat as int.
        if isinstance(value, torch.dtype):
            return Arg("ScalarType", i=scalar_type_code(value))
        if isinstance(value, torch.layout):
            return Arg("Layout", i=_LAYOUTS.index(value))
        if isinstance(value, torch.memory_format):
            return Arg("MemoryFormat", i=_MEMORY_FORMATS.index(value))
        return Arg("Int", i=int(value))
    if k in ("Float", "SymFloat"):
        return Arg("Double", d=float(value))
    if k == "Number":
        return untyped_arg(value, where)
    if k == "String":
        return Arg("String", s=str(value))
    if k == "Complex":
        return Arg("Complex", c=complex(value))
    if k == "ScalarType":
        return Arg("ScalarType", i=_enum_code(value, _DTYPES, "dtype", where))
    if k == "Layout":
        return Arg("Layout", i=_enum_code(value, _LAYOUTS, "layout", where))
    if k == "MemoryFormat":
        return Arg("MemoryFormat", i=_enum_code(value, _MEMORY_FORMATS, "memory format", where))
    if k == "Device":
        return device_arg(torch.device(value))
    if k == "List":
        if not isinstance(value, (list, tuple)):
            raise ExportError(f"{where}: expected a list for {t}, got {value!r}")
        elem = t.contained[0]
        return _list([typed_arg(v, elem, f"{where}[{i}]") for i, v in enumerate(value)], elem)
    if k == "Tuple":
        if not isinstance(value, (list, tuple)) or len(value) != len(t.contained):
            raise ExportError(f"{where}: expected a tuple of {len(t.contained)} for {t}, "
                              f"got {value!r}")
        return Arg("Tuple", items=[typed_arg(v, c, f"{where}.{i}")
                                   for i, (v, c) in enumerate(zip(value, t.contained))])
    raise ExportError(f"{where}: values of type {t} are not supported by ca_export")


def _packed_tensor_options() -> ArgType:
    opt = lambda kind: ArgType("Optional", (ArgType(kind),))  # noqa: E731
    return ArgType("Tuple", (opt("Bool"), opt("MemoryFormat"), opt("Device"), opt("ScalarType"),
                             opt("Layout"), opt("Bool")))


# upstream IValuePacker<InputMetadata>::packed_type() (torch/csrc/dynamo/compiled_autograd.h):
# (packed TensorOptions, sizes, is_tensor_subclass, grad_dtype); validate_outputs takes a list of
# optional ones.
INPUT_METADATA = ArgType("Tuple", (_packed_tensor_options(), ArgType("List", (SYMINT,)),
                                   ArgType("Bool"), ArgType("Optional", (ArgType("ScalarType"),))))
METADATA_LIST = ArgType("List", (ArgType("Optional", (INPUT_METADATA,)),))
# IValuePacker<at::TensorGeometry>::packed_type(): (sizes, strides, storage offset).
TENSOR_GEOMETRY = ArgType("Tuple", (ArgType("List", (SYMINT,)), ArgType("List", (SYMINT,)),
                                    SYMINT))
