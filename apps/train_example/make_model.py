# SPDX-License-Identifier: BSD-3-Clause
"""Writes the TorchScript model that apps/train_example trains: a small CNN with BatchNorm.

Usage: python make_model.py OUT.pt

forward(x, aux) takes a branch when `aux` is true (a second conv block), so a trainer can change
the graph between steps. The weights come from a fixed seed, so every run starts the same.
"""

import sys

import torch
from torch import nn


class SmallCnn(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.aux = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.head = nn.Linear(8 * 8 * 8, 10)

    def forward(self, x: torch.Tensor, aux: bool) -> torch.Tensor:
        h = self.stem(x)
        if aux:
            h = h + self.aux(h)
        h = nn.functional.max_pool2d(h, 2)
        return self.head(h.flatten(1))


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    torch.manual_seed(0)
    torch.jit.script(SmallCnn()).save(sys.argv[1])
    print(f"wrote {sys.argv[1]}")


if __name__ == "__main__":
    main()
