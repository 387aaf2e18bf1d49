# SPDX-License-Identifier: BSD-3-Clause
"""ir.Graph -> graph file, written by ca-replay's one C++ writer. The graph goes over as
FlatBuffers' JSON form of schema/ca_graph.fbs (enum values by name) to `replay --encode - --out
PATH`, which parses it with FlatBuffers' own parser and then checks and writes it exactly as a
captured graph: one writer, one checksum, one set of load checks for both front ends."""
from __future__ import annotations

import json
import os
import subprocess
import tempfile
from typing import Any, Dict

from . import ir
from .schema_table import replay_binary
from .typed_args import ExportError

def _arg_type(t: ir.ArgType) -> Dict[str, Any]:
    out: Dict[str, Any] = {"kind": t.kind}
    if t.contained:
        out["contained"] = [_arg_type(c) for c in t.contained]
    return out


def _arg(a: ir.Arg) -> Dict[str, Any]:
    out: Dict[str, Any] = {"kind": a.kind, "b": a.b, "i": a.i, "d": a.d,
                           "device_index": a.device_index, "ref": a.ref}
    if a.kind == "Complex":
        out["c"] = {"re": a.c.real, "im": a.c.imag}
    if a.s:
        out["s"] = a.s
    if a.type is not None:
        out["type"] = _arg_type(a.type)
    if a.value_type is not None:
        out["value_type"] = _arg_type(a.value_type)
    if a.items:
        out["items"] = [_arg(x) for x in a.items]
    return out


def _input(gi: ir.GraphInput) -> Dict[str, Any]:
    out: Dict[str, Any] = {"kind": gi.kind, "name": gi.name, "int_value": gi.int_value,
                           "double_value": gi.double_value}
    if gi.meta is not None:
        m = gi.meta
        out["meta"] = {"dtype": m.dtype, "sizes": list(m.sizes), "device_type": m.device_type,
                       "device_index": m.device_index, "requires_grad": m.requires_grad}
    return out


def _node(n: ir.Node) -> Dict[str, Any]:
    return {"kind": n.kind, "op": n.op, "overload": n.overload, "inputs": list(n.inputs),
            "args": [_arg(a) for a in n.args], "outputs": list(n.outputs)}


def graph_json(graph: ir.Graph) -> str:
    """The graph as FlatBuffers' JSON form of schema/ca_graph.fbs. Doubles are Python's repr,
    which the parser reads back bit-exact (-0.0 keeps its sign); NaN and infinities are written
    NaN, Infinity and -Infinity, which it accepts (a NaN's payload is not kept)."""
    doc = {
        "format_version": graph.format_version,
        "torch_version": graph.torch_version,
        "num_values": graph.num_values,
        "inputs": [_input(i) for i in graph.inputs],
        "nodes": [_node(n) for n in graph.nodes],
        "outputs": list(graph.outputs),
        "op_schemas": [{"op": o.op, "args": [_arg_type(t) for t in o.args],
                        "needs_input_grad_count": o.needs_input_grad_count,
                        "custom_function": o.custom_function} for o in graph.op_schemas],
    }
    return json.dumps(doc, allow_nan=True, separators=(",", ":"))


def save_graph(graph: ir.Graph, path: str) -> int:
    """Writes `graph` to `path` through `replay --encode` (the binary schema_table reads the op
    table from); returns the file size. Raises ExportError with replay's message when it
    refuses the graph."""
    run = subprocess.run([replay_binary(), "--encode", "-", "--out", str(path)],
                         input=graph_json(graph).encode(), capture_output=True)
    if run.returncode != 0:
        raise ExportError(f"replay --encode refused the graph for {path}: "
                           f"{run.stderr.decode(errors='replace').strip()}")
    return os.path.getsize(path)


def write_atomically(path: str, data: bytes) -> None:
    """Writes through a temporary file in the target's folder and a rename, as the C++ side does,
    so that a crash never leaves a half-written file under the target's name."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=os.path.basename(path))
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
