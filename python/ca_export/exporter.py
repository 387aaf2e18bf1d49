# SPDX-License-Identifier: BSD-3-Clause
"""ca_export.capture(dir): torch's compiled autograd with our compiler function. Each new
backward graph is converted (fx_convert) and written as a graph file with the step's inputs and
the gradients torch's own graph produced; later backwards through the same graph write only
their inputs and gradients."""
from __future__ import annotations

import contextlib
import dataclasses
import io
import os
import sys
from typing import Any, Callable, Iterator, List, Optional

import torch
from torch._dynamo import compiled_autograd

from . import encode, ir, schema_table
from .fx_convert import Converter, size_value


@dataclasses.dataclass
class ExportedGraph:
    """One graph written by a capture: its files and the IR."""

    graph_path: str
    graph: ir.Graph
    steps: List[tuple] = dataclasses.field(default_factory=list)  # (batch.pt, expected.pt)
    # The first step's tensors whose .grad the graph writes, in replay's output order.
    grad_variables: List[torch.Tensor] = dataclasses.field(default_factory=list)


class Capture:
    """What a `with ca_export.capture(dir)` block exported, graph by graph."""

    def __init__(self, out_dir: str, dynamic: bool, log: Optional[Callable[[str], None]]) -> None:
        self.out_dir = out_dir
        self.dynamic = dynamic
        self.graphs: List[ExportedGraph] = []
        self._log = log

    def say(self, text: str) -> None:
        if self._log is not None:
            self._log(text)

    def path(self, g: int, stem: str, k: int, ext: str) -> str:
        name = stem + ("" if g == 0 else f"-{g}") + ("" if k == 0 else f".{k}") + ext
        return os.path.join(self.out_dir, name)

    # The compiler function torch calls once per new graph; what it returns runs every backward.
    def compiler_fn(self, gm: torch.fx.GraphModule) -> Callable[..., Any]:
        index = len(self.graphs)
        state = {"exported": None}

        def run(inputs, sizes, scalars, hooks, packed_data):
            batch = snapshot(inputs, sizes, scalars)
            variables = list(inputs)  # the graph may steal (clear) its inputs list
            exported = state["exported"]
            if exported is None:
                converter = Converter(gm, schema_table.load(), self.dynamic)
                converter.bind_inputs(inputs, sizes, scalars, hooks, packed_data)
                # an exact list, as torch's caller checks (the interpreter returns an fx one)
                out = list(converter.run(inputs, sizes, scalars, hooks, packed_data))
                exported = self.write_graph(index, converter.finish())
                exported.grad_variables = [variables[k] for k in exported.graph.grad_targets()]
                state["exported"] = exported
            else:
                out = gm(inputs, sizes, scalars, hooks, packed_data)
            self.write_step(index, exported, batch, expected(exported.graph, out, variables))
            return out

        self.graphs.append(None)  # reserved for this graph's first run
        return run

    def write_graph(self, index: int, graph: ir.Graph) -> ExportedGraph:
        path = self.path(index, "bwd", 0, ".fb")
        size = encode.save_graph(graph, path)
        kinds = sorted({n.kind for n in graph.nodes})
        self.say(f"ca_export: wrote {path} ({len(graph.nodes)} nodes: {', '.join(kinds)}; "
                 f"{len(graph.inputs)} inputs; {size} bytes)")
        exported = ExportedGraph(path, graph)
        self.graphs[index] = exported
        return exported

    def write_step(self, index: int, exported: ExportedGraph, batch, grads) -> None:
        k = len(exported.steps)
        files = (self.path(index, "batch", k, ".pt"), self.path(index, "expected", k, ".pt"))
        for path, tensors, what in ((files[0], batch, "inputs"), (files[1], grads, "gradients")):
            save_tensors(tensors, path)
            self.say(f"ca_export: wrote {path} ({len(tensors)} {what} of step {k} of "
                     f"{os.path.basename(exported.graph_path)})")
        exported.steps.append(files)


def snapshot(inputs, sizes, scalars) -> List[torch.Tensor]:
    """The graph inputs as replay takes them, copied before the graph runs (an existing .grad is
    accumulated into in place)."""
    out = [t.detach().clone() for t in inputs]
    out += [torch.tensor(size_value(s), dtype=torch.int64) for s in sizes]
    out += [torch.tensor(v, dtype=torch.float64 if isinstance(v, float) else torch.int64)
            for v in scalars]
    return out


def expected(graph: ir.Graph, out: Any, variables: List[torch.Tensor]) -> List[torch.Tensor]:
    """What `replay --out` returns: the graph outputs, then each written parameter's .grad."""
    grads = [o.detach().clone() for o in (out or []) if o is not None]
    for k in graph.grad_targets():
        g = variables[k].grad
        if g is None:
            raise RuntimeError(f"ca_export: input {k} has no .grad after the backward")
        grads.append(g.detach().clone())
    return grads


def save_tensors(tensors: List[torch.Tensor], path: str) -> None:
    """torch.save of the list, written as graph files are (temporary file, fsync, rename)."""
    buf = io.BytesIO()
    torch.save(tensors, buf)
    encode.write_atomically(path, buf.getvalue())


@contextlib.contextmanager
def capture(out_dir: str, dynamic: bool = True,
            log: Optional[Callable[[str], None]] = lambda s: print(s, file=sys.stderr)
            ) -> Iterator[Capture]:
    """Every backward() in the block runs through torch's compiled autograd, and each graph it
    compiles is written to `out_dir` (created if needed):

      bwd.fb                  the graph (the format of C++ capture; `replay` loads it)
      batch.pt, expected.pt   the first step's graph inputs, and the gradients torch's own
                              graph produced (graph outputs, then each parameter's .grad)
      batch.<k>.pt, expected.<k>.pt   later steps through the same graph
      bwd-<g>.fb, batch-<g>.pt, ...   the g-th other graph (g = 1, 2, ...)

    `dynamic` is compiled autograd's: with True, sizes are graph inputs and one graph serves
    every batch size. The packed-args schemas come from `replay --list-ops --json` (the binary
    named by $CA_REPLAY or found in $CA_BUILD), run once in a subprocess. Raises
    fx_convert.ExportError, naming the node, for graphs that hold Python code (autograd.Function,
    hooks). Yields the Capture, whose `graphs` list what was written."""
    os.makedirs(out_dir, exist_ok=True)
    schema_table.load()  # fail before the first backward if the binary is missing
    cap = Capture(out_dir, dynamic, log)
    # Compiled autograd caches compiled graphs per process: start and end with an empty cache so
    # that every graph of this block is compiled (and written) here, and none outlives it.
    compiled_autograd.reset()
    try:
        with compiled_autograd._enable(cap.compiler_fn, dynamic=dynamic):
            yield cap
    finally:
        compiled_autograd.reset()
