# SPDX-License-Identifier: BSD-3-Clause
"""ir.Graph -> graph file bytes: the FlatBuffer of schema/ca_graph.fbs, built with the Python code
flatc generates from that schema (scripts/setup.sh writes it to ca_export/_generated), followed by
the checksum trailer the loaders check first (serializer/src/graph_checksum.h): "CAX1", four zero
bytes, then XXH3-64 of the FlatBuffer, little-endian."""
from __future__ import annotations

import os
import struct
import tempfile

import flatbuffers
import xxhash

from . import __version__, ir

try:
    from ._generated.ca.fb import Arg as fb_arg
    from ._generated.ca.fb import ArgKind, ArgTypeKind, InputKind, NodeKind
    from ._generated.ca.fb import ArgType as fb_type
    from ._generated.ca.fb import Complex as fb_complex
    from ._generated.ca.fb import Graph as fb_graph
    from ._generated.ca.fb import GraphInput as fb_input
    from ._generated.ca.fb import Node as fb_node
    from ._generated.ca.fb import OpSchema as fb_schema
    from ._generated.ca.fb import TensorMeta as fb_meta
except ImportError as e:  # pragma: no cover - depends on the set-up
    raise ImportError(
        "ca_export's FlatBuffers code is missing: scripts/setup.sh generates it with "
        "`flatc --python -o python/ca_export/_generated schema/ca_graph.fbs`") from e

FILE_IDENTIFIER = b"CAGR"
TRAILER_MAGIC = b"CAX1"


def _enum(enum_module, name: str) -> int:
    cls = getattr(enum_module, enum_module.__name__.rsplit(".", 1)[-1])
    return getattr(cls, "None_" if name == "None" else name)  # flatc renames the keyword


class _Writer:
    def __init__(self) -> None:
        self.b = flatbuffers.Builder(4096)
        self.types = {}  # ArgType -> offset: identical types share one table

    def vector(self, start, offsets) -> int:
        start(self.b, len(offsets))
        for off in reversed(offsets):
            self.b.PrependUOffsetTRelative(off)
        return self.b.EndVector()

    def scalars(self, start, values, prepend) -> int:
        start(self.b, len(values))
        for v in reversed(values):
            prepend(v)
        return self.b.EndVector()

    def arg_type(self, t: ir.ArgType) -> int:
        if t in self.types:
            return self.types[t]
        contained = [self.arg_type(c) for c in t.contained]
        vec = self.vector(fb_type.ArgTypeStartContainedVector, contained) if contained else None
        fb_type.ArgTypeStart(self.b)
        fb_type.ArgTypeAddKind(self.b, _enum(ArgTypeKind, t.kind))
        if vec is not None:
            fb_type.ArgTypeAddContained(self.b, vec)
        off = fb_type.ArgTypeEnd(self.b)
        self.types[t] = off
        return off

    def arg(self, a: ir.Arg) -> int:
        items = [self.arg(x) for x in a.items]
        items_vec = self.vector(fb_arg.ArgStartItemsVector, items) if a.items else None
        type_off = self.arg_type(a.type) if a.type is not None else None
        value_type_off = self.arg_type(a.value_type) if a.value_type is not None else None
        s_off = self.b.CreateString(a.s) if a.s else None
        b = self.b
        fb_arg.ArgStart(b)
        fb_arg.ArgAddKind(b, _enum(ArgKind, a.kind))
        fb_arg.ArgAddB(b, a.b)
        fb_arg.ArgAddI(b, a.i)
        fb_arg.ArgAddD(b, a.d)
        if a.kind == "Complex":
            fb_arg.ArgAddC(b, fb_complex.CreateComplex(b, a.c.real, a.c.imag))
        if s_off is not None:
            fb_arg.ArgAddS(b, s_off)
        fb_arg.ArgAddDeviceIndex(b, a.device_index)
        fb_arg.ArgAddRef(b, a.ref)
        if type_off is not None:
            fb_arg.ArgAddType(b, type_off)
        if value_type_off is not None:
            fb_arg.ArgAddValueType(b, value_type_off)
        if items_vec is not None:
            fb_arg.ArgAddItems(b, items_vec)
        return fb_arg.ArgEnd(b)

    def graph_input(self, gi: ir.GraphInput) -> int:
        b = self.b
        name = b.CreateString(gi.name)
        meta = None
        if gi.meta is not None:
            sizes = self.scalars(fb_meta.TensorMetaStartSizesVector, gi.meta.sizes, b.PrependInt64)
            fb_meta.TensorMetaStart(b)
            fb_meta.TensorMetaAddDtype(b, gi.meta.dtype)
            fb_meta.TensorMetaAddSizes(b, sizes)
            fb_meta.TensorMetaAddDeviceType(b, gi.meta.device_type)
            fb_meta.TensorMetaAddDeviceIndex(b, gi.meta.device_index)
            fb_meta.TensorMetaAddRequiresGrad(b, gi.meta.requires_grad)
            meta = fb_meta.TensorMetaEnd(b)
        fb_input.GraphInputStart(b)
        fb_input.GraphInputAddKind(b, _enum(InputKind, gi.kind))
        fb_input.GraphInputAddName(b, name)
        if meta is not None:
            fb_input.GraphInputAddMeta(b, meta)
        fb_input.GraphInputAddIntValue(b, gi.int_value)
        fb_input.GraphInputAddDoubleValue(b, gi.double_value)
        return fb_input.GraphInputEnd(b)

    def node(self, n: ir.Node) -> int:
        b = self.b
        args = self.vector(fb_node.NodeStartArgsVector, [self.arg(a) for a in n.args])
        ins = self.scalars(fb_node.NodeStartInputsVector, n.inputs, b.PrependInt32)
        outs = self.scalars(fb_node.NodeStartOutputsVector, n.outputs, b.PrependInt32)
        op = b.CreateString(n.op) if n.op else None
        overload = b.CreateString(n.overload) if n.overload else None
        fb_node.NodeStart(b)
        fb_node.NodeAddKind(b, _enum(NodeKind, n.kind))
        if op is not None:
            fb_node.NodeAddOp(b, op)
        if overload is not None:
            fb_node.NodeAddOverload(b, overload)
        fb_node.NodeAddInputs(b, ins)
        fb_node.NodeAddArgs(b, args)
        fb_node.NodeAddOutputs(b, outs)
        return fb_node.NodeEnd(b)

    def op_schema(self, o: ir.OpSchema) -> int:
        b = self.b
        types = self.vector(fb_schema.OpSchemaStartArgsVector, [self.arg_type(t) for t in o.args])
        op = b.CreateString(o.op)
        fb_schema.OpSchemaStart(b)
        fb_schema.OpSchemaAddOp(b, op)
        fb_schema.OpSchemaAddArgs(b, types)
        fb_schema.OpSchemaAddNeedsInputGradCount(b, o.needs_input_grad_count)
        fb_schema.OpSchemaAddCustomFunction(b, o.custom_function)
        return fb_schema.OpSchemaEnd(b)

    def graph(self, g: ir.Graph) -> bytes:
        b = self.b
        inputs = self.vector(fb_graph.GraphStartInputsVector, [self.graph_input(i) for i in g.inputs])
        nodes = self.vector(fb_graph.GraphStartNodesVector, [self.node(n) for n in g.nodes])
        outputs = self.scalars(fb_graph.GraphStartOutputsVector, g.outputs, b.PrependInt32)
        schemas = self.vector(fb_graph.GraphStartOpSchemasVector,
                              [self.op_schema(o) for o in g.op_schemas])
        version = b.CreateString(g.torch_version)
        writer_version = b.CreateString(__version__)
        fb_graph.GraphStart(b)
        fb_graph.GraphAddFormatVersion(b, g.format_version)
        fb_graph.GraphAddTorchVersion(b, version)
        fb_graph.GraphAddNumValues(b, g.num_values)
        fb_graph.GraphAddInputs(b, inputs)
        fb_graph.GraphAddNodes(b, nodes)
        fb_graph.GraphAddOutputs(b, outputs)
        fb_graph.GraphAddOpSchemas(b, schemas)
        fb_graph.GraphAddWriterVersion(b, writer_version)
        b.Finish(fb_graph.GraphEnd(b), file_identifier=FILE_IDENTIFIER)
        return bytes(b.Output())


def seal(payload: bytes) -> bytes:
    """The FlatBuffer followed by its checksum trailer."""
    digest = xxhash.xxh3_64_intdigest(payload)
    return payload + TRAILER_MAGIC + bytes(4) + struct.pack("<Q", digest)


def graph_bytes(graph: ir.Graph) -> bytes:
    """The bytes of a graph file for `graph`."""
    return seal(_Writer().graph(graph))


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


def save_graph(graph: ir.Graph, path: str) -> int:
    """Writes `graph` to `path`; returns the file size."""
    data = graph_bytes(graph)
    write_atomically(path, data)
    return len(data)
