# SPDX-License-Identifier: BSD-3-Clause
"""ca_export beyond one step: dynamic batch sizes through one graph, a 3-step SGD training loop
replayed step by step, an existing .grad, static sizes, refusals, the CLI and the schema table."""
import json
import os
import subprocess
import sys

import pytest
import torch
import torch.nn as nn

import ca_export
from conftest import ROOT, run
from export_util import Step, export, params, replay_bin
from export_util import replay as replay_step


def mlp_case():
    m = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    return m, lambda b: torch.randn(b, 4), lambda x: m(x).pow(2).sum()


def conv_bn_view_case():  # BatchNorm, pooling and CopySlices, all with symbolic sizes
    m = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                      nn.MaxPool2d(2))

    def loss(x):
        y = m(x) * 2
        y[1:3].mul_(0.5)
        return y.pow(2).sum()
    return m, lambda b: torch.randn(b, 3, 8, 8), loss


@pytest.mark.parametrize("case", [mlp_case, conv_bn_view_case])
def test_dynamic_batch_sizes_replay_through_the_graph_exported_at_batch_8(case, tmp_path, replay):
    torch.manual_seed(0)
    m, make_x, loss = case()
    xs = {b: make_x(b) for b in (8, 5, 3)}
    with ca_export.capture(str(tmp_path), log=None) as cap:
        for batch in (8, 5, 3):
            m.zero_grad(set_to_none=True)
            loss(xs[batch]).backward()
    assert len(cap.graphs) == 1, "one graph serves every batch size"
    assert [os.path.basename(b) for b, _ in cap.graphs[0].steps] == [
        "batch.pt", "batch.1.pt", "batch.2.pt"]
    kinds = {gi.kind for gi in cap.graphs[0].graph.inputs}
    assert "Int" in kinds, "sizes are graph inputs"
    for k, batch in enumerate((8, 5, 3)):
        suffix = "" if k == 0 else f".{k}"
        got = replay_step(tmp_path, batch=f"batch{suffix}.pt", expected=f"expected{suffix}.pt")
        m.zero_grad(set_to_none=True)
        loss(xs[batch]).backward()
        want = {id(p): p.grad for p in m.parameters()}
        for g, var in zip(got, cap.graphs[0].grad_variables):
            torch.testing.assert_close(g, want[id(var)], rtol=1e-6, atol=1e-6)
        inputs = torch.load(tmp_path / f"batch{suffix}.pt")
        assert any(t.shape == xs[batch].shape for t in inputs)


def test_three_sgd_steps_replayed_by_cpp_update_parameters_as_python_does(tmp_path, replay):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
    twin = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
    twin.load_state_dict(model.state_dict())
    data = [(torch.randn(8, 6), torch.randint(0, 3, (8,))) for _ in range(3)]
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with ca_export.capture(str(tmp_path), log=None) as cap:
        for x, y in data:
            opt.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
    exported = cap.graphs[0]
    assert len(cap.graphs) == 1 and len(exported.steps) == 3
    # The C++ side: each step's gradients come from `replay`, applied to the twin by plain SGD.
    order = [next(i for i, p in enumerate(model.parameters()) if p is v)
             for v in exported.grad_variables]
    twin_params = list(twin.parameters())
    for k in range(3):
        suffix = "" if k == 0 else f".{k}"
        grads = replay_step(tmp_path, batch=f"batch{suffix}.pt", expected=f"expected{suffix}.pt")
        batch = torch.load(tmp_path / f"batch{suffix}.pt")
        for g, i in zip(grads, order):  # the step's inputs hold the parameters it saw
            assert any(b.shape == twin_params[i].shape and torch.allclose(b, twin_params[i])
                       for b in batch)
        with torch.no_grad():
            for g, i in zip(grads, order):
                twin_params[i] -= 0.1 * g
    for p, q in zip(model.parameters(), twin.parameters()):
        torch.testing.assert_close(p, q, rtol=1e-6, atol=1e-7)


def test_an_existing_grad_is_accumulated_into(tmp_path, replay):
    torch.manual_seed(0)
    w = torch.randn(5, requires_grad=True)
    w.grad = torch.full((5,), 0.5)
    with ca_export.capture(str(tmp_path), log=None):
        (w * w).sum().backward()
    got = replay_step(tmp_path)
    torch.testing.assert_close(got[0], 0.5 + 2 * w.detach(), rtol=1e-6, atol=1e-7)


def test_autograd_grad_returns_graph_outputs(tmp_path, replay):
    torch.manual_seed(0)
    w, x = torch.randn(3, requires_grad=True), torch.randn(3, requires_grad=True)
    with ca_export.capture(str(tmp_path), log=None) as cap:
        want = torch.autograd.grad((w * x).sin().sum(), [w, x])
    assert len(cap.graphs[0].graph.outputs) == 2 and not cap.graphs[0].graph.grad_targets()
    got = replay_step(tmp_path)
    for g, e in zip(got, want):
        torch.testing.assert_close(g, e, rtol=1e-6, atol=1e-7)
    assert torch.allclose(want[0], x.detach() * (w * x).detach().cos())


def test_static_export_bakes_sizes(tmp_path, replay):
    torch.manual_seed(0)
    m, x = nn.Linear(4, 3), torch.randn(8, 4)
    step = Step(lambda: m(x).sum(), params(m))
    cap = export(step, tmp_path, dynamic=False)
    assert all(gi.kind == "Tensor" for gi in cap.graphs[0].graph.inputs)
    assert cap.graphs[0].graph.inputs[1].meta.sizes == [8, 4]
    replay_step(tmp_path)


def test_python_autograd_function_is_refused_naming_the_node(tmp_path):
    class Twice(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    w = torch.randn(3, requires_grad=True)
    with pytest.raises(ca_export.ExportError, match=r"FX node 'call_backward.*Function .*Twice runs Python"):
        with ca_export.capture(str(tmp_path), log=None):
            Twice.apply(w).sum().backward()


def test_python_hook_is_refused_naming_the_node(tmp_path):
    w = torch.randn(3, requires_grad=True)
    y = w * 2
    y.register_hook(lambda g: g * 3)
    with pytest.raises(ca_export.ExportError, match=r"FX node 'call_hook.*Python hook .*<lambda>"):
        with ca_export.capture(str(tmp_path), log=None):
            y.sum().backward()


def test_summary_line_per_file(tmp_path, replay):
    lines = []
    w = torch.randn(3, requires_grad=True)
    with ca_export.capture(str(tmp_path), log=lines.append):
        (w * 3).sum().backward()
        w.grad = None  # else the second graph differs: it accumulates into the existing .grad
        (w * 3).sum().backward()
    written = [line.split()[2] for line in lines]
    assert [os.path.basename(p) for p in written] == [
        "bwd.fb", "batch.pt", "expected.pt", "batch.1.pt", "expected.1.pt"]
    assert all(os.path.exists(p) for p in written)


def test_a_missing_replay_binary_is_named_before_any_backward(tmp_path, monkeypatch):
    monkeypatch.setenv("CA_REPLAY", str(tmp_path / "no-replay"))
    with pytest.raises(ca_export.SchemaTableError, match=r"no-replay.*set CA_REPLAY"):
        with ca_export.capture(str(tmp_path / "out"), log=None):
            pass


def test_module_help_names_the_replay_binary_variables():
    r = subprocess.run([sys.executable, "-m", "ca_export", "--help"], capture_output=True,
                       text=True, env={**os.environ, "PYTHONPATH": str(ROOT / "python")})
    assert r.returncode == 0
    for word in ("capture", "CA_REPLAY", "CA_BUILD", "bwd.fb", "batch.<k>.pt", "Refused"):
        assert word in r.stdout


def test_cli_runs_a_script_with_export(tmp_path, replay):
    script = tmp_path / "train.py"
    script.write_text("import torch\nw = torch.randn(4, requires_grad=True)\n"
                      "(w.sin() * 2).sum().backward()\n")
    r = subprocess.run([sys.executable, "-m", "ca_export", "--out", str(tmp_path / "out"),
                        str(script)], capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(ROOT / "python"),
                            "CA_REPLAY": replay_bin()})
    assert r.returncode == 0, r.stderr
    assert "bwd.fb" in r.stderr
    replay_step(tmp_path / "out")


def test_list_ops_json_gives_every_ops_schema(replay):
    r = run(replay, "--list-ops", "--json")
    assert r.returncode == 0, r.stderr
    table = json.loads(r.stdout)
    ops = {op["name"]: op for op in table["ops"]}
    assert len(ops) >= table["resolved"] > 700
    mul = ops["MulBackward0"]
    assert mul["needs_input_grad_count"] == 2 and not mul["custom_function"]
    assert mul["args"][0] == {"kind": "List", "contained": [{"kind": "Bool"}]}
    assert len(mul["args"]) == len(mul["signature"])
    assert table["torch_version"] == torch.__version__.split("+")[0]
