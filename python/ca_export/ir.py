# SPDX-License-Identifier: BSD-3-Clause
"""The ca-replay IR in Python: the same structures as ir/include/ca/graph.h, handed to the C++
writer by encode. Kinds are the enum names of schema/ca_graph.fbs."""
from __future__ import annotations

import dataclasses
from typing import List, Optional, Tuple

NO_VALUE = -1  # an undefined tensor
DYNAMIC_SIZE = -1  # TensorMeta size any size matches (ca::kDynamicSize)


@dataclasses.dataclass(frozen=True)
class ArgType:
    """A c10 type: kind is an ArgTypeKind name ("Int", "List", ...)."""

    kind: str
    contained: Tuple["ArgType", ...] = ()

    @staticmethod
    def from_json(obj: dict) -> "ArgType":
        return ArgType(obj["kind"], tuple(ArgType.from_json(c) for c in obj.get("contained", ())))

    def __str__(self) -> str:
        if not self.contained:
            return self.kind
        return f"{self.kind}[{', '.join(str(c) for c in self.contained)}]"


@dataclasses.dataclass
class Arg:
    """One packed argument (ArgKind name in `kind`); tensors and symbolic sizes are value ids."""

    kind: str
    b: bool = False
    i: int = 0
    d: float = 0.0
    c: complex = 0j
    s: str = ""
    device_index: int = -1
    ref: int = NO_VALUE
    type: Optional[ArgType] = None
    value_type: Optional[ArgType] = None
    items: List["Arg"] = dataclasses.field(default_factory=list)

    def refs(self):
        """Value ids referenced anywhere inside (tensors and symbolic sizes)."""
        if self.kind in ("Tensor", "SymInt") and self.ref != NO_VALUE:
            yield self.ref
        for item in self.items:
            yield from item.refs()


@dataclasses.dataclass
class TensorMeta:
    dtype: int  # c10::ScalarType
    sizes: List[int]
    device_type: int = 0  # c10::DeviceType
    device_index: int = -1
    requires_grad: bool = False


@dataclasses.dataclass
class GraphInput:
    kind: str  # "Tensor", "Int" or "Double"
    name: str
    meta: Optional[TensorMeta] = None
    int_value: int = 0
    double_value: float = 0.0


@dataclasses.dataclass
class Node:
    kind: str  # NodeKind name: "Functional", "ValidateOutputs", ...
    op: str = ""
    overload: str = ""
    inputs: List[int] = dataclasses.field(default_factory=list)
    args: List[Arg] = dataclasses.field(default_factory=list)
    outputs: List[int] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class OpSchema:
    op: str
    args: List[ArgType]
    needs_input_grad_count: int = -1
    custom_function: bool = False


@dataclasses.dataclass
class Graph:
    format_version: int
    torch_version: str
    num_values: int = 0
    inputs: List[GraphInput] = dataclasses.field(default_factory=list)
    nodes: List[Node] = dataclasses.field(default_factory=list)
    outputs: List[int] = dataclasses.field(default_factory=list)
    op_schemas: List[OpSchema] = dataclasses.field(default_factory=list)

    def grad_targets(self) -> List[int]:
        """Graph inputs accumulate_grad writes, unique, in order of first write (ca::grad_targets):
        the parameters whose .grad a replay returns after the graph outputs."""
        seen: List[int] = []
        for n in self.nodes:
            if n.kind == "AccumulateGrad" and n.inputs[0] not in seen:
                seen.append(n.inputs[0])
        return seen

    def op_names(self) -> List[str]:
        """The op name of every functional and aten node, in order (for comparisons)."""
        return [n.op for n in self.nodes if n.kind in ("Functional", "Aten")]
