"""Where results live and what a stored row is: the layout, the schema, atomic writes.

Ray-free on purpose: the API reads, lists and deletes results through this module without
importing Ray (Ray is imported only when work is submitted, in services.shard / runner).

Layout of the results (a hive-partitioned Parquet dataset):

    <results>/<experiment_id>/arm=<arm>/players=<n>/shard-<start:012d>.parquet

`<arm>` is percent-encoded (urllib.parse.quote, safe="") so that any arm name is one path
segment.  Every file also holds the `arm` and `players` columns, so readers need not parse
paths.  A shard is written under a temporary dot-name in its folder and renamed, so a file
with a shard's name is complete; temporary files left by a crash are removed on resume.
Shards are written with Parquet page checksums; a resume reads every shard found back
whole with them verified (sound_rows), and plays again any that is damaged or empty.
"""
from __future__ import annotations

import os
import posixpath
import uuid
from urllib.parse import quote

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from core_cy.play.schema import (FACTS_KEY, OPTIONAL_COLUMNS, RESULT_COLUMNS,  # noqa: F401
                                 result_batch)

TEMP_SUFFIX = ".tmp"

# ---- paths -------------------------------------------------------------------------------
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


def shard_start(name: str) -> int:
    """The first game index of a shard file (the inverse of shard_name)."""
    return int(name[len("shard-"):-len(".parquet")])


def _is_temporary(name: str) -> bool:
    return name.startswith(".") and name.endswith(TEMP_SUFFIX)


# ---- the stored table ----------------------------------------------------------------------
def storage_table(batch: pa.RecordBatch) -> pa.Table:
    """A result batch (core_cy.play.batch.play, result_batch) as the table a shard file stores:
    the result columns, and the game's facts in the schema metadata (FACTS_KEY), which the
    statistics read (pipelines.dataset) instead of asking an engine."""
    missing = [f.name for f in RESULT_COLUMNS if f.name not in batch.schema.names]
    if missing:
        raise ValueError(f"the engine's batch lacks result columns {missing}")
    if FACTS_KEY not in (batch.schema.metadata or {}):
        raise ValueError("the engine's batch lacks the game's facts (result_batch(columns, "
                         "core_cy.play.batch.game_facts(game, players)))")
    return pa.Table.from_batches([batch])


def write_atomically(table: pa.Table | bytes, fs: pafs.FileSystem, path: str) -> None:
    """Writes under a temporary name in the same folder, then renames onto `path`: a table
    as Parquet with page checksums, or bytes as they are."""
    folder = posixpath.dirname(path)
    fs.create_dir(folder, recursive=True)
    tmp = posixpath.join(folder, f".{posixpath.basename(path)}.{uuid.uuid4().hex}{TEMP_SUFFIX}")
    try:
        if isinstance(table, bytes):
            with fs.open_output_stream(tmp) as out:
                out.write(table)
        else:
            pq.write_table(table, tmp, filesystem=fs, write_page_checksum=True)
        fs.move(tmp, path)
    except BaseException:
        try:
            fs.delete_file(tmp)
        except OSError:
            pass
        raise


def sound_rows(fs: pafs.FileSystem, path: str) -> int:
    """The games of a written shard, read back whole with its page checksums verified; 0
    when it is empty or cannot be read (damaged: a flipped byte fails its page's CRC, a
    damaged footer fails to parse)."""
    try:
        return pq.read_table(path, filesystem=fs, page_checksum_verification=True).num_rows
    except (OSError, ValueError, pa.ArrowException):
        return 0


# ---- an experiment's files -----------------------------------------------------------------
def _files(root: str) -> tuple[pafs.FileSystem, str, list[pafs.FileInfo]]:
    fs, base = filesystem(root)
    if fs.get_file_info(base).type != pafs.FileType.Directory:
        return fs, base, []
    found = fs.get_file_info(pafs.FileSelector(base, recursive=True))
    return fs, base, [f for f in found if f.type == pafs.FileType.File]


def shard_files(root: str) -> list[tuple[str, str]]:
    """(path in the filesystem, path relative to the root) of every finished shard, sorted.
    Temporary files of shards being written (dot-names) are not shards yet."""
    _fs, base, files = _files(root)
    found = [(f.path, posixpath.relpath(f.path, base)) for f in files
             if f.base_name.endswith(".parquet") and not f.base_name.startswith(".")]
    return sorted(found, key=lambda p: p[1])


def has_results(root: str) -> bool:
    return bool(shard_files(root))


def written_shards(root: str, arm: str, players: int) -> set[str]:
    """File names of the finished shards of one cell."""
    fs, base = filesystem(root)
    info = fs.get_file_info(pafs.FileSelector(cell_dir(base, arm, players),
                                              allow_not_found=True))
    return {i.base_name for i in info if i.type == pafs.FileType.File
            and i.base_name.startswith("shard-") and i.base_name.endswith(".parquet")}


def remove_stale_temporaries(root: str) -> int:
    """Deletes temporary files left by shard writes that never finished (a crash or a kill);
    returns how many.  Called before a run resumes, when no task of it is writing."""
    fs, _base, files = _files(root)
    stale = [f.path for f in files if _is_temporary(f.base_name)]
    for path in stale:
        fs.delete_file(path)
    return len(stale)


def remove_experiment(root: str) -> None:
    """Deletes an experiment's whole dataset (every shard and temporary file)."""
    fs, base = filesystem(root)
    if fs.get_file_info(base).type == pafs.FileType.Directory:
        fs.delete_dir(base)
