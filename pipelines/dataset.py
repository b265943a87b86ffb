"""Reading an experiment's dataset: the scan, the rows the figures use (truncated games
left out), the units (a game, or with pairing 'rotations' a complete deal), and the facts about
the game the figures need (cooperative, its safety end reasons), which come from the caller's
registered resolver, never from an engine import."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import polars as pl

CELL = ["arm", "players"]
SEAT = ["arm", "players", "seat"]


@dataclass(frozen=True)
class GameFacts:
    """What the figures need to know about a game beyond its rows: whether it is cooperative
    (one team result per game) and which end reasons are simulator safeties (truncated games,
    left out of the figures)."""

    cooperative: bool = False
    safety_end_reasons: tuple[str, ...] = ()


UNKNOWN_GAME = GameFacts()  # a game nobody describes: competitive, no safeties
_resolvers: list[Callable[[str], GameFacts | None]] = []


def register_game_facts(resolver: Callable[[str], GameFacts | None]) -> None:
    """Registers who tells the facts of a game by the name in its rows' `game` column (the
    services register the engines' catalogue, so pipelines never imports an engine)."""
    if resolver not in _resolvers:
        _resolvers.append(resolver)


def game_facts(name: str) -> GameFacts:
    """The facts of game `name`: from the latest registered resolver that knows it, else
    UNKNOWN_GAME."""
    for resolver in reversed(_resolvers):
        facts = resolver(name)
        if facts is not None:
            return facts
    return UNKNOWN_GAME


# ---- reading -----------------------------------------------------------------------------
def scan(path: str) -> pl.LazyFrame:
    """A lazy scan of every shard of an experiment (a local folder or a URI such as
    s3://bucket/results/<id>).  FileNotFoundError when no shard is written yet."""
    path = str(path).rstrip("/")
    if path.startswith("file://"):
        path = path[len("file://"):]
    if "://" not in path:
        import glob
        if not glob.glob(f"{path}/**/*.parquet", recursive=True):
            raise FileNotFoundError(f"no result files under {path}")
    return pl.scan_parquet(f"{path}/**/*.parquet", hive_partitioning=False)


def _games_in(lf: pl.LazyFrame) -> list[GameFacts]:
    """The facts of every game named in the rows."""
    names = lf.select(pl.col("game").unique()).collect()["game"].to_list()
    return [game_facts(name) for name in names]


def _is_cooperative(games: list[GameFacts]) -> bool:
    return any(g.cooperative for g in games)


def _truncated(games: list[GameFacts]) -> pl.Expr:
    reasons = sorted({r for g in games for r in g.safety_end_reasons})
    return pl.col("end_reason").cast(pl.String).is_in(reasons)

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


def _data(path: str, include_truncated: bool = False) -> _Data:
    lf = scan(path)
    games = _games_in(lf)
    lf = lf.with_columns(truncated=_truncated(games))
    kept = lf if include_truncated else lf.filter(~pl.col("truncated"))
    deals = "deal" in lf.collect_schema().names()
    units = _deal_units(kept) if deals else kept.with_columns(unit_games=pl.lit(1, pl.UInt32))
    return _Data(lf, kept, _is_cooperative(games), deals, units)


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


def _margin() -> pl.Expr:
    """Score of the first minus score of the second, per game."""
    return pl.col("seat_score").map_batches(_top_two_gap, return_dtype=pl.Float64,
                                            is_elementwise=True)
