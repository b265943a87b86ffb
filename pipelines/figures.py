"""How the figures are computed (Look: fixed-n or always-valid) and their shared pieces:
the interval columns of rates and means, and the words of the sentences."""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import polars as pl

from pipelines import stats as st

DELTA = 0.01  # the default margin that matters: 1 point of win share


@dataclass(frozen=True)
class Look:
    """How the figures are computed: fixed-n (a finished run) or always-valid (interim, a
    run in progress, tuned for `planned_games` per cell); `delta` is the difference that
    matters (win share, as a fraction).  With `spread` (a run started with a stored spread:
    the sd per unit of the rows that decide, from its plan's pilot) a run in progress
    decides those rows, `spread_rows` ("comparisons" with the baseline, or one arm's
    "seats"), by the triangle (st.triangle_decisions, its looks `wave_games` per cell apart)
    instead of confidence sequences; the other rows keep the sequences."""

    interim: bool = False
    planned_games: int = 10_000
    delta: float = DELTA
    alpha: float = st.ALPHA
    spread: float | None = None
    wave_games: int | None = None
    spread_rows: str = "comparisons"

    def triangle(self, rows: str) -> bool:
        """Whether `rows` ("comparisons" or "seats") are decided by the triangle at this look
        (interim, a stored spread that is theirs)."""
        return self.interim and self.spread is not None and self.guards(rows)

    def guards(self, rows: str) -> bool:
        """Whether the stored spread is that of `rows`, checked against their data at this
        look, interim or final (the run's last look decided by it)."""
        return self.spread is not None and rows == self.spread_rows


def wave_units(look: Look, n, per_unit=1):
    """Units between a run's looks: look.wave_games in units of `per_unit` games (at most n:
    the first look's is n), or n when the run has one look."""
    n = np.asarray(n, dtype=np.float64)
    if look.wave_games is None:
        return n
    return np.minimum(look.wave_games / np.asarray(per_unit, dtype=np.float64), n)


# ---- intervals on collected frames -------------------------------------------------------------
def _rate_columns(df: pl.DataFrame, rate: str, var: str, n: str, prefix: str,
                  look: Look, alpha: float | None = None) -> pl.DataFrame:
    """<prefix>_lo/_hi of a rate: st.rate_interval (fixed-n) or a confidence sequence (interim)."""
    alpha = look.alpha if alpha is None else alpha
    p, v, m = (df[c].to_numpy().astype(np.float64) for c in (rate, var, n))
    if look.interim:
        half = st.cs_half_width(np.sqrt(v), m, alpha, look.planned_games, st.RATE_PRIOR_VAR)
        low, high = np.clip(p - half, 0, 1), np.clip(p + half, 0, 1)
    else:
        low, high = st.rate_interval(p, v, m, alpha)
    return df.with_columns(pl.Series(f"{prefix}_lo", low), pl.Series(f"{prefix}_hi", high))


def _mean_columns(df: pl.DataFrame, mean: str, sd: str, n: str, prefix: str, look: Look,
                  alpha) -> pl.DataFrame:
    """<prefix>_lo/_hi of a mean: t interval (fixed-n) or a confidence sequence (interim)."""
    mu, s, m = (df[c].fill_null(0).to_numpy().astype(np.float64) for c in (mean, sd, n))
    if look.interim:
        half = st.cs_half_width(s, m, alpha, look.planned_games)
    else:
        half = st.t_quantile(m, alpha) * s / np.sqrt(m)
    half = np.where(m > 1, half, np.nan)
    return df.with_columns(pl.Series(f"{prefix}_lo", mu - half),
                           pl.Series(f"{prefix}_hi", mu + half))


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _margin_text(delta: float) -> str:
    return f"±{100 * delta:g} point{'' if delta == 0.01 else 's'}"


def half_the_time(more: float, per: str = "", would: str = "decide it") -> str:
    """A forecast of the games still needed, said as what it is: every such forecast here
    (stats.games_to_decide, fair_value.games_to_precision) is where the estimate as it stands
    would decide, a median (decided by then in 49-84% of runs, issue 52), so '1,200 more
    games per cell would decide it about half the time', never a promise.  MORE_GAMES finds
    the number in such a sentence."""
    more = int(round(more))
    return f"{more:,} more game{'' if more == 1 else 's'}{per} would {would} about half the time"


MORE_GAMES = re.compile(r"([\d,]+) more (?:fresh )?games?\b")


def _more_games(total: float, n: float, per_unit: int = 1) -> str:
    """How many more games would decide, from unit counts (per_unit games per unit)."""
    if not np.isfinite(total):
        return "more games would not decide it at this margin"
    if total <= n:  # the estimates alone would decide now: the family's test does not yet
        return "its test is short of the family's threshold, so a few more games may decide"
    return half_the_time(int(max(total - n, 1)) * per_unit, " per cell")


def spread_warning(look: Look, used, side, bound, whose: str, one_spread: bool
                   ) -> str | None:
    """What a designer reads when the games contradict the stored spread (stop_when.spread)
    of one group of rows (stats.spread_guard's used, side, bound per row), None when they do
    not: `whose` rows they are ("b's seats", "b against a"); `one_spread`: the group is
    scaled by one spread, the largest guarded one (a cell's seats), so it is lowered only
    when every row's is; else each row by its own.  A spread stored too low is said first
    (it is the one that makes false claims)."""
    used, side, bound = (np.atleast_1d(np.asarray(x, dtype=np.float64)) for x in
                         (used, side, bound))
    low, high = side < 0, (side > 0) & (np.all(side > 0) if one_spread else True)
    rows = low if low.any() else high
    if not rows.any():
        return None
    run_used = float(np.max(used if one_spread else used[rows]))
    word, why = (("at least", "so that noise is not called a difference") if low.any() else
                 ("at most", "so that it can decide before max_games"))
    return (f"The stored spread {look.spread:.3g} (stop_when.spread) is contradicted by the "
            f"games of {whose} (their spread is {word} {float(np.max(bound[rows])):.3g}): "
            f"the run used {run_used:.3g} instead, {why}; plan again (`meeplelab plan SPEC` "
            "or POST /api/plans) and start with the spread it hands out, or leave "
            "stop_when.spread out.")


def _unit_text(n: int, per_unit: int) -> str:
    """'1,000 games', or with rotations '1,000 deals (3 rotations each)'."""
    return f"{n:,} games" if per_unit == 1 else f"{n:,} deals ({per_unit} rotations each)"
