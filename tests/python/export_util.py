# SPDX-License-Identifier: BSD-3-Clause
"""Helpers of the exporter tests: export a model's backward with ca_export, replay it with the
`replay` binary in a subprocess, and compare with expected.pt and with eager autograd."""
import dataclasses
import os
import subprocess
from typing import Callable, Dict, List

import torch

import ca_export
from conftest import BUILD


def replay_bin() -> str:
    return str(BUILD / "apps" / "replay" / "replay")


@dataclasses.dataclass
class Step:
    loss_fn: Callable[[], torch.Tensor]  # forward of one step; its backward is exported
    leaves: List[torch.Tensor]           # the tensors whose .grad the step produces


def eager_grads(step: Step) -> Dict[int, torch.Tensor]:
    for t in step.leaves:
        t.grad = None
    step.loss_fn().backward()
    grads = {id(t): t.grad.detach().clone() for t in step.leaves if t.grad is not None}
    for t in step.leaves:
        t.grad = None
    return grads


def replay(folder, graph="bwd.fb", batch="batch.pt", expected="expected.pt", rtol=1e-6,
           atol=1e-7):
    """Replays one step with --check; returns the gradients replay wrote (--out)."""
    out = os.path.join(folder, "replayed." + batch)
    r = subprocess.run([replay_bin(), "--graph", os.path.join(folder, graph), "--inputs",
                        os.path.join(folder, batch), "--check", os.path.join(folder, expected),
                        "--rtol", str(rtol), "--atol", str(atol), "--out", out],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"replay failed ({r.returncode}):\n{r.stderr}"
    assert ": OK" in r.stderr
    return torch.load(out)


def export(step: Step, folder, dynamic=True) -> ca_export.Capture:
    for t in step.leaves:
        t.grad = None
    with ca_export.capture(str(folder), dynamic=dynamic, log=None) as cap:
        step.loss_fn().backward()
    return cap


def check_against_eager(cap, replayed, eager, rtol, atol):
    """replay's gradients are the grad targets' .grad, in the graph's order."""
    exported = cap.graphs[0]
    assert len(replayed) == len(exported.grad_variables) == len(eager) > 0
    for got, var in zip(replayed, exported.grad_variables):
        want = eager[id(var)]
        assert got.dtype == want.dtype and got.shape == want.shape
        torch.testing.assert_close(got, want, rtol=rtol, atol=atol)


def export_replay_compare(step: Step, folder, rtol=1e-6, atol=1e-6, dynamic=True):
    """The whole round trip of one model; returns the Capture."""
    eager = eager_grads(step)
    cap = export(step, folder, dynamic=dynamic)
    assert [g.graph_path for g in cap.graphs] == [os.path.join(str(folder), "bwd.fb")]
    replayed = replay(folder)
    want = torch.load(os.path.join(folder, "expected.pt"))
    for got, w in zip(replayed, want):
        torch.testing.assert_close(got, w, rtol=1e-6, atol=1e-7)
    check_against_eager(cap, replayed, eager, rtol, atol)
    return cap


def params(*modules) -> List[torch.Tensor]:
    return [p for m in modules for p in m.parameters()]
