"""The shard task (kept apart from the driver so that a Ray worker imports only this module,
pipelines.folder, core_cy, pipelines.shard_tables and pyarrow: no pydantic, Polars or SciPy
per worker; tested).  It writes its shard's statistics table beside the shard.  The
engine hands back columns (core_cy.play.batch.play_columns); the layout and the stored schema
they take, the game's facts with them, are pipelines.folder's."""
from __future__ import annotations

import os
import time

import numpy as np
import ray

from core_cy.play.schema import result_batch
from pipelines.folder import filesystem, storage_table, write_shard, write_statistics

TASK_RETRIES = 3


@ray.remote(num_cpus=1, max_retries=TASK_RETRIES, retry_exceptions=[OSError])
def play_shards(job: dict) -> dict:
    """Plays the shards job["shards"] ([start, count] each, of one cell: job["play"] is
    ExperimentSpec.play_arguments of it) one after the other, and writes each shard's Parquet
    file and statistics table as soon as it is played; returns {"games": the games written,
    "shards": their manifest entries (pipelines.folder.shard_entry's keys, hashed from the
    bytes written), "seconds": the wall time of the task's play and writes, "cpu_seconds": its
CPU-seconds (the job's budget counts them), "play_cpu_seconds": those of playing the games
alone (what a game costs, for a plan)}.

    One task plays several shards so that the driver issues fewer tasks (its cost is per
    task); each shard's file is the one a task of that shard alone would write.  The games
    are played in pieces of about job["report_s"] seconds; after each piece but the task's
    last, the games it has played so far go to job["tally"] (a ProgressTally, when given)
    under job["key"], so a long task shows progress while it plays, and after each shard
    but the last the games of the shards it has written, so the interim figures count them
    within a poll of the driver (the last is in the task's answer).  The pieces join into the
    rows one call would give (game i depends only on the seed and i), so every file is a pure
    function of the job: a retry writes the same files again, reporting only adds calls, and
    a lost report never fails the task."""
    lower_priority(job.get("nice", 0))
    import core_cy

    cpu = time.process_time()  # the CPU-seconds of the task (the job's budget counts them)
    game = core_cy.load(job["game"])
    began = time.monotonic()
    progress = _Progress(job, sum(count for _, count in job["shards"]), cpu)
    fs, root = filesystem(job["root"])
    entries, playing = [], 0.0
    for start, count in job["shards"]:
        played = time.process_time()
        rows = _play(game, job, start, count, progress)
        playing += time.process_time() - played
        table = storage_table(rows)
        entry = write_shard(table, fs, root, start, count)
        entries.append({**entry, "statistics": write_statistics(table, fs, root, entry)})
        progress.wrote(sum(e["rows"] for e in entries))
    return {"games": sum(e["rows"] for e in entries), "shards": entries,
            "seconds": time.monotonic() - began, "cpu_seconds": time.process_time() - cpu,
            "play_cpu_seconds": playing}


class _Progress:
    """The games a task has played (and the CPU-seconds it has used since `cpu`), reported to
    its tally after each piece but the last, and the size of the next piece: one game first
    (a rate to size the next), then about job["report_s"] seconds of play."""

    def __init__(self, job: dict, total: int, cpu: float):
        self.tally, self.key, self.total, self.cpu = job.get("tally"), job.get("key"), total, cpu
        self.every, self.played, self.began = job.get("report_s", 2.0), 0, time.monotonic()
        self.written = 0

    def piece(self, left: int) -> int:
        if not self.played:
            return 1
        rate = self.played / max(time.monotonic() - self.began, 1e-6)
        return min(left, max(1, int(rate * self.every)))

    def add(self, games: int) -> None:
        self.played += games
        self._report()

    def wrote(self, games: int) -> None:
        """The games of the task's shards written so far."""
        self.written = games
        self._report()

    def _report(self) -> None:
        if self.tally is not None and self.played < self.total:
            try:
                self.tally.report.remote(self.key, self.played,  # fire and forget
                                         time.process_time() - self.cpu, self.written)
            except Exception:  # noqa: BLE001  (a lost tally costs progress, never the shard)
                self.tally = None


def _play(game, job: dict, start: int, count: int, progress: _Progress):
    """The rows of games start..start+count-1 (core_cy.play.schema.result_batch), in pieces."""
    from core_cy.play import batch

    pieces, played = [], 0
    while played < count:
        pieces.append(batch.play_columns(
            game, seed=job["seed"], start=start + played, count=progress.piece(count - played),
            experiment=job["experiment"], **job["play"]))
        games = len(pieces[-1]["game_index"])
        played += games
        progress.add(games)
    return result_batch({name: np.concatenate([p[name] for p in pieces]) for name in pieces[0]},
                        batch.game_facts(game, job["play"]["players"]))


@ray.remote(num_cpus=0)
class ProgressTally:
    """Games played, CPU-seconds used and games of shards written so far by the tasks still
    playing, as they report them: per experiment, per task key.  A retried task reports from
    its start again; the most reported is kept, so progress never goes back (a retry writes
    the same files again)."""

    def __init__(self):
        self.played: dict[str, dict] = {}

    def report(self, key: tuple, played: int, cpu_seconds: float = 0.0, written: int = 0
               ) -> None:
        shards = self.played.setdefault(key[0], {})
        before = shards.get(key, (0, 0.0, 0))
        shards[key] = tuple(max(a, b) for a, b in zip(before, (played, cpu_seconds, written)))

    def take(self, experiment: str, keys: list) -> dict:
        """(games played, CPU-seconds, games written) so far per task of `keys` (those of
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
