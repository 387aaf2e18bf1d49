# SPDX-License-Identifier: BSD-3-Clause
"""The same five models captured in C++ (tests/export_twin/twin_capture.cpp) and exported from
Python give graphs with the same sequence of functional ops and the same graph inputs (names,
order, dtype, shape)."""
import difflib
import re

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from conftest import run, tool
from export_util import Step, export, params

FUNCTIONAL = re.compile(r"^\s+\d+ functional (\w+)", re.M)
INPUT = re.compile(r"^\s+(%\d+ .*)$", re.M)


def py_linear():
    m = nn.Linear(4, 3)
    x = torch.randn(8, 4)
    return Step(lambda: m(x).sum(), params(m))


def py_mlp():
    m = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 2))
    x = torch.randn(8, 4)
    return Step(lambda: m(x).sum(), params(m))


def py_conv():
    conv = nn.Conv2d(3, 4, 3, padding=1)
    x = torch.randn(2, 3, 8, 8)
    return Step(lambda: torch.relu(conv(x)).sum(), params(conv))


def py_layer_norm():
    ln = nn.LayerNorm(6)
    x = torch.randn(8, 6)
    return Step(lambda: ln(x).pow(2).sum(), params(ln))


def py_log_softmax():
    fc = nn.Linear(5, 4)
    x, y = torch.randn(8, 5), torch.tensor([0, 1, 2, 3, 0, 1, 2, 3])
    return Step(lambda: F.nll_loss(torch.log_softmax(fc(x), 1), y), params(fc))


TWINS = {"linear": py_linear, "mlp": py_mlp, "conv": py_conv, "layer_norm": py_layer_norm,
         "log_softmax": py_log_softmax}


def dump(replay, graph):
    r = run(replay, "--dump", graph)
    assert r.returncode == 0, r.stderr
    return FUNCTIONAL.findall(r.stdout), INPUT.findall(r.stdout)


def same(cpp, py, what):
    diff = "\n".join(difflib.unified_diff(cpp, py, "C++ capture", "Python export", lineterm=""))
    assert cpp == py and cpp, f"{what} differ:\n{diff}"


@pytest.mark.parametrize("name", sorted(TWINS))
def test_cpp_capture_and_python_export_run_the_same_ops(name, tmp_path, replay):
    twin = tool("tests", "twin_capture")
    cpp_graph = tmp_path / "cpp.fb"
    r = run(twin, name, cpp_graph)
    assert r.returncode == 0, r.stderr
    torch.manual_seed(0)
    export(TWINS[name](), tmp_path / "py", dynamic=False)
    cpp_ops, cpp_inputs = dump(replay, cpp_graph)
    py_ops, py_inputs = dump(replay, tmp_path / "py" / "bwd.fb")
    same(cpp_ops, py_ops, "op sequences")
    same(cpp_inputs, py_inputs, "graph inputs")
