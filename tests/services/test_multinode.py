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
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from product import PRODUCT, product_path
from ray_support import (LOOPBACK_ENV, local_cluster, ray_local,  # noqa: F401  (fixture)
                         shard_rows, wait_until)

from services import runner
from services.runner import init_ray, run_experiment
from services.spec import ExperimentSpec

TIMEOUT_S = 120  # generous: the machine may be shared and loaded
SPEC = {"name": "multinode", "game": "maori", "players": 3, "agents": "random",
        "games_per_arm": 24000, "seed": 31, "shard_size": 500}
SHARDS = 48


def _wait(condition, what: str, timeout: float = TIMEOUT_S, every: float = 0.05):
    return wait_until(condition, what, timeout, every)


def _rows(root: Path) -> list[dict]:
    return shard_rows(root, drop=("experiment",))  # the CLI names it after the spec's hash


@pytest.fixture
def cluster():
    """A head (no CPUs: every shard runs on a worker node) and two worker nodes of one CPU;
    every Ray process of it is killed and its folder removed afterwards, pass or fail."""
    with local_cluster(workers=2, cpus=1, timeout=TIMEOUT_S) as made:
        yield made


@pytest.fixture
def driver():
    """Starts `meeplelab run` subprocesses; kills any still running at the end."""
    started: list[subprocess.Popen] = []

    def start(args: list[str], env: dict) -> subprocess.Popen:
        proc = subprocess.Popen([sys.executable, "-m", "services.cli", *args], cwd=PRODUCT,
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
    env = {**os.environ, **LOOPBACK_ENV, "RAY_ADDRESS": made.address, "PYTHONPATH": product_path()}
    run = driver(["run", str(spec_file), "--out", str(out)], env)

    def shards() -> list[Path]:
        if run.poll() is not None:  # the driver ended before the node was killed
            raise AssertionError(f"meeplelab run exited early: {run.communicate()}")
        return list(out.rglob("shard-*.parquet"))

    # Mid-experiment: some shards written, most still to play (SHARDS in all).
    _wait(lambda: len(shards()) >= 2, "the first shards")
    made.remove_node(doomed, allow_graceful=False)  # SIGKILL: raylet, workers, agents
    assert not doomed.any_processes_alive()
    written_at_kill = len(list(out.rglob("shard-*.parquet")))
    assert written_at_kill < SHARDS, "the experiment ended before the node died"

    stdout, stderr = run.communicate(timeout=TIMEOUT_S)
    assert run.returncode == 0, stderr[-3000:]
    assert survivor.any_processes_alive()

    spec = ExperimentSpec.model_validate(SPEC)
    assert run_experiment(spec, str(tmp_path / "local"), "undisturbed") == "done"
    expected = _rows(tmp_path / "local")
    assert len(expected) == SPEC["games_per_arm"]
    assert _rows(out) == expected
    # a write cut by the kill left a temporary file; a finished run removes it
    assert not list(out.rglob("*.tmp"))


# ---- the driver's connection -----------------------------------------------------------------
@pytest.fixture
def cluster_connection(monkeypatch):
    """ray.init of a driver that is not connected, answered by `answers` in turn (an
    exception is raised, None is a connection made); returns the addresses asked."""
    asked: list[str] = []
    answers: list = []

    def init(address, **_):
        asked.append(address)
        answer = answers.pop(0)
        if answer is not None:
            raise answer

    monkeypatch.setattr(runner.ray, "is_initialized", lambda: False)
    monkeypatch.setattr(runner.ray, "init", init)
    return asked, answers


def test_the_driver_retries_a_failed_connection_with_backoff(cluster_connection, caplog):
    asked, answers = cluster_connection
    # what a driver met once: the head's client server failed to start, and worked later
    failed = ConnectionAbortedError("Initialization failure from server:\nStarting Ray "
                                    "client server failed. See ray_client_server_23000.err")
    answers += [failed, ConnectionError("ray client connection timeout"), None]
    began = time.monotonic()
    init_ray(address="ray://head:10001")
    assert asked == ["ray://head:10001"] * 3
    assert time.monotonic() - began >= 1 + 2  # waited 1 s, then 2 s
    retries = [r.getMessage() for r in caplog.records if r.name == "meeplelab.runner"]
    assert len(retries) == 2 and "Starting Ray client server failed" in retries[0]
    assert "trying again in 1 s (1 of 7)" in retries[0]
    assert "trying again in 2 s (2 of 7)" in retries[1]


def test_the_driver_gives_up_naming_the_address(cluster_connection, monkeypatch):
    asked, answers = cluster_connection
    monkeypatch.setattr(runner, "CONNECT_TRIES", 2)
    answers += [ConnectionError("ray client connection timeout")] * 2 + [None]
    with pytest.raises(ConnectionError, match="ray://head:10001 in 2 tries: ray client"):
        init_ray(address="ray://head:10001")
    assert len(asked) == 2


def test_an_error_that_is_not_a_connection_is_not_retried(cluster_connection):
    asked, answers = cluster_connection
    answers += [ValueError("bad runtime_env"), None]
    with pytest.raises(ValueError, match="bad runtime_env"):
        init_ray(address="ray://head:10001")
    assert len(asked) == 1
