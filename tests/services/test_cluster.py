"""A real multi-host Ray cluster: a head and two worker nodes started with the `ray start`
commands of docs/deployment.md, each in a Linux network namespace of its own (its own
address on a bridge, like a host; tests/cluster_support.py).  The experiment runs through
the product's own entry point (`meeplelab run`, the driver joining by RAY_ADDRESS from the
head's host, as a RayJob's does); one worker node is lost mid-run (every process of its
namespace SIGKILLed by PID while it plays a shard task); the run still ends, and its rows
and every shard file's SHA-256 in the manifest equal a single-machine run's.

Needs root (CI runs as root): where namespaces cannot be made the test fails, naming why."""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from cluster_support import (ONE_MACHINE_FLAGS, Host, NamespacesUnavailable, namespace_cluster,
                             require_namespaces, start_args)
from product import PRODUCT, product_env
from ray_support import ray_local  # noqa: F401  (session fixture)

from pipelines.dataset import verify
from services.cli import experiment_id
from services.runner import run_experiment
from services.spec import ExperimentSpec
from services.storage import read_manifest

DOCS = Path(__file__).resolve().parents[2] / "docs" / "deployment.md"
TIMEOUT_S = 150  # generous: the machine may be shared and loaded
SPEC = {"name": "hosts", "game": "maori", "players": 3, "agents": "random",
        "games_per_arm": 120_000, "seed": 47, "shard_size": 2_000}
SHARDS = 60


@pytest.fixture
def cluster():
    try:
        require_namespaces()
    except NamespacesUnavailable as exc:
        pytest.fail(f"this test needs network namespaces (CI runs as root): {exc}")
    with namespace_cluster(workers=2, cpus=1, env=product_env(), timeout=TIMEOUT_S) as made:
        yield made


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
    return sorted(rows, key=lambda r: (r["arm"], r["players"], r["game_index"]))


def _checksums(root: Path) -> dict[str, str]:
    manifest = read_manifest(str(root))
    assert manifest is not None and manifest["status"] == "done", manifest
    return {entry["path"]: entry["sha256"] for entry in manifest["shards"]}


@pytest.mark.ray
def test_a_lost_host_loses_no_game(cluster, ray_local, tmp_path):  # noqa: F811
    began = time.monotonic()
    doomed, survivor = cluster.workers
    spec = ExperimentSpec.model_validate(SPEC)
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(SPEC))
    out = tmp_path / "cluster"
    driver = subprocess.Popen(
        cluster.head.host.command([sys.executable, "-m", "services.cli", "run",
                                   str(spec_file), "--out", str(out)]),
        cwd=PRODUCT, env={**cluster.env, "RAY_ADDRESS": cluster.address},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        def playing() -> bool:
            if driver.poll() is not None:  # the driver ended before the node was killed
                raise AssertionError(f"meeplelab run exited early: {driver.communicate()}")
            return bool(list(out.rglob("shard-*.parquet"))) and doomed.running("play_shards")

        # Mid-experiment: a shard written, the doomed host playing a task, most still to play.
        _wait(playing, "a shard written and a task playing on the doomed host")
        killed = doomed.kill()
        written_at_kill = len(list(out.rglob("shard-*.parquet")))
        assert len(killed) >= 3 and doomed.host.pids() == []  # raylet, store, workers...
        assert written_at_kill < SHARDS, "the experiment ended before the host died"
        stdout, stderr = driver.communicate(timeout=TIMEOUT_S)
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()
    assert driver.returncode == 0, stderr[-3000:]
    assert survivor.host.pids() and cluster.head.host.pids()  # only the doomed host died
    on_cluster = time.monotonic() - began

    root = out / experiment_id(spec)
    found = verify(str(root))
    assert not found.damaged and len(found.sound) == SHARDS
    local = tmp_path / "local"
    assert run_experiment(spec, str(local), experiment_id(spec)) == "done"
    assert _checksums(root) == _checksums(local / experiment_id(spec))
    assert len(_checksums(root)) == SHARDS
    expected = _rows(local)
    assert len(expected) == SPEC["games_per_arm"]
    assert _rows(root) == expected
    assert not list(out.rglob("*.tmp"))  # a write cut by the kill left none behind
    print(f"\nnamespace cluster: {written_at_kill} of {SHARDS} shards written at the kill "
          f"({len(killed)} processes); run on the cluster {on_cluster:.0f} s, test "
          f"{time.monotonic() - began:.0f} s")


def test_the_nodes_are_started_as_the_docs_say():
    """Each flag the test's `ray start` gives (but those a node sharing a machine needs) is
    in the docs' command for that node, and the other way round."""
    docs = [line.split() for line in DOCS.read_text().splitlines()
            if line.startswith("ray start ")]
    head, worker = Host("h", "10.0.0.1"), Host("w", "10.0.0.2")
    for role, args, allowed in (("--head", start_args(head, None, 0, "/t"), set()),
                                ("--address", start_args(worker, head, 1, "/t"),
                                 {"--num-cpus"})):  # the docs' workers give every core
        (line,) = [words for words in docs if words[2].startswith(role)]
        ours = {a.split("=")[0] for a in args if a.startswith("--")} - set(ONE_MACHINE_FLAGS)
        theirs = {w.split("=")[0] for w in line if w.startswith("--")}
        assert ours - allowed == theirs, (role, ours ^ theirs)
