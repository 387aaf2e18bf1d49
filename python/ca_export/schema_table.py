# SPDX-License-Identifier: BSD-3-Clause
"""The packed-args schema of every op, from the C++ registry, read out of process.

Each autograd node type binds its functional form once per process, and the first binder owns it:
harvesting the C++ registry inside a process where torch's Python compiled autograd runs breaks
one of the two. So the table comes from `replay --list-ops --json`, run once as a subprocess."""
from __future__ import annotations

import dataclasses
import functools
import json
import os
import pathlib
import subprocess
from typing import Dict, List

from .ir import ArgType

ENV_REPLAY = "CA_REPLAY"  # path of the replay binary
ENV_BUILD = "CA_BUILD"  # a ca-replay build folder (its apps/replay/replay is used)
_REPO_BUILD = pathlib.Path(__file__).resolve().parents[2] / "build"


class SchemaTableError(RuntimeError):
    """The replay binary could not be found or run."""


@dataclasses.dataclass(frozen=True)
class OpSignature:
    name: str
    args: List[ArgType]
    needs_input_grad_count: int
    custom_function: bool


@dataclasses.dataclass(frozen=True)
class SchemaTable:
    torch_version: str
    format_version: int
    ops: Dict[str, OpSignature]
    replay: str  # the binary it came from


def replay_binary() -> str:
    """$CA_REPLAY, else $CA_BUILD/apps/replay/replay, else the checkout's build/ (where
    scripts/setup.sh builds)."""
    if os.environ.get(ENV_REPLAY):
        candidates = [pathlib.Path(os.environ[ENV_REPLAY])]
    elif os.environ.get(ENV_BUILD):
        candidates = [pathlib.Path(os.environ[ENV_BUILD]) / "apps" / "replay" / "replay"]
    else:
        candidates = [_REPO_BUILD / "apps" / "replay" / "replay"]
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return str(c)
    raise SchemaTableError(
        f"the replay binary was not found at {candidates[0]}: set {ENV_REPLAY} to it or "
        f"{ENV_BUILD} to a ca-replay build folder (scripts/setup.sh builds into build/)")


def parse(text: str, replay: str) -> SchemaTable:
    obj = json.loads(text)
    ops = {}
    for op in obj["ops"]:
        ops[op["name"]] = OpSignature(op["name"], [ArgType.from_json(t) for t in op["args"]],
                                      op["needs_input_grad_count"], op["custom_function"])
    return SchemaTable(obj["torch_version"], obj["format_version"], ops, replay)


@functools.lru_cache(maxsize=4)
def _load(replay: str) -> SchemaTable:
    try:
        r = subprocess.run([replay, "--list-ops", "--json"], capture_output=True, text=True,
                           timeout=300, check=False)
    except OSError as e:
        raise SchemaTableError(f"{replay} --list-ops --json could not run: {e}") from e
    if r.returncode != 0:
        raise SchemaTableError(
            f"{replay} --list-ops --json exited with {r.returncode}: {r.stderr.strip()}")
    return parse(r.stdout, replay)


def load() -> SchemaTable:
    """The schema table of the replay binary found by replay_binary(), read once per process."""
    return _load(replay_binary())
