"""A real multi-host Ray cluster: a head and two worker nodes started with the `ray start`
commands of docs/deployment.md, each in a Linux network namespace of its own (its own
address on a bridge, like a host; tests/cluster_support.py).  An experiment (`meeplelab run`)
and a fair-value search (`meeplelab balance --json`) play at once through the product's own
entry points, their drivers joining by RAY_ADDRESS from the head's host, as a RayJob's does;
one worker host is lost mid-run (every process of its namespace SIGKILLed by PID while it
plays a shard task); both still end, the experiment's rows and every shard file's SHA-256
in the manifest equal a single-machine run's, and so do the search's answer and games.

Needs root (CI runs as root): where namespaces cannot be made the test fails, naming why."""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cluster_support import (ONE_MACHINE_FLAGS, Host, NamespacesUnavailable, answer_of,
                             namespace_cluster, require_namespaces, start_args)
from product import PRODUCT, product_env
from ray_support import ray_local, shard_rows, wait_until  # noqa: F401  (session fixture)

from pipelines.dataset import verify
from services import cli
from services.cli import experiment_id
from services.runner import run_experiment
from services.spec import ExperimentSpec
from pipelines.folder import read_manifest

DOCS = Path(__file__).resolve().parents[2] / "docs" / "deployment.md"
TIMEOUT_S = 150  # generous: the machine may be shared and loaded
SPEC = {"name": "hosts", "game": "maori", "players": 3, "agents": "random",
        "games_per_arm": 60_000, "seed": 47, "shard_size": 2_000}
SHARDS = 30
# a fair-value search of a fixed budget (no search reaches that precision): 3 waves of 2
# values, then the confirmation of the nearest integers
BALANCE = {"name": "hosts-balance", "game": "reef_encounter", "players": 3, "agents": "greedy",
           "seed": 28, "balance": {"option": "seat_bonus_polyps", "seat": -1, "range": [-4, 8],
                                   "target": "equal", "precision": 0.01, "wave_games": 1000,
                                   "max_games": 6000, "confirm_games": 1000, "delta": 0.01}}


@pytest.fixture
def cluster():
    try:
        require_namespaces()
    except NamespacesUnavailable as exc:
        pytest.fail(f"this test needs network namespaces (CI runs as root): {exc}")
    with namespace_cluster(workers=2, cpus=1, env=product_env(), timeout=TIMEOUT_S) as made:
        yield made


def _wait(condition, what: str, timeout: float = TIMEOUT_S, every: float = 0.05):
    return wait_until(condition, what, timeout, every)


def _rows(root: Path) -> list[dict]:
    return shard_rows(root)


def _checksums(root: Path) -> dict[str, str]:
    manifest = read_manifest(str(root))
    assert manifest is not None and manifest["status"] == "done", manifest
    return {entry["path"]: entry["sha256"] for entry in manifest["shards"]}


def _driver(cluster, args: list[str]) -> subprocess.Popen:
    """`meeplelab ARGS` on the head's host, joining the cluster by RAY_ADDRESS."""
    return subprocess.Popen(
        cluster.head.host.command([sys.executable, "-m", "services.cli", *args]),
        cwd=PRODUCT, env={**cluster.env, "RAY_ADDRESS": cluster.address},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _shards(folder: Path) -> list[Path]:
    return list(folder.rglob("shard-*.parquet"))


@pytest.mark.ray
def test_a_lost_host_loses_no_game_and_changes_no_answer(cluster, ray_local, tmp_path,  # noqa: F811
                                                          capsys):
    """An experiment and a fair-value search play at once on the cluster; once both have
    written games and the doomed host plays a task, the host is lost."""
    began = time.monotonic()
    doomed, survivor = cluster.workers
    spec = ExperimentSpec.model_validate(SPEC)
    spec_file, balance_file = tmp_path / "spec.json", tmp_path / "balance.json"
    spec_file.write_text(json.dumps(SPEC))
    balance_file.write_text(json.dumps(BALANCE))
    out, searched = tmp_path / "cluster", tmp_path / "cluster-balance"
    drivers = {"meeplelab run": _driver(cluster, ["run", str(spec_file), "--out", str(out)]),
               "meeplelab balance": _driver(cluster, ["balance", str(balance_file), "--json",
                                                      "--out", str(searched)])}
    try:
        def playing() -> bool:
            for name, driver in drivers.items():
                if driver.poll() is not None:  # it ended before the host was lost
                    raise AssertionError(f"{name} exited early: {driver.communicate()}")
            return bool(_shards(out) and _shards(searched)) and doomed.running("play_shards")

        # Mid-run: games of both written, the doomed host playing a task, most still to play.
        _wait(playing, "games of both drivers written and a task playing on the doomed host")
        killed = doomed.kill()
        written_at_kill = len(_shards(out))
        assert len(killed) >= 3 and doomed.host.pids() == []  # raylet, store, workers...
        assert written_at_kill < SHARDS, "the experiment ended before the host died"
        assert all(d.poll() is None for d in drivers.values()), "a driver ended before the kill"
        ended = {name: d.communicate(timeout=TIMEOUT_S) for name, d in drivers.items()}
    finally:
        for driver in drivers.values():
            if driver.poll() is None:
                driver.kill()
                driver.wait()
    for name, driver in drivers.items():
        assert driver.returncode == 0, (name, ended[name][1][-3000:])
    assert survivor.host.pids() and cluster.head.host.pids()  # only the doomed host died
    on_cluster = time.monotonic() - began

    # the experiment: every shard's bytes and the rows are a single machine's
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
    # the search: the same answer, from the same games, as on a single machine
    capsys.readouterr()
    assert cli.main(["balance", str(balance_file), "--json", "--out",
                     str(tmp_path / "local-balance")]) == 0
    alone = json.loads(capsys.readouterr().out)
    answer = json.loads(ended["meeplelab balance"][0])
    assert answer_of(answer) == answer_of(alone)
    assert _rows(searched) == _rows(tmp_path / "local-balance")
    with capsys.disabled():
        print(f"\nnamespace cluster: {written_at_kill} of {SHARDS} shards and "
              f"{len(_shards(searched))} of the search's written at the kill ({len(killed)} "
              f"processes); on the cluster {on_cluster:.0f} s, test "
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
