"""Plays an experiment on Ray: one task per shard, one Parquet file per shard.

The layout of the results is in services.shard (the task itself).  A shard task is a pure function of its arguments (game i depends only on the seed and
i), writes its file under a temporary name in the same folder and renames it, so a retried or
restarted task can only ever produce the same file, and a file that exists is complete.

`results` is a local folder or any pyarrow.fs URI (s3://bucket/prefix, gs://...).
"""
from __future__ import annotations

import logging
import os
import posixpath
import threading
import time
from dataclasses import dataclass
from typing import Callable

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import ray

from services.shard import (filesystem, cell_dir, experiment_path, play_shard, shard_name,
                            warm_up)
from services.spec import Cell, ExperimentSpec

__all__ = ["Progress", "init_ray", "run_experiment", "experiment_path", "filesystem"]

_filesystem = filesystem  # the name services.datasets imports (before the shard module split)

RAY_ADDRESS_ENV = "RAY_ADDRESS"


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
    $RAY_ADDRESS.  Does nothing when Ray is already initialised.  A local Ray's workers are
    warmed up (engine modules imported) before this returns, so the first shards run at
    full speed."""
    if ray.is_initialized():
        return
    address = address or os.environ.get(RAY_ADDRESS_ENV)
    if address:
        ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
        return
    cpus = num_cpus or os.cpu_count() or 1
    ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False,
             logging_level=logging.WARNING)
    ray.get([warm_up.remote() for _ in range(cpus)])


# ---- the driver --------------------------------------------------------------------------
def _written_shards(fs, root: str, cell: Cell) -> set[str]:
    info = fs.get_file_info(pafs.FileSelector(cell_dir(root, cell.arm, cell.players),
                                              allow_not_found=True))
    return {i.base_name for i in info if i.type == pafs.FileType.File}


def _provenance_error(spec: ExperimentSpec, fs, root: str, cell: Cell, shard: str) -> str | None:
    """Why a written shard must not be resumed (another engine version or other resolved
    rules than this run would play), or None."""
    import core_cy
    from core_cy.batch import engine_label

    game = core_cy.load(spec.game)
    want = {"engine_version": engine_label(game),
            "rules_fingerprint": game.rules_fingerprint(cell.rules, cell.players)}
    path = posixpath.join(cell_dir(root, cell.arm, cell.players), shard)
    table = pq.read_table(path, columns=list(want), filesystem=fs)
    for column, expected in want.items():
        found = set(table.column(column).cast(pa.string()).unique().to_pylist())
        if found != {expected}:
            return (f"cannot resume: arm {cell.arm!r} with {cell.players} players already has "
                    f"results with {column} {sorted(found)}, but this run would play "
                    f"{expected!r}; results of different engines or rules are never pooled: "
                    f"start a new experiment (another name or results folder)")
    return None


def _check_provenance(spec, fs, root, cells, written) -> str | None:
    for cell, shards in zip(cells, written):
        finished = sorted(s for s in shards if not s.startswith("."))  # not temporary files
        for shard in finished[:1] + finished[-1:]:  # the first and the last
            error = _provenance_error(spec, fs, root, cell, shard)
            if error:
                return error
    return None


def _should_stop(spec: ExperimentSpec, root_uri: str, games_per_cell: int) -> bool:
    """The stop_when check between waves: precision (fixed-n intervals) or a decision
    (always-valid confidence sequences, see pipelines.decided)."""
    import pipelines

    rule = spec.stop_when
    if rule is None or games_per_cell < rule.min_games:
        return False
    if rule.half_width is not None:
        table = pipelines.summary(root_uri)
        low, high = ("team_win_lo", "team_win_hi") if table["cooperative"].any() else \
            ("win_lo", "win_hi")
        if bool(((table[high] - table[low]) / 2 < rule.half_width).all()):
            return True
    if rule.delta is not None:
        look = pipelines.Look(interim=True, planned_games=rule.max_games, delta=rule.delta,
                              alpha=rule.alpha)
        baseline = spec.baseline_arm() if len(spec.arm_rules()) > 1 else None
        return pipelines.decided(root_uri, baseline, look)
    return False


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
    "failed".  Shards already written are skipped (after checking they were played by the
    same engine version and rules: "failed" otherwise); `progress` gets a Progress after
    each shard and a last one with the final status (and the error text when failed)."""
    init_ray()
    started = time.monotonic()
    root_uri = experiment_path(results, experiment_id)
    fs, root = filesystem(root_uri)
    cells = spec.cells()
    written = [_written_shards(fs, root, c) for c in cells]
    limit = max_in_flight or _default_in_flight()
    total = spec.total_games()
    state = {"done": 0, "played": 0}

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

    mixed = _check_provenance(spec, fs, root, cells, written)
    if mixed:
        return finish("failed", mixed)
    for end, wave in zip(spec.waves(), spec.wave_shards()):
        jobs = []
        for i, cell in enumerate(cells):
            for start, count in wave:
                if shard_name(start) in written[i]:
                    state["done"] += count
                else:
                    jobs.append((i, start, count))
        report()
        outcome = _run_wave(spec, experiment_id, root_uri, cells, jobs, limit, state,
                            cancel, report)
        if outcome is not None:
            return finish(*outcome)
        if end < spec.max_games_per_cell() and _should_stop(spec, root_uri, end):
            total = state["done"]
            break
    return finish("done")


def _job(spec: ExperimentSpec, experiment_id: str, root_uri: str, cell: Cell, start: int,
         count: int) -> dict:
    return {"game": spec.game, "players": cell.players, "rules": cell.rules,
            "agents": spec.agent_list(cell.players), "rotate": spec.rotate_agents,
            "speeds": spec.speeds, "seed": spec.seed, "start": start, "count": count,
            "experiment": experiment_id, "arm": cell.arm, "root": root_uri}


def _run_wave(spec, experiment_id, root_uri, cells, jobs, limit, state, cancel, report):
    """Submits the wave's shards with at most `limit` in flight and handles them in
    completion order; returns None when the wave is complete, else (status, error)."""
    pending: dict = {}
    queue = list(reversed(jobs))
    while queue or pending:
        if cancel is not None and cancel.is_set():
            _cancel_all(pending)
            return "cancelled", None
        while queue and len(pending) < limit:
            i, start, count = queue.pop()
            ref = play_shard.remote(_job(spec, experiment_id, root_uri, cells[i], start, count))
            pending[ref] = i
        ready, _ = ray.wait(list(pending), num_returns=1, timeout=0.25)
        for ref in ready:
            i = pending.pop(ref)
            try:
                out = ray.get(ref)
            except Exception as exc:  # the task failed after its retries
                _cancel_all(pending)
                return "failed", _error_text(exc)
            state["done"] += out["games"]
            state["played"] += out["games"]
            report()
    return None


def _cancel_all(pending: dict) -> None:
    # force: a shard runs in nogil C code that a KeyboardInterrupt would not reach
    for ref in pending:
        ray.cancel(ref, force=True)
    pending.clear()
