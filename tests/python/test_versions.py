# SPDX-License-Identifier: BSD-3-Clause
"""One version number: CMake's project(VERSION) is its only source, and every place that shows a
version derives it from there (issue 21): `replay --version`, the installed CMake package's
version file, ca_export.__version__ and its package metadata, and the version every graph file
records about its writer (C++ and Python writers alike)."""
import importlib.metadata
import re

import torch
import torch.nn as nn

import ca_export
from conftest import BUILD, ROOT, run
from export_util import Step, export


def cmake_version():
    text = (ROOT / "CMakeLists.txt").read_text()
    return re.search(r"^project\(ca_replay VERSION (\d+\.\d+\.\d+)", text, re.M).group(1)


def test_replay_version_prints_ca_replay_torch_and_format(replay):
    r = run(replay, "--version")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == f"replay (ca-replay) {cmake_version()}"
    assert lines[1] == f"torch {torch.__version__.split('+')[0]} (built against)"
    formats = run(replay, "--list-ops", "--json")
    assert formats.returncode == 0, formats.stderr
    fmt = re.search(r'"format_version":\s*(\d+)', formats.stdout).group(1)
    assert lines[2] == f"graph format {fmt} (reads and writes)"


def test_cmake_package_version_file_and_python_package_agree():
    version_file = (BUILD / "ca_runtimeConfigVersion.cmake").read_text()
    assert f'set(PACKAGE_VERSION "{cmake_version()}")' in version_file
    assert ca_export.__version__ == cmake_version()
    assert importlib.metadata.version("ca-export") == cmake_version()


def test_cpp_written_graph_records_its_writer(replay, example):
    r = run(replay, "--verify", example / "bwd.fb")
    assert r.returncode == 0, r.stderr
    assert f"written by ca-replay {cmake_version()}," in r.stdout


def test_python_written_graph_records_its_writer(replay, tmp_path):
    torch.manual_seed(0)
    model = nn.Linear(4, 3)
    x = torch.randn(2, 4)
    export(Step(lambda: model(x).pow(2).sum(), list(model.parameters())), tmp_path)
    r = run(replay, "--verify", tmp_path / "bwd.fb")
    assert r.returncode == 0, r.stderr
    assert f"written by ca-replay {cmake_version()}," in r.stdout
