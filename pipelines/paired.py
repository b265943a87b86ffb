"""An experiment's paired differences between each arm and the baseline (compare) from
per-pair-of-shards tables (pipelines.shard_tables.pair_table), merged exactly.

Pairing is exact: a unit of an arm is paired with the baseline's unit of the same game_index
(with pairing 'rotations', the same deal), so the sums need both arms' rows of that unit.
They are computed per pair of shards (one of the arm, one of the baseline, same player
count) whose games overlap (each shard's game_index span is in its statistics table;
shards of the same start and size pair one to one), from the two shards' rows, once: the
table is cached in memory and stored under the experiment's folder
(`pairs/<digest>.pairs`, Arrow IPC with a CRC-32 of the table and of the two shards it
describes: their paths and sizes), so a later process reads it instead of the rows.  A
stored pair table older than either shard (a replay), damaged or of other shards is not
read, but computed again.  A look after new shards are written computes only their pairs:
its cost does not grow with the games already played.  A shard whose rows cannot be read
when its pair is computed is named (sufficient.DamagedShard), never left out silently.
"""
from __future__ import annotations

import bisect
import math
import posixpath

import polars as pl
import pyarrow as pa
import pyarrow.fs as pafs

from pipelines import sufficient as sf
from pipelines.dataset import SEAT, scan
from pipelines.folder import pair_path, write_atomically
from pipelines.shard_tables import (PAIR_SUMS, SHARE_SCALE, pair_table, read_stored,
                                    table_bytes)

PAIR_VERSION = 2  # 2: with `same`
_PAIRS: dict[tuple, pl.DataFrame] = {}  # (arm shard id, baseline shard id) -> its pair table
_MERGED: dict[tuple, tuple[frozenset, pl.DataFrame]] = {}  # (root, baseline) -> last merge
_SPANS: dict[tuple, tuple | None] = {}  # shard id -> (arm, players, first, last game_index)


def _described(base: str, shards, facts: dict) -> dict:
    return {"version": PAIR_VERSION, "facts": facts,
            "shards": [[posixpath.relpath(s.path, base), s.size] for s in shards]}


def _stored_pair(fs: pafs.FileSystem, path: str, shards, described: dict
                 ) -> pl.DataFrame | None:
    """The pair table stored at `path`, or None: none, damaged, of other shards, or older
    than one of them."""
    info = fs.get_file_info(path)
    if info.type != pafs.FileType.File or any(info.mtime_ns < s.mtime_ns for s in shards):
        return None
    try:
        with fs.open_input_file(path) as f:
            table, stored = read_stored(f.read())
    except (OSError, ValueError):
        return None
    return pl.from_arrow(table) if stored == described else None


def _store_pair(fs: pafs.FileSystem, path: str, table: pa.Table, described: dict) -> None:
    """Stores the pair table (pipelines.folder.write_atomically); a folder that cannot be
    written (read-only results) keeps it in memory only."""
    try:
        write_atomically(table_bytes(table, described), fs, path)
    except OSError:
        pass


def _facts_key(facts: dict) -> tuple:
    return facts["cooperative"], tuple(facts["safety_end_reasons"])


def _pair(fs: pafs.FileSystem, base: str, mine: pafs.FileInfo, theirs: pafs.FileInfo,
          facts: dict) -> pl.DataFrame:
    key = (sf._shard_id(mine), sf._shard_id(theirs), _facts_key(facts))
    if key not in _PAIRS:
        if len(_PAIRS) >= sf.MAX_TABLES:
            _PAIRS.clear()
        path = pair_path(base, posixpath.relpath(mine.path, base),
                         posixpath.relpath(theirs.path, base))
        described = _described(base, (mine, theirs), facts)
        table = _stored_pair(fs, path, (mine, theirs), described)
        if table is None:
            rows = pair_table(sf._read_rows(fs, base, mine), sf._read_rows(fs, base, theirs),
                              facts["safety_end_reasons"], facts["cooperative"])
            _store_pair(fs, path, rows, described)
            table = pl.from_arrow(rows)
        _PAIRS[key] = table
    return _PAIRS[key]


def _spans(fs, base: str, infos) -> dict[tuple, list]:
    """(arm, players) -> [(first game_index, last, shard)] of its shards, sorted."""
    cells: dict[tuple, list] = {}
    for shard, stats in infos:
        key = sf._shard_id(shard)
        if key not in _SPANS:
            if len(_SPANS) >= sf.MAX_TABLES:
                _SPANS.clear()
            table, _facts, span = sf._shard_table(fs, base, shard, stats)
            cell = table.filter(what="game", scope="all").select("arm", "players").unique()
            _SPANS[key] = ((*cell.row(0), *span) if span is not None and cell.height == 1
                           else None)  # no game (or, by hand, several cells: not paired)
        if _SPANS[key] is not None:
            arm, players, first, last = _SPANS[key]
            cells.setdefault((arm, players), []).append((first, last, shard))
    return {cell: sorted(shards, key=lambda s: s[:2]) for cell, shards in cells.items()}


def _overlapping(spans: list, first: int, last: int) -> list[pafs.FileInfo]:
    """The shards of `spans` (sorted, not overlapping each other) holding a game of
    first..last."""
    i = bisect.bisect_right([s[0] for s in spans], last)
    out = []
    while i > 0 and spans[i - 1][1] >= first:
        out.append(spans[i - 1][2])
        i -= 1
    return out


def pair_statistics(path: str, baseline: str, stats: sf.Statistics) -> pl.DataFrame:
    """The merged pair tables of every arm against `baseline` (sums per arm, players,
    scope and seat), over the experiment's sound shards (sufficient._sound_shards), merged
    incrementally: a look after new shards are written computes only their pairs."""
    fs, base, infos = sf._sound_shards(path)
    facts = {"cooperative": stats.cooperative,
             "safety_end_reasons": sorted({r for g in stats.games.values()
                                           for r in g.safety_end_reasons})}
    spans = _spans(fs, base, infos)
    pairs = set()
    for (arm, players), shards in spans.items():
        theirs = spans.get((baseline, players), [])
        if arm != baseline:
            pairs.update((mine, other) for first, last, mine in shards
                         for other in _overlapping(theirs, first, last))
    ids = {(sf._shard_id(a), sf._shard_id(b), _facts_key(facts)): (a, b)
           for a, b in pairs}
    seen, before = _MERGED.get((base, baseline), (frozenset(), None))
    if before is None or not seen <= ids.keys():
        seen, before = frozenset(), None
    new = [_pair(fs, base, *ids[k], facts) for k in sorted(ids.keys() - seen)]
    merged = merge_pairs([t for t in (before, *new) if t is not None])
    _MERGED[(base, baseline)] = (frozenset(ids), merged)
    return merged


def merge_pairs(tables: list[pl.DataFrame]) -> pl.DataFrame:
    """Pair tables as one: their sums added (exact: Int128), in a fixed order."""
    keys = ["arm", "baseline", "players", "scope", "seat"]
    if not tables:
        return pl.DataFrame(schema={**{k: pl.String for k in ("arm", "baseline", "scope")},
                                    "players": pl.Int8, "seat": pl.Int8,
                                    **{c: pl.Int128 for c in PAIR_SUMS}}).select(*keys,
                                                                                  *PAIR_SUMS)
    return (pl.concat(tables, how="vertical_relaxed").group_by(keys)
            .agg(pl.col(PAIR_SUMS).cast(pl.Int128).sum()).sort(keys, nulls_last=True))


def _moments(total: int, squares: int, n: int, scale: int) -> tuple[float, float | None]:
    """Mean and standard deviation (ddof 1; None below 2) of n values whose sum and sum of
    squares, times `scale`, are `total` and `squares`."""
    sd = (math.sqrt((n * squares - total * total) / (n * (n - 1))) / scale if n > 1 else None)
    return total / (n * scale), sd


def paired_frame(pairs: pl.DataFrame, include_truncated: bool, cooperative: bool
                 ) -> pl.DataFrame:
    """Per (arm, players, seat): pairs, and of the win-share and score differences the
    mean (win_diff, score_diff), sd (ddof 1), and how many are positive and negative;
    mirrored: seat 1 of a two-player cell whose share differences cancel in every pair;
    identical: the pairs in which both arms played the same game."""
    rows = []
    for r in pairs.filter(pl.col("scope") == sf._scope(include_truncated),
                          pl.col("n") > 0).iter_rows(named=True):
        n, games = int(r["n"]), int(r["g"]) // int(r["n"])
        score_scale = games * (r["players"] if cooperative else 1)
        win, win_sd = _moments(int(r["w"]), int(r["ww"]), n, SHARE_SCALE * games)
        score, score_sd = _moments(int(r["s"]), int(r["ss"]), n, score_scale)
        rows.append({"arm": r["arm"], "players": r["players"], "seat": r["seat"], "pairs": n,
                     "win_diff": win, "win_sd": win_sd, "win_pos": r["wpos"],
                     "win_neg": r["wneg"], "score_diff": score, "score_sd": score_sd,
                     "score_pos": r["spos"], "score_neg": r["sneg"],
                     "mirrored": (r["players"] == 2 and r["seat"] == 1
                                  and r["unmirrored"] == 0),
                     "identical": r["same"]})
    return pl.DataFrame(rows, schema=PAIRED_SCHEMA, orient="row").sort(SEAT)


PAIRED_SCHEMA = {"arm": pl.String, "players": pl.Int8, "seat": pl.Int8, "pairs": pl.UInt32,
                 "win_diff": pl.Float64, "win_sd": pl.Float64, "win_pos": pl.UInt32,
                 "win_neg": pl.UInt32, "score_diff": pl.Float64, "score_sd": pl.Float64,
                 "score_pos": pl.UInt32, "score_neg": pl.UInt32, "mirrored": pl.Boolean,
                 "identical": pl.UInt32}


def pairs_from_rows(path: str, baseline: str, stats: sf.Statistics) -> pl.DataFrame:
    """The pair tables computed from every row of each arm at once (no shard boundary):
    the reference the per-pair-of-shards tables are tested against."""
    rows = scan(path).collect()
    safeties = sorted({r for g in stats.games.values() for r in g.safety_end_reasons})
    tables = []
    for (arm, players), mine in rows.partition_by("arm", "players", as_dict=True).items():
        theirs = rows.filter(arm=baseline, players=players)
        if arm != baseline and theirs.height:
            tables.append(pl.from_arrow(pair_table(mine.to_arrow(), theirs.to_arrow(),
                                                   safeties, stats.cooperative)))
    return merge_pairs(tables)
