"""The results folder's format, defined here once: where each file of an experiment is, what
a stored row is, and how every file is written (atomically).  The service writes through this
module (services.shard, services.runner, the API) and the statistics read through it
(pipelines.dataset, sufficient, paired); nothing else spells a path, a suffix or the manifest.

Ray-free and Polars-free on purpose: the API reads, lists and deletes results through this
module without importing Ray, and a Ray worker writes through it with pyarrow alone.

Layout of the results (a hive-partitioned Parquet dataset):

    <results>/<experiment_id>/arm=<arm>/players=<n>/shard-<start:012d>.parquet
    <results>/<experiment_id>/arm=<arm>/players=<n>/shard-<start:012d>.parquet.stats
    <results>/<experiment_id>/pairs/<digest>.pairs
    <results>/<experiment_id>/manifest.json

`<arm>` is percent-encoded (urllib.parse.quote, safe="") so that any arm name is one path
segment.  Every file also holds the `arm` and `players` columns, so readers need not parse
paths, and the game's facts in its Parquet schema metadata (FACTS_KEY).  Beside each shard its
statistics table (stats_path: pipelines.shard_tables' format), and under pairs/ the pair
tables of an arm's shard with the baseline's (pair_path: pipelines.paired's).  Every file is
written under a temporary dot-name in its folder and renamed (write_atomically), so a file
with a shard's name is complete; temporary files left by a crash are removed on resume.
Shards are written with Parquet page checksums; a resume reads every shard found back
whole with them verified (shard_entry), and plays again any that is damaged or empty.

An experiment whose run has ended (done, or early: cancelled, failed) keeps a manifest
(MANIFEST), saying how it ended:
per shard its path under the experiment, cell, first game, rows, games, byte size, the
SHA-256 of its bytes and its modification time just after it was written, as the shard task
wrote it (write_atomically hashes the bytes it writes), and its statistics table's entry.
Every read of the figures compares the files against it (pipelines.dataset.verify), and a
replay (services.runner.replay) plays again exactly the shards that differ.
"""
from __future__ import annotations

import hashlib
import json
import os
import posixpath
import uuid
from urllib.parse import quote

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

# The schema metadata key under which every shard carries its game's facts (JSON: the game,
# cooperative, safety_end_reasons, players).  The engines' batches are written with it
# (core_cy.play.schema.facts_metadata: the engine layer imports no statistics, and the
# statistics import no engine, so that writer spells it too and a test holds the two equal).
FACTS_KEY = b"meeplelab.game_facts"
TEMP_SUFFIX = ".tmp"
STATS_SUFFIX = ".stats"  # the table of shard-<start>.parquet is shard-<start>.parquet.stats
PAIRS_DIR, PAIR_SUFFIX = "pairs", ".pairs"
# The manifest's file name in an experiment's folder and its format tag.
MANIFEST = "manifest.json"
MANIFEST_FORMAT = "meeplelab.manifest/1"


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


def stats_path(shard_path: str) -> str:
    """The statistics table's path of a shard's (either relative or full)."""
    return shard_path + STATS_SUFFIX


def pair_path(base: str, mine: str, theirs: str) -> str:
    """The pair table of two shards (their paths under the experiment's folder `base`)."""
    digest = hashlib.sha256(f"{mine}\n{theirs}".encode()).hexdigest()[:32]
    return posixpath.join(base, PAIRS_DIR, digest + PAIR_SUFFIX)


def _is_temporary(name: str) -> bool:
    return name.startswith(".") and name.endswith(TEMP_SUFFIX)


# ---- the stored table ----------------------------------------------------------------------
def storage_table(batch: pa.RecordBatch) -> pa.Table:
    """A result batch (core_cy.play.schema.result_batch, which checks its result columns) as
    the table a shard file stores: the game's facts in the schema metadata (FACTS_KEY),
    which the statistics read (pipelines.dataset) instead of asking an engine."""
    if FACTS_KEY not in (batch.schema.metadata or {}):
        raise ValueError("the engine's batch lacks the game's facts (result_batch(columns, "
                         "core_cy.play.batch.game_facts(game, players)))")
    return pa.Table.from_batches([batch])


def write_atomically(table: pa.Table | bytes, fs: pafs.FileSystem, path: str) -> dict:
    """Writes the table as Parquet (with page checksums), or bytes as they are, under a
    temporary name in the same folder, then renames onto `path`; returns {"bytes", "sha256",
    "mtime_ns"} of what it wrote (the bytes are hashed in memory, never read back; mtime_ns
    is the file's modification time once renamed, None where the filesystem has none)."""
    if isinstance(table, bytes):
        data = pa.py_buffer(table)
    else:
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink, write_page_checksum=True)
        data = sink.getvalue()
    _write_bytes(data, fs, path)
    return {"bytes": data.size, "sha256": hashlib.sha256(data).hexdigest(),
            "mtime_ns": fs.get_file_info(path).mtime_ns}


def write_shard(table: pa.Table, fs: pafs.FileSystem, root: str, start: int, games: int
                ) -> dict:
    """Writes a shard's table (storage_table) of the games start..start+games-1 of its cell
    under the experiment's folder `root`; returns its manifest entry (shard_entry's keys)."""
    arm, players = table.column("arm")[0].as_py(), int(table.column("players")[0].as_py())
    rel = posixpath.join(cell_dir("", arm, players), shard_name(start))
    written = write_atomically(table, fs, posixpath.join(root, rel))
    return {"path": rel, "arm": arm, "players": players, "start": start,
            "rows": table.num_rows, "games": games, **written}


def _write_bytes(data, fs: pafs.FileSystem, path: str) -> None:
    folder = posixpath.dirname(path)
    fs.create_dir(folder, recursive=True)
    tmp = posixpath.join(folder, f".{posixpath.basename(path)}.{uuid.uuid4().hex}{TEMP_SUFFIX}")
    try:
        with fs.open_output_stream(tmp) as out:
            out.write(data)
        fs.move(tmp, path)
    except BaseException:
        try:
            fs.delete_file(tmp)
        except OSError:
            pass
        raise


def shard_entry(fs: pafs.FileSystem, root: str, path: str) -> dict | None:
    """A written shard's manifest entry ({"path" under `root`, "arm", "players", "start",
    "rows", "games", "bytes", "sha256", "mtime_ns", and its statistics table's entry,
    statistics_entry: so a resumed run's manifest lists every shard's}), its bytes read once
    and parsed with
    their page checksums verified; None when it is empty or cannot be read (damaged: a flipped byte
    fails its page's CRC, a damaged footer fails to parse)."""
    try:
        mtime_ns = fs.get_file_info(path).mtime_ns
        with fs.open_input_file(path) as src:
            data = src.read_buffer()
        table = pq.read_table(pa.BufferReader(data), page_checksum_verification=True)
    except (OSError, ValueError, pa.ArrowException):
        return None
    if table.num_rows == 0:
        return None
    entry = {"path": posixpath.relpath(path, root), "arm": table.column("arm")[0].as_py(),
             "players": int(table.column("players")[0].as_py()),
             "start": shard_start(posixpath.basename(path)), "rows": table.num_rows,
             "games": table.num_rows, "bytes": data.size,
             "sha256": hashlib.sha256(data).hexdigest(), "mtime_ns": mtime_ns}
    if FACTS_KEY in (table.schema.metadata or {}):  # the figures' table beside it, listed
        try:
            entry["statistics"] = statistics_entry(table, fs, root, entry)
        except OSError:  # not writable now (a full disk): the figures read the shard's rows
            pass
    return entry


def write_statistics(table: pa.Table, fs: pafs.FileSystem, root: str, entry: dict
                     ) -> dict:
    """Writes the statistics table of the shard just written (its manifest `entry`, its rows
    `table`) beside it (pipelines.shard_tables: the figures read it instead of the shard's
    rows); returns its {"path", "bytes", "sha256"}, which the manifest keeps under the
    shard's entry."""
    from pipelines.shard_tables import stored_bytes

    facts = json.loads(table.schema.metadata[FACTS_KEY])
    path = stats_path(entry["path"])
    written = write_atomically(stored_bytes(table, facts, entry["bytes"]), fs,
                               posixpath.join(root, path))
    return {"path": path, **written}


def statistics_entry(table: pa.Table, fs: pafs.FileSystem, root: str, entry: dict) -> dict:
    """The manifest entry ({"path", "bytes", "sha256", "mtime_ns"}) of the statistics table
    of a shard found written (a resume, a run cut short): the table beside it when it
    describes this shard (its bytes and rows, this version), else written anew from its
    rows `table`."""
    from pipelines.shard_tables import STATS_VERSION, read_stored

    path = stats_path(entry["path"])
    try:
        mtime_ns = fs.get_file_info(posixpath.join(root, path)).mtime_ns
        with fs.open_input_stream(posixpath.join(root, path)) as src:
            data = src.read()
        described = read_stored(data)[1]
    except (OSError, ValueError):
        return write_statistics(table, fs, root, entry)
    if (described.get("version"), described.get("shard_bytes"), described.get("rows")) != \
            (STATS_VERSION, entry["bytes"], entry["rows"]):
        return write_statistics(table, fs, root, entry)
    return {"path": path, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(),
            "mtime_ns": mtime_ns}


def read_manifest(root: str) -> dict | None:
    """The experiment's manifest, or None when it has none (a run that never finished, or
    results written before manifests) or it cannot be read."""
    fs, base = filesystem(root)
    try:
        with fs.open_input_stream(posixpath.join(base, MANIFEST)) as src:
            manifest = json.loads(src.read())
    except (OSError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) and \
        manifest.get("format") == MANIFEST_FORMAT else None


def write_manifest(root: str, shards: list[dict], experiment: str, seed: int,
                   status: str = "done", error: str | None = None) -> dict:
    """Writes the manifest of an experiment's run that has ended (atomically): its shards'
    entries (shard_entry's keys), sorted by path, their totals, and how the run ended
    (`status`: done, or cancelled or failed with its `error`: only the shards written are
    listed); returns it.  A manifest without a status (written before runs that end early
    had one) is a done run's."""
    shards = sorted(shards, key=lambda e: e["path"])
    manifest = {"format": MANIFEST_FORMAT, "experiment": experiment, "seed": seed,
                "status": status, "games": sum(e["games"] for e in shards), "shards": shards}
    if error:
        manifest["error"] = error
    fs, base = filesystem(root)
    _write_bytes(json.dumps(manifest, indent=1).encode(), fs, posixpath.join(base, MANIFEST))
    return manifest


def remove_manifest(root: str) -> None:
    """Deletes the manifest of a run that ended early and is played on now (the command
    line's run again): a run in progress has none; its end writes it anew."""
    fs, base = filesystem(root)
    if fs.get_file_info(posixpath.join(base, MANIFEST)).type == pafs.FileType.File:
        fs.delete_file(posixpath.join(base, MANIFEST))


# ---- an experiment's files -----------------------------------------------------------------
def shard_infos(fs: pafs.FileSystem, base: str
                ) -> list[tuple[pafs.FileInfo, pafs.FileInfo | None]]:
    """(shard, its statistics table or None) for every finished shard file of the
    experiment's folder `base`, sorted (dot-named temporary files are neither)."""
    found = [f for f in fs.get_file_info(pafs.FileSelector(base, recursive=True,
                                                            allow_not_found=True))
             if f.type == pafs.FileType.File and not f.base_name.startswith(".")]
    tables = {f.path: f for f in found if f.base_name.endswith(".parquet" + STATS_SUFFIX)}
    return sorted(((f, tables.get(stats_path(f.path))) for f in found
                   if f.base_name.endswith(".parquet")), key=lambda pair: pair[0].path)


def shard_files(root: str) -> list[tuple[str, str]]:
    """(path in the filesystem, path relative to the root) of every finished shard, sorted.
    Temporary files of shards being written (dot-names) are not shards yet."""
    fs, base = filesystem(root)
    return [(f.path, posixpath.relpath(f.path, base)) for f, _ in shard_infos(fs, base)]


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
    fs, base = filesystem(root)
    stale = [f.path for f in fs.get_file_info(pafs.FileSelector(base, recursive=True,
                                                                 allow_not_found=True))
             if f.type == pafs.FileType.File and _is_temporary(f.base_name)]
    for path in stale:
        fs.delete_file(path)
    return len(stale)


def remove_experiment(root: str) -> None:
    """Deletes an experiment's whole dataset (every shard and temporary file)."""
    fs, base = filesystem(root)
    if fs.get_file_info(base).type == pafs.FileType.Directory:
        fs.delete_dir(base)
