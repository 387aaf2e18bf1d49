# SPDX-License-Identifier: BSD-3-Clause
"""The replay CLI end to end, with Python torch reading and writing the .pt files."""
import json
import pathlib
import re
import shutil
import subprocess
import sys

import torch

from conftest import ROOT, reseal, run


def test_help_explains_every_mode(replay):
    r = run(replay, "--help")
    assert r.returncode == 0
    for flag in ("--graph", "--inputs", "--check", "--bench", "--verify", "--dump", "--list-ops"):
        assert flag in r.stdout


def test_replay_matches_eager_gradients_written_by_cpp(replay, example):
    out = example / "grads.pt"
    r = run(replay, "--graph", example / "bwd.fb", "--inputs", example / "batch.pt",
            "--check", example / "expected.pt", "--out", out)
    assert r.returncode == 0, r.stderr
    assert "OK" in r.stderr
    got = torch.load(out)
    want = torch.load(example / "expected.pt")
    assert len(got) == len(want) > 0
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        torch.testing.assert_close(g, w, rtol=1e-6, atol=1e-7)


def test_inputs_saved_by_python_are_accepted(replay, example, tmp_path):
    batch = torch.load(example / "batch.pt")
    torch.save([t.clone() for t in batch], tmp_path / "resaved.pt")
    r = run(replay, "--graph", example / "bwd.fb", "--inputs", tmp_path / "resaved.pt",
            "--check", example / "expected.pt")
    assert r.returncode == 0, r.stderr


def test_check_mismatch_exits_1_and_says_which(replay, example, tmp_path):
    want = torch.load(example / "expected.pt")
    want[1] = want[1] + 1e-2
    torch.save(want, tmp_path / "wrong.pt")
    r = run(replay, "--graph", example / "bwd.fb", "--inputs", example / "batch.pt",
            "--check", tmp_path / "wrong.pt")
    assert r.returncode == 1
    assert "MISMATCH" in r.stderr and "tensor 1" in r.stderr


def test_wrong_input_count_is_a_clear_error(replay, example, tmp_path):
    batch = torch.load(example / "batch.pt")
    torch.save(batch[:-1], tmp_path / "short.pt")
    r = run(replay, "--graph", example / "bwd.fb", "--inputs", tmp_path / "short.pt")
    assert r.returncode == 2
    assert f"expected {len(batch)} inputs, got {len(batch) - 1}" in r.stderr


def test_wrong_input_dtype_names_the_input(replay, example, tmp_path):
    batch = torch.load(example / "batch.pt")
    batch[0] = batch[0].double()
    torch.save(batch, tmp_path / "double.pt")
    r = run(replay, "--graph", example / "bwd.fb", "--inputs", tmp_path / "double.pt")
    assert r.returncode == 2
    assert "input 0" in r.stderr and "Double" in r.stderr


def test_truncated_graph_is_refused_with_its_path(replay, example, tmp_path):
    data = (example / "bwd.fb").read_bytes()
    bad = tmp_path / "truncated.fb"
    bad.write_bytes(data[: len(data) // 2])
    r = run(replay, "--graph", bad, "--inputs", example / "batch.pt")
    assert r.returncode == 2
    assert "truncated.fb" in r.stderr
    assert "Traceback" not in r.stderr and "Segmentation" not in r.stderr


def test_json_summary_and_bench(replay, example):
    r = run(replay, "--graph", example / "bwd.fb", "--inputs", example / "batch.pt",
            "--check", example / "expected.pt", "--bench", "5", "--json")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["check"]["ok"] is True
    assert summary["bench"]["runs"] == 5
    assert summary["bench"]["min_ms"] <= summary["bench"]["median_ms"] <= summary["bench"]["max_ms"]


def test_profile_lists_ops(replay, example):
    r = run(replay, "--graph", example / "bwd.fb", "--inputs", example / "batch.pt", "--profile")
    assert r.returncode == 0, r.stderr
    assert "AddmmBackward0" in r.stderr
    assert "ns/node" in r.stderr and "validate_outputs elided" in r.stderr


def test_list_ops_ends_with_the_count(replay):
    r = run(replay, "--list-ops")
    assert r.returncode == 0
    last = r.stdout.strip().splitlines()[-1]
    assert last.startswith("resolved ") and last.endswith(" built-in ops")
    assert "MulBackward0" in r.stdout


def test_unknown_flag_is_an_error(replay):
    r = run(replay, "--grpah", "x.fb")
    assert r.returncode == 2
    assert "--grpah" in r.stderr


def test_verify_runs_op_binding_like_a_replay(replay, example, tmp_path):
    """--verify runs the executor's whole load pipeline: a graph whose op no torch knows is
    refused by --verify exactly as a replay refuses it."""
    data = (example / "bwd.fb").read_bytes()
    assert b"TBackward0" in data
    renamed = tmp_path / "renamed.fb"
    renamed.write_bytes(reseal(data.replace(b"TBackward0", b"TBackwardX")))
    r = run(replay, "--verify", renamed)
    assert r.returncode == 2 and "TBackwardX" in r.stderr, r.stderr
    r = run(replay, "--graph", renamed, "--inputs", example / "batch.pt")
    assert r.returncode == 2 and "TBackwardX" in r.stderr, r.stderr


def test_names_from_the_file_reach_the_terminal_escaped(replay, example, tmp_path):
    """A crafted op name with a control byte and a byte that is not UTF-8 is refused naming it,
    each shown as \\xNN: the file writes nothing raw to the user's terminal."""
    data = (example / "bwd.fb").read_bytes()
    crafted = tmp_path / "crafted.fb"
    crafted.write_bytes(reseal(data.replace(b"TBackward0", b"TBackwa\x02\xff0")))
    for args in (["--verify", crafted], ["--graph", crafted, "--inputs", example / "batch.pt"]):
        r = subprocess.run([replay, *map(str, args)], capture_output=True, timeout=120)
        assert r.returncode == 2, r.stderr
        assert b"TBackwa\\x02\\xff0" in r.stderr, r.stderr
        assert b"\x02" not in r.stderr and b"\xff" not in r.stderr


def test_verify_names_the_capturing_torch(replay, example):
    r = run(replay, "--verify", example / "bwd.fb")
    assert r.returncode == 0, r.stderr
    assert "captured with torch " + torch.__version__.split("+")[0] in r.stdout


def test_corrupted_graph_is_refused_by_its_checksum(replay, example, tmp_path):
    data = bytearray((example / "bwd.fb").read_bytes())
    assert reseal(bytes(data)) == bytes(data)  # the trailer is what libxxhash computes
    data[len(data) // 2] ^= 0x01
    bad = tmp_path / "flipped.fb"
    bad.write_bytes(bytes(data))
    for args in (("--verify", bad), ("--graph", bad, "--inputs", example / "batch.pt")):
        r = run(replay, *args)
        assert r.returncode == 2, r.stderr
        assert "checksum mismatch: the file is corrupt" in r.stderr and str(bad) in r.stderr


def test_max_graph_mb_limits_the_graph_size(replay, example, tmp_path):
    big = tmp_path / "big.fb"
    big.write_bytes(bytes(3 << 20))
    r = run(replay, "--verify", big, "--max-graph-mb", "2")
    assert r.returncode == 2 and "more than the limit of 2097152" in r.stderr, r.stderr
    r = run(replay, "--verify", example / "bwd.fb", "--max-graph-mb", "1")
    assert r.returncode == 0, r.stderr
    r = run(replay, "--verify", example / "bwd.fb", "--max-graph-mb", "0")
    assert r.returncode == 2 and "--max-graph-mb" in r.stderr
    assert "--max-graph-mb" in run(replay, "--help").stdout


def test_max_tensor_elements_bounds_the_tensors_a_graph_describes(replay, example):
    args = ("--graph", example / "bwd.fb", "--inputs", example / "batch.pt")
    r = run(replay, *args, "--max-tensor-elements", "2")
    assert r.returncode == 2, r.stderr
    assert "describe more than 2 elements (ExecutorOptions::max_tensor_elements)" in r.stderr
    assert run(replay, *args, "--max-tensor-elements", str(1 << 30)).returncode == 0
    r = run(replay, *args, "--max-tensor-elements", "0")
    assert r.returncode == 2 and "--max-tensor-elements" in r.stderr
    assert "--max-tensor-elements" in run(replay, "--help").stdout


def test_out_leaves_an_existing_tmp_file_alone(replay, example, tmp_path):
    out = tmp_path / "grads.pt"
    stale = tmp_path / "grads.pt.tmp"
    stale.write_bytes(b"not mine")
    r = run(replay, "--graph", example / "bwd.fb", "--inputs", example / "batch.pt", "--out", out)
    assert r.returncode == 0, r.stderr
    assert stale.read_bytes() == b"not mine"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("grads")) == [
        "grads.pt", "grads.pt.tmp"]
    assert len(torch.load(out)) > 0


ENGINE = "autograd::engine::evaluate_function: "


def node_events(trace_events):
    """Node names of the events eager's engine naming gives, counted (the root excluded: the
    engine runs it as a node, a replay starts past it)."""
    import collections
    names = collections.Counter()
    for e in trace_events:
        name = e.get("name", "")
        if name.startswith(ENGINE) and name != ENGINE + "GraphRoot":
            names[name[len(ENGINE):]] += 1
    return names


def test_trace_shows_every_replayed_node_as_eager_profiles_it(replay, tmp_path):
    import torch.nn as nn
    from export_util import Step, export, params
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 3))
    x = torch.randn(4, 6)
    step = Step(lambda: model(x).pow(2).sum(), params(model))
    export(step, tmp_path)
    trace = tmp_path / "trace.json"
    r = run(replay, "--graph", tmp_path / "bwd.fb", "--inputs", tmp_path / "batch.pt",
            "--check", tmp_path / "expected.pt", "--trace", trace)
    assert r.returncode == 0, r.stderr
    assert f"written to {trace}" in r.stderr
    replayed = node_events(json.loads(trace.read_text())["traceEvents"])

    # The reference: torch's own profiler over eager backward of the same step.
    for p in step.leaves:
        p.grad = None
    loss = step.loss_fn()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        loss.backward()
    eager = node_events({"name": e.name} for e in prof.events())
    assert eager["torch::autograd::AccumulateGrad"] == 4, eager
    assert replayed == eager

    # One event per plan step: node events plus the steps named for what they are (ca::...).
    dump = run(replay, "--dump", tmp_path / "bwd.fb")
    steps = int(re.search(r"plan: (\d+) of \d+ nodes run", dump.stderr).group(1))
    events = json.loads(trace.read_text())["traceEvents"]
    ours = [e for e in events if e.get("name", "").startswith((ENGINE, "ca::"))]
    assert len(ours) == steps, [e["name"] for e in ours]


def test_trace_to_an_unwritable_place_is_a_clear_error(replay, example, tmp_path):
    r = run(replay, "--graph", example / "bwd.fb", "--inputs", example / "batch.pt",
            "--trace", tmp_path / "no" / "such" / "folder" / "t.json")
    assert r.returncode == 2
    assert "--trace" in r.stderr and "t.json" in r.stderr
    # A folder in the way: the trace is written beside it, then cannot take its name; the
    # temporary file goes and the folder stays as it was.
    out = tmp_path / "out"
    (out / "taken").mkdir(parents=True)
    (out / "taken" / "keep").write_text("mine")
    r = run(replay, "--graph", example / "bwd.fb", "--inputs", example / "batch.pt",
            "--trace", out / "taken")
    assert r.returncode == 2
    assert "--trace" in r.stderr and "taken" in r.stderr
    assert sorted(p.name for p in out.iterdir()) == ["taken"]
    assert (out / "taken" / "keep").read_text() == "mine"
    r = run(replay, "--trace", tmp_path / "t.json")
    assert r.returncode == 2 and "--trace needs --graph" in r.stderr


def test_dot_renders_with_graphviz(replay, example, tmp_path):
    import shutil
    import xml.etree.ElementTree as ET
    r = run(replay, "--dot", example / "bwd.fb")
    assert r.returncode == 0, r.stderr
    dot = r.stdout
    assert dot.startswith("digraph backward {")
    dump = run(replay, "--dump", example / "bwd.fb")
    nodes = len([line for line in dump.stdout.splitlines() if re.match(r"\s+\d+ [a-z_]+ ", line)])
    m = re.search(r"plan: (\d+) of (\d+) nodes run; (\d+) validate_outputs elided", dump.stderr)
    run_count, total, elided = map(int, m.groups())
    assert total == nodes == len(re.findall(r"^  n\d+ \[", dot, re.M))
    assert len(re.findall(r"elided at load", dot)) == elided == total - run_count
    assert shutil.which("dot"), "graphviz's dot is missing: scripts/setup.sh installs it"
    svg = subprocess.run(["dot", "-Tsvg"], input=dot, capture_output=True, text=True, timeout=60)
    assert svg.returncode == 0, svg.stderr
    root = ET.fromstring(svg.stdout)
    assert root.tag.endswith("svg")
    titles = [t.text for t in root.iter("{http://www.w3.org/2000/svg}title")]
    assert sum(1 for t in titles if t and re.fullmatch(r"n\d+", t)) == total


def test_dot_escapes_names_from_the_file(replay, example, tmp_path):
    # A crafted input name with DOT syntax in it stays inside its label.
    data = bytearray((example / "bwd.fb").read_bytes())
    i = data.find(b"grad_output")
    assert i > 0
    data[i:i + 4] = b'"];x'
    bad = tmp_path / "crafted.fb"
    bad.write_bytes(reseal(bytes(data)))
    r = run(replay, "--dot", bad)
    assert r.returncode == 0, r.stderr
    assert '\\"];x' in r.stdout
    import shutil
    assert shutil.which("dot"), "graphviz's dot is missing: scripts/setup.sh installs it"
    svg = subprocess.run(["dot", "-Tsvg"], input=r.stdout, capture_output=True, text=True,
                         timeout=60)
    assert svg.returncode == 0, svg.stderr
    assert "<title>x</title>" not in svg.stdout  # no node "x" escaped its label


def test_dot_refuses_a_corrupt_graph_naming_it(replay, example, tmp_path):
    data = (example / "bwd.fb").read_bytes()
    bad = tmp_path / "cut.fb"
    bad.write_bytes(data[: len(data) // 3])
    r = run(replay, "--dot", bad)
    assert r.returncode == 2
    assert "cut.fb" in r.stderr and r.stdout == ""
    flipped = bytearray(data)
    flipped[len(flipped) // 2] ^= 0xFF
    bad.write_bytes(bytes(flipped))
    r = run(replay, "--dot", bad)
    assert r.returncode == 2 and "checksum" in r.stderr and r.stdout == ""


def test_encode_writes_what_dump_reads_and_refuses_bad_json(replay, example, tmp_path):
    """--encode: the JSON form (here flatc's own, of the example) back to a graph file equal to
    the original; bad JSON exits 2 naming the line; the exporter needs no FlatBuffers of its own."""
    flatc = shutil.which("flatc")
    if flatc is None:
        pytest.skip("flatc is not installed")
    fb = tmp_path / "raw.fb"
    fb.write_bytes((example / "bwd.fb").read_bytes()[:-16])  # the FlatBuffer, no trailer
    schema = pathlib.Path(__file__).resolve().parents[2] / "schema" / "ca_graph.fbs"
    subprocess.run([flatc, "--json", "--strict-json", "--defaults-json", "--raw-binary", "-o",
                    str(tmp_path), str(schema), "--", str(fb)], check=True)
    out = tmp_path / "again.fb"
    r = run(replay, "--encode", tmp_path / "raw.json", "--out", out)
    assert r.returncode == 0, r.stderr
    assert run(replay, "--dump", out).stdout == run(replay, "--dump", example / "bwd.fb").stdout
    bad = tmp_path / "bad.json"
    bad.write_text('{"format_version": 2,\n "nodes": [{"kind": "Sideways"}]}')
    r = run(replay, "--encode", bad, "--out", tmp_path / "bad.fb")
    assert r.returncode == 2 and "bad.json: graph JSON:" in r.stderr and "line 2" in r.stderr
    assert not (tmp_path / "bad.fb").exists()
    code = ("import sys; sys.modules['flatbuffers'] = sys.modules['xxhash'] = None; "
            "import ca_export.exporter, ca_export.encode")
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT / "python").returncode == 0
