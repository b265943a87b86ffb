"""Sample-size planning before a run: `meeplelab plan SPEC` and `POST /api/plan`.

A short pilot plays `pilot_games` games of every cell in this process (its own seed, so the
pilot is not the run's first games), measures the spread of each win share (team win rate)
and of each paired difference from the baseline, and the games per CPU-second.  From those:
- games per cell for every 95% interval to be narrower than +-half_width;
- games per cell to detect a difference `delta` from the baseline with 80% power at 5%
  two-sided, Bonferroni over the comparisons (the run's Benjamini-Hochberg family is at
  least as powerful);
and the wall time on `workers` cores.  With pairing 'rotations' the pilot plays whole deals
and the spreads are those of the deal means (the unit the run's statistics use); games are
deals times their rotations.  Formulas: pipelines.stats.
"""
from __future__ import annotations

import os
import time

import numpy as np
import polars as pl
import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field

from pipelines import stats as st
from services.spec import MAX_SEED, ExperimentSpec

PILOT_GAMES = 200
DEFAULT_HALF_WIDTH = 0.01


class PlanRequest(BaseModel):
    """The body of POST /api/plan."""

    model_config = ConfigDict(extra="forbid")
    spec: ExperimentSpec
    half_width: float | None = Field(default=None, ge=0.001, lt=0.5, description="target 95% "
                                     "half-width on win shares (default: the spec's "
                                     "stop_when.half_width, else 0.01)")
    delta: float | None = Field(default=None, ge=0.001, lt=1, description="difference from the "
                                "baseline to detect with 80% power (default: the spec's "
                                "stop_when.delta; needs two arms or more)")
    pilot_games: int = Field(default=PILOT_GAMES, ge=20, le=20_000,
                             description="games per cell of the pilot run")


def _pilot_cell(spec: ExperimentSpec, cell, games: int) -> tuple[pl.DataFrame, float]:
    """(rows of the pilot with truncated games left out, or with rotations one row per
    complete deal holding its mean shares; CPU seconds per game)."""
    import core_cy
    from core_cy import batch

    game = core_cy.load(spec.game)
    per_deal = spec.games_per_deal(cell.players)
    games = -(-games // per_deal) * per_deal  # whole deals
    began = time.process_time()
    rows = batch.play(game, cell.players, cell.rules, spec.agent_list(cell.players),
                      seed=(spec.seed + 1) % MAX_SEED, count=games, speeds=spec.speeds,
                      arm=cell.arm, rotate=spec.rotates(), games_per_deal=per_deal)
    seconds = max(time.process_time() - began, 1e-9) / games
    frame = pl.from_arrow(pa.Table.from_batches([rows]))
    frame = frame.filter(~pl.col("end_reason").cast(pl.String).is_in(
        list(game.safety_end_reasons)))
    if per_deal > 1:  # the unit is the complete deal: its seats' mean shares
        frame = frame.filter(pl.len().over("deal") == per_deal).sort("game_index")
        shares = np.array(frame["seat_win_share"].to_list(), dtype=np.float64)
        means = shares.reshape(-1, per_deal, cell.players).mean(axis=1)
        frame = pl.DataFrame({"game_index": frame["deal"].unique(maintain_order=True),
                              "seat_win_share": means.tolist()})
    return frame, seconds


def _shares(frame: pl.DataFrame, cooperative: bool) -> np.ndarray:
    """Per unit (a game, or a deal) the outcomes that carry win shares: the team's, or one
    per seat."""
    matrix = np.array(frame["seat_win_share"].to_list(), dtype=np.float64)
    return matrix[:, :1] if cooperative else matrix


def plan_experiment(spec: ExperimentSpec, half_width: float | None = None,
                    delta: float | None = None, pilot_games: int = PILOT_GAMES,
                    workers: int | None = None) -> dict:
    """The plan as a JSON-ready dict (see the module docstring)."""
    import core_cy

    rule = spec.stop_when
    half_width = half_width or (rule.half_width if rule and rule.half_width else None)
    delta = delta or (rule.delta if rule and rule.delta else None)
    if half_width is None and delta is None:
        half_width = DEFAULT_HALF_WIDTH
    workers = workers or os.cpu_count() or 1
    cooperative = core_cy.load(spec.game).cooperative
    baseline = spec.baseline_arm()
    pilots = {(c.arm, c.players): _pilot_cell(spec, c, pilot_games) for c in spec.cells()}
    comparisons = sum(1 for c in spec.cells() if c.arm != baseline) * \
        (1 if cooperative else max(spec.player_counts()))
    cells = []
    for (arm, players), (frame, seconds) in pilots.items():
        shares = _shares(frame, cooperative)
        per_unit = spec.games_per_deal(players)  # the sds are per unit: a game or a deal
        row = {"arm": arm, "players": players, "pilot_games": len(frame) * per_unit,
               "games_per_cpu_second": 1 / seconds, "win_sd": shares.std(axis=0).tolist()}
        if half_width is not None:
            row["games_for_half_width"] = per_unit * int(np.max(st.games_for_half_width(
                shares.std(axis=0), half_width)))
        base = pilots[(baseline, players)][0]
        if delta is not None and arm != baseline:
            paired = frame.join(base.select("game_index", base_share="seat_win_share"),
                                on="game_index", how="inner")
            diff = _shares(paired, cooperative) - np.array(
                paired["base_share"].to_list(), dtype=np.float64)[:, :shares.shape[1]]
            row["diff_sd"] = diff.std(axis=0, ddof=1).tolist()
            row["games_for_delta"] = per_unit * int(np.max(st.games_for_power(
                diff.std(axis=0, ddof=1), delta, st.ALPHA / max(comparisons, 1))))
        cells.append(row)
    needs = [c.get("games_for_half_width", 0) for c in cells] + \
        [c.get("games_for_delta", 0) for c in cells]
    per_cell = int(max(needs + [1]))
    cpu_seconds = sum(per_cell / c["games_per_cpu_second"] for c in cells)
    wall = cpu_seconds / workers
    return {"game": spec.game, "half_width": half_width, "delta": delta,
            "power": st.POWER if delta is not None else None, "alpha": st.ALPHA,
            "comparisons": comparisons, "pilot_games_per_cell": pilot_games,
            "workers": workers, "cells": cells, "games_per_cell": per_cell,
            "total_games": per_cell * len(cells), "wall_seconds": wall,
            "verdict": _verdict(per_cell, len(cells), wall, workers, half_width, delta)}


def _verdict(per_cell, cells, wall, workers, half_width, delta) -> str:
    goals = []
    if half_width is not None:
        goals.append(f"to measure every win share to ±{100 * half_width:g} points (95%)")
    if delta is not None:
        goals.append(f"to detect a difference of {100 * delta:g} points from the baseline "
                     "with 80% power")
    return (f"About {per_cell:,} games per cell ({per_cell * cells:,} in all, about "
            f"{_duration(wall)} on {workers} core{'s' if workers != 1 else ''}) "
            f"{' and '.join(goals)}.")


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
