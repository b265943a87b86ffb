"""Sample-size planning before a run: `meeplelab plan SPEC` and the API's plan jobs
(`POST /api/plans`, then `GET /api/plans/{id}`: a job of the service's one queue,
services.worker, whose pilot plays as shard tasks of the one runner within a time budget, so
no request waits for a pilot and a cancel ends it at once).

A short pilot plays `pilot_games` games of every cell, all cells together as shard tasks
spread over the cluster (services.runner.Player; its own seed, so the pilot is not the run's
first games), and goes on (the same deals for every arm, at most
pipelines.stopping.PILOT_GROWTH times as many, within the time budget) until its rarest
outcome, such as a seat that wins 3%, is seen pipelines.stopping.PILOT_EVENTS times, since
the games planned for a rate are about proportional to it.  It measures the spread of each
win share (team win rate) and of each paired difference from the baseline, and the games per CPU-second.  The plan is for the rule
the run will stop by (`rule`):
- fixed (no stop_when) and stop_when.half_width: games per cell for every interval at the
  run's level (1 - stop_when.alpha: 95% by default) to be narrower than +-half_width (the
  interval the run shows, at the pilot's rates and spreads; the precision rule also waits
  for st.PRECISION_MIN_COUNT wins and losses), and to detect a difference `delta` from the
  baseline with 80% power at stop_when.alpha (5%) two-sided,
  Bonferroni over the comparisons (the run's Benjamini-Hochberg family is at least as
  powerful);
- stop_when.delta: the decision rule itself simulated on the pilot's means and covariances
  (pipelines.simulate_decision, every run at the pilot's estimates shrunk towards no
  difference; the pilot goes on until its errors are at most delta / PILOT_SE_PER_DELTA,
  within the same limits): the expected, median, 10th- and 90th-percentile games per cell
  and the share of runs that reach max_games undecided, for a run started with the spread
  the plan hands out (`spread`, the pilot's: stop_when.spread), which decides by the
  triangle;
and the wall time on `workers` cores.  A spec with stop_when stops only after whole waves
of games_per_arm, so its plan is in whole waves.  With pairing 'rotations' the pilot plays
`pilot_games` whole deals and the spreads are those of the deal means (the unit the run's
statistics use); games are deals times their rotations.  Formulas: pipelines.stats.
"""
from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Literal

import numpy as np
import polars as pl
from pydantic import BaseModel, ConfigDict, Field, field_validator

import pipelines
from pipelines import stats as st
from pipelines.stopping import PILOT_SE_PER_DELTA
if TYPE_CHECKING:  # the runner imports Ray: only a job that plays needs it (services.app does not)
    from services.runner import Part, Player
from services.registry import STATUSES
from services.spec import MAX_SEED, ExperimentSpec, check_fraction

PILOT_GAMES = 200
DEFAULT_HALF_WIDTH = 0.01
ROUGH_PILOT = 1.3  # a stop_when.delta plan is called rough when its pilot's errors are
# more than this many times their goal, delta / PILOT_SE_PER_DELTA
MIN_PILOT_UNITS = 20  # fewer games (deals) than this in the pilot give no usable spread


class PlanRequest(BaseModel):
    """The body of POST /api/plans (and the CLI's `meeplelab plan` arguments)."""

    model_config = ConfigDict(extra="forbid")
    spec: ExperimentSpec
    half_width: float | None = Field(default=None, ge=0.001, lt=0.5, description="target "
                                     "half-width on win shares, of the interval at the "
                                     "level 1 - stop_when.alpha (default: the spec's "
                                     "stop_when.half_width, else 0.01)")
    delta: float | None = Field(default=None, ge=0.001, lt=1, description="difference from the "
                                "baseline to detect with 80% power (default: the spec's "
                                "stop_when.delta; needs two arms or more)")
    pilot_games: int = Field(default=PILOT_GAMES, ge=20, le=20_000,
                             description="games per cell of the pilot run (deals, each "
                             "played in every seat rotation, with pairing 'rotations')")

    @field_validator("half_width", "delta", mode="before")
    @classmethod
    def _fraction(cls, value, info):
        """A margin is a fraction: say so (a designer writes 5 for 5 points)."""
        return check_fraction(value, info.field_name, 0.5 if info.field_name == "half_width"
                              else 1)


class PilotTooSlow(ValueError):
    """The pilot could not play enough games within its time budget."""


class PilotUnfinished(ValueError):
    """Too few of the pilot's games finished by the rules (the rest ended at a simulator
    safety), so there is no spread to plan from."""


def _pilot_part(spec: ExperimentSpec, cell, units: int, first: int = 0) -> Part:
    """Units first..first+units-1 of the pilot of `cell` (its own seed, the run's + 1, so the
    pilot is not the run's first games)."""
    per_deal = spec.games_per_deal(cell.players)
    from services.runner import Part

    return Part(cell, spec.play_arguments(cell), (spec.seed + 1) % MAX_SEED,
                first * per_deal, units * per_deal)


def _play_pilot(player: Player, spec: ExperimentSpec, cells: list, units: int,
                seconds: float | None, first: int = 0) -> tuple[dict, list[dict]]:
    """Plays units first..first+units-1 of the pilot of every cell of `cells` together, as
    shard tasks of the one runner (player), for at most about `seconds` (the games of tasks
    still playing then are not used); returns ((arm, players) -> (rows of the pilot with
    truncated games left out, or with rotations one row per complete deal holding its mean
    shares; CPU seconds per game), the cells it could not estimate: those with fewer than
    MIN_PILOT_UNITS units written in the time, each {"arm", "players", "games", "reason"}).
    PilotUnfinished names a cell whose games ended at a simulator safety."""
    import core_cy

    game = core_cy.load(spec.game)
    parts = [_pilot_part(spec, c, units, first) for c in cells]
    began = time.monotonic()
    player.play(parts, seconds)
    out, slow = {}, []
    for cell, part in zip(cells, parts):
        per_deal = spec.games_per_deal(cell.players)
        rows = pl.from_arrow(player.rows(part))
        if len(rows) < MIN_PILOT_UNITS * per_deal:
            limit = "" if seconds is None else f"; the plan's time limit is {seconds:g} s"
            slow.append({"arm": cell.arm, "players": cell.players, "games": len(rows),
                         "reason": f"the pilot played only {len(rows)} games of arm "
                         f"{cell.arm!r} with {cell.players} players in "
                         f"{time.monotonic() - began:.0f} s (at least "
                         f"{MIN_PILOT_UNITS * per_deal} are needed{limit})"})
            continue
        frame = pipelines.units(rows, game.safety_end_reasons)
        if len(frame) < MIN_PILOT_UNITS:
            raise PilotUnfinished(
                f"only {len(frame) * per_deal} of the pilot's {len(rows)} games of arm "
                f"{cell.arm!r} with {cell.players} players finished by the rules (the others "
                f"ended at a simulator safety: {', '.join(game.safety_end_reasons)}); at "
                f"least {MIN_PILOT_UNITS * per_deal} are needed: raise the safety limit in "
                "the rules or use agents whose games finish")
        out[(cell.arm, cell.players)] = (frame, player.cpu_per_game(cell) or 1e-9)
    return out, slow


MORE_TIME = ("give the plan more time (the service's MEEPLELAB_PLAN_SECONDS, `meeplelab plan "
             "--seconds`), fewer cells, or faster agents")


def _estimable(spec: ExperimentSpec, pilots: dict, slow: list[dict], baseline: str
               ) -> list[dict]:
    """The cells the plan cannot estimate: those the pilot could not play enough of, and
    every cell of a player count whose baseline it could not (their differences need it);
    their pilots are dropped.  PilotTooSlow when no cell is left."""
    missing = list(slow)
    for players in spec.player_counts():
        if (baseline, players) in pilots or len(spec.arm_rules()) == 1:
            continue
        for cell in spec.cells():
            if cell.players == players and pilots.pop((cell.arm, players), None) is not None:
                missing.append({"arm": cell.arm, "players": players, "games": 0,
                                "reason": f"its baseline arm {baseline!r} with {players} "
                                "players could not be estimated, and its differences "
                                "need it"})
    if not pilots:
        raise PilotTooSlow(f"{missing[0]['reason']}: {MORE_TIME}")
    return missing


def _shares(frame: pl.DataFrame, cooperative: bool) -> np.ndarray:
    """Per unit (a game, or a deal) the outcomes that carry win shares: the team's, or one
    per seat."""
    matrix = np.array(frame["seat_win_share"].to_list(), dtype=np.float64)
    return matrix[:, :1] if cooperative else matrix


def _differences(frame: pl.DataFrame, base: pl.DataFrame, cooperative: bool) -> np.ndarray:
    """Per unit both arms played (the same game_index) the arm's win shares (the team's)
    less the baseline's: the paired differences."""
    paired = frame.join(base.select("game_index", base_share="seat_win_share"),
                        on="game_index", how="inner")
    own = _shares(paired, cooperative)
    return own - np.array(paired["base_share"].to_list(), dtype=np.float64)[:, :own.shape[1]]


def _identical_pairs(frame: pl.DataFrame, base: pl.DataFrame) -> int:
    """The units both arms played in which the arm played the baseline's own game: every
    seat's win share and score the same (its option changed no decision)."""
    paired = frame.join(base.select("game_index", base_share="seat_win_share",
                                    base_score="seat_score"), on="game_index", how="inner")
    return sum(a == b and c == d for a, b, c, d in zip(
        paired["seat_win_share"].to_list(), paired["base_share"].to_list(),
        paired["seat_score"].to_list(), paired["base_score"].to_list()))


def _identical_text(cells: list[dict], baseline: str) -> str:
    """For each arm whose pilot games were all the baseline's own games: that sentence."""
    return "".join(f" {c['arm']} against {baseline} ({c['players']} players): the two arms "
                   f"played identical games in {c['pairs']:,} pilot deals: this option never "
                   "changed a decision there, and no number of games would show a difference "
                   "it does not make." for c in cells
                   if c.get("pairs") and c.get("identical_pairs") == c["pairs"])


def _longer_pilots(player: Player, spec, pilots: dict, pilot_games: int, cooperative: bool,
                   began: float, seconds: float | None, delta: float | None = None,
                   baseline: str | None = None) -> dict:
    """The pilots extended (same deals for every arm of a player count, so the differences
    stay paired) until their rarest outcome is seen pipelines.stopping.PILOT_EVENTS times
    (and, with delta, until the errors of what the plan simulates, the paired differences
    from `baseline` or else the win shares, are small enough: pipelines.pilot_units), within
    what is left of the time budget."""
    for players in spec.player_counts():
        cells = [c for c in spec.cells() if c.players == players and (c.arm, players) in pilots]
        if not cells:
            continue
        others = [c for c in cells if delta and baseline is not None and c.arm != baseline]
        decisive = [_differences(pilots[(c.arm, players)][0], pilots[(baseline, players)][0],
                                 cooperative) for c in others] or None  # a delta plan reads them
        need = pipelines.pilot_units([_shares(pilots[(c.arm, players)][0], cooperative)
                                      for c in cells], pilot_games, delta, decisive)
        if need <= pilot_games:
            continue
        left = None if seconds is None else seconds - (time.monotonic() - began)
        if left is not None and left <= 0:
            return pilots
        player.expect(None, f"pilot: {players} players, {need:,} units a cell for its rarest "
                            "outcome")
        try:
            more, slow = _play_pilot(player, spec, cells, need - pilot_games, left,
                                     first=pilot_games)
        except PilotUnfinished:
            continue  # the first pilot stands
        if slow:
            continue  # the first pilot stands: the same deals for every arm, or none
        for c in cells:
            frame, _ = pilots[(c.arm, players)]
            extra, per_game = more[(c.arm, players)]
            pilots[(c.arm, players)] = (pl.concat([frame, extra], how="vertical_relaxed"),
                                        per_game)
    return pilots


def plan_experiment(spec: ExperimentSpec, player: Player, half_width: float | None = None,
                    delta: float | None = None, pilot_games: int = PILOT_GAMES,
                    workers: int | None = None, seconds: float | None = None) -> dict:
    """The plan as a JSON-ready dict (see the module docstring), its pilot played by
    `player` (services.runner.Player: shard tasks over the cluster; Stopped when the plan
    is cancelled).  `seconds`: a time budget for the whole pilot (its cells play together);
    a cell that cannot play MIN_PILOT_UNITS games in it is named in `not_estimated` and the
    verdict, and the plan is that of the others (PilotTooSlow when none could be)."""
    import core_cy

    began = time.monotonic()
    rule = spec.stop_when
    half_width = half_width or (rule.half_width if rule and rule.half_width else None)
    delta = delta or (rule.delta if rule and rule.delta else None)
    if half_width is None and delta is None:
        half_width = DEFAULT_HALF_WIDTH
    alpha = rule.alpha if rule is not None else st.ALPHA  # the level the run stops at
    workers = workers or os.cpu_count() or 1
    cooperative = core_cy.load(spec.game).cooperative
    baseline = spec.baseline_arm()
    player.expect(pilot_games * sum(spec.games_per_deal(c.players) for c in spec.cells()),
                  f"pilot: {pilot_games:,} units of each of {len(spec.cells())} cells")
    pilots, slow = _play_pilot(player, spec, spec.cells(), pilot_games, seconds)
    missing = _estimable(spec, pilots, slow, baseline)
    sequential = rule is not None and rule.delta is not None
    pilots = _longer_pilots(player, spec, pilots, pilot_games, cooperative, began, seconds,
                            delta if sequential else None, baseline)
    player.expect(0, "pilot played: planning")
    comparisons = sum(1 for c in spec.cells() if c.arm != baseline) * \
        (1 if cooperative else max(spec.player_counts()))
    cells, blocks = [], {"diff": [], "seats": []}
    for (arm, players), (frame, seconds) in pilots.items():
        shares = _shares(frame, cooperative)
        per_unit = spec.games_per_deal(players)  # the sds are per unit: a game or a deal
        row = {"arm": arm, "players": players, "pilot_games": len(frame) * per_unit,
               "games_per_cpu_second": 1 / seconds, "win_sd": shares.std(axis=0).tolist()}
        if half_width is not None:  # the interval the run shows (and, stopping, its counts)
            need = (st.games_for_precision if rule is not None and rule.half_width
                    else st.games_for_rate_half_width)(shares.mean(axis=0), shares.var(axis=0),
                                                       half_width, alpha)
            row["games_for_half_width"] = per_unit * int(min(np.max(need), 10 ** 12))
        if not cooperative:
            blocks["seats"].append((shares.mean(axis=0), np.cov(shares, rowvar=False),
                                    len(shares), per_unit))
        base = pilots[(baseline, players)][0]
        if delta is not None and arm != baseline:
            diff = _differences(frame, base, cooperative)
            row["diff_sd"] = diff.std(axis=0, ddof=1).tolist()
            row["pairs"], row["identical_pairs"] = len(diff), _identical_pairs(frame, base)
            row["games_for_delta"] = per_unit * int(np.max(st.games_for_power(
                diff.std(axis=0, ddof=1), delta, alpha / max(comparisons, 1))))
            blocks["diff"].append((diff.mean(axis=0), np.cov(diff, rowvar=False), len(diff),
                                   per_unit))
        cells.append(row)
    needs = [c.get("games_for_half_width", 0) for c in cells] + \
        [c.get("games_for_delta", 0) for c in cells]
    per_cell = int(max(needs + [1]))
    if rule is not None:  # the run checks its rule after whole waves only
        per_cell = -(-per_cell // spec.games_per_arm) * spec.games_per_arm
    spread = {"expected_games_per_cell": per_cell, "median_games_per_cell": per_cell,
              "p10_games_per_cell": per_cell, "p90_games_per_cell": per_cell,
              "undecided_share": None}
    if sequential:  # the games the decision rule itself takes, simulated on the pilot
        spread = _sequential_games(spec, blocks, delta, pilots, baseline, cooperative,
                                   [c.get("games_for_half_width") for c in cells])
        per_cell = spread["expected_games_per_cell"]
    cpu_per_game = sum(1 / c["games_per_cpu_second"] for c in cells)
    wall = per_cell * cpu_per_game / workers
    return {"game": spec.game, "rule": "stop_when.delta" if sequential else
            "stop_when.half_width" if rule is not None else "fixed",
            "half_width": half_width, "delta": delta,
            "power": st.POWER if delta is not None and not sequential else None,
            "alpha": alpha,
            "comparisons": comparisons, "pilot_games_per_cell": pilot_games,
            "workers": workers, "cells": cells, "games_per_cell": per_cell,
            "total_games": per_cell * len(spec.cells()), "wall_seconds": wall, **spread,
            "p90_wall_seconds": spread["p90_games_per_cell"] * cpu_per_game / workers,
            "not_estimated": missing,
            "verdict": (_sequential_verdict(spread, len(spec.cells()), wall, workers, delta,
                                            spec)
                        if sequential else
                        _verdict(per_cell, len(spec.cells()), wall, workers, half_width, delta,
                                 alpha)
                        + _beyond_max(spec, per_cell) + _below_games_per_arm(spec, per_cell))
            + _not_estimated(missing) + _identical_text(cells, baseline)}


def _not_estimated(missing: list[dict]) -> str:
    """What the plan could not estimate, in words (empty when it estimated every cell)."""
    if not missing:
        return ""
    named = "; ".join(f"arm {m['arm']!r} with {m['players']} players ({m['reason']})"
                      for m in missing)
    return (f" Not estimated: {named}. The games per cell are those of the cells estimated; "
            f"the wall time leaves the others' games out: {MORE_TIME}.")


def _sequential_games(spec, blocks, delta, pilots, baseline, cooperative, precision) -> dict:
    """Expected and 90th-percentile games per cell of a stop_when.delta run, and the share of
    runs that end at max_games undecided, and the p10-p90 range: the rule
    (pipelines.simulate_decision) simulated on the pilot's means and covariances, its true
    differences the pilot's estimates shrunk towards no difference; with half_width too,
    the run also stops once precise.  The run is taken to start with a stored spread, the
    spec's stop_when.spread or else the one this plan hands out (pipelines.plan_spread:
    `spread`), so it decides by the triangle."""
    rule = spec.stop_when
    looks = np.array(list(spec.waves()), dtype=np.float64)
    compares = baseline is not None and len(spec.arm_rules()) > 1 and blocks["diff"]
    simulated = blocks["diff"] if compares else blocks["seats"]
    spread = pipelines.plan_spread(simulated, seats=not compares)
    stops = pipelines.simulate_decision(
        simulated, looks, delta, rule.alpha, spec.look(interim=True).planned_games,
        seats=not compares, min_games=rule.min_games,
        spread=rule.spread if rule.spread is not None else spread)
    error = max((float(np.sqrt(np.max(np.diag(np.atleast_2d(cov))) / units))
                 for _, cov, units, _ in simulated), default=None)
    if compares or blocks["seats"]:
        undecided = float(np.mean(stops >= looks[-1]))
    else:  # a cooperative game with one arm: only the precision rule (or max_games) stops it
        stops, undecided = np.full(1, looks[-1]), 1.0
    if rule.half_width is not None and all(p is not None for p in precision):
        wave = looks[np.searchsorted(looks, min(max(precision), looks[-1]))]
        stops = np.minimum(stops, max(wave, rule.min_games))
    return {"expected_games_per_cell": int(np.ceil(stops.mean())),
            "median_games_per_cell": int(np.ceil(np.median(stops))),
            "p10_games_per_cell": int(np.ceil(np.percentile(stops, 10))),
            "p90_games_per_cell": int(np.ceil(np.percentile(stops, 90))),
            "undecided_share": undecided, "pilot_error": error, "spread": spread,
            "spread_check": None if spread is None else spec.spread_check_for(spread)}


def _sequential_verdict(spread, cells, wall, workers, delta, spec) -> str:
    rule = spec.stop_when
    p90_wall = wall * spread["p90_games_per_cell"] / max(spread["expected_games_per_cell"], 1)
    text = (f"About {spread['expected_games_per_cell']:,} games per cell expected "
            f"({spread['expected_games_per_cell'] * cells:,} in all, about {_duration(wall)} "
            f"on {workers} core{'s' if workers != 1 else ''}; median "
            f"{spread['median_games_per_cell']:,}, 80% of runs between "
            f"{spread['p10_games_per_cell']:,} and {spread['p90_games_per_cell']:,}, "
            f"{_duration(p90_wall)} at most), to decide at "
            f"±{100 * delta:g} "
            f"point{'' if delta == 0.01 else 's'} "
            f"(stop_when.delta)"
            + (f" by the triangle, with the spec's stop_when.spread ({rule.spread:.4g})."
               if rule.spread is not None else
               f" by the triangle, once the run is started with stop_when.spread = "
               f"{spread['spread']:.4g} (this pilot's spread) and stop_when.spread_check = "
               f"\"{spread['spread_check']}\" (which says this plan handed it out; without "
               "the spread the run decides by confidence sequences, in more games)."
               if spread["spread"] is not None else
               " by confidence sequences: the pilot's rows did not vary, so it has no spread "
               "to hand out."))
    share = spread["undecided_share"]
    if share >= 0.005:
        text += (f" {100 * share:.0f}% of runs would reach stop_when.max_games "
                 f"({rule.max_games:,}) undecided")
        text += (": it rarely stops early; raise max_games or delta." if share >= 0.5 else ".")
    error, goal = spread["pilot_error"], delta / PILOT_SE_PER_DELTA
    if error is not None and error > ROUGH_PILOT * goal:
        text += (f" The pilot's errors reach ±{100 * error:.2g} points, over the "
                 f"±{100 * goal:.2g} a close plan needs: the plan is rough; a longer pilot "
                 f"(pilot_games, or more time) plans closer.")
    return text


def _verdict(per_cell, cells, wall, workers, half_width, delta, alpha=st.ALPHA) -> str:
    goals = []
    if half_width is not None:
        goals.append(f"to measure every win share to ±{100 * half_width:g} "
                     f"point{'' if half_width == 0.01 else 's'} ({100 * (1 - alpha):.3g}%)")
    if delta is not None:
        goals.append(f"to detect a difference of {100 * delta:g} points from the baseline "
                     "with 80% power")
    return (f"About {per_cell:,} games per cell ({per_cell * cells:,} in all, about "
            f"{_duration(wall)} on {workers} core{'s' if workers != 1 else ''}) "
            f"{' and '.join(goals)}.")


def _beyond_max(spec: ExperimentSpec, per_cell: int) -> str:
    rule = spec.stop_when
    if rule is None or per_cell <= rule.max_games:
        return ""
    return (f" The spec's stop_when.max_games ({rule.max_games:,}) would end the run before "
            "that.")


def _below_games_per_arm(spec: ExperimentSpec, per_cell: int) -> str:
    """A fixed-n spec whose games_per_arm is below the plan's estimate says so."""
    if spec.stop_when is not None or spec.games_per_arm >= per_cell:
        return ""
    return (f" The spec's games_per_arm ({spec.games_per_arm:,}) is below this: its "
            f"intervals would be wider, and its questions may stay undecided; set "
            f"games_per_arm = {per_cell:,}, or stop_when.")


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


# ---- the API's plan jobs -------------------------------------------------------------------
PlanStatus = Literal[STATUSES]


class PlanCell(BaseModel):
    """The pilot of one cell and what it needs (games, not deals, with pairing 'rotations')."""

    arm: str
    players: int
    pilot_games: int = Field(description="games of the pilot that count (truncated games, "
                             "and deals missing a game, left out)")
    games_per_cpu_second: float
    win_sd: list[float] = Field(description="per seat (cooperative: the team) the standard "
                                "deviation of the win share per unit (game or deal)")
    games_for_half_width: int | None = Field(default=None, description="games for every "
                                             "interval (level 1 - alpha) to be within "
                                             "+-half_width")
    diff_sd: list[float] | None = Field(default=None, description="per seat the standard "
                                        "deviation of the paired difference from the baseline")
    games_for_delta: int | None = Field(default=None, description="games to detect `delta` "
                                        "from the baseline with 80% power")
    pairs: int | None = Field(default=None, description="with delta: the pilot's units both "
                              "this arm and the baseline played")
    identical_pairs: int | None = Field(default=None, description="of those, the units in "
                                        "which both played the same game (every seat's share "
                                        "and score equal): all of them, and the option "
                                        "changed no decision")


class NotEstimated(BaseModel):
    """A cell the plan could not estimate, and why."""

    arm: str
    players: int
    games: int = Field(description="the pilot's games of it written in the time")
    reason: str


class Plan(BaseModel):
    """What an experiment needs: games per cell, in all, and wall time (plan_experiment)."""

    game: str
    rule: Literal["fixed", "stop_when.half_width", "stop_when.delta"] = Field(
        description="the rule the run will stop by, which the plan plans for")
    half_width: float | None
    delta: float | None
    power: float | None
    alpha: float
    comparisons: int
    pilot_games_per_cell: int
    workers: int
    cells: list[PlanCell]
    games_per_cell: int = Field(description="games per cell expected (stop_when.delta: "
                                "the mean of the simulated runs)")
    total_games: int
    wall_seconds: float = Field(description="the expected wall time on `workers` cores")
    expected_games_per_cell: int
    median_games_per_cell: int = Field(description="half the runs stop within this many "
                                       "games per cell (stop_when.delta: simulated; "
                                       "otherwise the planned games)")
    p10_games_per_cell: int = Field(description="10% of the runs stop within this many "
                                    "games per cell: with p90, the range to budget by")
    p90_games_per_cell: int = Field(description="90% of the runs stop within this many "
                                    "games per cell (stop_when.delta: simulated; otherwise "
                                    "the planned games)")
    p90_wall_seconds: float
    undecided_share: float | None = Field(default=None, description="stop_when.delta: the "
                                          "share of simulated runs that reach max_games "
                                          "undecided")
    spread: float | None = Field(default=None, description="stop_when.delta: the spread to "
                                 "start the run with (stop_when.spread): the pilot's largest "
                                 "sd per unit of the rows that decide; the plan's games "
                                 "assume the run uses it (or the spec's own)")
    spread_check: str | None = Field(default=None, description="with spread: the check to "
                                     "start the run with beside it (stop_when.spread_check), "
                                     "which says this plan handed the spread out for this "
                                     "question (ExperimentSpec.spread_check_for)")
    pilot_error: float | None = Field(default=None, description="stop_when.delta: the largest "
                                      "standard error of the pilot's estimates the plan "
                                      "simulates (the pilot grows until it is delta / 4)")
    not_estimated: list[NotEstimated] = Field(
        default_factory=list, description="the cells the pilot could not play enough games "
        "of within the plan's time (and those whose baseline it could not): not in "
        "games_per_cell or the wall time")
    verdict: str = Field(description="the plan in one sentence")


class PlanJob(BaseModel):
    """A plan being made in the background (a job of the service's queue: services.worker):
    queued, running, then done (with its result), failed (with the reason, e.g. a pilot too
    slow for the time budget) or cancelled."""

    id: str
    status: PlanStatus
    url: str = Field(description="where to follow the plan")
    created_at: float
    started_at: float | None = None
    finished_at: float | None = None
    error: str | None = None
    cancel_requested: bool = False
    result: Plan | None = Field(default=None, description="the plan, once done")

    @classmethod
    def of(cls, record: dict) -> "PlanJob":
        """The plan job of a registry record (kind 'plan')."""
        return cls(id=record["id"], status=record["status"],
                   url=f"/api/plans/{record['id']}", created_at=record["created_at"],
                   started_at=record["started_at"], finished_at=record["finished_at"],
                   error=record["error"], cancel_requested=record["cancel_requested"],
                   result=record["result"] if record["status"] == "done" else None)
