"""The statistics table of a shard's rows: integer counts and sums, everything the figures
need (pipelines.sufficient reads, merges and uses them).  numpy and pyarrow only, since the
shard task writes the table beside its shard (a Ray worker imports no Polars or SciPy).

One row per (arm, players, scope, what, key[, kind]):
- scope "kept" (truncated games left out: every figure's default) and "all" (every game);
- what "unit": key the seating (the seats' agents joined by SEP, or "rotated" in every seat
  for a deal), k<i> the kind: seat i's win share summed over the unit's games, times
  SHARE_SCALE (an integer: a share is 0 or 1/w for a w-way tie); n the units of that seating
  and kind, g their games, s<i> and q<i> the sums of seat i's score (summed over the unit's
  games) and of its square.  The kinds and their counts are the whole distribution of the
  units' share vectors, so the seat-balance test (its permutation test too) is computed
  from them exactly;
- what "game": n games, tie (more than one winner), nowin (no winner), margin and margin_n
  (the sum and count of the best score minus the second best);
- what "length" / "end" / "engine" / "team": games per length (the exact histogram: exact
  quantiles), per end reason, per engine version, per team of agents (seats joined '+').
Scores must be integers and win shares multiples of 1/SHARE_SCALE (every engine's are; a
row that is not is a ValueError).  A unit of pairing 'rotations' is a complete deal (its k
games in the rows); a shard holds whole deals, so a deal never spans two shards."""
from __future__ import annotations

import json
import zlib
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

SHARE_SCALE = 2520  # lcm(1..10): a share of a tie of up to 10 seats times this is an integer
STATS_SUFFIX = ".stats"  # the table of shard-<start>.parquet is shard-<start>.parquet.stats
STATS_KEY = b"meeplelab.shard_stats"  # schema metadata: what the table describes
STATS_VERSION = 1
SEP = "\x1f"  # joins the seats' agents of a seating (an agent's name may hold '+')
ROTATED = "rotated"
KEYS = ["arm", "players", "scope", "what", "key"]


def _exact(values: np.ndarray, scale: int, what: str) -> np.ndarray:
    scaled = np.rint(values * scale)
    bad = np.flatnonzero(np.abs(values * scale - scaled) > 1e-6)
    if len(bad):
        raise ValueError(f"{what} {float(values.reshape(-1)[bad[0]])!r} is not a multiple of "
                         f"1/{scale}: the statistics tables sum exact integers")
    return scaled.astype(np.int64)


def _matrix(column: pa.ChunkedArray, players: int) -> np.ndarray:
    flat = pc.list_flatten(column).to_numpy().astype(np.float64)
    return flat.reshape(len(column), players)


def _codes(column) -> tuple[np.ndarray, list[str]]:
    """Integer codes of a column's values (as strings) and the strings they stand for."""
    column = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    encoded = pc.dictionary_encode(column.cast(pa.string()))
    return (encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64),
            encoded.dictionary.to_pylist())


def _seatings(column: pa.ChunkedArray, players: int) -> tuple[np.ndarray, list[tuple]]:
    """Per game a code of its seats' agents, and the agents (a tuple) of every code."""
    agents, names = _codes(pc.list_flatten(column))
    agents = agents.reshape(len(column), players)
    key = np.zeros(len(column), dtype=np.int64)
    for i in range(players):  # one number per seating (few agents: it fits)
        key = key * max(len(names), 1) + agents[:, i]
    _, first, codes = np.unique(key, return_index=True, return_inverse=True)
    return codes.reshape(-1), [tuple(names[a] for a in agents[j]) for j in first]


@dataclass
class _Cell:
    """One cell's rows as numbers: everything the table is made of."""

    players: int
    kinds: np.ndarray  # games x seats: win share x SHARE_SCALE
    scores: np.ndarray  # games x seats
    seating: np.ndarray  # games: a code of seatings
    seatings: list[tuple]
    values: dict  # what -> (codes per game, the strings they stand for)
    tie: np.ndarray
    deal: np.ndarray | None
    truncated: np.ndarray

    @classmethod
    def of(cls, cell: pa.Table, players: int, safety_end_reasons) -> "_Cell":
        seating, seatings = _seatings(cell.column("seat_agent"), players)
        ends, reasons = _codes(cell.column("end_reason"))
        values = {"length": _codes(cell.column("length")), "end": (ends, reasons),
                  "engine": _codes(cell.column("engine_version")),
                  "team": (seating, ["+".join(s) for s in seatings])}
        return cls(players, _exact(_matrix(cell.column("seat_win_share"), players),
                                   SHARE_SCALE, "a win share"),
                   _exact(_matrix(cell.column("seat_score"), players), 1, "a score"),
                   seating, seatings, values,
                   (cell.column("num_winners").to_numpy() > 1).astype(np.int64),
                   cell.column("deal").to_numpy() if "deal" in cell.column_names else None,
                   np.isin(np.asarray(reasons, dtype=object)[ends],
                           list(safety_end_reasons)) if reasons else np.zeros(0, bool))


def _units(c: _Cell, keep: np.ndarray) -> pa.Table:
    p = c.players
    kinds, scores, seating = c.kinds[keep], c.scores[keep], c.seating[keep]
    labels = [SEP.join(s) for s in c.seatings]
    if c.deal is not None:
        deals, inverse, count = np.unique(c.deal[keep], return_inverse=True,
                                          return_counts=True)
        kinds, scores = (np.stack([np.bincount(inverse.reshape(-1), weights=m[:, i],
                                               minlength=len(deals)) for i in range(p)],
                                  axis=1).round().astype(np.int64).reshape(len(deals), p)
                         for m in (kinds, scores))
        complete = count == p
        kinds, scores = kinds[complete], scores[complete]
        seating, labels = np.zeros(len(kinds), dtype=np.int64), [SEP.join([ROTATED] * p)]
    games = np.full(len(kinds), p if c.deal is not None else 1, dtype=np.int64)
    table = pa.table({"seating": seating, **{f"k{i}": kinds[:, i] for i in range(p)},
                      "n": np.ones(len(kinds), dtype=np.int64), "g": games,
                      **{f"s{i}": scores[:, i] for i in range(p)},
                      **{f"q{i}": scores[:, i] ** 2 for i in range(p)}})
    sums = ["n", "g", *(f"s{i}" for i in range(p)), *(f"q{i}" for i in range(p))]
    table = table.group_by(["seating", *(f"k{i}" for i in range(p))], use_threads=False
                           ).aggregate([(name, "sum") for name in sums])
    table = table.rename_columns([n[:-len("_sum")] if n.endswith("_sum") else n
                                  for n in table.column_names])
    key = pa.array(np.asarray(labels, dtype=object)[table.column("seating").to_numpy()]
                   if table.num_rows else [], pa.string())
    return table.drop_columns(["seating"]).add_column(0, "key", key)


def _games(c: _Cell, keep: np.ndarray) -> list[tuple[str, pa.Table]]:
    scores = c.scores[keep]
    if c.players >= 2:
        top = np.partition(scores, c.players - 2, axis=1)
        margin, margin_n = int((top[:, -1] - top[:, -2]).sum()), len(scores)
    else:
        margin, margin_n = 0, 0
    out = [("game", pa.table({"key": [""], "n": [len(scores)], "tie": [int(c.tie[keep].sum())],
                              "nowin": [int((c.kinds[keep].sum(axis=1) <= 0).sum())],
                              "margin": [margin], "margin_n": [margin_n]},
                             schema=pa.schema([("key", pa.string())] + [
                                 (n, pa.int64()) for n in ("n", "tie", "nowin", "margin",
                                                           "margin_n")])))]
    for what, (codes, labels) in c.values.items():
        counts = np.bincount(codes[keep], minlength=len(labels))
        seen = np.flatnonzero(counts)
        out.append((what, pa.table({"key": pa.array([str(labels[i]) for i in seen],
                                                    pa.string()),
                                    "n": pa.array(counts[seen], pa.int64())})))
    return out


def _labelled(table: pa.Table, arm: str, players: int, scope: str, what: str) -> pa.Table:
    rows = table.num_rows
    for i, (name, value, kind) in enumerate((("arm", arm, pa.string()),
                                             ("players", players, pa.int8()),
                                             ("scope", scope, pa.string()),
                                             ("what", what, pa.string()))):
        table = table.add_column(i, name, pa.array([value] * rows, kind))
    return table


def _cells(rows: pa.Table):
    """(arm, players, its rows) of every cell of `rows` (a shard has one)."""
    pairs = pa.table({"arm": rows.column("arm").cast(pa.string()),
                      "players": rows.column("players")}).group_by(
        ["arm", "players"], use_threads=False).aggregate([])
    for arm, players in sorted(zip(*(pairs.column(c).to_pylist() for c in ("arm", "players")))):
        yield arm, int(players), (rows if pairs.num_rows == 1 else rows.filter(
            pc.and_(pc.equal(rows.column("arm").cast(pa.string()), arm),
                    pc.equal(rows.column("players"), players))))


def shard_table(rows: pa.Table, safety_end_reasons=()) -> pa.Table:
    """The statistics table of `rows` (a table of the results schema: one shard's, or any
    rows of whole deals), in a fixed order of rows."""
    parts = []
    for arm, players, cell in _cells(rows):
        c = _Cell.of(cell, players, safety_end_reasons)
        every = [("unit", _units(c, np.ones(cell.num_rows, bool))),
                 *_games(c, np.ones(cell.num_rows, bool))]
        kept = ([("unit", _units(c, ~c.truncated)), *_games(c, ~c.truncated)]
                if c.truncated.any() else every)  # no truncated game: the same tables
        parts += [_labelled(t, arm, players, scope, what)
                  for scope, tables in (("all", every), ("kept", kept)) for what, t in tables]
    if not parts:
        return pa.table({"arm": pa.array([], pa.string()), "players": pa.array([], pa.int8()),
                         "scope": pa.array([], pa.string()), "what": pa.array([], pa.string()),
                         "key": pa.array([], pa.string()), "n": pa.array([], pa.int64())})
    table = pa.concat_tables(parts, promote_options="default")
    return table.sort_by([(c, "ascending") for c in KEYS])


def stats_path(shard_path: str) -> str:
    return shard_path + STATS_SUFFIX


def _body(table: pa.Table) -> bytes:
    """The bytes a table's digest is taken over: its Arrow IPC stream, without metadata."""
    table = table.replace_schema_metadata(None).combine_chunks()
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def stored_bytes(rows: pa.Table, facts: dict, shard_bytes: int) -> bytes:
    """A shard's statistics table as stored beside it: an Arrow IPC file (read in a tenth
    of a millisecond, a Parquet file of it in milliseconds) whose schema metadata says what
    it describes (the game's facts, the shard's bytes and rows) and holds the CRC-32 of the
    table, so that a damaged or stale table is never taken for the shard's."""
    table = shard_table(rows, facts.get("safety_end_reasons", ()))
    described = {"version": STATS_VERSION, "shard_bytes": int(shard_bytes),
                 "rows": rows.num_rows, "facts": facts, "crc32": zlib.crc32(_body(table))}
    schema = table.schema.with_metadata({STATS_KEY: json.dumps(described, sort_keys=True)
                                         .encode()})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, schema) as writer:
        writer.write_table(table.cast(schema))
    return sink.getvalue().to_pybytes()


def read_stored(data: bytes) -> tuple[pa.Table, dict]:
    """(table, what it describes) of stored_bytes; ValueError when it is damaged (it does
    not parse, or its table's CRC-32 is not the one it was written with)."""
    try:
        table = pa.ipc.open_file(pa.BufferReader(data)).read_all()
        described = json.loads(table.schema.metadata[STATS_KEY])
    except (OSError, KeyError, TypeError, ValueError, pa.ArrowException) as e:
        raise ValueError(f"unreadable statistics table: {e}") from e
    if not isinstance(described, dict) or described.get("crc32") != zlib.crc32(_body(table)):
        raise ValueError("the statistics table's CRC-32 does not match")
    return table.replace_schema_metadata(None), described
