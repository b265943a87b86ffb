"""An experiment's figures from its shards' statistics tables (pipelines.shard_tables),
merged exactly: integer counts and sums added, so a figure request or an interim look reads
O(shards x cells) rows instead of O(games), and the figures are the same to the last digit
whatever the shards (tests/pipelines/test_sufficient.py holds them to the figures of the
rows read whole).

Every shard file `shard-<start>.parquet` has its table `shard-<start>.parquet.stats` beside
it, written with it (services.shard).  A shard without one (written before shards had
them), or whose table cannot be trusted (damaged: a page checksum fails; stale: it describes
a shard of other bytes), has its table computed once from its rows and cached; a shard
whose rows cannot be read either is named (DamagedShard), never left out silently.  The
merge is incremental (statistics): a look after new shards are written reads only theirs.
"""
from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from pipelines.dataset import (CELL, GameFacts, UnsoundData, _local, catalogue_facts,
                               game_facts, scan, verify)
from pipelines.folder import FACTS_KEY, filesystem, shard_infos
from pipelines.shard_tables import (KEYS, ROTATED, SEP, SHARE_SCALE, STATS_VERSION,
                                    breakdown_what, game_span, read_stored, shard_table,
                                    value_scale)


class DamagedShard(ValueError):
    """A shard whose rows cannot be read (and has no sound statistics table)."""


def empty_statistics() -> pl.DataFrame:
    return pl.DataFrame(schema={"arm": pl.String, "players": pl.Int8, "scope": pl.String,
                                "what": pl.String, "key": pl.String, "n": pl.Int64})


def _kind_columns(df: pl.DataFrame) -> list[str]:
    return sorted((c for c in df.columns if c[0] == "k" and c[1:].isdigit()),
                  key=lambda c: int(c[1:]))


def merge(tables: list[pl.DataFrame]) -> pl.DataFrame:
    """The statistics of several sets of rows as one table: counts and sums added (exact:
    integers, summed as Int128), in a fixed order."""
    tables = [t for t in tables if t.height]
    if not tables:
        return empty_statistics()
    df = pl.concat(tables, how="diagonal_relaxed")
    kinds = _kind_columns(df)
    sums = [c for c in df.columns if c not in KEYS and c not in kinds]
    return (df.group_by(*KEYS, *kinds).agg(pl.col(sums).cast(pl.Int128).sum())
            .sort(*KEYS, *kinds, nulls_last=True))


# ---- the table beside its shard ----------------------------------------------------------
def _stored(fs: pafs.FileSystem, shard: pafs.FileInfo, stats: pafs.FileInfo | None
            ) -> tuple[pl.DataFrame, dict, list | None] | None:
    """(table, facts, game_index span) of the statistics table `stats` stored beside `shard`, or None when
    there is none or it cannot be trusted: damaged (shard_tables.read_stored), of another
    version, or stale (it describes a shard of other bytes, or the shard was written again
    after it: a replay)."""
    if stats is None or stats.mtime_ns < shard.mtime_ns:
        return None
    try:
        with fs.open_input_file(stats.path) as f:
            table, described = read_stored(f.read())
    except (OSError, ValueError):
        return None
    if (described.get("version") != STATS_VERSION
            or described.get("shard_bytes") != shard.size):
        return None
    return pl.from_arrow(table), described.get("facts"), described.get("game_index")


# ---- an experiment's statistics: the stored tables merged ------------------------------------
@dataclass
class Statistics:
    table: pl.DataFrame  # merge() of every shard's table
    games: dict[str, GameFacts]  # the facts of every game of the rows

    @property
    def cooperative(self) -> bool:
        return any(g.cooperative for g in self.games.values())

    @property
    def deals(self) -> bool:
        """Pairing 'rotations': the deal is the unit."""
        units = self.table.filter(what="unit")
        return bool(units.height) and bool((units["g"] > units["n"]).any())


_TABLES: dict[tuple, tuple] = {}  # (path, size, mtime) -> (table, facts, game_index span)
_MERGED: dict[str, tuple[frozenset, Statistics]] = {}  # experiment root -> its last merge
MAX_TABLES = 200_000


def _read_rows(fs: pafs.FileSystem, base: str, info: pafs.FileInfo) -> pa.Table:
    """A shard's rows, their page checksums verified; DamagedShard naming it when they
    cannot be read."""
    try:
        return pq.read_table(info.path, filesystem=fs, page_checksum_verification=True)
    except (OSError, ValueError, pa.ArrowException) as e:
        raise DamagedShard(f"shard {posixpath.relpath(info.path, base)} cannot be read "
                           f"({e}) and has no sound statistics table: play it again "
                           "(resume the experiment)") from e


def _from_rows(fs: pafs.FileSystem, base: str, info: pafs.FileInfo
               ) -> tuple[pl.DataFrame, dict, list | None]:
    """A shard's table computed from its rows (a shard written before shards had tables, or
    whose table is damaged or stale), its page checksums verified."""
    rows = _read_rows(fs, base, info)
    facts = _row_facts(rows)
    return (pl.from_arrow(shard_table(rows, facts.get("safety_end_reasons", ()))), facts,
            game_span(rows))


def _row_facts(rows: pa.Table) -> dict:
    """The game's facts a shard's rows carry (or, written before they did, the
    catalogue's)."""
    metadata = rows.schema.metadata or {}
    if FACTS_KEY in metadata:
        return json.loads(metadata[FACTS_KEY])
    names = sorted(set(rows.column("game").to_pylist())) if rows.num_rows else []
    known = catalogue_facts()
    return {"game": names[0] if names else "",
            "cooperative": any(known[n].cooperative for n in names if n in known),
            "safety_end_reasons": sorted({r for n in names if n in known
                                          for r in known[n].safety_end_reasons})}


def _shard_table(fs: pafs.FileSystem, base: str, shard: pafs.FileInfo,
                 stats: pafs.FileInfo | None) -> tuple[pl.DataFrame, dict, list | None]:
    key = (shard.path, shard.size, shard.mtime_ns)
    if key not in _TABLES:
        if len(_TABLES) >= MAX_TABLES:
            _TABLES.clear()
        _TABLES[key] = _stored(fs, shard, stats) or _from_rows(fs, base, shard)
    return _TABLES[key]


def _facts_of(found: list[dict]) -> dict[str, GameFacts]:
    games: dict[str, GameFacts] = {}
    for facts in found:
        if facts and facts.get("game"):
            mine = GameFacts.from_json(facts)
            games[facts["game"]] = games[facts["game"]].merged(mine) \
                if facts["game"] in games else mine
    return games


def _sound_shards(path: str) -> tuple[pafs.FileSystem, str, list]:
    """(filesystem, base, [(shard, its statistics table or None)]) of the experiment's
    shards: with a manifest (a finished experiment) only those that verify against it, as
    in every figure (pipelines.dataset.verify: a shard whose table is damaged is named
    there).  FileNotFoundError when no shard is written yet."""
    path = _local(path)
    fs, base = filesystem(path)
    infos = shard_infos(fs, base)
    # a finished experiment: only the shards that verify count (their tables are read)
    integrity = verify(path, rows=False)
    if integrity.sound is not None:
        if not integrity.sound:
            raise UnsoundData(integrity)
        sound = {s.split("://")[-1] for s in integrity.sound}
        infos = [(shard, stats) for shard, stats in infos if shard.path in sound]
    if not infos:
        raise FileNotFoundError(f"no result files under {path}")
    return fs, base, infos


def _shard_id(shard: pafs.FileInfo) -> tuple:
    return shard.path, shard.size, shard.mtime_ns


def statistics(path: str) -> Statistics:
    """The merged statistics of an experiment's shards (_sound_shards): each shard's stored
    table (or, where it has none or it cannot be trusted, the table computed once from its
    rows and cached), merged incrementally: a look after new shards are written reads only
    those.  DamagedShard naming a shard that cannot be read and has no sound table."""
    fs, base, infos = _sound_shards(path)
    ids = {_shard_id(shard): (shard, stats) for shard, stats in infos}
    seen, before = _MERGED.get(base, (frozenset(), None))
    if before is None or not seen <= ids.keys():
        seen, before = frozenset(), Statistics(empty_statistics(), {})
    new = [_shard_table(fs, base, *ids[k]) for k in sorted(ids.keys() - seen)]
    merged = Statistics(merge([before.table, *(t for t, *_ in new)]),
                        _facts_of([*({"game": g, "cooperative": f.cooperative,
                                      "safety_end_reasons": list(f.safety_end_reasons)}
                                     for g, f in before.games.items()),
                                   *(f for _, f, _ in new)]))
    _MERGED[base] = (frozenset(ids), merged)
    return merged


def statistics_from_rows(path: str, breakdowns=None) -> Statistics:
    """The same statistics computed from every row of the dataset at once (no stored table,
    no shard boundary): the reference the stored tables are tested against (`breakdowns`:
    (column, team) pairs, stored_breakdowns by default; numbers keyed as strings)."""
    lf = scan(path)
    names = lf.select(pl.col("game").unique()).collect()["game"].to_list()
    games = game_facts(path, names)
    safeties = sorted({r for g in games.values() for r in g.safety_end_reasons})
    rows = lf.collect().to_arrow()
    for by, _team in breakdowns or ():
        rows = _as_strings(rows, by)
    return Statistics(merge([pl.from_arrow(shard_table(rows, safeties, breakdowns))]), games)


# ---- the figures' inputs, from the merged table (exact: Python integers, one division) -------
def _scope(include_truncated: bool) -> str:
    return "all" if include_truncated else "kept"


def _cell_rows(table: pl.DataFrame, what: str, scope: str) -> dict[tuple, pl.DataFrame]:
    part = table.filter(what=what, scope=scope)
    return {(arm, int(players)): df for (arm, players), df in
            part.partition_by(CELL, as_dict=True, maintain_order=True).items()}


def _ratio(num: int, den: int) -> float:
    return num / den if den else float("nan")


def _unit_sums(units: pl.DataFrame, players: int) -> dict:
    """N, G and per seat the share sums (S, Q: of share x SHARE_SCALE x unit games) and the
    score sums (T, U: of the unit's score sum and its square), as Python integers."""
    n = units["n"].cast(pl.Int128)
    out = {"N": int(n.sum()), "G": int(units["g"].sum()), "S": [], "Q": [], "T": [], "U": []}
    for i in range(players):
        k = units[f"k{i}"].cast(pl.Int128)
        out["S"].append(int((n * k).sum()))
        out["Q"].append(int((n * k * k).sum()))
        out["T"].append(int(units[f"s{i}"].sum()))
        out["U"].append(int(units[f"q{i}"].sum()))
    out["ug"] = out["G"] // max(out["N"], 1) or 1
    return out


def _share_moments(s: dict, i: int) -> tuple[float, float]:
    """Seat i's mean win share over the units and its population variance."""
    n, d = s["N"], SHARE_SCALE * s["ug"]
    return _ratio(s["S"][i], n * d), _ratio(n * s["Q"][i] - s["S"][i] ** 2, n * n * d * d)


def seat_frame(stats: Statistics, include_truncated: bool) -> pl.DataFrame:
    """Per (arm, players, seat): agent, units, games, wins, win_share, share_var,
    score_mean, score_sd (ddof 1) over the units."""
    rows = []
    for (arm, players), units in _cell_rows(stats.table, "unit", _scope(include_truncated)
                                            ).items():
        units = units.filter(pl.col("n") > 0)
        s = _unit_sums(units, players)
        n, ug = s["N"], s["ug"]
        seatings = [key.split(SEP) for key in units["key"].unique().to_list()]
        for i in range(players):
            agents = {seating[i] for seating in seatings}
            share, var = _share_moments(s, i)
            sd = (float(np.sqrt(_ratio(n * s["U"][i] - s["T"][i] ** 2, n * (n - 1) * ug * ug)))
                  if n > 1 else None)
            rows.append({"arm": arm, "players": players, "seat": i,
                         "agent": agents.pop() if len(agents) == 1 else ROTATED,
                         "units": n, "games": s["G"], "wins": s["S"][i] / SHARE_SCALE,
                         "win_share": share, "share_var": var,
                         "score_mean": _ratio(s["T"][i], n * ug), "score_sd": sd})
    return pl.DataFrame(rows, schema=SEAT_SCHEMA, orient="row").sort("arm", "players", "seat")


SEAT_SCHEMA = {"arm": pl.String, "players": pl.Int8, "seat": pl.Int8, "agent": pl.String,
               "units": pl.Int64, "games": pl.Int64, "wins": pl.Float64,
               "win_share": pl.Float64, "share_var": pl.Float64, "score_mean": pl.Float64,
               "score_sd": pl.Float64}


def _nearest_quantile(values: list[int], counts: list[int], q: float) -> float:
    """Polars' 'nearest' quantile of the values repeated counts times: the value at
    rank round((n - 1) q)."""
    order = np.argsort(values)
    values, cum = np.asarray(values)[order], np.cumsum(np.asarray(counts)[order])
    rank = int(np.floor((cum[-1] - 1) * q + 0.5))
    return float(values[np.searchsorted(cum, rank + 1)])


def cell_frame(stats: Statistics, include_truncated: bool) -> pl.DataFrame:
    """Per (arm, players): games, tie_rate, no_winner_share, margin_mean, length_mean and
    p10/p50/p90 over the figures' games; units, unit_games, team_win_rate, team_var over
    the units; truncated, truncated_share, engine_version over every game."""
    scope = _scope(include_truncated)
    table = stats.table
    kept = {what: _cell_rows(table, what, scope) for what in ("game", "length", "unit")}
    every = {what: _cell_rows(table, what, "all") for what in ("game", "engine")}
    untruncated = _cell_rows(table, "game", "kept")
    rows = []
    for cell in sorted(every["game"]):
        total = int(every["game"][cell]["n"].sum())
        truncated = total - (int(untruncated[cell]["n"].sum()) if cell in untruncated else 0)
        game = kept["game"].get(cell)
        games = int(game["n"].sum()) if game is not None else 0
        out = {"arm": cell[0], "players": cell[1], "games": games, "truncated": truncated,
               "truncated_share": truncated / total,
               "engine_version": ", ".join(sorted(every["engine"][cell]["key"].to_list()))}
        if games:
            lengths = kept["length"][cell]
            values, counts = [int(v) for v in lengths["key"]], lengths["n"].to_list()
            out.update(tie_rate=int(game["tie"].sum()) / games,
                       no_winner_share=int(game["nowin"].sum()) / games,
                       margin_mean=_ratio(int(game["margin"].sum()), int(game["margin_n"].sum())),
                       length_mean=sum(v * c for v, c in zip(values, counts)) / games,
                       **{f"length_p{q}": _nearest_quantile(values, counts, q / 100)
                          for q in (10, 50, 90)})
        units = kept["unit"].get(cell)
        if units is not None and units["n"].sum():
            s = _unit_sums(units, 1)
            rate, var = _share_moments(s, 0)
            out.update(units=s["N"], unit_games=s["ug"], team_win_rate=rate, team_var=var)
        rows.append(out)
    return pl.DataFrame(rows, schema=CELL_SCHEMA, orient="row").with_columns(
        pl.col("games", "units").fill_null(0), pl.col("unit_games").fill_null(1))


CELL_SCHEMA = {"arm": pl.String, "players": pl.Int8, "truncated": pl.Int64,
               "truncated_share": pl.Float64, "engine_version": pl.String, "games": pl.Int64,
               "tie_rate": pl.Float64, "no_winner_share": pl.Float64,
               "margin_mean": pl.Float64, "length_mean": pl.Float64, "length_p10": pl.Float64,
               "length_p50": pl.Float64, "length_p90": pl.Float64, "units": pl.Int64,
               "unit_games": pl.Int64, "team_win_rate": pl.Float64, "team_var": pl.Float64}


def end_reason_frame(stats: Statistics) -> pl.DataFrame:
    """Per (arm, players, end_reason): games and share of the cell's games (every game)."""
    ends = stats.table.filter(what="end", scope="all")
    return (ends.select(*CELL, end_reason="key", games=pl.col("n").cast(pl.Int64))
            .with_columns(share=pl.col("games") / pl.col("games").sum().over(CELL))
            .sort(*CELL, "end_reason"))


def team_frame(stats: Statistics, include_truncated: bool) -> pl.DataFrame:
    """Per (arm, players): the teams of agents that played, sorted and joined ', '."""
    teams = stats.table.filter(what="team", scope=_scope(include_truncated))
    return (teams.group_by(CELL).agg(agent=pl.col("key").unique().sort().str.join(", "))
            .sort(CELL))


def share_kinds(stats: Statistics, include_truncated: bool) -> dict[tuple, tuple]:
    """(arm, players) -> (distinct share vectors of the units, their seatings, their counts):
    the seat-balance test's input (stats.seat_balance_test with counts)."""
    out = {}
    for cell, units in _cell_rows(stats.table, "unit", _scope(include_truncated)).items():
        units = units.filter(pl.col("n") > 0)
        kinds = units.select(f"k{i}" for i in range(cell[1])).to_numpy().astype(np.float64)
        scale = SHARE_SCALE * (int(units["g"].sum()) // max(int(units["n"].sum()), 1) or 1)
        out[cell] = (kinds / scale, units["key"].to_numpy(), units["n"].cast(pl.Int64).to_numpy())
    return out


# ---- per value of an outcome column (breakdown, agent_summary) -------------------------------
_VALUES: dict[tuple, pl.DataFrame] = {}  # (shard id, column, team) -> its breakdown's rows


def _schema(fs: pafs.FileSystem, base: str, infos) -> pa.Schema:
    """The rows' schema, from the first shard whose footer reads (every shard of an
    experiment has the same)."""
    for shard, _stats in infos:
        try:
            return pq.read_schema(shard.path, filesystem=fs)
        except (OSError, ValueError, pa.ArrowException):
            continue
    _read_rows(fs, base, infos[0][0])  # names it
    raise DamagedShard(f"no shard of {base} can be read")


def _as_strings(rows: pa.Table, by: str) -> pa.Table:
    """`rows` with column `by` as strings (a seat column: lists of strings), as Polars
    writes numbers (1.0, 48.0): the values a breakdown is keyed by."""
    column = pl.from_arrow(rows.select([by])).to_series()
    column = column.cast(pl.List(pl.String) if column.dtype == pl.List else pl.String)
    return rows.set_column(rows.schema.get_field_index(by), by, column.to_arrow())


def _value_rows(fs, base: str, shard: pafs.FileInfo, facts: dict, by: str, team: bool
                ) -> pl.DataFrame:
    """A breakdown no statistics table holds (a column of numbers): computed from the
    shard's rows once and cached."""
    key = (_shard_id(shard), by, team)
    if key not in _VALUES:
        if len(_VALUES) >= MAX_TABLES:
            _VALUES.clear()
        rows = _as_strings(_read_rows(fs, base, shard), by)
        _VALUES[key] = pl.from_arrow(shard_table(rows, facts.get("safety_end_reasons", ()),
                                                 [(by, team)], summary=False))
    return _VALUES[key]


def breakdown_statistics(path: str, by: str, team: bool) -> Statistics:
    """The merged rows of the breakdown by column `by` (team: by the seats' values sorted
    and joined): from the statistics tables where they hold it (stored_breakdowns: the
    labels), else from each shard's rows once (a streamed pass, cached per shard).
    ValueError naming the column when the rows have no such column, or team=True for a
    column that is not a seat's."""
    stats = statistics(path)
    stored = stats.table.filter(what=breakdown_what(by, team))
    if stored.height:
        return Statistics(stored, stats.games)
    fs, base, infos = _sound_shards(path)
    schema = _schema(fs, base, infos)
    if by not in schema.names:
        raise ValueError(f"no outcome column {by!r}; columns: {sorted(schema.names)}")
    if team and not (pa.types.is_list(schema.field(by).type)
                     or pa.types.is_large_list(schema.field(by).type)):
        raise ValueError(f"team=True needs a per-seat column (seat_*), not {by!r}")
    tables = [_value_rows(fs, base, shard, _shard_table(fs, base, shard, table)[1], by, team)
              for shard, table in infos]
    return Statistics(merge(tables), stats.games)


def value_frame(stats: Statistics, by: str, team: bool, include_truncated: bool
                ) -> pl.DataFrame:
    """Per (arm, players, value): games (units holding the value), seat_games, win_rate,
    share_var (population) and score_mean over those units, game_share of the cell's."""
    rows = []
    what = breakdown_what(by, team)
    for (arm, players), part in _cell_rows(stats.table, what, _scope(include_truncated)
                                           ).items():
        scale = value_scale(players)
        for (value,), units in part.partition_by("key", as_dict=True,
                                                 maintain_order=True).items():
            n, k = units["n"].cast(pl.Int128), units["k0"].cast(pl.Int128)
            count, total, squares = int(n.sum()), int((n * k).sum()), int((n * k * k).sum())
            d = SHARE_SCALE * scale
            rows.append({"arm": arm, "players": players, "value": value, "games": count,
                         "seat_games": int(units["seats"].sum()),
                         "win_rate": _ratio(total, count * d),
                         "share_var": _ratio(count * squares - total ** 2, count ** 2 * d * d),
                         "score_mean": _ratio(int(units["t"].sum()), count * scale)})
    return (pl.DataFrame(rows, schema=VALUE_SCHEMA, orient="row")
            .with_columns(game_share=pl.col("games") / pl.col("games").sum().over(CELL))
            .sort(*CELL, "value"))


VALUE_SCHEMA = {"arm": pl.String, "players": pl.Int8, "value": pl.String, "games": pl.UInt32,
                "seat_games": pl.UInt32, "win_rate": pl.Float64, "share_var": pl.Float64,
                "score_mean": pl.Float64}
