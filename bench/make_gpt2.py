# SPDX-License-Identifier: BSD-3-Clause
"""Writes the TorchScript GPT-2 that trainer_bench trains: a small GPT-2, traced.

Usage: python make_gpt2.py OUT.pt

It is written the way Hugging Face's GPT2LMHeadModel is, so its backward has the same node mix
as the traced models libtorch users train: Conv1D layers as addmm, GELU spelled out in tanh form
(gelu_new), a causal mask applied with `where`, pre-norm blocks and the head tied to the token
embedding. No dropout, so eager and replayed steps can be compared bitwise. forward(idx,
targets) returns the mean cross-entropy loss. Weights come from a fixed seed.
"""

import math
import sys

import torch
from torch import nn

VOCAB, CONTEXT, WIDTH, HEADS, LAYERS = 512, 64, 128, 4, 4
BATCH = 8


class Conv1D(nn.Module):
    """GPT-2's linear layer: y = x @ W + b with W stored (in, out)."""

    def __init__(self, n_in: int, n_out: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n_in, n_out) * 0.02)
        self.bias = nn.Parameter(torch.zeros(n_out))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.size()[:-1] + (self.weight.size(1),)
        return torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight).view(shape)


def gelu_new(x: torch.Tensor) -> torch.Tensor:
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x.pow(3.0))))


class Attention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.c_attn = Conv1D(WIDTH, 3 * WIDTH)
        self.c_proj = Conv1D(WIDTH, WIDTH)
        mask = torch.tril(torch.ones(CONTEXT, CONTEXT, dtype=torch.bool))
        self.register_buffer("bias", mask.view(1, 1, CONTEXT, CONTEXT))

    def heads(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.size()
        return x.view(b, t, HEADS, c // HEADS).permute(0, 2, 1, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.c_attn(x).split(WIDTH, dim=2)
        q, k, v = self.heads(q), self.heads(k), self.heads(v)
        w = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(WIDTH // HEADS)
        t = w.size(-1)
        w = torch.where(self.bias[:, :, :t, :t], w, torch.finfo(w.dtype).min)
        a = torch.matmul(w.softmax(dim=-1), v)
        b, _, _, d = a.size()
        return self.c_proj(a.permute(0, 2, 1, 3).contiguous().view(b, t, HEADS * d))


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(WIDTH)
        self.attn = Attention()
        self.ln_2 = nn.LayerNorm(WIDTH)
        self.c_fc = Conv1D(WIDTH, 4 * WIDTH)
        self.c_proj = Conv1D(4 * WIDTH, WIDTH)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x))
        return x + self.c_proj(gelu_new(self.c_fc(self.ln_2(x))))


class Gpt2(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.wte = nn.Embedding(VOCAB, WIDTH)
        self.wpe = nn.Embedding(CONTEXT, WIDTH)
        self.h = nn.ModuleList([Block() for _ in range(LAYERS)])
        self.ln_f = nn.LayerNorm(WIDTH)

    def forward(self, idx: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        pos = torch.arange(idx.size(1), device=idx.device).unsqueeze(0)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        logits = torch.matmul(self.ln_f(x), self.wte.weight.t())  # the tied head
        return nn.functional.cross_entropy(logits.view(-1, VOCAB), targets.view(-1))


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    torch.manual_seed(0)
    model = Gpt2().train()
    idx = torch.randint(0, VOCAB, (BATCH, CONTEXT))
    traced = torch.jit.trace(model, (idx, torch.roll(idx, -1, 1)))
    traced.save(sys.argv[1])
    print(f"wrote {sys.argv[1]}")


if __name__ == "__main__":
    main()
