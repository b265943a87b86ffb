"""The shard task (kept apart from the driver so that a Ray worker imports only this module,
services.storage, core_cy and pyarrow: no pydantic, Polars or SciPy per worker).  The engine
hands back columns (core_cy.play.batch.play_columns); the layout and the stored schema they take
are services.storage's."""
from __future__ import annotations

import os
import posixpath

import ray

from services.storage import cell_dir, filesystem, result_batch, seat_wins, shard_name, \
    storage_table, write_atomically

TASK_RETRIES = 3


@ray.remote(num_cpus=1, max_retries=TASK_RETRIES, retry_exceptions=[OSError])
def play_shard(job: dict) -> dict:
    """Plays one shard and writes its Parquet file; returns (count, per-seat wins)."""
    lower_priority(job.get("nice", 0))
    import core_cy
    from core_cy.play import batch

    game = core_cy.load(job["game"])
    rows = result_batch(batch.play_columns(
        game, job["players"], job["rules"], job["agents"], seed=job["seed"], start=job["start"],
        count=job["count"], speeds=job["speeds"], experiment=job["experiment"], arm=job["arm"],
        rotate=job["rotate"], games_per_deal=job["games_per_deal"]))
    fs, root = filesystem(job["root"])
    path = posixpath.join(cell_dir(root, job["arm"], job["players"]), shard_name(job["start"]))
    write_atomically(storage_table(rows), fs, path)
    games, wins = seat_wins(rows.column("seat_win_share"))
    return {"games": games, "wins": wins}


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
