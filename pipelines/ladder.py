"""Verdicts per agent strength: the strength ladder and head-to-head ratings.

A ladder experiment (spec option `ladder`) plays every cell once per rung, all seats the same
agent; its arms are named `<arm>@<agent>` (agent strings never hold '@').  `ladder_summary`
gives per rung the seat win shares with their intervals and the seat advantage (share minus the
cell's mean share per seat, 1/players in a competitive game); `ladder_verdicts` says per cell
whether the seat verdict is stable between the two strongest rungs: every seat's advantage
agrees within the 95% interval of its difference.

`ratings` fits a Bradley-Terry model to one experiment whose seats hold different agents
(rotated, so that seat effects cancel): every pair of seats with different agents in a game
is one comparison (the higher win share wins, then the higher score; a full tie counts
half), so two losers of a three-player game are still ranked by their scores.  Ratings are on the
Elo scale with 95% intervals from the Fisher information, the first agent (sorted) at 0.
Pairs from one game of three or more players are not independent, so those intervals are a
little narrow.
"""
from __future__ import annotations

import numpy as np
import polars as pl
from scipy.optimize import minimize

import pipelines
from pipelines.stats import Z95

RUNG_SEPARATOR = "@"  # as services.spec.ladder_arm writes it
ELO_PER_LOGIT = 400.0 / np.log(10.0)
PRIOR_SD = 4.0  # logits (about 700 Elo): a weak normal prior on each rating against the first
# agent's, so the fit stays finite when an agent wins or loses every comparison


def split_arm(arm: str) -> tuple[str, str]:
    """(base arm, rung agent) of a ladder arm name '<arm>@<agent>'."""
    base, _, agent = arm.rpartition(RUNG_SEPARATOR)
    return base, agent


def ladder_summary(path: str, rungs: list[str]) -> pl.DataFrame:
    """Per (base arm, players, rung, seat): the rung's index in `rungs` (weakest first), games,
    win share with its 95% interval, and the seat advantage."""
    seats = pipelines.seat_summary(path)
    parts = [split_arm(a) for a in seats["arm"].to_list()]
    order = {agent: i for i, agent in enumerate(rungs)}
    seats = (seats.with_columns(base=pl.Series([p[0] for p in parts], dtype=pl.String),
                                rung=pl.Series([p[1] for p in parts], dtype=pl.String))
             .filter(pl.col("rung").is_in(list(order)))
             .with_columns(level=pl.col("rung").replace_strict(order, return_dtype=pl.Int32)))
    return (seats.with_columns(advantage=pl.col("win_share")
                               - pl.col("win_share").mean().over("arm", "players"))
            .select("base", "players", "level", "rung", "seat", "games", "win_share", "win_lo",
                    "win_hi", "advantage")
            .sort("base", "players", "level", "seat"))


def ladder_verdicts(path: str, rungs: list[str]) -> pl.DataFrame:
    """Per (base arm, players): the two strongest rungs played, the largest change of a seat's
    advantage between them with its 95% half-width, and `stable` (every seat's change lies
    within its interval).  Independent games per rung: the variance of a difference is the sum
    of the two binomial variances."""
    table = ladder_summary(path, rungs)
    rows = []
    for (base, players), cell in table.group_by("base", "players", maintain_order=True):
        levels = sorted(set(cell["level"].to_list()))
        if len(levels) < 2:
            continue
        top, second = (cell.filter(pl.col("level") == lv).sort("seat") for lv in levels[:-3:-1])
        change = top["advantage"].to_numpy() - second["advantage"].to_numpy()
        variance = sum(t["win_share"].to_numpy() * (1 - t["win_share"].to_numpy())
                       / t["games"].to_numpy() for t in (top, second))
        half = Z95 * np.sqrt(variance)
        worst = int(np.argmax(np.abs(change) - half))
        rows.append({"base": base, "players": players, "strongest": top["rung"][0],
                     "second": second["rung"][0], "seat": worst,
                     "change": float(change[worst]), "half_width": float(half[worst]),
                     "stable": bool(np.all(np.abs(change) <= half))})
    schema = {"base": pl.String, "players": pl.Int64, "strongest": pl.String,
              "second": pl.String, "seat": pl.Int64, "change": pl.Float64,
              "half_width": pl.Float64, "stable": pl.Boolean}
    return pl.DataFrame(rows, schema=schema)


# ---- head-to-head ratings ------------------------------------------------------------------
def pairwise(path: str) -> pl.DataFrame:
    """Per (arm, players, agent a, agent b), a < b: comparisons and a's wins (by win share,
    then score; full ties half)."""
    seats = (pipelines.scan(path).select("arm", "players", "game_index", agent="seat_agent",
                                         share="seat_win_share", score="seat_score")
             .with_columns(seat=pl.int_ranges(0, pl.col("share").list.len()))
             .explode("seat", "agent", "share", "score"))
    pairs = (seats.join(seats, on=["arm", "players", "game_index"], suffix="_b")
             .filter(pl.col("agent") < pl.col("agent_b"))
             .with_columns(win=pl.when(pl.col("share") != pl.col("share_b"))
                           .then((pl.col("share") > pl.col("share_b")).cast(pl.Float64))
                           .when(pl.col("score") != pl.col("score_b"))
                           .then((pl.col("score") > pl.col("score_b")).cast(pl.Float64))
                           .otherwise(0.5)))
    return (pairs.group_by("arm", "players", a="agent", b="agent_b")
            .agg(games=pl.len(), wins=pl.col("win").sum())
            .sort("arm", "players", "a", "b").collect())


def _bradley_terry(agents: list[str], a: np.ndarray, b: np.ndarray, games: np.ndarray,
                   wins: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Strengths (logits, agents[0] fixed at 0) and their standard errors."""
    k = len(agents)

    def full(free):
        return np.concatenate([[0.0], free])

    def nll(free):
        theta = full(free)
        d = theta[a] - theta[b]
        return -np.sum(wins * d - games * np.logaddexp(0.0, d)) + free @ free / (2 * PRIOR_SD ** 2)

    def grad(free):
        theta = full(free)
        p = 1.0 / (1.0 + np.exp(-(theta[a] - theta[b])))
        g = np.zeros(k)
        np.add.at(g, a, -(wins - games * p))
        np.add.at(g, b, wins - games * p)
        return g[1:] + free / PRIOR_SD ** 2

    fit = minimize(nll, np.zeros(k - 1), jac=grad, method="BFGS")
    theta = full(fit.x)
    p = 1.0 / (1.0 + np.exp(-(theta[a] - theta[b])))
    info = np.zeros((k, k))
    w = games * p * (1 - p)
    np.add.at(info, (a, a), w)
    np.add.at(info, (b, b), w)
    np.add.at(info, (a, b), -w)
    np.add.at(info, (b, a), -w)
    info[1:, 1:] += np.eye(k - 1) / PRIOR_SD ** 2
    try:
        cov = np.linalg.inv(info[1:, 1:])
        se = np.concatenate([[0.0], np.sqrt(np.clip(np.diag(cov), 0, None))])
    except np.linalg.LinAlgError:   # an agent never met the others: no interval
        se = np.full(k, np.inf)
    return theta, se


def _separated(agent: str, won: float, played: float) -> str | None:
    """'not estimable: ...' for an agent that won or lost every comparison (complete
    separation: its maximum-likelihood rating is infinite, and any finite figure would be the
    prior's), else None."""
    if played and won >= played:
        return f"not estimable: {agent} won every comparison"
    if played and won <= 0:
        return f"not estimable: {agent} lost every comparison"
    return None


def ratings(path: str) -> pl.DataFrame:
    """Per (arm, players, agent): Bradley-Terry rating on the Elo scale with its 95% interval
    (a weak normal prior of PRIOR_SD logits keeps the fit finite), comparisons and win share
    against the other agents.  An agent that won or lost every comparison has no rating (elo
    null) and a `note` saying so ('not estimable: X won every comparison')."""
    table = pairwise(path)
    rows = []
    for (arm, players), cell in table.group_by("arm", "players", maintain_order=True):
        agents = sorted(set(cell["a"].to_list()) | set(cell["b"].to_list()))
        index = {name: i for i, name in enumerate(agents)}
        a = np.array([index[x] for x in cell["a"].to_list()])
        b = np.array([index[x] for x in cell["b"].to_list()])
        games = cell["games"].to_numpy().astype(float)
        wins = cell["wins"].to_numpy()
        theta, se = _bradley_terry(agents, a, b, games, wins)
        for i, name in enumerate(agents):
            played = games[(a == i) | (b == i)].sum()
            won = wins[a == i].sum() + (games - wins)[b == i].sum()
            note = _separated(name, won, played)
            scale = None if note else ELO_PER_LOGIT
            rows.append({"arm": arm, "players": players, "agent": name,
                         "elo": scale and scale * theta[i],
                         "elo_lo": scale and scale * (theta[i] - Z95 * se[i]),
                         "elo_hi": scale and scale * (theta[i] + Z95 * se[i]),
                         "comparisons": int(played), "share": won / played, "note": note})
    schema = {"arm": pl.String, "players": pl.Int64, "agent": pl.String, "elo": pl.Float64,
              "elo_lo": pl.Float64, "elo_hi": pl.Float64, "comparisons": pl.Int64,
              "share": pl.Float64, "note": pl.String}
    return pl.DataFrame(rows, schema=schema).sort("arm", "players", "elo", descending=[False, False, True])
