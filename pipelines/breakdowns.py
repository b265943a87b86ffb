"""Figures per value of an outcome column (breakdown) and per agent (agent_summary)."""
from __future__ import annotations

import polars as pl

from pipelines import sufficient as sf
from pipelines.dataset import CELL
from pipelines.figures import Look, _rate_columns


def _per_value(path: str, by: str, team: bool, include_truncated: bool, look: Look,
               stats: sf.Statistics | None) -> pl.DataFrame:
    """The breakdown's figures from the merged statistics tables (sufficient.value_frame;
    `stats`: sufficient.breakdown_statistics when already at hand)."""
    stats = sf.breakdown_statistics(path, by, team) if stats is None else stats
    df = sf.value_frame(stats, by, team, include_truncated)
    return _rate_columns(df, "win_rate", "share_var", "games", "win", look)


def breakdown(path: str, by: str, team: bool = False, include_truncated: bool = False,
              look: Look = Look(), stats: sf.Statistics | None = None) -> pl.DataFrame:
    """Per (arm, players, value of outcome column `by`): games in which the value occurs (each
    game once), their share of the cell's games, and the win rate with its 95% interval (in a
    cooperative game the team win rate; in a competitive game the mean win share of the seats
    holding the value).  `breakdown(path, "seat_adventurer", team=True)` gives the win rate
    per adventurer team, `breakdown(path, "seat_adventurer")` per adventurer taking part.
    With pairing 'rotations' the counts are deals (each deal once) and the rates their means."""
    df = _per_value(path, by, team, include_truncated, look, stats)
    return df.select(*CELL, "value", "games", "game_share", "win_rate", "win_lo", "win_hi")


def agent_summary(path: str, include_truncated: bool = False, look: Look = Look(),
                  stats: sf.Statistics | None = None) -> pl.DataFrame:
    """Per (arm, players, agent): games the agent took part in (each game once), seat-games,
    win share per seat it held with its 95% interval, and mean score (useful when seats hold
    different agents, e.g. with rotation: these are the agent effects, the seat test is
    stratified by them)."""
    df = _per_value(path, "seat_agent", False, include_truncated, look, stats).rename(
        {"value": "agent", "win_rate": "win_share"})
    return df.select(*CELL, "agent", "games", "seat_games", "win_share", "win_lo", "win_hi",
                     "score_mean")
