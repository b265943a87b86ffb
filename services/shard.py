"""The shard task (kept apart from the driver so that a Ray worker imports only this module,
services.storage, core_cy, pipelines.shard_tables and pyarrow: no pydantic, Polars or SciPy
per worker; tested).  It writes its shard's statistics table beside the shard.  The
engine hands back columns (core_cy.play.batch.play_columns); the layout and the stored schema
they take, the game's facts with them, are services.storage's."""
from __future__ import annotations

import json
import os
import posixpath
import time

import numpy as np
import ray

from services.storage import FACTS_KEY, filesystem, result_batch, storage_table, \
    write_atomically, write_shard

TASK_RETRIES = 3


@ray.remote(num_cpus=1, max_retries=TASK_RETRIES, retry_exceptions=[OSError])
def play_shard(job: dict) -> dict:
    """Plays one shard (job["play"]: ExperimentSpec.play_arguments of its cell) and writes
    its Parquet file; returns {"games": the games written, "shard": its manifest entry
    (services.storage.shard_entry's keys, hashed from the bytes written)}.

    The games are played in pieces of about job["report_s"] seconds; after each piece but
    the last, the games played so far go to job["tally"] (a ProgressTally, when given), so a
    long shard shows progress while it plays.  The pieces join into the rows one call would
    give (game i depends only on the seed and i), so the file is a pure function of the job:
    reporting only adds calls, and a lost report never fails the shard."""
    lower_priority(job.get("nice", 0))
    import core_cy
    from core_cy.play import batch

    cpu = time.process_time()  # the CPU-seconds of the task (the job's budget counts them)
    game = core_cy.load(job["game"])
    start, count, tally = job["start"], job["count"], job.get("tally")
    pieces, played, began = [], 0, time.monotonic()
    while played < count:
        # the first piece is one game (a rate to size the next); then about report_s each
        size = 1 if not played else max(1, int(played / max(time.monotonic() - began, 1e-6)
                                               * job.get("report_s", 2.0)))
        pieces.append(batch.play_columns(
            game, seed=job["seed"], start=start + played, count=min(size, count - played),
            experiment=job["experiment"], **job["play"]))
        played += len(pieces[-1]["game_index"])
        if tally is not None and played < count:
            try:
                tally.report.remote(job["key"], played, time.process_time() - cpu)  # fire
                # and forget
            except Exception:  # noqa: BLE001  (a lost tally costs progress, never the shard)
                tally = None
    rows = result_batch({name: np.concatenate([p[name] for p in pieces])
                         for name in pieces[0]}, batch.game_facts(game, job["play"]["players"]))
    fs, root = filesystem(job["root"])
    table = storage_table(rows)
    entry = write_shard(table, fs, root, start, count)
    return {"games": rows.num_rows,
            "shard": {**entry, "statistics": write_statistics(table, fs, root, entry)},
            "cpu_seconds": time.process_time() - cpu}


def write_statistics(table, fs, root: str, entry: dict) -> dict:
    """Writes the statistics table of the shard just written (its manifest `entry`) beside
    it (pipelines.shard_tables: the figures read it instead of the shard's rows); returns
    its {"path", "bytes", "sha256"}, which the manifest keeps under the shard's entry."""
    from pipelines.shard_tables import stats_path, stored_bytes

    facts = json.loads(table.schema.metadata[FACTS_KEY])
    path = stats_path(entry["path"])
    written = write_atomically(stored_bytes(table, facts, entry["bytes"]), fs,
                               posixpath.join(root, path))
    return {"path": path, **written}


@ray.remote(num_cpus=0)
class ProgressTally:
    """Games played and CPU-seconds used so far by the shards still playing, as their tasks
    report them: per experiment, per shard key.  A retried shard reports from its start
    again; the most reported is kept, so progress never goes back."""

    def __init__(self):
        self.played: dict[str, dict] = {}

    def report(self, key: tuple, played: int, cpu_seconds: float = 0.0) -> None:
        shards = self.played.setdefault(key[0], {})
        games, cpu = shards.get(key, (0, 0.0))
        shards[key] = (max(games, played), max(cpu, cpu_seconds))

    def take(self, experiment: str, keys: list) -> dict:
        """(games played, CPU-seconds) so far per shard of `keys` (the driver's shards of
        `experiment` in flight); the experiment's other keys (finished or cancelled shards)
        are forgotten, and all of them with no keys (the run's end)."""
        wanted = set(map(tuple, keys))
        shards = {k: v for k, v in self.played.pop(experiment, {}).items() if k in wanted}
        if shards:
            self.played[experiment] = shards
        return shards


def lower_priority(nice: int) -> None:
    """Raises this process's niceness to `nice` (never lowers it: os.nice only adds), so that
    games played on the machine that serves the API leave it the cores it needs."""
    current = os.nice(0)
    if current < nice:
        os.nice(nice - current)


@ray.remote(num_cpus=1)
def warm_up() -> int:
    """Imports what a shard needs, so that the first shards do not pay for it."""
    import core_cy.play.batch  # noqa: F401

    return os.getpid()
