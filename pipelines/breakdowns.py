"""Figures per value of an outcome column (breakdown) and per agent (agent_summary)."""
from __future__ import annotations

import polars as pl

from pipelines.dataset import CELL, _complete_deals, _data, _team_share
from pipelines.figures import Look, _rate_columns


# ---- per value of an outcome column: one unit per game -----------------------------------------
def _per_game_value(lf: pl.LazyFrame, by: str, team: bool) -> pl.LazyFrame:
    """(arm, players, game_index, value, share, score, seats): one row per game and value of
    outcome column `by`.  A game-level column as it is; a seat list column (seat_*) gives the
    game once per distinct value among its seats (share and score: the mean over the seats
    holding it), or with team=True once, keyed by the sorted values of all seats joined '+'."""
    schema = lf.collect_schema()
    if by not in schema:
        raise ValueError(f"no outcome column {by!r}; columns: {sorted(schema.names())}")
    is_list = isinstance(schema[by], (pl.List, pl.Array))
    if not is_list and team:
        raise ValueError(f"team=True needs a per-seat column (seat_*), not {by!r}")
    score = pl.col("seat_score").cast(pl.List(pl.Float64))
    if is_list and not team:
        return (lf.select(*CELL, "game_index", value=pl.col(by).cast(pl.List(pl.String)),
                          share=pl.col("seat_win_share").cast(pl.List(pl.Float64)),
                          score=score)
                .explode("value", "share", "score")
                .group_by(*CELL, "game_index", "value")
                .agg(pl.col("share").mean(), pl.col("score").mean(), seats=pl.len()))
    key = (pl.col(by).cast(pl.List(pl.String)).list.sort().list.join("+") if is_list
           else pl.col(by).cast(pl.String))
    return lf.select(*CELL, "game_index", value=key, share=_team_share(),
                     score=score.list.mean(), seats=pl.lit(1, pl.UInt32))


def _per_deal_value(lf: pl.LazyFrame, by: str, team: bool) -> pl.LazyFrame:
    """_per_game_value with the deal as the unit (pairing 'rotations'): per complete deal and
    value, the means over the deal's games holding it."""
    games = _complete_deals(lf)
    deal_of = games.select(*CELL, "game_index", "deal")
    return (_per_game_value(games, by, team).join(deal_of, on=[*CELL, "game_index"])
            .group_by(*CELL, "deal", "value")
            .agg(pl.col("share").mean(), pl.col("score").mean(), pl.col("seats").sum()))


def _per_value(path: str, by: str, team: bool, include_truncated: bool, look: Look
               ) -> pl.DataFrame:
    data = _data(path, include_truncated)
    lf = (_per_deal_value if data.deals else _per_game_value)(data.rows, by, team)
    df = (lf.group_by(*CELL, "value")
          .agg(games=pl.len(), seat_games=pl.col("seats").sum(),
               win_rate=pl.col("share").mean(), share_var=pl.col("share").var(ddof=0),
               score_mean=pl.col("score").mean())
          .with_columns(game_share=pl.col("games") / pl.col("games").sum().over(CELL))
          .sort(*CELL, "value").collect())
    return _rate_columns(df, "win_rate", "share_var", "games", "win", look)


def breakdown(path: str, by: str, team: bool = False, include_truncated: bool = False,
              look: Look = Look()) -> pl.DataFrame:
    """Per (arm, players, value of outcome column `by`): games in which the value occurs (each
    game once), their share of the cell's games, and the win rate with its 95% interval (in a
    cooperative game the team win rate; in a competitive game the mean win share of the seats
    holding the value).  `breakdown(path, "seat_adventurer", team=True)` gives the win rate
    per adventurer team, `breakdown(path, "seat_adventurer")` per adventurer taking part.
    With pairing 'rotations' the counts are deals (each deal once) and the rates their means."""
    df = _per_value(path, by, team, include_truncated, look)
    return df.select(*CELL, "value", "games", "game_share", "win_rate", "win_lo", "win_hi")


def agent_summary(path: str, include_truncated: bool = False, look: Look = Look()
                  ) -> pl.DataFrame:
    """Per (arm, players, agent): games the agent took part in (each game once), seat-games,
    win share per seat it held with its 95% interval, and mean score (useful when seats hold
    different agents, e.g. with rotation: these are the agent effects, the seat test is
    stratified by them)."""
    df = _per_value(path, "seat_agent", False, include_truncated, look).rename(
        {"value": "agent", "win_rate": "win_share"})
    return df.select(*CELL, "agent", "games", "seat_games", "win_share", "win_lo", "win_hi",
                     "score_mean")
