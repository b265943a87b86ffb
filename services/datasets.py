"""What the API serves from an experiment's result dataset besides the pipelines' tables:
histograms, JSON-safe records, CSV, and the raw shards as one Parquet file or a zip.

Every function takes the dataset root (`pipelines.folder.experiment_path(results, id)`), a
local folder or a pyarrow.fs URI, and reads it through pyarrow.fs / Polars lazy scans.
"""
from __future__ import annotations

import io
import json
import math
import functools
import logging
import queue
import threading
import zipfile
from collections import OrderedDict
from concurrent.futures import Future
from typing import Any, Callable, Hashable, Iterator

import polars as pl
import pyarrow.parquet as pq

import pipelines
from pipelines import dataset
from pipelines.folder import filesystem, shard_files

log = logging.getLogger("meeplelab.figures")


# ---- the shards against the manifest ------------------------------------------------------
def integrity(root: str, rows: bool = True) -> dict | None:
    """The experiment's files against its manifest (pipelines.dataset.verify; `rows=False`
    for a figure that reads the statistics tables only), as JSON, when
    a shard is missing, empty, truncated or damaged: the shards and games of the manifest,
    the games not counted, and each bad shard (path, problem, games, arm, players); None
    when every shard verifies, or there is no manifest (a run that has not finished)."""
    found = dataset.verify(root, rows)
    return integrity_of(found) if found.damaged else None


def integrity_of(found: dataset.Integrity) -> dict:
    """An Integrity (pipelines.dataset.verify) as JSON."""
    return {"shards": found.shards, "games": found.games,
            "games_not_counted": found.games_not_counted,
            "damaged": [dict(vars(d)) for d in found.damaged]}


def damage_notice(found: dict, replay: str) -> str:
    """One sentence for the page and the terminal: which shards are bad, the games not
    counted, and how to replay them (`replay`: a command or a route)."""
    bad = found["damaged"]
    named = "; ".join(f"{d['path']} ({d['problem']})" for d in bad[:3]) + \
        ("; …" if len(bad) > 3 else "")
    one = len(bad) == 1
    return (f"{len(bad)} of {found['shards']} shards {'is' if one else 'are'} damaged "
            f"({named}): {found['games_not_counted']:,} of {found['games']:,} games are not "
            f"counted; replay {'it' if one else 'them'} with {replay}")


def _readable_shards(root: str) -> list[tuple[str, str]]:
    """shard_files of the experiment, less those that do not verify against its manifest."""
    sound = dataset.verify(root).sound
    files = shard_files(root)
    if sound is None:
        return files
    keep = {s.split("://")[-1] for s in sound}
    return [(path, rel) for path, rel in files if path in keep]


# ---- the raw shards ---------------------------------------------------------------------
def zip_bytes(root: str) -> Iterator[bytes]:
    """The shards as a zip archive (stored, since Parquet is already compressed), streamed
    one shard at a time so memory stays at one shard; shards that do not verify against the
    manifest are left out."""
    fs, _ = filesystem(root)
    buffer = _Chunks()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        for path, rel in _readable_shards(root):
            with fs.open_input_stream(path) as src, archive.open(rel, "w", force_zip64=True) as dst:
                while chunk := src.read(1 << 20):
                    dst.write(chunk)
                    yield from buffer.drain()
    yield from buffer.drain()


class _Chunks(io.RawIOBase):
    """A write-only, non-seekable sink that hands written bytes to a generator."""

    def __init__(self):
        self._parts: list[bytes] = []

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self._parts.append(bytes(data))
        return len(data)

    def drain(self) -> Iterator[bytes]:
        parts, self._parts = self._parts, []
        yield from parts


def write_concatenated(root: str, out_path: str) -> int:
    """Every shard's rows into one local Parquet file, shard by shard (those that verify
    against the manifest); returns the rows."""
    fs, _ = filesystem(root)
    rows = 0
    writer = None
    try:
        for path, _rel in _readable_shards(root):
            table = pq.read_table(path, filesystem=fs)
            if writer is None:
                writer = pq.ParquetWriter(out_path, table.schema)
            writer.write_table(table.cast(writer.schema))
            rows += table.num_rows
    finally:
        if writer is not None:
            writer.close()
    return rows


# ---- answers kept per set of finished shards ---------------------------------------------
class ShardCache:
    """Answers computed from an experiment's finished shards, kept while that set of shards
    stays the same.  The caller names the set by a `version` that changes whenever a shard is
    added: the service uses the registry's status and games done, which the runner updates
    after its shards are written (a shard never changes once written), so a poll costs no
    listing of the shards (thousands of files, or object-store requests) and no Polars
    pipeline, only a lookup.

    One computation per question at a time.  While a question is being recomputed for a new
    version (a running experiment: the figures of 10^8 games take minutes), its callers get
    the last answer at once, rather than wait: interim figures are valid at any look, and the
    look they answer is in the question.  `kept` starts that recompute in the background, so
    no poll waits for it; callers wait only when there is no answer yet.  At most `size`
    questions are kept, and answers of at most `max_bytes` in all (bytes answers count their
    length), the least recently used leave first.  Computations run on a fixed pool of
    `workers` daemon threads, so however many distinct questions arrive at once (each new
    `?delta=` is one), at most `workers` figures are computed at a time."""

    def __init__(self, size: int = 128, max_bytes: int = 64 << 20, workers: int = 2):
        self.size, self.max_bytes = size, max_bytes
        self._bytes = 0
        self._tasks: queue.SimpleQueue = queue.SimpleQueue()
        for k in range(workers):  # daemon threads: a stop of the service never waits
            threading.Thread(target=self._serve, name=f"meeplelab-figures-{k}",
                             daemon=True).start()
        self._lock = threading.Lock()
        self._answers: OrderedDict = OrderedDict()  # (root, question) -> (version, answer)
        self._computing: dict = {}  # (root, question) -> the lock its computation holds
        self._failed: dict = {}  # (root, question) -> the version whose recompute failed

    def _fresh(self, key, version):
        """The kept answer if it is of this version (else None); under the lock."""
        kept = self._answers.get(key)
        if kept is not None and kept[0] == version:
            self._answers.move_to_end(key)
            return kept
        return None

    def fresh(self, root: str, question: tuple, version: Hashable) -> Any:
        """The answer of this version when it is kept, else None; never waits."""
        with self._lock:
            kept = self._fresh((root, question), version)
        return None if kept is None else kept[1]

    def kept(self, root: str, question: tuple, version: Hashable,
             compute: Callable[[], Any]) -> tuple[bool, Any]:
        """Never waits (the event loop calls it): (True, answer) with the answer of this
        version, or else the last answer, after starting the recompute of this version in
        the background unless one runs (or failed) already; (False, None) when there is no
        answer yet (then `get` it from a thread)."""
        key = (root, question)
        with self._lock:
            kept = self._fresh(key, version)
            if kept is not None:
                return True, kept[1]
            kept = self._answers.get(key)
            if kept is None:
                return False, None
            if key not in self._computing and self._failed.get(key) != version:
                gate = self._computing[key] = threading.Lock()
                self._tasks.put((functools.partial(self._refresh, key, version, compute, gate),
                                 None))
        return True, kept[1]

    def _serve(self) -> None:
        while True:
            task, done = self._tasks.get()
            try:
                result = task()
            except BaseException as exc:  # handed to the caller that waits
                if done is not None:
                    done.set_exception(exc)
                continue
            if done is not None:
                done.set_result(result)

    def _on_pool(self, compute: Callable[[], Any]) -> Any:
        """compute() on the pool, waiting for its result."""
        done: Future = Future()
        self._tasks.put((compute, done))
        return done.result()

    def _refresh(self, key, version, compute, gate) -> None:
        try:
            self._compute(key, version, compute, gate, pooled=True)
        except Exception:  # the last answer stays; the next version tries again
            log.exception("recomputing %s of %s failed", key[1], key[0])
            with self._lock:
                self._failed[key] = version

    def get(self, root: str, question: tuple, version: Hashable,
            compute: Callable[[], Any]) -> Any:
        """The answer to `question` (hashable: the route and its parameters) about the
        shards of `root` at `version`; may wait for a computation (call it from a thread)."""
        key = (root, question)
        with self._lock:
            kept = self._fresh(key, version) or self._answers.get(key)
            gate = self._computing.get(key)
            if kept is not None and (kept[0] == version or gate is not None):
                return kept[1]
            if gate is None:
                gate = self._computing[key] = threading.Lock()
        return self._compute(key, version, compute, gate)

    def _compute(self, key, version, compute: Callable[[], Any], gate: threading.Lock,
                 pooled: bool = False) -> Any:
        """Computes (on the pool; `pooled`: this is a pool thread already) and keeps the
        answer under `gate` (registered in _computing), unless a computation that held the
        gate before has kept this version's answer."""
        with gate:
            with self._lock:
                kept = self._fresh(key, version)
                if kept is not None:
                    return kept[1]
                self._computing[key] = gate
            try:
                answer = compute() if pooled else self._on_pool(compute)
            except BaseException:
                with self._lock:
                    self._computing.pop(key, None)
                raise
            with self._lock:
                self._computing.pop(key, None)
                old = self._answers.pop(key, None)
                self._bytes -= 0 if old is None else _size(old[1])
                self._answers[key] = (version, answer)
                self._bytes += _size(answer)
                while len(self._answers) > self.size or (
                        self._bytes > self.max_bytes and len(self._answers) > 1):
                    self._bytes -= _size(self._answers.popitem(last=False)[1][1])
        return answer


def _size(answer: Any) -> int:
    return len(answer) if isinstance(answer, (bytes, bytearray, str)) else 1


# ---- tables as JSON and CSV -------------------------------------------------------------
def _clean(value):
    """JSON has no NaN or infinity: they become null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, list):
        return [_clean(v) for v in value]
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    return value


def records(frame: pl.DataFrame) -> list[dict]:
    return [_clean(row) for row in frame.to_dicts()]


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # what a spreadsheet reads as a formula


def csv_cell(text: str) -> str:
    """A text cell a spreadsheet shows as text: one starting with = + - @, a tab or a carriage
    return (a formula to Excel, LibreOffice and Sheets: an arm named '=1+1' or
    '@SUM(A1)') gets a leading apostrophe, as OWASP's CSV-injection advice has it."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def csv_text(frame: pl.DataFrame) -> str:
    """CSV of a table; nested columns (lists, structs) are written as JSON text, and every
    text cell and column name that a spreadsheet would run as a formula is escaped
    (csv_cell): the only way tables leave as CSV."""
    nested = [name for name, dtype in frame.schema.items() if dtype.is_nested()]
    if nested:
        frame = frame.with_columns(
            pl.col(name).map_elements(lambda v: json.dumps(_clean(v.to_list() if hasattr(
                v, "to_list") else v)), return_dtype=pl.String) for name in nested)
    text = [name for name, dtype in frame.schema.items()
            if dtype in (pl.String, pl.Categorical, pl.Enum) or isinstance(dtype, pl.Enum)]
    if text:
        pattern = "^[=+\\-@\t\r]"
        frame = frame.with_columns(
            pl.when(pl.col(name).cast(pl.String).str.contains(pattern))
            .then(pl.lit("'") + pl.col(name).cast(pl.String))
            .otherwise(pl.col(name).cast(pl.String)).alias(name) for name in text)
    frame = frame.rename({name: csv_cell(name) for name in frame.columns
                          if csv_cell(name) != name})
    return frame.write_csv()


# ---- histograms -------------------------------------------------------------------------
def _edges(lo: float, hi: float, bins: int, integral: bool) -> list[float]:
    """Common bin edges over [lo, hi]; integer data gets integer-wide bins centred on values."""
    if integral:
        width = max(1, math.ceil((hi - lo + 1) / bins))
        count = math.ceil((hi - lo + 1) / width)
        return [lo - 0.5 + k * width for k in range(count + 1)]
    width = (hi - lo) / bins if hi > lo else 1.0
    return [lo + k * width for k in range(bins + 1)]


def _histogram(frame: pl.LazyFrame, value: str, keys: list[str], bins: int,
               clip: float | None = None) -> dict:
    """Counts of `value` per group of `keys` over one set of edges shared by all groups.
    With `clip` the edges span only the [clip, 1 - clip] quantiles of all values, and each
    series counts the values outside them apart (`below`, `above`), so that a long tail does
    not squash the chart into one bar."""
    col = pl.col(value)
    lo_q, hi_q = (col.min(), col.max()) if clip is None else (
        col.quantile(clip, "lower"), col.quantile(1 - clip, "higher"))
    stats = frame.select(lo=lo_q, hi=hi_q, integral=(col == col.floor()).all()).collect()
    lo, hi, integral = stats.row(0)
    if lo is None:
        return {"edges": [], "series": []}
    edges = _edges(float(lo), float(hi), bins, bool(integral))
    n, width = len(edges) - 1, edges[1] - edges[0]
    position = ((col - edges[0]) / width).floor().cast(pl.Int64).clip(0, n - 1)
    counted = (frame.with_columns(bin=pl.when(col < edges[0]).then(-1)
                                  .when(col > edges[-1]).then(n).otherwise(position))
               .group_by(keys + ["bin"]).agg(count=pl.len())
               .sort(keys + ["bin"]).collect())
    series: dict[tuple, dict] = {}
    for row in counted.iter_rows(named=True):
        key = tuple(row[k] for k in keys)
        entry = series.setdefault(key, {"counts": [0] * n, "below": 0, "above": 0})
        if row["bin"] < 0:
            entry["below"] += row["count"]
        elif row["bin"] >= n:
            entry["above"] += row["count"]
        else:
            entry["counts"][row["bin"]] = row["count"]
    return {"edges": edges, "clip": clip,
            "series": [{**dict(zip(keys, key)), **entry} for key, entry in series.items()]}


def histograms(root: str, bins: int = 20, clip: float | None = None) -> dict:
    """Game length per (arm, players) and score per (arm, players, seat), from the raw rows
    (with `clip`, over the central quantile range only, the tails counted apart)."""
    rows = pipelines.results(root)  # truncated games left out, like every figure
    length = rows.select("arm", "players", pl.col("length").cast(pl.Float64))
    scores = (rows.select("arm", "players", pl.col("seat_score").cast(pl.List(pl.Float64)))
              .with_columns(seat=pl.int_ranges(0, pl.col("seat_score").list.len()))
              .explode("seat_score", "seat"))
    return {"bins": bins,
            "length": _histogram(length, "length", ["arm", "players"], bins, clip),
            "score": _histogram(scores, "seat_score", ["arm", "players", "seat"], bins, clip)}
