"""The shard task and the storage layout (kept apart from the driver so that a Ray worker
imports only this module, core_cy and pyarrow: no pydantic, Polars or SciPy per worker).

Layout of the results (a hive-partitioned Parquet dataset):

    <results>/<experiment_id>/arm=<arm>/players=<n>/shard-<start:012d>.parquet

`<arm>` is percent-encoded (urllib.parse.quote, safe="") so that any arm name is one path
segment.  Every file also holds the `arm` and `players` columns, so readers need not parse
paths.
"""
from __future__ import annotations

import os
import posixpath
import uuid
from urllib.parse import quote

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import ray

TASK_RETRIES = 3


def filesystem(uri: str) -> tuple[pafs.FileSystem, str]:
    """(filesystem, path inside it) for a local folder or a pyarrow.fs URI."""
    if "://" in uri:
        return pafs.FileSystem.from_uri(uri)
    return pafs.LocalFileSystem(), os.path.abspath(uri)


def experiment_path(results: str, experiment_id: str) -> str:
    """The dataset root of one experiment (a local path or a URI, like `results`)."""
    return posixpath.join(str(results).rstrip("/"), experiment_id) if "://" in str(results) \
        else os.path.join(os.path.abspath(results), experiment_id)


def cell_dir(root: str, arm: str, players: int) -> str:
    return posixpath.join(root, f"arm={quote(arm, safe='')}", f"players={players}")


def shard_name(start: int) -> str:
    return f"shard-{start:012d}.parquet"


def storage_table(batch: pa.RecordBatch) -> pa.Table:
    """The batch as stored: plain strings and variable-size lists, so files of different
    player counts share one schema and scan together."""
    fields, arrays = [], []
    for field, column in zip(batch.schema, batch.columns):
        if pa.types.is_dictionary(field.type):
            column = column.cast(field.type.value_type)
        elif pa.types.is_fixed_size_list(field.type):
            column = column.cast(pa.list_(field.type.value_type))
        fields.append(pa.field(field.name, column.type))
        arrays.append(column)
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def write_atomically(table: pa.Table, fs: pa.fs.FileSystem, path: str) -> None:
    """Writes under a temporary name in the same folder, then renames onto `path`."""
    folder = posixpath.dirname(path)
    fs.create_dir(folder, recursive=True)
    tmp = posixpath.join(folder, f".{posixpath.basename(path)}.{uuid.uuid4().hex}.tmp")
    try:
        pq.write_table(table, tmp, filesystem=fs)
        fs.move(tmp, path)
    except BaseException:
        try:
            fs.delete_file(tmp)
        except OSError:
            pass
        raise


def seat_wins(shares: pa.Array) -> tuple[int, list[float]]:
    """(games, per-seat sums of win shares) of a seat_win_share list column."""
    games = len(shares)
    if games == 0:
        return 0, []
    flat = shares.flatten().to_numpy(zero_copy_only=False)
    return games, flat.reshape(games, -1).sum(axis=0).tolist()


# ---- the shard task ----------------------------------------------------------------------
@ray.remote(num_cpus=1, max_retries=TASK_RETRIES, retry_exceptions=[OSError])
def play_shard(job: dict) -> dict:
    """Plays one shard and writes its Parquet file; returns (count, per-seat wins)."""
    import core_cy
    from core_cy import batch

    game = core_cy.load(job["game"])
    rows = batch.play(game, job["players"], job["rules"], job["agents"], seed=job["seed"],
                      start=job["start"], count=job["count"], speeds=job["speeds"],
                      experiment=job["experiment"], arm=job["arm"], rotate=job["rotate"])
    fs, root = filesystem(job["root"])
    path = posixpath.join(cell_dir(root, job["arm"], job["players"]), shard_name(job["start"]))
    write_atomically(storage_table(rows), fs, path)
    games, wins = seat_wins(rows.column("seat_win_share"))
    return {"games": games, "wins": wins}


@ray.remote(num_cpus=1)
def warm_up() -> int:
    """Imports what a shard needs, so that the first shards do not pay for it."""
    import core_cy.batch  # noqa: F401

    return os.getpid()
