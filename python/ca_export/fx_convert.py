# SPDX-License-Identifier: BSD-3-Clause
"""torch's compiled-autograd FX graph -> ir.Graph, node by node, while the graph runs on the real
inputs (an fx.Interpreter): the real values tell apart defined and undefined results and map the
outputs of torch.compile'd regions' prologues.

Node kinds (torch 2.13, torch/_dynamo/compiled_autograd.py) and what each becomes:
  ops.<Name>(grads, *packed)          -> functional <Name>, packed args typed by the C++ schema
  ops.validate_outputs(grads, meta)   -> validate_outputs
  torch.add(a, b)                     -> accumulate (two contributions to one input buffer)
  call_accumulate_grad(var, var.grad, grad, hooks) -> accumulate_grad (twice with an existing .grad)
  copy_slices_prologue / _epilogue    -> copy_slices_prologue / _epilogue (geometry as args)
  torch.ops.aten.* (compiled regions) -> aten; call_aot_bwd_prologue is mapped away
  operator.getitem, unwrap_maybe_dynamic_int, _exec_final_callbacks_stub: no node
Python autograd.Functions (call_backward), hooks (call_hook) and anything else are refused."""
from __future__ import annotations

import operator
from typing import Any, Dict, List

import torch
import torch.fx
from torch._dynamo import compiled_autograd, external_utils

from . import aten_args, ir
from .schema_table import SchemaTable
from .typed_args import (METADATA_LIST, TENSOR_GEOMETRY, ExportError, SymRef, TensorRef, typed_arg,
                         device_arg, scalar_type_code)


class _Opaque:
    """A Python object the graph receives (hooks, packed data): never representable."""

    def __init__(self, what: str) -> None:
        self.what = what


def _target_name(target: Any) -> str:
    return getattr(target, "__name__", None) or str(target)


def tensor_meta(t: torch.Tensor, dynamic: bool) -> ir.TensorMeta:
    sizes = [ir.DYNAMIC_SIZE] * t.dim() if dynamic else list(t.shape)
    dev = device_arg(t.device)
    return ir.TensorMeta(scalar_type_code(t.dtype), sizes, dev.i, dev.device_index,
                         t.requires_grad)


def size_value(s: Any) -> int:
    """A runtime `sizes` entry: torch.empty(0, n) for n > 0, else the int itself."""
    return s.size(1) if isinstance(s, torch.Tensor) else int(s)


class Converter(torch.fx.Interpreter):
    """Runs `gm` on real inputs and builds the ir.Graph of it."""

    def __init__(self, gm: torch.fx.GraphModule, table: SchemaTable, dynamic: bool) -> None:
        super().__init__(gm)
        self.table = table
        self.dynamic = dynamic
        self.ir = ir.Graph(table.format_version, torch.__version__.split("+")[0])
        self.sym: Dict[torch.fx.Node, Any] = {}
        self.placeholders: Dict[str, list] = {}
        self.used_ops: Dict[str, ir.OpSchema] = {}

    # -- graph inputs ---------------------------------------------------------------------------
    def _input(self, gi: ir.GraphInput) -> int:
        self.ir.inputs.append(gi)
        self.ir.num_values += 1
        return len(self.ir.inputs) - 1

    def bind_inputs(self, inputs, sizes, scalars, hooks, packed_data) -> None:
        g = []
        for i, t in enumerate(inputs):
            name = f"param.{i}" if t.is_leaf and t.requires_grad else f"input.{i}"
            g.append(TensorRef(self._input(ir.GraphInput("Tensor", name,
                                                         tensor_meta(t, self.dynamic)))))
        s = [SymRef(self._input(ir.GraphInput("Int", f"size.{j}", int_value=size_value(v))))
             for j, v in enumerate(sizes)]
        c = []
        for j, v in enumerate(scalars):
            if isinstance(v, float):
                self._input(ir.GraphInput("Double", f"scalar.{j}", double_value=v))
                c.append(_Opaque(f"the lifted float scalar {j}"))
            else:
                c.append(SymRef(self._input(ir.GraphInput("Int", f"scalar.{j}", int_value=int(v)))))
        self.placeholders = {"inputs": g, "sizes": s, "scalars": c,
                             "hooks": [_Opaque(f"hooks[{i}]") for i in range(len(hooks))],
                             "packed_data": [_Opaque("packed data")] * len(packed_data)}

    # -- helpers --------------------------------------------------------------------------------
    def define(self) -> int:
        self.ir.num_values += 1
        return self.ir.num_values - 1

    def syms(self, args: Any) -> Any:
        return torch.fx.node.map_aggregate(
            args, lambda a: self.sym[a] if isinstance(a, torch.fx.Node) else a)

    @staticmethod
    def tensor_id(v: Any, where: str) -> int:
        if v is None:
            return ir.NO_VALUE
        if isinstance(v, TensorRef):
            return v.id
        raise ExportError(f"{where}: expected a tensor value, got {getattr(v, 'what', v)!r}")

    def outputs_like(self, real: Any) -> List[int]:
        return [self.define() if isinstance(r, torch.Tensor) else ir.NO_VALUE for r in real]

    @staticmethod
    def refs(ids: List[int]) -> list:
        return [TensorRef(i) if i != ir.NO_VALUE else None for i in ids]

    # -- the walk -------------------------------------------------------------------------------
    def run_node(self, n: torch.fx.Node) -> Any:
        real = super().run_node(n)
        where = f"FX node '{n.name}' ({_target_name(n.target)})"
        try:
            self.sym[n] = self.convert(n, real, where)
        except ExportError as e:
            if str(e).startswith("FX node"):
                raise
            raise ExportError(f"{where}: {e}") from None
        return real

    def convert(self, n: torch.fx.Node, real: Any, where: str) -> Any:
        if n.op == "placeholder":
            return self.placeholders[n.target]
        if n.op == "output":
            self.ir.outputs = [self.tensor_id(v, where) for v in self.syms(n.args[0])]
            return None
        if n.op != "call_function":
            raise ExportError(f"{where}: FX '{n.op}' nodes are not supported")
        t = n.target
        if t is operator.getitem:
            base, index = self.syms(n.args)
            return base[index]
        if t is external_utils.unwrap_maybe_dynamic_int:
            return self.syms(n.args[0])
        if t is external_utils.FakeCompiledAutogradEngine._exec_final_callbacks_stub:
            return None
        if isinstance(t, compiled_autograd.Op):
            if t.__name__ == "validate_outputs":
                return self.validate_outputs(n, real, where)
            return self.functional(n, t, real, where)
        if t is torch.add:
            return self.accumulate(n, where)
        if t is external_utils.call_accumulate_grad:
            return self.accumulate_grad(n, where)
        if t is compiled_autograd.copy_slices_prologue:
            return self.copy_slices_prologue(n, where)
        if t is compiled_autograd.copy_slices_epilogue:
            return self.copy_slices_epilogue(n, real, where)
        if isinstance(t, torch._ops.OpOverload):
            return self.aten(n, t, real, where)
        if _target_name(t) == "call_aot_bwd_prologue":
            return self.aot_prologue(n, real, where)
        first = self.args_of(n.args[0]) if n.args else None
        raise ExportError(refusal(n, where, first))

    def add(self, node: ir.Node) -> None:
        self.ir.nodes.append(node)

    def functional(self, n, op, real, where):
        name = op.__name__
        sig = self.table.ops.get(name)
        if op.is_custom_function or sig is None:
            raise ExportError(f"{where}: op {name} is not in the registry of {self.table.replay} "
                              "(a custom C++ function needs CA_REGISTER_FUNCTION there)")
        grads, *packed = self.syms(n.args)
        if len(packed) != len(sig.args):
            raise ExportError(f"{where}: {len(packed)} packed args, the registry's {name} takes "
                              f"{len(sig.args)}")
        args = [typed_arg(v, t, f"{name}.args[{i}]") for i, (v, t) in enumerate(zip(packed,
                                                                                     sig.args))]
        inputs = [self.tensor_id(g, f"{name} grads") for g in grads]
        outputs = self.outputs_like(real)
        self.add(ir.Node("Functional", op=name, inputs=inputs, args=args, outputs=outputs))
        self.used_ops.setdefault(name, ir.OpSchema(name, list(sig.args),
                                                   sig.needs_input_grad_count,
                                                   sig.custom_function))
        return self.refs(outputs)

    def validate_outputs(self, n, real, where):
        grads, metadata = self.syms(n.args)
        arg = typed_arg(metadata, METADATA_LIST, "metadata")
        inputs = [self.tensor_id(g, "validate_outputs grads") for g in grads]
        outputs = self.outputs_like(real)
        self.add(ir.Node("ValidateOutputs", op="validate_outputs", inputs=inputs, args=[arg],
                         outputs=outputs))
        return self.refs(outputs)

    def accumulate(self, n, where):
        if n.kwargs or len(n.args) != 2:
            raise ExportError(f"{where}: torch.add with other than two contributions")
        a, b = (self.tensor_id(v, "add") for v in self.syms(n.args))
        out = self.define()
        self.add(ir.Node("Accumulate", inputs=[a, b], outputs=[out]))
        return TensorRef(out)

    def accumulate_grad(self, n, where):
        variable, variable_grad, grad, has_post_hooks = self.syms(n.args)
        if n.users:
            raise ExportError(f"{where}: the accumulated grad is read later in the graph")
        var = self.tensor_id(variable, "variable")
        if var == ir.NO_VALUE or var >= len(self.ir.inputs):
            raise ExportError(f"{where}: the variable is not a graph input")
        if variable_grad is not None:
            # The existing .grad arrives as an input: write it first, then accumulate into it
            # (what AccumulateGrad does with variable_grad defined).
            self.add(ir.Node("AccumulateGrad", op="AccumulateGrad",
                             inputs=[var, self.tensor_id(variable_grad, "variable_grad")],
                             args=[ir.Arg("Bool", b=False)]))
        self.add(ir.Node("AccumulateGrad", op="AccumulateGrad",
                         inputs=[var, self.tensor_id(grad, "grad")],
                         args=[ir.Arg("Bool", b=bool(has_post_hooks))]))
        return None

    def copy_slices_prologue(self, n, where):
        grads, bs, bst, bo, vs, vst, vo = self.syms(n.args)
        base = typed_arg((bs, bst, bo), TENSOR_GEOMETRY, "base geometry")
        view = typed_arg((vs, vst, vo), TENSOR_GEOMETRY, "view geometry")
        outputs = [self.define() for _ in range(3)]
        self.add(ir.Node("CopySlicesPrologue", inputs=[self.tensor_id(grads[0], "grad")],
                         args=[base, view], outputs=outputs))
        return self.refs(outputs)

    def copy_slices_epilogue(self, n, real, where):
        needs, result, res, grad_slice = self.syms(n.args)
        inputs = [self.tensor_id(result, "result"), self.tensor_id(grad_slice, "grad_slice")]
        inputs += [self.tensor_id(r, "res") for r in res]
        flags = ir.Arg("List", type=ir.ArgType("Bool"), items=[ir.Arg("Bool", b=bool(b))
                                                              for b in needs])
        outputs = self.outputs_like(real)
        self.add(ir.Node("CopySlicesEpilogue", inputs=inputs, args=[flags], outputs=outputs))
        return self.refs(outputs)

    def aten(self, n, op, real, where):
        args = aten_args.boxed_stack(op, self.syms(n.args), self.syms(n.kwargs), op._schema.name)
        outputs = [self.define() for _ in range(aten_args.num_returns(op, where))]
        self.add(ir.Node("Aten", op=op._schema.name, overload=op._schema.overload_name,
                         args=args, outputs=outputs))
        refs = self.refs(outputs)
        return refs[0] if len(refs) == 1 and not isinstance(real, (tuple, list)) else tuple(refs)

    def aot_prologue(self, n, real, where):
        """A compiled region's backward prologue (AOT's codegen'd _backward_prologue) returns
        [*symints, *saved tensors, *opaque objects, *tangents]: saved tensors unchanged, each
        tangent either unchanged or copied into the memory layout the backward graph expects
        (empty_strided + copy_). Map each result back to its input, the copies as aten nodes."""
        saved, symints, opaque, flat = n.args
        if opaque:
            raise ExportError(f"{where}: the compiled region passes opaque Python objects")
        sym_symints = self.syms(symints)
        if any(isinstance(s, SymRef) for s in sym_symints):
            raise ExportError(f"{where}: the compiled region's backward takes symbolic sizes; "
                              "compile its forward with dynamic=False")
        sym_saved, real_saved = list(self.syms(saved)), list(self.args_of(saved))
        sym_flat, real_flat = list(self.syms(flat)), list(self.args_of(flat))
        start = len(symints) + len(saved)
        out = list(sym_symints)
        for i in range(len(symints), start):
            j = next((j for j, x in enumerate(real_saved) if x is real[i]), None)
            if j is None:
                raise ExportError(f"{where}: result {i} is not one of its saved tensors")
            out.append(sym_saved[j])
        next_flat = 0
        for i in range(start, len(real)):
            r = real[i]
            if not isinstance(r, torch.Tensor):
                out.append(r)
                continue
            for j in range(next_flat, len(real_flat)):
                f = real_flat[j]
                if f is r:
                    out.append(sym_flat[j])
                    break
                if (isinstance(f, torch.Tensor) and f.shape == r.shape and f.dtype == r.dtype
                        and torch.equal(f, r)):
                    out.append(self.restrided(sym_flat[j], r, where))
                    break
            else:
                raise ExportError(f"{where}: result {i} is none of its tangents")
            next_flat = j + 1
        return out

    def restrided(self, src: Any, like: torch.Tensor, where: str) -> TensorRef:
        """aten::empty_strided with `like`'s geometry, then aten::copy from `src` (the functional
        copy: a new tensor with empty's strides, so no node writes into a value): what the
        prologue does to a tangent whose layout differs from the one the backward expects."""
        empty_op, copy_op = torch.ops.aten.empty_strided.default, torch.ops.aten.copy.default
        kwargs = {"dtype": like.dtype, "layout": like.layout, "device": like.device,
                  "pin_memory": False}
        empty = self.define()
        self.add(ir.Node("Aten", op="aten::empty_strided", args=aten_args.boxed_stack(
            empty_op, (list(like.shape), list(like.stride())), kwargs, "empty_strided"),
            outputs=[empty]))
        copied = self.define()
        self.add(ir.Node("Aten", op="aten::copy", args=aten_args.boxed_stack(
            copy_op, (TensorRef(empty), src), {}, "copy"), outputs=[copied]))
        return TensorRef(copied)

    def args_of(self, fx_args):
        return torch.fx.node.map_aggregate(
            fx_args, lambda a: self.env[a] if isinstance(a, torch.fx.Node) else a)

    def finish(self) -> ir.Graph:
        self.ir.op_schemas = [self.used_ops[k] for k in sorted(self.used_ops)]
        name_inputs_by_first_use(self.ir)
        return self.ir


def name_inputs_by_first_use(g: ir.Graph) -> None:
    """Names tensor inputs as C++ capture does: "grad_output.K" (a grad a node receives),
    "saved.K.<Op>" (a packed arg), "param.K" (a leaf that requires grad, named so at binding)."""
    named = set()
    for n in g.nodes:
        uses = [(v, "grad_output.{}") for v in n.inputs]
        uses += [(v, "saved.{}." + (n.op or n.kind)) for a in n.args for v in a.refs()]
        for v, pattern in uses:
            if v < 0 or v >= len(g.inputs) or v in named:
                continue
            named.add(v)
            gi = g.inputs[v]
            if gi.kind == "Tensor" and not gi.name.startswith("param."):
                gi.name = pattern.format(v)


def refusal(n: torch.fx.Node, where: str, first: Any) -> str:
    """Why node `n` cannot be exported; `first` is the real value of its first argument."""
    t = n.target
    if t is external_utils.call_backward:
        cls = getattr(getattr(first, "_forward_cls", None), "__qualname__", type(first).__name__)
        return (f"{where}: the backward of the Python torch.autograd.Function {cls} runs Python "
                "and cannot be replayed; compute it with torch ops inside a torch.compile'd "
                "region (its backward is then traced into aten ops) or write it as a C++ custom "
                "function")
    if t is external_utils.call_hook:
        hook = getattr(first, "__qualname__", repr(first))
        return (f"{where}: the Python hook {hook} (register_hook, a module hook or a "
                "post-accumulate-grad hook) runs Python and cannot be replayed; remove it while "
                "exporting")
    return f"{where}: this kind of node is not supported by ca_export"
