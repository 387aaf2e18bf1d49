# SPDX-License-Identifier: BSD-3-Clause
"""tools/callgrind_split.py, the split behind scripts/count_instructions.sh, on dumps written in
callgrind's documented format: name compression, a call's inclusive cost kept out of its
caller's self cost, and each function in the first category that matches it."""
import importlib.util
import json
import subprocess
import sys

from conftest import ROOT

TOOL = ROOT / "tools" / "callgrind_split.py"
spec = importlib.util.spec_from_file_location("callgrind_split", TOOL)
split = importlib.util.module_from_spec(spec)
spec.loader.exec_module(split)

# main (ours) runs 10 instructions itself and calls kernel() (100 inclusive); kernel runs 60 of
# its own and calls malloc (40); malloc's own 40 are listed under libc. Compressed names come
# back by number: "fn=(2)" is kernel again, "ob=(1)" libca_runtime again.
DUMP = """version: 1
creator: callgrind-3.19.0
positions: line
events: Ir
summary: 110

ob=(1) /build/runtime/libca_runtime.so
fl=(1) executor.cpp
fn=(1) ca::Executor::run(std::vector<at::Tensor> const&) const
10 4
11 6
cob=(2) /venv/torch/lib/libtorch_cpu.so
cfl=(2) BinaryOps.cpp
cfn=(2) at::native::add_kernel(at::TensorIteratorBase&)
calls=1 20
12 100

ob=(2)
fl=(2)
fn=(2)
20 60
cob=(3) /lib/x86_64-linux-gnu/libc.so.6
cfn=(3) malloc
calls=1 0
21 40

ob=(3)
fn=(3)
0 40
"""


def test_self_costs_keep_calls_out_and_resolve_compressed_names(tmp_path):
    dump = tmp_path / "cg.out.1"
    dump.write_text(DUMP)
    costs, total = split.self_costs(str(dump))
    assert total == 110
    assert costs == {
        "libca_runtime.so:ca::Executor::run(std::vector<at::Tensor> const&) const": 10,
        "libtorch_cpu.so:at::native::add_kernel(at::TensorIteratorBase&)": 60,
        "libc.so.6:malloc": 40,
    }
    cats = split.categorize(costs)
    assert cats["ca-replay runtime"] == 10
    assert cats["kernels and math"] == 60
    assert cats["memory allocation"] == 40


def test_table_is_per_node_of_one_backward(tmp_path):
    eager, replay = tmp_path / "e", tmp_path / "r"
    eager.write_text(DUMP)
    replay.write_text(DUMP.replace("summary: 110", "summary: 55"))
    r = subprocess.run([sys.executable, str(TOOL), "--nodes", "5", "--reps", "2", "--json",
                        str(eager), str(replay)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert got["eager"]["total_per_node"] == 11.0  # 110 / (5 nodes * 2 reps)
    assert got["replay"]["total_per_node"] == 5.5
    assert got["eager"]["per_node"]["memory allocation"] == 4.0
