"""Reading an experiment's dataset: the scan, the rows the figures use (truncated games
left out), the units (a game, or with pairing 'rotations' a complete deal), and the facts about
the game the figures need (cooperative, its safety end reasons), which every file carries in
its Parquet schema metadata: never from an engine import."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow.fs as pafs
import pyarrow.parquet as pq

CELL = ["arm", "players"]
SEAT = ["arm", "players", "seat"]
# The schema metadata key under which every shard file carries its game's facts (JSON; the
# writer is core_cy.play.schema.facts_metadata, which a test holds to this key).
FACTS_KEY = b"meeplelab.game_facts"
# The facts of the catalogue's games for datasets written before shards carried them: data,
# so that reading an old dataset imports no engine (a test holds it to the catalogue).
CATALOGUE_FACTS = Path(__file__).with_name("catalogue_facts.json")


@dataclass(frozen=True)
class GameFacts:
    """What the figures need to know about a game beyond its rows: whether it is cooperative
    (one team result per game) and which end reasons are simulator safeties (truncated games,
    left out of the figures)."""

    cooperative: bool = False
    safety_end_reasons: tuple[str, ...] = ()

    @classmethod
    def from_json(cls, data: dict) -> "GameFacts":
        return cls(bool(data["cooperative"]), tuple(data["safety_end_reasons"]))

    def merged(self, other: "GameFacts") -> "GameFacts":
        return GameFacts(self.cooperative or other.cooperative,
                         tuple(sorted({*self.safety_end_reasons, *other.safety_end_reasons})))


UNKNOWN_GAME = GameFacts()  # a game nobody describes: competitive, no safeties


# ---- reading -----------------------------------------------------------------------------
def scan(path: str) -> pl.LazyFrame:
    """A lazy scan of every shard of an experiment (a local folder or a URI such as
    s3://bucket/results/<id>).  FileNotFoundError when no shard is written yet."""
    path = _local(path)
    if "://" not in path:
        import glob
        if not glob.glob(f"{path}/**/*.parquet", recursive=True):
            raise FileNotFoundError(f"no result files under {path}")
    return pl.scan_parquet(f"{path}/**/*.parquet", hive_partitioning=False)


def _local(path) -> str:
    path = str(path).rstrip("/")
    return path[len("file://"):] if path.startswith("file://") else path


_FOOTERS: dict[tuple, dict | None] = {}  # (path, size, mtime) -> the facts a file carries
MAX_FOOTERS = 200_000


def _file_facts(fs: pafs.FileSystem, info: pafs.FileInfo) -> dict | None:
    """The facts one file carries (None: a file written before files carried them); a
    written shard never changes, so each is read once."""
    key = (info.path, info.size, info.mtime_ns)
    if key not in _FOOTERS:
        if len(_FOOTERS) >= MAX_FOOTERS:
            _FOOTERS.clear()
        metadata = pq.read_schema(info.path, filesystem=fs).metadata or {}
        _FOOTERS[key] = json.loads(metadata[FACTS_KEY]) if FACTS_KEY in metadata else None
    return _FOOTERS[key]


def stored_facts(path: str) -> dict[str, GameFacts]:
    """Game name -> its facts, as the dataset's files carry them (FACTS_KEY)."""
    path = _local(path)
    fs, base = (pafs.FileSystem.from_uri(path) if "://" in path
                else (pafs.LocalFileSystem(), os.path.abspath(path)))
    found: dict[str, GameFacts] = {}
    for info in fs.get_file_info(pafs.FileSelector(base, recursive=True, allow_not_found=True)):
        if (info.type != pafs.FileType.File or not info.base_name.endswith(".parquet")
                or info.base_name.startswith(".")):
            continue
        facts = _file_facts(fs, info)
        if facts is not None:
            mine = GameFacts.from_json(facts)
            found[facts["game"]] = found[facts["game"]].merged(mine) \
                if facts["game"] in found else mine
    return found


def catalogue_facts() -> dict[str, GameFacts]:
    """Game name -> its facts for datasets written before files carried them."""
    table = json.loads(CATALOGUE_FACTS.read_text())
    return {name: GameFacts.from_json(facts) for name, facts in table.items()}


def game_facts(path: str, names) -> dict[str, GameFacts]:
    """The facts of each game of `names` in the dataset at `path`: as its files carry them,
    else (a dataset written before files carried them) the catalogue's table, else
    UNKNOWN_GAME (competitive, no safeties)."""
    stored, old = stored_facts(path), None
    out = {}
    for name in names:
        if name not in stored and old is None:
            old = catalogue_facts()
        out[name] = stored.get(name) or old.get(name, UNKNOWN_GAME)
    return out


def _games_in(path: str, lf: pl.LazyFrame) -> list[GameFacts]:
    """The facts of every game named in the rows."""
    names = lf.select(pl.col("game").unique()).collect()["game"].to_list()
    return list(game_facts(path, names).values())


def _is_cooperative(games: list[GameFacts]) -> bool:
    return any(g.cooperative for g in games)


def _truncated(reasons) -> pl.Expr:
    """Whether a game ended at one of the end reasons `reasons` (a simulator safety)."""
    return pl.col("end_reason").cast(pl.String).is_in(sorted(set(reasons)))


@dataclass
class _Data:
    everything: pl.LazyFrame  # every row, truncated games included
    rows: pl.LazyFrame  # the rows the figures use
    cooperative: bool
    deals: bool  # pairing 'rotations': the deal is the unit
    units: pl.LazyFrame  # one row per unit (a game, or a complete deal), unit_games in it


def _complete_deals(lf: pl.LazyFrame) -> pl.LazyFrame:
    """The rows of deals played in every seat rotation (k games for k seats)."""
    return lf.filter(pl.len().over(*CELL, "deal") == pl.col("players").cast(pl.UInt32))


def _deal_units(lf: pl.LazyFrame) -> pl.LazyFrame:
    """One row per complete deal: seat shares and scores the means over its games (seat by
    seat), game_index the deal, seat_agent 'rotated' (each agent sat in every seat once)."""
    seats = (_complete_deals(lf)
             .select(*CELL, "deal", share=pl.col("seat_win_share").cast(pl.List(pl.Float64)),
                     score=pl.col("seat_score").cast(pl.List(pl.Float64)))
             .with_columns(seat=pl.int_ranges(0, pl.col("share").list.len()))
             .explode("seat", "share", "score")
             .group_by(*CELL, "deal", "seat").agg(pl.col("share").mean(),
                                                  pl.col("score").mean())
             .sort(*CELL, "deal", "seat"))
    return (seats.group_by(*CELL, "deal", maintain_order=True)
            .agg(seat_win_share="share", seat_score="score")
            .select(*CELL, game_index="deal", seat_agent=pl.col("seat_win_share").list.eval(
                        pl.lit("rotated")), seat_win_share="seat_win_share",
                    seat_score="seat_score", unit_games=pl.col("players").cast(pl.UInt32)))


def units(games: pl.LazyFrame | pl.DataFrame, safety_end_reasons=()
          ) -> pl.LazyFrame | pl.DataFrame:
    """The units the figures rest on, from rows of games (a frame of the results schema;
    the same kind of frame back), the one rule for the dataset, the plan's pilot and the
    balance search: games that ended at one of `safety_end_reasons` (truncated) left out;
    with a `deal` column (pairing 'rotations') one row per complete deal, its seat shares and
    scores the means over its games and game_index the deal; else one row per game.  Every
    unit has unit_games, the games it stands for."""
    rows = games.lazy().filter(~_truncated(safety_end_reasons))
    out = (_deal_units(rows) if "deal" in rows.collect_schema().names()
           else rows.with_columns(unit_games=pl.lit(1, pl.UInt32)))
    return out.collect() if isinstance(games, pl.DataFrame) else out


def _data(path: str, include_truncated: bool = False) -> _Data:
    lf = scan(path)
    games = _games_in(path, lf)
    safeties = sorted({r for g in games for r in g.safety_end_reasons})
    lf = lf.with_columns(truncated=_truncated(safeties))
    kept = lf if include_truncated else lf.filter(~pl.col("truncated"))
    deals = "deal" in lf.collect_schema().names()
    return _Data(lf, kept, _is_cooperative(games), deals, units(kept))


def results(path: str, include_truncated: bool = False) -> pl.LazyFrame:
    """The rows every figure uses: truncated games left out unless include_truncated."""
    return _data(path, include_truncated).rows


def _one_row_per_seat(lf: pl.LazyFrame) -> pl.LazyFrame:
    """(arm, players, game_index, seat, agent, score, share[, unit_games]): the list columns
    exploded."""
    return (lf.select(*CELL, "game_index", pl.col("^unit_games$"), agent="seat_agent",
                      score="seat_score", share="seat_win_share")
            .with_columns(seat=pl.int_ranges(0, pl.col("score").list.len(), dtype=pl.Int8))
            .explode("seat", "agent", "score", "share"))


def _agent_of_seat() -> pl.Expr:
    """The seat's agent, or "rotated" when the agent in that seat changes from game to game."""
    return (pl.when(pl.col("agent").n_unique() == 1).then(pl.col("agent").first())
            .otherwise(pl.lit("rotated")).alias("agent"))


def _team_share() -> pl.Expr:
    return pl.col("seat_win_share").cast(pl.List(pl.Float64)).list.first()


def _top_two_gap(scores: pl.Series) -> pl.Series:
    """Per game, best score minus second best (0 for a tie at the top).  Numpy partition on
    the flat list values: a per-row list sort in Polars is ~50x slower on a million games."""
    lengths = scores.list.len().to_numpy().astype(np.int64)
    flat = scores.explode().to_numpy()
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    gap = np.full(len(scores), np.nan)
    for width in np.unique(lengths):
        if width < 2:
            continue
        rows = np.flatnonzero(lengths == width)
        block = flat[starts[rows, None] + np.arange(width)]
        top = np.partition(block, width - 2, axis=1)
        gap[rows] = top[:, -1] - top[:, -2]
    return pl.Series(gap, dtype=pl.Float64)
