"""Ray for the tests (and benchmarks/pipeline.py): the local Ray fixture shared by the
runner, pipeline and CLI tests (import it by name: a session fixture, so Ray starts once per
test run), and `local_cluster`, a real multi-node Ray cluster on this one machine."""
from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
from typing import Iterator

import pytest

# Ray on Linux rewrites a loopback address (RAY_ADDRESS=127.0.0.1:port) to the machine's own
# address, where a cluster of 127.0.0.1 nodes does not listen; this switch (Ray's default on
# macOS and Windows) keeps it.  A driver must have it in its environment before importing Ray.
LOOPBACK_ENV = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}


@pytest.fixture(scope="session")
def ray_local():
    import ray

    from services.runner import init_ray

    init_ray(num_cpus=2)
    yield ray
    ray.shutdown()


def processes_using(folder: str) -> list[int]:
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


def _stop(cluster, folder: str) -> None:
    """Kills the cluster's nodes (Cluster.shutdown would also reset this process's Ray
    client state, which a local Ray of this process may still use), then anything of it
    left."""
    nodes = [*cluster.worker_nodes, cluster.head_node] if cluster is not None else []
    for node in nodes:
        if node is not None:
            try:
                cluster.remove_node(node, allow_graceful=False)
            except Exception:  # a node that failed to start: the sweep below handles it
                pass
    for pid in processes_using(folder):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@contextlib.contextmanager
def local_cluster(workers: int, cpus: int = 1, timeout: float = 120) -> Iterator[tuple]:
    """(cluster, worker nodes): a head without CPUs (every task runs on a worker node) and
    `workers` nodes of `cpus` CPUs, all on 127.0.0.1, under a temp folder of their own,
    every port picked free by the OS, so it cannot collide with another Ray on the machine.
    Connect with RAY_ADDRESS=cluster.address (and LOOPBACK_ENV).  On exit, pass or fail,
    every process of it is killed and its folder removed."""
    from ray.cluster_utils import Cluster

    # A short path: Ray's unix sockets live under it (108 bytes at most).
    temp = tempfile.mkdtemp(prefix="mlray-")
    # Ray writes the cluster's address file under $RAY_TMPDIR/ray: keep it out of /tmp/ray.
    env = {"RAY_TMPDIR": temp, **LOOPBACK_ENV}
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    os.mkdir(os.path.join(temp, "ray"))
    node = {"node_ip_address": "127.0.0.1", "object_store_memory": 80 * 2**20,
            "include_dashboard": False, "dashboard_agent_listen_port": None}
    cluster = None
    try:
        cluster = Cluster(initialize_head=True, shutdown_at_exit=False,
                          head_node_args={**node, "num_cpus": 0, "dashboard_port": None,
                                          "temp_dir": os.path.join(temp, "ray")})
        nodes = [cluster.add_node(**node, num_cpus=cpus) for _ in range(workers)]
        cluster.wait_for_nodes(timeout=timeout)
        yield cluster, nodes
    finally:
        _stop(cluster, temp)
        shutil.rmtree(temp, ignore_errors=True)
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    left = processes_using(temp)
    assert not left, f"processes of the local Ray cluster outlived it: {left}"


def wait_until(condition, what: str, timeout: float, every: float = 0.05):
    """condition()'s first true value, asked every `every` s; AssertionError naming `what`
    after `timeout` s."""
    import time

    deadline = time.monotonic() + timeout
    while not (found := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(every)
    return found


def shard_rows(root, drop: tuple[str, ...] = ()) -> list[dict]:
    """Every row of the shard files under `root` (less the columns `drop`), in (arm, players,
    game_index) order: runs of the same spec compared row by row, whatever their shards."""
    from pathlib import Path

    import pyarrow.parquet as pq

    rows = []
    for path in sorted(Path(root).rglob("shard-*.parquet")):
        rows += pq.read_table(path).to_pylist()
    for row in rows:
        for column in drop:
            row.pop(column)
    return sorted(rows, key=lambda r: (r["arm"], r["players"], r["game_index"]))
