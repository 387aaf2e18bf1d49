# SPDX-License-Identifier: BSD-3-Clause
"""The package's version is ca-replay's: CMake's project(VERSION) in ../CMakeLists.txt, the one
place it is written (pyproject.toml declares it dynamic). Everything else lives in pyproject."""
import pathlib
import re

from setuptools import setup

_CMAKE = pathlib.Path(__file__).resolve().parent.parent / "CMakeLists.txt"
_MATCH = re.search(r"^project\(ca_replay VERSION (\d+\.\d+\.\d+)", _CMAKE.read_text(), re.M)
if _MATCH is None:
    raise SystemExit(f"{_CMAKE}: no 'project(ca_replay VERSION X.Y.Z' line to take the version from")
setup(version=_MATCH.group(1))
