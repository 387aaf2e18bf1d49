# SPDX-License-Identifier: BSD-3-Clause
"""`python -m ca_export` / `ca-export`: run a training script with every backward exported."""
from __future__ import annotations

import argparse
import runpy
import sys

from .schema_table import ENV_BUILD, ENV_REPLAY, SchemaTableError, replay_binary

DESCRIPTION = f"""\
Export the backward graphs of a PyTorch program for ca-replay's Python-free C++ runtime.

Runs SCRIPT (with ARGS) with torch's compiled autograd enabled and ca_export's compiler function:
each backward graph torch compiles is converted to ca-replay's format and written to --out:
  bwd.fb                     the graph; `replay --verify` / `--dump` read it
  batch.pt / expected.pt     the first step's graph inputs and the gradients torch produced
  batch.<k>.pt / expected.<k>.pt   each later step through the same graph
  bwd-<g>.fb, batch-<g>.pt ...     further graphs (g = 1, 2, ...)
One line per written file goes to stderr. Replay a step and check it:
  replay --graph OUT/bwd.fb --inputs OUT/batch.pt --check OUT/expected.pt

From Python:
  import ca_export
  with ca_export.capture("out/model"):   # dynamic=True by default: sizes are graph inputs
      loss.backward()

Packed-args types come from the C++ op registry: `replay --list-ops --json`, run once in a
subprocess (never in this process: each autograd node type binds its functional form once per
process). The replay binary is ${ENV_REPLAY}, else ${ENV_BUILD}/apps/replay/replay, else the
checkout's build/apps/replay/replay.

Refused, naming the node: Python torch.autograd.Functions and hooks (their code is Python),
opaque objects and symbolic sizes inside torch.compile'd regions' backward prologues."""


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="ca-export", description=DESCRIPTION,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", help="folder for the graph and .pt files (created if needed)")
    p.add_argument("--static", action="store_true",
                   help="compiled autograd with dynamic=False: every size baked into the graph")
    p.add_argument("--which-replay", action="store_true",
                   help="print the replay binary the schema table would come from, and exit")
    p.add_argument("script", nargs="?", help="the Python program to run")
    p.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")
    o = p.parse_args(argv)
    try:
        if o.which_replay:
            print(replay_binary())
            return 0
        if not o.script or not o.out:
            p.error("give --out DIR and SCRIPT")
        from .exporter import capture  # imports torch: not needed for --help

        sys.argv = [o.script, *o.args]
        with capture(o.out, dynamic=not o.static):
            runpy.run_path(o.script, run_name="__main__")
    except SchemaTableError as e:
        print(f"ca-export: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
