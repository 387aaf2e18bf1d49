# SPDX-License-Identifier: BSD-3-Clause
"""Writes the TorchScript models of the corpus's torchscript program: one small MLP block with a
tanh-form GELU and a residual, scripted (SCRIPTED.pt) and traced (TRACED.pt), weights from a
fixed seed. TorchScript's profiling executor fuses its elementwise chains into
DifferentiableGraphs after two runs, so their backwards hold DifferentiableGraphBackward nodes.

Usage: python make_torchscript.py SCRIPTED.pt TRACED.pt
"""

import math
import sys

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(16)
        self.up = nn.Linear(16, 64)
        self.down = nn.Linear(64, 16)
        self.head = nn.Linear(16, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.up(self.norm(x))
        h = 0.5 * h * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * h * h * h)))
        x = x + self.down(h)
        return self.head(x * torch.sigmoid(x))


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    torch.manual_seed(0)
    torch.jit.script(Block()).save(sys.argv[1])
    torch.manual_seed(0)
    torch.jit.trace(Block(), torch.randn(8, 16)).save(sys.argv[2])
    print(f"wrote {sys.argv[1]} and {sys.argv[2]}")


if __name__ == "__main__":
    main()
