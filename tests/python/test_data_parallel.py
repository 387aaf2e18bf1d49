# SPDX-License-Identifier: BSD-3-Clause
"""Data-parallel training as users launch it: N processes of apps/train_ddp on loopback (and
across two network namespaces), each on its shard of every batch. The ranks must end bitwise
equal to each other and equal (1e-6 relative) to one process training on the full batches with
eager backward; a dead, stalled or missing peer must end every other rank with a clear error
within the timeout."""
import os
import pathlib
import re
import shutil
import signal
import socket
import subprocess
import time
import uuid

import pytest
import torch

from conftest import ROOT, tool

TIMEOUT_S = 10  # the ranks' CA_DIST_TIMEOUT_S
WALL_S = 240  # no test waits longer for a rank (sanitizer builds are slow)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(exe, world, args, ranks=None, env_of=None, prefix_of=None):
    """Starts `ranks` (default all) of a `world`-rank job; returns {rank: Popen}."""
    port = free_port()
    procs = {}
    for r in ranks if ranks is not None else range(world):
        env = dict(os.environ, RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE=str(world),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                   CA_DIST_TIMEOUT_S=str(TIMEOUT_S))
        env.update(env_of(r) if env_of else {})
        cmd = (prefix_of(r) if prefix_of else []) + [exe] + [str(a) for a in args]
        procs[r] = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, text=True)
    return procs


def finish(procs, wall=WALL_S):
    """Waits for every process (killing what is left after `wall`); {rank: (rc, output)}."""
    out = {}
    deadline = time.monotonic() + wall
    for r, p in procs.items():
        try:
            text, _ = p.communicate(timeout=max(1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            text, _ = p.communicate()
            text += "\n<killed by the test: still running after %d s>" % wall
        out[r] = (p.returncode, text)
    return out


def train(tmp_path, world, *args, **launch_args):
    exe = tool("apps", "train_ddp", "train_ddp")
    results = finish(launch(exe, world, [*args, "--out", tmp_path / "rank{rank}.pt"],
                            **launch_args))
    for r, (rc, text) in results.items():
        assert rc == 0, f"rank {r} failed:\n{text}"
    return results


def reference(tmp_path, world, *args):
    exe = tool("apps", "train_ddp", "train_ddp")
    path = tmp_path / f"reference{world}.pt"
    subprocess.run([exe, "--reference", str(world), *map(str, args), "--out", str(path)],
                   check=True, capture_output=True, timeout=WALL_S)
    return torch.load(path)


def captured_at(text):
    """The steps at which a rank reports it captured (missed its cache)."""
    return text.split("(at steps")[1].split(")")[0].split()


def buckets(text):
    """(launched while the replay ran, all) gradient buckets, as a rank reports them."""
    m = re.search(r"(\d+) of (\d+) gradient buckets all-reduced while the replay ran", text)
    return int(m.group(1)), int(m.group(2))


def check_against_reference(tmp_path, world, args, results):
    ranks = [(tmp_path / f"rank{r}.pt").read_bytes() for r in range(world)]
    assert all(b == ranks[0] for b in ranks), "ranks ended with different parameters"
    mine = torch.load(tmp_path / "rank0.pt")
    ref = reference(tmp_path, world, *args)
    # Relative to the model's largest parameter: float32 sums in another order differ by an ulp
    # or two, which is more than 1e-6 of a parameter tensor that is itself near zero.
    scale = max(b.abs().max().item() for b in ref)
    for k, (a, b) in enumerate(zip(mine, ref)):
        rel = (a - b).abs().max().item() / scale
        assert rel <= 1e-6, f"parameter {k}: {rel:.3g} relative to full-batch training"
    # The comparison can fail: one shard's loss alone trains to other parameters.
    other = reference(tmp_path, 1, *args)
    assert any(not torch.allclose(a, b, rtol=1e-4) for a, b in zip(mine, other))


# 100 samples in batches of 32: the last batch of each epoch has 4 (a graph of its own), and with
# --vary-graph ranks take the aux branch on different steps (caches miss on some ranks only).
CASES = [
    (2, "mlp", "compiled"),
    (4, "transformer", "enabled"),
    (4, "mlp", "compiled"),
]


@pytest.mark.parametrize("world,model,engine", CASES)
def test_ranks_agree_with_full_batch_training(tmp_path, world, model, engine):
    args = ["--model", model, "--steps", 12, "--vary-graph", "--bucket-kib", 8]
    results = train(tmp_path, world, *args, "--engine", engine)
    check_against_reference(tmp_path, world, args, results)
    steps = [captured_at(text) for _, text in results.values()]
    assert any(s != steps[0] for s in steps), f"ranks missed at the same steps: {steps}"


def test_overlap_changes_nothing_but_timing(tmp_path):
    args = ["--steps", 8, "--vary-graph", "--bucket-kib", 4]
    results = train(tmp_path, 2, *args)
    overlapped = (tmp_path / "rank0.pt").read_bytes()
    early, total = buckets(results[0][1])
    assert early == total > 8, results[0][1]  # several a step, each launched inside the replay
    results = train(tmp_path, 2, *args, "--no-overlap")
    assert buckets(results[0][1]) == (0, total), results[0][1]
    assert (tmp_path / "rank0.pt").read_bytes() == overlapped


def test_launch_script_and_torchrun(tmp_path):
    script = ROOT / "scripts" / "train_ddp.sh"
    env = dict(os.environ, CA_BUILD=str(pathlib.Path(tool("apps", "train_ddp", "train_ddp")).parents[2]))
    run = subprocess.run([script, "2", "--steps", "4"], capture_output=True, text=True,
                         timeout=WALL_S, env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "[rank 1] rank 1 of 2: 4 steps" in run.stdout
    torchrun = pathlib.Path(os.environ.get("CA_VENV", "/opt/ca-replay/venv")) / "bin" / "torchrun"
    if not torchrun.exists():
        pytest.skip(f"{torchrun} is not installed")
    run = subprocess.run([torchrun, "--nproc-per-node", "2", "--no-python",
                          tool("apps", "train_ddp", "train_ddp"), "--steps", "4"],
                         capture_output=True, text=True, timeout=WALL_S)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "rank 1 of 2: 4 steps" in run.stdout


def expect_clean_failure(results, ranks, words):
    for r in ranks:
        rc, text = results[r]
        assert "<killed by the test" not in text, f"rank {r} hung:\n{text}"
        assert rc == 1, f"rank {r}: exit {rc}\n{text}"
        assert f"rank {r} of" in text and all(w in text for w in words), text


@pytest.mark.parametrize("fault", ["kill", "stall"])
def test_a_failing_peer_ends_the_others_within_the_timeout(fault):
    exe = tool("apps", "train_ddp", "train_ddp")
    procs = launch(exe, 3, ["--steps", 50, "--fault", fault, "--fault-rank", 1,
                            "--fault-step", 3])
    start = time.monotonic()
    others = finish({r: procs[r] for r in (0, 2)})
    elapsed = time.monotonic() - start
    procs[1].kill()
    procs[1].communicate()
    expect_clean_failure(others, (0, 2), ["all-reduce of gradient bucket"])
    assert elapsed < TIMEOUT_S + 60, f"took {elapsed:.0f} s against a {TIMEOUT_S} s timeout"


@pytest.mark.parametrize("missing", [0, 1])
def test_a_rank_that_never_starts_ends_the_others(missing):
    exe = tool("apps", "train_ddp", "train_ddp")
    present = [r for r in range(2) if r != missing]
    results = finish(launch(exe, 2, ["--steps", 3], ranks=present))
    expect_clean_failure(results, present, ["joining the process group"])


@pytest.fixture
def two_hosts():
    """Two network namespaces joined by a veth pair, addresses only they have."""
    if shutil.which("ip") is None:
        pytest.skip("iproute2's ip is not installed")
    tag = uuid.uuid4().hex[:6]
    ns, dev = [f"ca{tag}{s}" for s in "ab"], [f"ca{tag}v{s}" for s in "ab"]
    addr = ["10.231.7.1", "10.231.7.2"]
    steps = [["netns", "add", ns[0]], ["netns", "add", ns[1]],
             ["link", "add", dev[0], "type", "veth", "peer", "name", dev[1]]]
    for i in range(2):
        steps += [["link", "set", dev[i], "netns", ns[i]],
                  ["-n", ns[i], "addr", "add", addr[i] + "/30", "dev", dev[i]],
                  ["-n", ns[i], "link", "set", dev[i], "up"],
                  ["-n", ns[i], "link", "set", "lo", "up"]]
    try:
        for s in steps:
            r = subprocess.run(["ip", *s], capture_output=True, text=True)
            if r.returncode != 0:
                pytest.skip(f"cannot make network namespaces here (ip {' '.join(s)}: "
                            f"{r.stderr.strip()})")
        yield ns, dev, addr
    finally:
        for n in ns:
            subprocess.run(["ip", "netns", "del", n], capture_output=True)


def test_two_hosts_over_a_veth_pair(tmp_path, two_hosts):
    ns, dev, addr = two_hosts
    args = ["--steps", 6, "--vary-graph"]
    train(tmp_path, 2, *args,
          env_of=lambda r: {"MASTER_ADDR": addr[0], "GLOO_SOCKET_IFNAME": dev[r]},
          prefix_of=lambda r: ["ip", "netns", "exec", ns[r]])
    rx = subprocess.run(["ip", "-n", ns[1], "-s", "-j", "link", "show", dev[1]],
                        capture_output=True, text=True, check=True).stdout
    assert '"bytes"' in rx  # traffic counters exist; the ranks could only meet over the pair
    check_against_reference(tmp_path, 2, args, None)


def test_nccl_one_rank_per_gpu(tmp_path):
    """NCCL averages CUDA gradients (runs where GPUs and an NCCL build are; gpu-check runs it)."""
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device: the NCCL path is only built here")
    gpus = torch.cuda.device_count()
    results = train(tmp_path, gpus, "--device", "cuda", "--steps", 6, "--vary-graph")
    assert "backend nccl" in results[0][1], results[0][1]
    ranks = [(tmp_path / f"rank{r}.pt").read_bytes() for r in range(gpus)]
    assert all(b == ranks[0] for b in ranks)
