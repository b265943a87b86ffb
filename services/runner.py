"""Plays an experiment on Ray: one task per shard, one Parquet file per shard.

The layout and schema of the results are services.storage's; the task is services.shard's.
A shard task is a pure function of its arguments (game i depends only on the seed and i),
writes its file under a temporary name in the same folder and renames it, so a retried or
restarted task can only ever produce the same file, and a file that exists is complete.

Shards are produced lazily (one wave at a time, one shard at a time), so the driver's memory
does not grow with the number of games; a cancel is seen between any two shards, read or run.

`results` is a local folder or any pyarrow.fs URI (s3://bucket/prefix, gs://...).
"""
from __future__ import annotations

import logging
import os
import posixpath
import threading
import time
from dataclasses import dataclass
from typing import Callable, Iterator

import numpy as np
import pyarrow.parquet as pq
import ray

from pipelines.stats import wilson_half_width
from services.shard import play_shard, warm_up
from services.spec import Cell, ExperimentSpec
from services.storage import (cell_dir, experiment_path, filesystem, remove_stale_temporaries,
                              seat_wins, shard_name, shard_start,
                              written_shards)

__all__ = ["Progress", "init_ray", "run_experiment", "experiment_path", "filesystem"]


@dataclass
class Progress:
    """What the progress callback receives (after every finished shard and once at the end)."""

    done: int  # games finished, including shards found already written
    total: int  # games planned (with stop_when: the most the experiment may play)
    games_per_s: float  # games played by this run per second of wall time
    eta_s: float | None  # seconds left at the current rate (None before any game is played)
    elapsed_s: float
    status: str = "running"  # running | done | cancelled | failed
    error: str | None = None


# ---- Ray ---------------------------------------------------------------------------------
def init_ray(num_cpus: int | None = None, address: str | None = None) -> None:
    """Starts an in-process local Ray (all cores by default), or connects to `address` /
    the settings' Ray address (RAY_ADDRESS).  Does nothing when Ray is already initialised.
    A local Ray's workers are warmed up (engine modules imported) before this returns, so
    the first shards run at full speed."""
    if ray.is_initialized():
        return
    if address is None:
        from services.settings import Settings

        address = Settings().ray_address
    if address:
        ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
        return
    cpus = num_cpus or os.cpu_count() or 1
    # address="local": a new instance even when another Ray runs on this machine (without
    # it ray.init() joins that one, e.g. a second test run's, and refuses num_cpus).
    ray.init(address="local", num_cpus=cpus, include_dashboard=False, log_to_driver=False,
             logging_level=logging.WARNING)
    ray.get([warm_up.remote() for _ in range(cpus)])


# ---- the driver --------------------------------------------------------------------------
class _Cells:
    """Per-cell tallies (games and seat wins) for progress and the stop_when check."""

    def __init__(self, cells: list[Cell]):
        self.games = [0] * len(cells)
        self.wins = [np.zeros(c.players) for c in cells]

    def add(self, i: int, games: int, wins) -> None:
        self.games[i] += games
        self.wins[i] += np.asarray(wins, dtype=np.float64)

    def precise(self, half_width: float) -> bool:
        for n, wins in zip(self.games, self.wins):
            if n == 0 or np.any(wilson_half_width(wins / n, n) >= half_width):
                return False
        return True


def _shards(begin: int, end: int, size: int) -> Iterator[tuple[int, int]]:
    """(start, count) of the shards that play games begin..end-1 of a cell, lazily."""
    return ((s, min(size, end - s)) for s in range(begin, end, size))


def _read_wins(fs, root: str, cell: Cell, start: int) -> tuple[int, list[float]]:
    path = posixpath.join(cell_dir(root, cell.arm, cell.players), shard_name(start))
    table = pq.read_table(path, columns=["seat_win_share"], filesystem=fs)
    return seat_wins(table.column("seat_win_share").combine_chunks())


def _error_text(exc: BaseException) -> str:
    cause = getattr(exc, "cause", None) or exc
    return f"{type(cause).__name__}: {cause}".strip()


def _default_in_flight() -> int:
    cpus = int(ray.cluster_resources().get("CPU", os.cpu_count() or 1))
    return max(2, 2 * cpus)  # keep every worker busy while results come back


def run_experiment(spec: ExperimentSpec, results: str, experiment_id: str, *,
                   progress: Callable[[Progress], None] | None = None,
                   cancel: threading.Event | None = None,
                   max_in_flight: int | None = None) -> str:
    """Plays `spec` into <results>/<experiment_id>/ and returns "done", "cancelled" or
    "failed".  Shards already written are skipped; `progress` gets a Progress after each
    shard and a last one with the final status (and the error text when failed)."""
    init_ray()
    started = time.monotonic()
    root_uri = experiment_path(results, experiment_id)
    fs, root = filesystem(root_uri)
    remove_stale_temporaries(root_uri)  # no task of this experiment is writing now
    cells = spec.cells()
    tally = _Cells(cells)
    written = [written_shards(root_uri, c.arm, c.players) for c in cells]
    limit = max_in_flight or _default_in_flight()
    total = spec.total_games()
    state = {"done": 0, "played": 0}
    cancelled = (lambda: False) if cancel is None else cancel.is_set

    def report(status="running", error=None):
        if progress is None:
            return
        elapsed = time.monotonic() - started
        rate = state["played"] / elapsed if elapsed > 0 else 0.0
        eta = (total - state["done"]) / rate if rate > 0 else None
        progress(Progress(state["done"], total, rate, eta, elapsed, status, error))

    def finish(status, error=None):
        report(status, error)
        return status

    def tally_written(begin: int, end: int) -> None:
        """Counts the wave's shards found written (a resume) as done."""
        for i, cell in enumerate(cells):
            for start in sorted(shard_start(n) for n in written[i]):
                if cancelled():
                    return
                if begin <= start < end:
                    games, wins = _read_wins(fs, root, cell, start)
                    tally.add(i, games, wins)
                    state["done"] += games

    def to_play(begin: int, end: int) -> Iterator[tuple[int, int, int]]:
        for start, count in _shards(begin, end, spec.shard_size):
            for i in range(len(cells)):
                if shard_name(start) not in written[i]:
                    yield i, start, count

    begin = 0
    for end in spec.waves():
        tally_written(begin, end)  # shards found written count as done from the first report
        report()
        outcome = _run_wave(spec, experiment_id, root_uri, cells, to_play(begin, end), limit,
                            tally, state, cancelled, report)
        if outcome is not None:
            return finish(*outcome)
        if spec.stop_when and tally.precise(spec.stop_when.half_width):
            total = state["done"]
            break
        begin = end
    return finish("done")


def _job(spec: ExperimentSpec, experiment_id: str, root_uri: str, cell: Cell, start: int,
         count: int) -> dict:
    return {"game": spec.game, "players": cell.players, "rules": cell.rules,
            "agents": spec.agent_list(cell.players), "rotate": spec.rotate_agents,
            "speeds": spec.speeds, "seed": spec.seed, "start": start, "count": count,
            "experiment": experiment_id, "arm": cell.arm, "root": root_uri}


def _run_wave(spec, experiment_id, root_uri, cells, jobs: Iterator, limit, tally, state,
              cancelled: Callable[[], bool], report):
    """Submits the wave's shards (drawn lazily from `jobs`) with at most `limit` in flight
    and handles them in completion order; returns None when the wave is complete, else
    (status, error)."""
    pending: dict = {}
    more = True
    while more or pending:
        if cancelled():
            _cancel_all(pending)
            return "cancelled", None
        while more and len(pending) < limit:
            job = next(jobs, None)
            if job is None:
                more = False
                break
            i, start, count = job
            ref = play_shard.remote(_job(spec, experiment_id, root_uri, cells[i], start, count))
            pending[ref] = i
        if not pending:
            continue
        ready, _ = ray.wait(list(pending), num_returns=1, timeout=0.25)
        for ref in ready:
            i = pending.pop(ref)
            try:
                out = ray.get(ref)
            except Exception as exc:  # the task failed after its retries
                _cancel_all(pending)
                return "failed", _error_text(exc)
            tally.add(i, out["games"], out["wins"])
            state["done"] += out["games"]
            state["played"] += out["games"]
            report()
    return ("cancelled", None) if cancelled() else None


def _cancel_all(pending: dict) -> None:
    # force: a shard runs in nogil C code that a KeyboardInterrupt would not reach
    for ref in pending:
        ray.cancel(ref, force=True)
    pending.clear()
