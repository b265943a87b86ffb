"""The stop_when rules: is the experiment's question decided (decided: always-valid figures,
or the triangle of a run with a stored spread), are its win shares precise enough (precise)."""
from __future__ import annotations

import numpy as np
import polars as pl

from pipelines import stats as st
from pipelines.comparisons import compare
from pipelines.figures import Look
from pipelines.summaries import cell_summary, summary


def decided(path: str, baseline: str | None, look: Look) -> bool:
    """Whether the experiment's question is decided at +-look.delta (the stop_when rule:
    always-valid figures, or with look.spread the triangle): every comparison with the
    baseline when there are other arms, else every cell's seat balance (competitive
    games)."""
    if baseline is not None:
        table = compare(path, baseline, look=look)
        if not table.is_empty():
            return bool(table["decided"].all())
    cells = cell_summary(path, look=look)  # decided is null for a cooperative cell
    return bool(len(cells)) and bool(cells["decided"].fill_null(False).all())


def _precision_rows(path: str, look: Look) -> tuple[pl.DataFrame, tuple[str, str, str, str]]:
    """The rows the precision rule judges (a seat's win share; a cooperative game: the team
    win rate) and the names of their rate, interval and variance columns."""
    table = summary(path, look=look)
    names = (("team_win_rate", "team_win_lo", "team_win_hi", "team_var")
             if table["cooperative"].any() else ("win_share", "win_lo", "win_hi", "share_var"))
    return table, names


def precise(path: str, half_width: float, look: Look = Look()) -> bool:
    """The precision rule (stop_when.half_width): every seat's win share (a cooperative game:
    the team win rate) has its interval at the run's level (look.alpha: the fixed-n interval
    the finished run shows) narrower than +-half_width, over at least st.PRECISION_MIN_COUNT
    wins and as many losses (see st.precise_enough)."""
    table, (rate, lo, hi, _var) = _precision_rows(path, look)
    if table.is_empty():
        return False
    frame = table.select(rate, lo, hi, "units").fill_null(np.nan)
    return bool(np.all(st.precise_enough(*(frame[c].to_numpy().astype(np.float64)
                                            for c in (rate, lo, hi, "units")),
                                         half_width)))


def games_for_precision(path: str, half_width: float, look: Look = Look()) -> int | None:
    """Games per cell after which the precision rule is expected to hold, at the rates and
    spreads the dataset shows (st.games_for_precision, units turned into games); None when
    nothing is known yet (no row, or a rate not yet seen in both outcomes)."""
    table, (rate, _lo, _hi, var) = _precision_rows(path, look)
    if table.is_empty() or var not in table.columns:
        return None
    frame = table.select(rate, var, "units", "games").fill_null(np.nan)
    p, v, units, games = (frame[c].to_numpy().astype(np.float64)
                          for c in (rate, var, "units", "games"))
    if np.any(~np.isfinite(p)) or np.any((p <= 0) | (p >= 1)):
        return None
    need = st.games_for_precision(p, v, half_width, look.alpha) * games / units
    return int(np.ceil(np.max(need))) if np.all(np.isfinite(need)) else None


# ---- planning: the pilot's size and the decision rule simulated --------------------------------
PILOT_EVENTS = 50  # the pilot goes on until its rarest outcome is seen this often
MAX_PILOT_UNITS = 20_000  # ... but never beyond this many games (deals) per cell
PILOT_GROWTH = 20  # ... nor beyond this many times pilot_games
PILOT_SE_PER_DELTA = 4  # a stop_when.delta pilot goes on until its errors are delta / this


def pilot_units(shares: list[np.ndarray], pilot_games: int, delta: float | None = None,
                decisive: list[np.ndarray] | None = None) -> int:
    """Units a pilot needs for PILOT_EVENTS wins and losses of its rarest outcome (a seat that
    wins 3%), at the rates its first `pilot_games` units show, and with `delta` (a
    stop_when.delta plan) for the standard error of every estimate the plan simulates to be
    at most delta / PILOT_SE_PER_DELTA, and the spread the plan hands out (plan_spread) to be
    within PILOT_SPREAD_ERROR: the rows of `decisive` (per cell, units x rows: the
    paired differences from the baseline of a comparison), else the win shares (the games
    to decide rise off no difference and peak between delta / 2 and delta, so a plan from a
    pilot whose error is delta / 2 is up to 40% off: docs/lab/statistics.md); at most
    PILOT_GROWTH times pilot_games and MAX_PILOT_UNITS.  The games planned for a rate are
    about proportional to it, so a rate from 200 games (6 wins at 3%) plans within +-25% in
    under half the pilots (benchmarks/calibration.py)."""
    need = 0
    for matrix in shares:  # per cell: units x outcomes (seats, or the team)
        rate = matrix.mean(axis=0)
        rarest = max(float(np.min(np.minimum(rate, 1 - rate))), 1 / (2 * len(matrix)))
        need = max(need, int(np.ceil(PILOT_EVENTS / rarest)))
    for matrix in (decisive if decisive is not None else shares) if delta else ():
        sd = float(np.max(matrix.std(axis=0)))
        need = max(need, int(np.ceil((PILOT_SE_PER_DELTA * sd / delta) ** 2)),
                   _spread_units(matrix))
    return max(pilot_games, min(need, MAX_PILOT_UNITS, PILOT_GROWTH * pilot_games))


PILOT_SPREAD_ERROR = 0.03  # ... and until the spread it hands out is this precise (relative)


def _spread_units(matrix: np.ndarray) -> int:
    """Units for the sd of every row of `matrix` (units x rows) to have a relative standard
    error of at most PILOT_SPREAD_ERROR: (kurtosis - 1) / (4 error^2) (the sd's error is
    about sqrt(mu4 - s^4) / (2 s^2 sqrt(n))); sparse differences (correlated arms, most
    of them 0) have a high kurtosis and need many units."""
    centred = matrix - matrix.mean(axis=0)
    var = np.mean(centred ** 2, axis=0)
    kurtosis = np.mean(centred ** 4, axis=0) / np.where(var > 0, var ** 2, np.inf)
    return int(np.ceil(np.max(kurtosis - 1, initial=0) / (4 * PILOT_SPREAD_ERROR ** 2)))


# ---- the decision rule, simulated (the plan of a stop_when.delta run) ---------------------------
def _normal(rng, cov: np.ndarray, size: tuple) -> np.ndarray:
    """Draws of N(0, cov) (cov may be singular: a cell's seat shares sum to a constant)."""
    values, vectors = np.linalg.eigh(cov)
    root = vectors * np.sqrt(np.clip(values, 0, None))
    return rng.standard_normal(size + (len(cov),)) @ root.T


def simulate_decision(blocks, looks, delta: float, alpha: float, planned: int,
                      seats: bool, min_games: int = 0, reps: int = 400, seed: int = 0,
                      truth: str = "shrunk", spread: float | None = None) -> np.ndarray:
    """Games per cell at which simulated runs of the stop_when.delta rule stop (the last look
    when undecided), as `decided` judges them.  `blocks`: per cell (mean, covariance, units
    the estimates rest on, games per unit): of the paired differences from the baseline
    (seats=False: every row must differ or be equivalent; a 2-player cell's seat-1 row that
    mirrors seat 0's is one test, counted once in the Bonferroni split) or of the seats' win shares
    (seats=True: every cell unbalanced or balanced).  `looks`: games per cell after each
    wave.  `truth`: "shrunk" (the plan's), every run at the estimates shrunk towards no
    difference (each difference's, or seat's deviation from the cell's mean share, square
    less its variance: est^2 - var/units, the unbiased estimate of the square of its truth);
    "point", at the estimates.  Each run then plays normal increments wave by wave; the
    sequences use the true sd; with `spread` (a run with a stored spread) the run decides by
    the triangle instead, scaled by that spread (guarded by the true sd, as
    st.guarded_spread guards it by the running one), looks one wave apart."""
    rng = np.random.default_rng(seed)
    looks = np.asarray(looks, dtype=np.float64)
    dims = sum(len(m) - (not seats and _mirrored(m, c)) for m, c, *_ in blocks)
    reps = int(max(50, min(reps, 4_000_000 // max(len(looks) * dims, 1))))
    strict = alpha / max(dims, 1)  # Bonferroni over the rows that decide
    done = np.ones((reps, len(looks)), dtype=bool)
    for mean, cov, units, per_unit in blocks:
        mean, cov = np.asarray(mean, np.float64), np.atleast_2d(np.asarray(cov, np.float64))
        true_means = _truths(mean, cov, units, reps, truth, seats)
        at = looks / per_unit
        steps = np.diff(np.concatenate([[0.0], at]))
        noise = _normal(rng, cov, (reps, len(at))) * np.sqrt(steps)[None, :, None]
        sums = np.cumsum(true_means[:, None, :] * steps[None, :, None] + noise, axis=1)
        est = sums / at[None, :, None]
        sd = np.sqrt(np.clip(np.diag(cov), 0, None))
        if spread is not None:
            scale = st.guarded_spread(spread, sd[None, None, :], at[None, :, None],
                                      0.0 if seats else est)
            if seats:
                scale = np.max(scale, axis=-1, keepdims=True)
                shown, equal = st.triangle_seat_decisions(est, scale, at[None, :], delta,
                                                          strict, steps[None, :])
                done &= shown | equal
            else:
                shown, equal = st.triangle_decisions(est, scale, at[None, :, None], delta,
                                                     strict, steps[None, :, None])
                done &= np.all(shown | equal, axis=-1)
        elif seats:
            shown, equal = st.cs_seat_decisions(est, sd, at[None, :], delta, strict, planned)
            done &= shown | equal
        else:
            shown, equal = st.cs_comparison_decisions(est, sd, at[None, :, None], delta, strict,
                                                      planned)
            done &= np.all(shown | equal, axis=-1)
    done &= (looks >= min_games)[None, :]
    first = np.where(done.any(axis=1), np.argmax(done, axis=1), len(looks) - 1)
    return looks[first]


PLAN_SPREAD_Z = 0.5  # the spread a plan hands out: its pilot's sd, raised by this many errors


def plan_spread(blocks, seats: bool) -> float | None:
    """The spread a plan hands out for stop_when.spread: the largest sd per unit of the rows
    `blocks` holds (as simulate_decision reads them: the paired differences, or with `seats`
    the seats' win shares), each raised to st.sd_bound at PLAN_SPREAD_Z; None without rows,
    or when none varied in the pilot (arms that play the same games)."""
    sds = [st.sd_bound(np.sqrt(np.clip(np.diag(np.atleast_2d(cov)), 0, None)), units,
                       0.0 if seats else np.asarray(mean, np.float64), PLAN_SPREAD_Z)
           for mean, cov, units, _ in blocks]
    largest = float(np.max(np.concatenate(sds))) if sds else 0.0
    return largest if largest > 0 else None


def _mirrored(mean, cov) -> bool:
    """Whether a 2-player comparison's seat-1 row mirrors seat 0's (their differences cancel
    in every game): one test, counted once in the Bonferroni split, as compare counts it."""
    cov = np.atleast_2d(np.asarray(cov, np.float64))
    return len(cov) == 2 and abs(float(np.sum(mean))) < 1e-9 and float(np.sum(cov)) < 1e-12


def _shrink(estimate: np.ndarray, variance: np.ndarray) -> np.ndarray:
    """Each estimate's magnitude cut to sqrt(max(est^2 - variance, 0)), its sign kept."""
    return np.sign(estimate) * np.sqrt(np.clip(estimate ** 2 - variance, 0, None))


def _truths(mean, cov, units, reps, kind: str, seats: bool) -> np.ndarray:
    """reps x dim true means of simulated runs (see simulate_decision's `truth`): shrunk, a
    comparison's differences towards 0, a cell's seat shares towards their mean."""
    if kind == "shrunk":
        centre = mean.mean() if seats else 0.0
        mean = centre + _shrink(mean - centre, np.diag(cov) / max(units, 1))
    return np.broadcast_to(mean, (reps, len(mean)))
