"""Verdicts per agent strength: the strength ladder and head-to-head ratings.

A ladder experiment (spec option `ladder`) plays every cell once per rung, all seats the same
agent; its arms are named `<arm>@<agent>` (agent strings never hold '@').  `ladder_summary`
gives per rung the seat win shares with their intervals and the seat advantage (share minus the
cell's mean share per seat, 1/players in a competitive game); `ladder_verdicts` says per cell
whether the seat advantages are stable between the two strongest rungs: every seat's advantage
agrees within the 95% interval of its difference.  `rung_agreement` says, from each rung's seat
answer and intervals at the run's level, whether each stronger rung agrees with the rung below
it: the same answer, both decided (AGREES); the stronger one undecided; or the stronger one
decides otherwise (REVERSES).

`ratings` fits a Bradley-Terry model to one experiment whose seats hold different agents
(rotated, so that seat effects cancel): every pair of seats with different agents in a game
is one comparison (the higher win share wins, then the higher score; a full tie counts
half), so two losers of a three-player game are still ranked by their scores.  Ratings are on the
Elo scale with 95% intervals from the Fisher information, within the largest group of agents
that are estimable together (estimable_groups), its first agent by name at 0 (`reference`).
Pairs from one game of three or more players are not independent, so those intervals are a
little narrow.
"""
from __future__ import annotations

import numpy as np
import polars as pl
from scipy.optimize import minimize
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

import pipelines
from pipelines.stats import Z95

RUNG_SEPARATOR = "@"  # as services.spec.ladder_arm writes it
ELO_PER_LOGIT = 400.0 / np.log(10.0)


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


AGREES, REVERSES = "agrees", "reverses"
STRONGER_UNDECIDED, WEAKER_UNDECIDED = "stronger undecided", "weaker undecided"


def _side(seat: dict, fair: float) -> int:
    """+1 when a seat's win-share interval lies above the fair share, -1 below, else 0."""
    return 1 if seat["win_lo"] > fair else -1 if seat["win_hi"] < fair else 0


def _agreement(weak: dict, strong: dict, seat: dict | None) -> str:
    """How the stronger rung's seat answer stands to the weaker's; `seat`: the stronger
    rung's row of the seat the weaker rung favours (None when it found the seats balanced)."""
    if weak["seat_answer"] == "undecided":
        return WEAKER_UNDECIDED
    if seat is not None and _side(seat, strong["fair_share"]) < 0:
        return REVERSES  # the favoured seat is shown below fair one rung up
    if strong["seat_answer"] == "undecided":
        return STRONGER_UNDECIDED
    if seat is None:
        return AGREES if strong["seat_answer"] == "balanced" else REVERSES
    same_seat = strong["best_seat"] == seat["seat"] or _side(seat, strong["fair_share"]) > 0
    return AGREES if strong["seat_answer"] == "unbalanced" and same_seat else REVERSES


def rung_agreement(cells: list[dict], seats: list[dict], rungs: list[str]) -> list[dict]:
    """Per (base arm, players) of a competitive game and each rung played with the next
    stronger rung played: `agreement` (AGREES: both decided, the same answer: the seats
    balanced at both, or the seat the weaker favours favoured again or its interval above the
    fair share; STRONGER_UNDECIDED; REVERSES: the stronger decides otherwise, or the favoured
    seat's interval lies below the fair share there; WEAKER_UNDECIDED: nothing to confirm),
    with both cells (`weaker_cell`, `stronger_cell`: cell_summary rows) and the weaker
    rung's favoured seat at both rungs (`weaker_seat`, `stronger_seat`: summary rows, None
    when it found the seats balanced or undecided).  `cells`, `seats`: the cell_summary and
    summary rows of one look, in the order the items are to be given."""
    rows: dict[tuple, dict] = {}
    for s in seats:
        rows[(s["arm"], s["players"], s["seat"])] = s
    played: dict[tuple, dict] = {}
    for c in cells:
        base, rung = split_arm(c["arm"])
        if rung in rungs and c["seat_answer"] is not None:
            played.setdefault((base, c["players"]), {})[rung] = c
    out = []
    for (base, players), by_rung in played.items():
        ordered = [r for r in rungs if r in by_rung]
        for weaker, stronger in zip(ordered, ordered[1:]):
            weak, strong = by_rung[weaker], by_rung[stronger]
            k = weak["best_seat"] if weak["seat_answer"] == "unbalanced" else None
            seat = None if k is None else rows.get((strong["arm"], players, k))
            out.append({"base": base, "players": players, "weaker": weaker,
                        "stronger": stronger, "agreement": _agreement(weak, strong, seat),
                        "weaker_cell": weak, "stronger_cell": strong,
                        "weaker_seat": None if k is None else rows.get((weak["arm"], players, k)),
                        "stronger_seat": seat})
    return out


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


def _bradley_terry(k: int, a: np.ndarray, b: np.ndarray, games: np.ndarray,
                   wins: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Maximum-likelihood strengths (logits, agent 0 fixed at 0) of k agents whose
    comparison graph is strongly connected (every agent beat and lost to the others, also
    through third agents: the likelihood then has a finite maximum), and their standard
    errors from the Fisher information."""
    def full(free):
        return np.concatenate([[0.0], free])

    def nll(free):
        d = full(free)[a] - full(free)[b]
        return -np.sum(wins * d - games * np.logaddexp(0.0, d))

    def grad(free):
        theta = full(free)
        p = 1.0 / (1.0 + np.exp(-(theta[a] - theta[b])))
        g = np.zeros(k)
        np.add.at(g, a, -(wins - games * p))
        np.add.at(g, b, wins - games * p)
        return g[1:]

    fit = minimize(nll, np.zeros(k - 1), jac=grad, method="BFGS")
    theta = full(fit.x)
    p = 1.0 / (1.0 + np.exp(-(theta[a] - theta[b])))
    info = np.zeros((k, k))
    w = games * p * (1 - p)
    np.add.at(info, (a, a), w)
    np.add.at(info, (b, b), w)
    np.add.at(info, (a, b), -w)
    np.add.at(info, (b, a), -w)
    cov = np.linalg.pinv(info[1:, 1:])
    return theta, np.concatenate([[0.0], np.sqrt(np.clip(np.diag(cov), 0, None))])


def estimable_groups(k: int, a: np.ndarray, b: np.ndarray, games: np.ndarray,
                     wins: np.ndarray) -> np.ndarray:
    """The group of each of k agents: the strongly connected components of the graph with an
    edge x -> y when x ever beat y (a full tie counts both ways).  Ratings are estimable
    within a group and not between groups: when one group won every comparison with another
    (separation), the likelihood grows without bound as their gap does (Zermelo 1929; Ford
    1957)."""
    beat = np.concatenate([a[wins > 0], b[games - wins > 0]])
    beaten = np.concatenate([b[wins > 0], a[games - wins > 0]])
    graph = csr_matrix((np.ones(len(beat)), (beat, beaten)), shape=(k, k))
    return connected_components(graph, directed=True, connection="strong")[1]


def _separated(agent: str, won: float, played: float, group: list[str]) -> str:
    """The note of an agent outside the rated group: why it has no rating."""
    if played and won >= played:
        return f"not estimable: {agent} won every comparison"
    if played and won <= 0:
        return f"not estimable: {agent} lost every comparison"
    return (f"not estimable against {group[0]}: {agent}'s group and {group[0]}'s "
            f"({', '.join(group)}) are separated (the comparisons between them all go one "
            "way)")


def ratings(path: str) -> pl.DataFrame:
    """Per (arm, players, agent): Bradley-Terry rating on the Elo scale with its 95% interval,
    comparisons and win share against the other agents.  Ratings are given within the largest
    group of agents that are estimable together (estimable_groups), relative to `reference`,
    the group's first agent by name; an agent outside it has no rating (elo null) and a
    `note` saying why ('not estimable: X won every comparison', or its group is separated
    from the reference's)."""
    table = pairwise(path)
    rows = []
    for (arm, players), cell in table.group_by("arm", "players", maintain_order=True):
        agents = sorted(set(cell["a"].to_list()) | set(cell["b"].to_list()))
        index = {name: i for i, name in enumerate(agents)}
        a = np.array([index[x] for x in cell["a"].to_list()])
        b = np.array([index[x] for x in cell["b"].to_list()])
        games = cell["games"].to_numpy().astype(float)
        wins = cell["wins"].to_numpy().astype(float)
        groups = estimable_groups(len(agents), a, b, games, wins)
        sizes = np.bincount(groups)
        main = int(groups[np.flatnonzero(sizes[groups] == sizes.max())[0]])  # the largest
        # group (of those as large, the one of the first agent by name)
        members = [i for i in range(len(agents)) if groups[i] == main]
        rated = sizes[main] > 1
        theta, se = np.zeros(len(agents)), np.zeros(len(agents))
        if rated:
            local = {g: j for j, g in enumerate(members)}
            inside = np.isin(a, members) & np.isin(b, members)
            fit, err = _bradley_terry(len(members), np.array([local[x] for x in a[inside]]),
                                      np.array([local[x] for x in b[inside]]), games[inside],
                                      wins[inside])
            theta[members], se[members] = fit, err
        group = [agents[i] for i in members]
        for i, name in enumerate(agents):
            played = games[(a == i) | (b == i)].sum()
            won = wins[a == i].sum() + (games - wins)[b == i].sum()
            note = None if rated and groups[i] == main else _separated(name, won, played, group)
            scale = None if note else ELO_PER_LOGIT
            rows.append({"arm": arm, "players": players, "agent": name,
                         "elo": scale and scale * theta[i],
                         "elo_lo": scale and scale * (theta[i] - Z95 * se[i]),
                         "elo_hi": scale and scale * (theta[i] + Z95 * se[i]),
                         "reference": group[0] if rated else None,
                         "comparisons": int(played), "share": won / played, "note": note})
    schema = {"arm": pl.String, "players": pl.Int64, "agent": pl.String, "elo": pl.Float64,
              "elo_lo": pl.Float64, "elo_hi": pl.Float64, "reference": pl.String,
              "comparisons": pl.Int64, "share": pl.Float64, "note": pl.String}
    return pl.DataFrame(rows, schema=schema).sort("arm", "players", "elo", descending=[False, False, True])
