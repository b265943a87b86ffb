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
import math
import zlib
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

SHARE_SCALE = 2520  # lcm(1..10): a share of a tie of up to 10 seats times this is an integer
STATS_KEY = b"meeplelab.shard_stats"  # schema metadata: what the table describes
STATS_VERSION = 2  # 2: the breakdowns' rows, the shard's game_index span
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


def _deal_sums(deal: np.ndarray, players: int, *matrices: np.ndarray):
    """(the complete deals (k games for k seats), then each matrix (games x columns) summed
    over each complete deal's games)."""
    deals, inverse, count = np.unique(deal, return_inverse=True, return_counts=True)
    complete = count == players
    sums = [np.stack([np.bincount(inverse.reshape(-1), weights=m[:, i], minlength=len(deals))
                      for i in range(m.shape[1])], axis=1).round().astype(np.int64)
            .reshape(len(deals), m.shape[1])[complete] for m in matrices]
    return (deals[complete], *sums)


def _units(c: _Cell, keep: np.ndarray) -> pa.Table:
    p = c.players
    kinds, scores, seating = c.kinds[keep], c.scores[keep], c.seating[keep]
    labels = [SEP.join(s) for s in c.seatings]
    if c.deal is not None:
        _, kinds, scores = _deal_sums(c.deal[keep], p, kinds, scores)
        seating, labels = np.zeros(len(kinds), dtype=np.int64), [SEP.join([ROTATED] * p)]
    games = np.full(len(kinds), p if c.deal is not None else 1, dtype=np.int64)
    table = pa.table({"seating": seating, **{f"k{i}": kinds[:, i] for i in range(p)},
                      "n": np.ones(len(kinds), dtype=np.int64), "g": games,
                      **{f"s{i}": scores[:, i] for i in range(p)},
                      **{f"q{i}": scores[:, i] ** 2 for i in range(p)}})
    sums = ["n", "g", *(f"s{i}" for i in range(p)), *(f"q{i}" for i in range(p))]
    table = _summed(table, ["seating", *(f"k{i}" for i in range(p))], sums)
    key = pa.array(np.asarray(labels, dtype=object)[table.column("seating").to_numpy()]
                   if table.num_rows else [], pa.string())
    return table.drop_columns(["seating"]).add_column(0, "key", key)


def _summed(table: pa.Table, keys: list[str], sums: list[str]) -> pa.Table:
    """`table` grouped by `keys`, the columns `sums` summed (under their own names)."""
    table = table.group_by(keys, use_threads=False).aggregate([(name, "sum") for name in sums])
    return table.rename_columns([n[:-len("_sum")] if n.endswith("_sum") else n
                                 for n in table.column_names])


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


# ---- per value of an outcome column (breakdown, agent_summary) ------------------------------
def value_scale(players: int) -> int:
    """L^2 for L = lcm(1..players): a unit's mean over the seats holding a value (at most
    `players`) and over the deal's games holding it (at most `players`) times this is an
    integer when its terms are (scores; win shares times SHARE_SCALE)."""
    return math.lcm(*range(1, players + 1)) ** 2


def stored_breakdowns(schema: pa.Schema) -> list[tuple[str, bool]]:
    """(column, team) of the breakdowns every statistics table holds: the seats' agents,
    the end reason and every per-seat label column (seat_<name> of strings), each seat's
    value and, for a seat column, the team of values (others are computed from the rows
    when asked for, pipelines.sufficient)."""
    out = [("end_reason", False)] if "end_reason" in schema.names else []
    for field in schema:
        if (field.name.startswith("seat_") and _is_list(field.type)
                and (pa.types.is_string(field.type.value_type)
                     or pa.types.is_large_string(field.type.value_type))):
            out += [(field.name, False), (field.name, True)]
    return out


def _is_list(kind: pa.DataType) -> bool:
    return pa.types.is_list(kind) or pa.types.is_large_list(kind)


def breakdown_what(by: str, team: bool) -> str:
    return f"{'team' if team else 'value'}:{by}"


def _value_games(cell: pa.Table, by: str, team: bool, c: _Cell):
    """(game, value code, share sum x SHARE_SCALE and its divisor, score sum and its
    divisor, seats) per game and value of column `by` (strings, or lists of strings): a
    seat column gives each distinct value among the game's seats (the sums over the seats
    holding it, divided by their count), or with `team` one value, the seats' values sorted
    and joined '+'; a game column its value.  A game's one value stands for the team: seat
    0's share, the mean of the seats' scores.  And the strings of the codes."""
    column, p = cell.column(by), c.players
    games = np.arange(cell.num_rows)
    if _is_list(column.type) and not team:
        codes, labels = _codes(pc.list_flatten(column))
        key = np.repeat(games, p) * max(len(labels), 1) + codes
        first, inverse, seats = np.unique(key, return_index=True, return_inverse=True,
                                          return_counts=True)[1:]
        inverse = inverse.reshape(-1)
        sums = [np.bincount(inverse, weights=m.reshape(-1)).round().astype(np.int64)
                for m in (c.kinds, c.scores)]
        return (first // p, codes[first], sums[0], seats, sums[1], seats, seats), labels
    if _is_list(column.type):
        codes, labels = _codes(pc.list_flatten(column))
        rank = np.argsort(np.argsort(np.asarray(labels, dtype=object)))
        ordered = np.sort(rank[codes].reshape(-1, p), axis=1)
        width = max(len(labels), 1)
        if width ** p < 2 ** 62:  # one number per team: a fast unique
            key = ordered @ (width ** np.arange(p - 1, -1, -1, dtype=np.int64))
            first, codes = np.unique(key, return_index=True, return_inverse=True)[1:]
            combos = ordered[first]
        else:
            combos, codes = np.unique(ordered, axis=0, return_inverse=True)
        by_rank = np.asarray(labels, dtype=object)[np.argsort(rank)]
        labels = ["+".join(by_rank[r] for r in combo) for combo in combos]
    else:
        codes, labels = _codes(column)
    ones = np.ones(cell.num_rows, dtype=np.int64)
    return (games, codes.reshape(-1), c.kinds[:, 0], ones, c.scores.sum(axis=1),
            np.full(cell.num_rows, p), ones), labels


def _values(cell: pa.Table, by: str, team: bool, c: _Cell, keep: np.ndarray) -> pa.Table:
    """Per value and kind (k0: a unit's share x SHARE_SCALE x value_scale): n units, the
    seats holding it (seats) and the sum of the units' scores x value_scale (t)."""
    (game, code, share, share_div, score, score_div, seats), labels = _value_games(
        cell, by, team, c)
    root = math.isqrt(value_scale(c.players))
    kept = keep[game]
    game, code, seats = game[kept], code[kept], seats[kept]
    share = share[kept] * (root // share_div[kept])
    score = score[kept] * (root // score_div[kept])
    if c.deal is not None:  # per complete deal and value: the mean over its games holding it
        deal = c.deal[game]
        complete = np.isin(deal, _deal_sums(c.deal[keep], c.players)[0])
        game, code, seats, share, score, deal = (x[complete] for x in
                                                 (game, code, seats, share, score, deal))
        key = np.unique(np.stack([deal, code], axis=1), axis=0, return_inverse=True)
        pairs, inverse = key[0], key[1].reshape(-1)
        held = np.bincount(inverse)
        share, score, seats = (np.bincount(inverse, weights=x).round().astype(np.int64)
                               for x in (share, score, seats))
        share, score, code = share * (root // held), score * (root // held), pairs[:, 1]
    else:
        share, score = share * root, score * root
    table = _summed(pa.table({"code": code, "k0": share, "n": np.ones(len(code), np.int64),
                              "seats": seats.astype(np.int64), "t": score}),
                    ["code", "k0"], ["n", "seats", "t"])
    key = pa.array(np.asarray(labels, dtype=object)[table.column("code").to_numpy()]
                   if table.num_rows else [], pa.string())
    return table.drop_columns(["code"]).add_column(0, "key", key)


# ---- paired differences between two arms' games (compare) ----------------------------------
PAIR_SUMS = ["n", "g", "w", "ww", "wpos", "wneg", "s", "ss", "spos", "sneg", "unmirrored",
             "same"]


def _paired_units(rows: pa.Table, players: int, safety_end_reasons, cooperative: bool,
                  keep_truncated: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(unit keys, share sums x SHARE_SCALE (units x seats), score sums) of one arm's rows
    of a cell: per game (key game_index), or per complete deal (key deal: sums over its
    games); cooperative: one column, the team's share and the sum of the seats' scores."""
    c = _Cell.of(rows, players, safety_end_reasons)
    keep = np.ones(rows.num_rows, bool) if keep_truncated else ~c.truncated
    kinds, scores = c.kinds[keep], c.scores[keep]
    if cooperative:
        kinds, scores = kinds[:, :1], scores.sum(axis=1, keepdims=True)
    if c.deal is None:
        return rows.column("game_index").to_numpy()[keep], kinds, scores
    return _deal_sums(c.deal[keep], players, kinds, scores)


def pair_table(rows: pa.Table, baseline: pa.Table, safety_end_reasons=(),
               cooperative: bool = False) -> pa.Table:
    """The paired differences of the units two arms' rows of one player count share (the
    same game_index, or with pairing 'rotations' the same deal), `rows` minus `baseline`,
    as sums that merge: per scope ("all", "kept": truncated games left out) and seat (null
    for a cooperative game's team), n pairs, g their games, w / ww the sums of the share
    differences x SHARE_SCALE (summed over a unit's games) and of their squares, wpos /
    wneg how many are positive / negative, s / ss / spos / sneg the same of the score
    differences (a cooperative game: of the seats' score sums), and unmirrored the units
    whose share differences do not cancel over the seats (a two-player cell where none
    does: seat 1's test mirrors seat 0's), and same the units in which both arms played
    the same game (every seat's share and score equal: the option changed no decision).
    Every unit's pair is in one pair of shards, so
    the sums over the pairs of shards whose games overlap are the experiment's."""
    players = int(rows.column("players")[0].as_py())
    out = []
    for scope in ("all", "kept"):
        keys, shares, scores = _paired_units(rows, players, safety_end_reasons, cooperative,
                                             scope == "all")
        base_keys, base_shares, base_scores = _paired_units(
            baseline, players, safety_end_reasons, cooperative, scope == "all")
        _, mine, theirs = np.intersect1d(keys, base_keys, assume_unique=True,
                                         return_indices=True)
        share, score = shares[mine] - base_shares[theirs], scores[mine] - base_scores[theirs]
        unmirrored = int(np.count_nonzero(share.sum(axis=1)))
        same = int(np.count_nonzero(~(share.any(axis=1) | score.any(axis=1))))
        for seat in range(share.shape[1]):
            w, s = share[:, seat], score[:, seat]
            out.append({"scope": scope, "seat": None if cooperative else seat, "n": len(w),
                        "g": len(w) * (players if rows.column_names.count("deal") else 1),
                        "w": int(w.sum()), "ww": int((w * w).sum()),
                        "wpos": int((w > 0).sum()), "wneg": int((w < 0).sum()),
                        "s": int(s.sum()), "ss": int((s * s).sum()),
                        "spos": int((s > 0).sum()), "sneg": int((s < 0).sum()),
                        "unmirrored": unmirrored, "same": same})
    table = pa.Table.from_pylist(out, schema=pa.schema(
        [("scope", pa.string()), ("seat", pa.int8())] + [(c, pa.int64()) for c in PAIR_SUMS]))
    arm, base = (t.column("arm")[0].as_py() for t in (rows, baseline))
    return table.add_column(0, "arm", pa.array([arm] * len(out), pa.string())).add_column(
        1, "baseline", pa.array([base] * len(out), pa.string())).add_column(
        2, "players", pa.array([players] * len(out), pa.int8()))


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


def _scoped(c: _Cell, cell: pa.Table, keep: np.ndarray, breakdowns, summary: bool
            ) -> list[tuple[str, pa.Table]]:
    out = [("unit", _units(c, keep)), *_games(c, keep)] if summary else []
    return out + [(breakdown_what(by, team), _values(cell, by, team, c, keep))
                  for by, team in breakdowns]


def shard_table(rows: pa.Table, safety_end_reasons=(), breakdowns=None,
                summary: bool = True) -> pa.Table:
    """The statistics table of `rows` (a table of the results schema: one shard's, or any
    rows of whole deals), in a fixed order of rows: the summary's rows (unless not
    `summary`) and those of `breakdowns` ((column, team) pairs; stored_breakdowns by
    default)."""
    breakdowns = stored_breakdowns(rows.schema) if breakdowns is None else breakdowns
    parts = []
    for arm, players, cell in _cells(rows):
        c = _Cell.of(cell, players, safety_end_reasons)
        every = _scoped(c, cell, np.ones(cell.num_rows, bool), breakdowns, summary)
        kept = (_scoped(c, cell, ~c.truncated, breakdowns, summary)
                if c.truncated.any() else every)  # no truncated game: the same tables
        parts += [_labelled(t, arm, players, scope, what)
                  for scope, tables in (("all", every), ("kept", kept)) for what, t in tables]
    if not parts:
        return pa.table({"arm": pa.array([], pa.string()), "players": pa.array([], pa.int8()),
                         "scope": pa.array([], pa.string()), "what": pa.array([], pa.string()),
                         "key": pa.array([], pa.string()), "n": pa.array([], pa.int64())})
    table = pa.concat_tables(parts, promote_options="default")
    return table.sort_by([(c, "ascending") for c in KEYS])


def game_span(rows: pa.Table) -> list[int] | None:
    """[first, last] game_index of the rows (None: no row): which games a shard holds."""
    if not rows.num_rows:
        return None
    low, high = pc.min_max(rows.column("game_index")).values()
    return [low.as_py(), high.as_py()]


def _body(table: pa.Table) -> bytes:
    """The bytes a table's digest is taken over: its Arrow IPC stream, without metadata."""
    table = table.replace_schema_metadata(None).combine_chunks()
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _crc(table: pa.Table, described: dict) -> int:
    """CRC-32 of the table and of what it describes (its metadata but the CRC itself)."""
    return zlib.crc32(_body(table) + json.dumps(described, sort_keys=True).encode())


def stored_bytes(rows: pa.Table, facts: dict, shard_bytes: int) -> bytes:
    """A shard's statistics table as stored beside it: an Arrow IPC file (read in a tenth
    of a millisecond, a Parquet file of it in milliseconds) whose schema metadata says what
    it describes (the game's facts, the shard's bytes and rows) and holds the CRC-32 of the
    table and of that metadata, so that a damaged or stale table is never taken for the
    shard's."""
    table = shard_table(rows, facts.get("safety_end_reasons", ()))
    described = {"version": STATS_VERSION, "shard_bytes": int(shard_bytes),
                 "rows": rows.num_rows, "facts": facts, "game_index": game_span(rows)}
    return table_bytes(table, described)


def table_bytes(table: pa.Table, described: dict) -> bytes:
    """A table as an Arrow IPC file whose schema metadata holds `described` and the CRC-32
    of both (read_stored)."""
    described = {**described, "crc32": _crc(table, described)}
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
        crc = described.pop("crc32")
    except (OSError, KeyError, TypeError, ValueError, AttributeError, pa.ArrowException) as e:
        raise ValueError(f"unreadable statistics table: {e}") from e
    if crc != _crc(table, described):
        raise ValueError("the statistics table's CRC-32 does not match")
    return table.replace_schema_metadata(None), described
