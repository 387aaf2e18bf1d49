# SPDX-License-Identifier: BSD-3-Clause
"""Shared fixtures: where the build is, and a captured example graph in a temp folder."""
import ctypes
import ctypes.util
import os
import pathlib
import struct
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("CA_BUILD", ROOT / "build"))
# The exporter under test is this checkout's, whatever the shared venv has installed.
sys.path.insert(0, str(ROOT / "python"))


def tool(*parts):
    path = BUILD.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is not built")
    return str(path)


@pytest.fixture
def replay():
    return tool("apps", "replay", "replay")


@pytest.fixture
def example(tmp_path):
    """bwd.fb, batch.pt and expected.pt of the bundled MLP, captured in C++."""
    exe = tool("apps", "capture_example", "capture_example")
    subprocess.run([exe, "--out", str(tmp_path), "--depth", "2", "--width", "16"], check=True,
                   capture_output=True)
    return tmp_path


def run(*args):
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=120)


def reseal(graph: bytes) -> bytes:
    """A graph file whose FlatBuffer was edited on purpose, with its checksum trailer recomputed
    independently (libxxhash's XXH3_64bits through ctypes), so that the edit reaches the loader's
    later checks instead of the checksum."""
    name = ctypes.util.find_library("xxhash")
    if name is None:
        pytest.skip("libxxhash not found")
    lib = ctypes.CDLL(name)
    lib.XXH3_64bits.restype = ctypes.c_uint64
    lib.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    payload = graph[:-16]
    return payload + b"CAX1" + bytes(4) + struct.pack("<Q", lib.XXH3_64bits(payload, len(payload)))
