"""Faults on a real multi-node Ray cluster, on this one machine: a head and two worker nodes
(`ray.cluster_utils.Cluster`, every node on 127.0.0.1, in a temp dir of its own, every port
picked free by the OS, so it cannot collide with the local Ray of other tests or other runs).

The experiment runs through the product's own entry point (`meeplelab run`, in a subprocess
that reaches the cluster through RAY_ADDRESS, as a pod would); one worker node is killed
(SIGKILL of its raylet, its workers and agents) while shards are being played; the
experiment still finishes and its rows equal those of an undisturbed run."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from ray_support import ray_local  # noqa: F401  (session fixture)

from services.runner import run_experiment
from services.spec import ExperimentSpec

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT_S = 120  # generous: the machine may be shared and loaded
SPEC = {"name": "multinode", "game": "maori", "players": 3, "agents": "random",
        "games_per_arm": 12000, "seed": 31, "shard_size": 250}
SHARDS = 48


def _wait(condition, what: str, timeout: float = TIMEOUT_S, every: float = 0.05):
    deadline = time.monotonic() + timeout
    while not (found := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(every)
    return found


def _rows(root: Path) -> list[dict]:
    rows = []
    for path in sorted(root.rglob("shard-*.parquet")):
        rows += pq.read_table(path).to_pylist()
    for row in rows:
        row.pop("experiment")  # the CLI names the experiment after the spec's hash
    return sorted(rows, key=lambda r: (r["arm"], r["players"], r["game_index"]))


def _processes_using(folder: str) -> list[int]:
    """Pids of the processes whose command line names `folder` (every process of a Ray node
    started under it: raylet, GCS, agents, workers)."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if folder.encode() in f.read():
                    found.append(int(entry))
        except (OSError, ValueError):
            pass
    return [pid for pid in found if pid != os.getpid()]


def _stop(made, folder: str) -> None:
    """Kills the cluster's nodes (Cluster.shutdown would also reset this process's Ray
    client state, which the session's local Ray still uses), then anything of it left."""
    for node in [*made.worker_nodes, made.head_node] if made is not None else []:
        if node is not None:
            try:
                made.remove_node(node, allow_graceful=False)
            except Exception:  # a node that failed to start: the sweep below handles it
                pass
    for pid in _processes_using(folder):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.fixture
def cluster(monkeypatch):
    """A head (no CPUs: every shard runs on a worker node) and two worker nodes of one CPU;
    every Ray process of it is killed and its folder removed afterwards, pass or fail."""
    from ray.cluster_utils import Cluster

    # A short path: Ray's unix sockets live under it (108 bytes at most).
    temp = tempfile.mkdtemp(prefix="mlray-")
    # Ray writes the cluster's address file under $RAY_TMPDIR/ray: keep it out of /tmp/ray.
    monkeypatch.setenv("RAY_TMPDIR", temp)
    # Keep 127.0.0.1 as it is: Ray on Linux otherwise rewrites a loopback RAY_ADDRESS to the
    # machine's own address, where this cluster does not listen.
    monkeypatch.setenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    os.mkdir(os.path.join(temp, "ray"))
    node = {"node_ip_address": "127.0.0.1", "object_store_memory": 80 * 2**20,
            "include_dashboard": False, "dashboard_agent_listen_port": None}
    made = None
    try:
        made = Cluster(initialize_head=True, shutdown_at_exit=False,
                       head_node_args={**node, "num_cpus": 0, "dashboard_port": None,
                                       "temp_dir": os.path.join(temp, "ray")})
        workers = [made.add_node(**node, num_cpus=1) for _ in range(2)]
        made.wait_for_nodes(timeout=TIMEOUT_S)
        yield made, workers
    finally:
        _stop(made, temp)
        shutil.rmtree(temp, ignore_errors=True)
    assert not _processes_using(temp), "a Ray process of the test cluster outlived it"


@pytest.fixture
def driver():
    """Starts `meeplelab run` subprocesses; kills any still running at the end."""
    started: list[subprocess.Popen] = []

    def start(args: list[str], env: dict) -> subprocess.Popen:
        proc = subprocess.Popen([sys.executable, "-m", "services.cli", *args], cwd=ROOT,
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, start_new_session=True)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_a_killed_worker_node_loses_no_game(cluster, driver, ray_local, tmp_path):  # noqa: F811
    made, (doomed, survivor) = cluster
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(SPEC))
    out = tmp_path / "cluster"
    env = {**os.environ, "RAY_ADDRESS": made.address, "PYTHONPATH": str(ROOT)}
    run = driver(["run", str(spec_file), "--out", str(out)], env)

    def shards() -> list[Path]:
        if run.poll() is not None:  # the driver ended before the node was killed
            raise AssertionError(f"meeplelab run exited early: {run.communicate()}")
        return list(out.rglob("shard-*.parquet"))

    # Mid-experiment: some shards written, most still to play (SHARDS in all).
    written_before = len(_wait(lambda: len(shards()) >= 2 and shards(), "the first shards"))
    made.remove_node(doomed, allow_graceful=False)  # SIGKILL: raylet, workers, agents
    assert not doomed.any_processes_alive()

    stdout, stderr = run.communicate(timeout=TIMEOUT_S)
    assert run.returncode == 0, stderr[-3000:]
    assert written_before < SHARDS, "the experiment ended before the node was killed"
    assert survivor.any_processes_alive()

    spec = ExperimentSpec.model_validate(SPEC)
    assert run_experiment(spec, str(tmp_path / "local"), "undisturbed") == "done"
    expected = _rows(tmp_path / "local")
    assert len(expected) == SPEC["games_per_arm"]
    assert _rows(out) == expected
    # a write cut by the kill left a temporary file; a finished run removes it
    assert not list(out.rglob("*.tmp"))
