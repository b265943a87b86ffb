"""Fair-value search statistics: which value of a rule option meets a target, with an interval
on the value itself (numpy only; no engine, no service).

The data are *waves*: each wave plays a few option values on the same deals, so it is a matrix
Y (deals x values) of per-game figures in [0, 1] (services/balance.py builds them):
- equal seats: y = (share of the seat - mean share of the other seats + 1) / 2, target 1/2
  (the seat wins as often as the others on average; games nobody wins count as equal);
- a target rate: y = the seat's (or the team's) win share, target the rate.

The curve is logistic in the value, logit E[y | x] = a + b x: smooth and monotone, fitted by
quasi-likelihood (fractional outcomes; Papke & Wooldridge 1996) with a covariance robust to
the deals shared between values (a cluster sandwich, one cluster per deal of a wave, with the
G/(G-1) correction), so common deals make it narrower without making it wrong.

The fair value solves a + b x = logit(target); its interval is Fieller's (the values x whose
|a + b x - logit(target)| is within z standard errors), which stays exact where the delta
method fails (a slope near 0): it is then unbounded, and the figure is not shown to depend
on the option.  "No value in range" is claimed only when the whole interval lies outside
the range, so it is false at most alpha/2 of the time when a fair value is inside.

The search (next_values) is adaptive: after a first grid over the range it plays the current
estimate and the ends of its interval (clamped to the range), where they narrow the interval on
the answer most, until that interval is narrower than asked.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import stats as sps

from pipelines import stats as st

MAX_ITER = 50


def seat_figure(shares: np.ndarray, seat: int) -> np.ndarray:
    """Per game, the equal-seats figure of `seat` from (games, seats) win shares: (its share
    minus the mean share of the others + 1) / 2, 1/2 when the seat is fair."""
    shares = np.asarray(shares, dtype=np.float64)
    k = shares.shape[1]
    others = (shares.sum(axis=1) - shares[:, seat]) / (k - 1)
    return (shares[:, seat] - others + 1.0) / 2.0


def logit(p):
    p = np.asarray(p, dtype=np.float64)
    return np.log(p / (1.0 - p))


def expit(z):
    return 1.0 / (1.0 + np.exp(-np.asarray(z, dtype=np.float64)))


@dataclass
class Fit:
    """A fitted curve: coefficients (a, b), their robust covariance, and the data's extent."""

    coef: np.ndarray
    cov: np.ndarray
    games: int
    values: np.ndarray            # the distinct values played
    means: np.ndarray             # the observed mean figure at each
    counts: np.ndarray            # games at each

    def eta(self, x):
        x = np.asarray(x, dtype=np.float64)
        return self.coef[0] + self.coef[1] * x

    def band(self, x, alpha=st.ALPHA):
        """(curve, low, high) at x: the fitted figure and its pointwise interval."""
        x = np.asarray(x, dtype=np.float64)
        eta = self.eta(x)
        se = np.sqrt(np.maximum(self.cov[0, 0] + 2 * x * self.cov[0, 1]
                                + x * x * self.cov[1, 1], 0.0))
        z = sps.norm.ppf(1 - alpha / 2)
        return expit(eta), expit(eta - z * se), expit(eta + z * se)


def fit(waves: list[tuple[np.ndarray, np.ndarray]]) -> Fit:
    """The logistic quasi-likelihood fit of waves [(values (m,), Y (deals, m)), ...]; a NaN
    in Y is a deal not observed at that value (a game that ended at a simulator safety)."""
    xs, sums, counts = [], [], []
    for values, y in waves:
        xs.append(np.asarray(values, dtype=np.float64))
        sums.append(np.nansum(np.asarray(y, dtype=np.float64), axis=0))
        counts.append((~np.isnan(np.asarray(y, dtype=np.float64))).sum(axis=0)
                      .astype(np.float64))
    x, s, n = np.concatenate(xs), np.concatenate(sums), np.concatenate(counts)
    X = np.column_stack([np.ones_like(x), x])
    total = s.sum() / n.sum()
    total = min(max(total, 1e-6), 1 - 1e-6)
    coef = np.array([math.log(total / (1 - total)), 0.0])
    for _ in range(MAX_ITER):                  # IRLS (Newton on the quasi-likelihood)
        mu = expit(X @ coef)
        w = n * mu * (1 - mu)
        bread = X.T @ (X * w[:, None])
        step = np.linalg.solve(bread + 1e-12 * np.eye(2), X.T @ (s - n * mu))
        coef = coef + step
        if np.max(np.abs(step)) < 1e-10:
            break
    mu = expit(X @ coef)
    bread = X.T @ (X * (n * mu * (1 - mu))[:, None])
    meat = np.zeros((2, 2))
    clusters, at = 0, 0
    for values, y in waves:                    # one cluster per deal of a wave
        m = len(values)
        resid = np.asarray(y, dtype=np.float64) - mu[at:at + m][None, :]
        seen = ~np.isnan(resid)
        r = np.where(seen, resid, 0.0) @ X[at:at + m]  # (deals, 2) score contributions
        meat += r.T @ r
        clusters += int(seen.any(axis=1).sum())
        at += m
    inv = np.linalg.inv(bread + 1e-12 * np.eye(2))
    cov = inv @ meat @ inv * (clusters / max(clusters - 1, 1))
    distinct = np.unique(x)
    means = np.array([s[x == v].sum() / n[x == v].sum() for v in distinct])
    games = np.array([n[x == v].sum() for v in distinct])
    return Fit(coef, cov, int(n.sum()), distinct, means, games)


@dataclass
class Answer:
    """The fair value of one search: where the curve meets the target, with its interval."""

    estimate: float | None        # the value that meets the target (None: no crossing)
    low: float                    # the interval on it (may be -inf/inf: unbounded)
    high: float
    status: str                   # "found" | "outside_range" | "no_dependence" | "unresolved"
    slope_p: float                # p-value of "the figure does not depend on the value"
    lo: float                     # the searched range
    hi: float
    target: float
    nearest: list = field(default_factory=list)   # integer options: the nearest integers

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2

    def as_dict(self) -> dict:
        def num(v):
            return None if v is None or not math.isfinite(v) else float(v)
        return {"estimate": num(self.estimate), "low": num(self.low), "high": num(self.high),
                "status": self.status, "slope_p": float(self.slope_p), "range": [self.lo, self.hi],
                "target": self.target, "nearest": list(self.nearest)}


def fieller(f: Fit, target: float, alpha=st.ALPHA) -> tuple[float, float, str]:
    """Fieller's interval on x with a + b x = logit(target): (low, high, shape), shape
    "bounded", "unbounded" (the complement of an interval, or everything)."""
    z2 = sps.norm.ppf(1 - alpha / 2) ** 2
    a, b = f.coef
    c = logit(target)
    v00, v01, v11 = f.cov[0, 0], f.cov[0, 1], f.cov[1, 1]
    # (a - c + b x)^2 <= z2 (v00 + 2 x v01 + x^2 v11)  <=>  A x^2 + B x + C <= 0
    A = b * b - z2 * v11
    B = 2 * (b * (a - c) - z2 * v01)
    C = (a - c) ** 2 - z2 * v00
    disc = B * B - 4 * A * C
    if A > 0 and disc >= 0:
        r = math.sqrt(disc)
        return (-B - r) / (2 * A), (-B + r) / (2 * A), "bounded"
    return -math.inf, math.inf, "unbounded"


def answer(f: Fit, lo: float, hi: float, target: float, alpha=st.ALPHA,
           integer: bool = False) -> Answer:
    """The fair value of a fit over the range [lo, hi]."""
    a, b = f.coef
    se_b = math.sqrt(max(f.cov[1, 1], 0.0))
    slope_p = float(2 * sps.norm.sf(abs(b) / se_b)) if se_b > 0 else (0.0 if b else 1.0)
    low, high, shape = fieller(f, target, alpha)
    estimate = (logit(target) - a) / b if b != 0 else None
    if shape == "unbounded":
        # the slope is not distinguishable from 0 at this level
        status = "no_dependence" if slope_p > alpha else "unresolved"
        return Answer(estimate, low, high, status, slope_p, lo, hi, target)
    if high < lo or low > hi:
        status = "outside_range"
    else:
        status = "found"
    nearest = []
    if integer and status == "found" and estimate is not None:
        e = min(max(estimate, lo), hi)
        nearest = sorted({int(math.floor(e)), int(math.ceil(e))} & set(range(int(lo), int(hi) + 1)))
    return Answer(float(estimate), float(low), float(high), status, slope_p, lo, hi, target,
                  nearest)


def grid(lo: float, hi: float, points: int, integer: bool) -> list:
    """The first wave's values: `points` spread evenly over [lo, hi] (integers: rounded)."""
    values = np.linspace(lo, hi, points)
    if integer:
        return sorted({int(round(v)) for v in values})
    return [float(v) for v in values]


def next_values(ans: Answer, integer: bool) -> list:
    """The next wave's values: the estimate and its interval's ends, clamped to the range
    (where an unbounded or outside interval gives no guidance: the range's ends and middle)."""
    lo, hi = ans.lo, ans.hi
    if ans.status != "found":
        points = [lo, (lo + hi) / 2, hi]
    else:
        points = [min(max(v, lo), hi) for v in (ans.low, ans.estimate, ans.high)]
    if integer:
        out = set()
        for v in points:
            out.add(int(math.floor(v)))
            out.add(int(math.ceil(v)))
        return sorted(v for v in out if lo <= v <= hi)
    return sorted(set(float(v) for v in points))


def done(ans: Answer, precision: float) -> bool:
    """Stop: the interval on the fair value is within +-precision, or the range surely holds
    none (its whole interval lies outside)."""
    return ans.status == "outside_range" or (ans.status == "found"
                                             and ans.half_width <= precision)


def search(play, lo: float, hi: float, target: float, precision: float, wave_games: int,
           max_games: int, integer: bool = False, first_points: int = 5,
           alpha=st.ALPHA) -> tuple[Answer, Fit, list]:
    """The sequential search.  play(values, start, count) -> Y (count deals x len(values))
    plays deals start..start+count-1 at every value (the same deals for each).  Waves go on
    until done() or max_games games in all; returns (answer, fit, waves)."""
    waves, start, used = [], 0, 0
    values = grid(lo, hi, first_points, integer)
    while True:
        # waves grow geometrically (each about doubles the games), so there are few looks
        want = wave_games if not waves else max(wave_games, used // len(values))
        count = max(1, min(want, (max_games - used) // max(len(values), 1)))
        y = np.asarray(play(values, start, count), dtype=np.float64)
        waves.append((np.asarray(values, dtype=np.float64), y))
        start += count
        used += count * len(values)
        f = fit(waves)
        ans = answer(f, lo, hi, target, alpha, integer)
        if done(ans, precision) or used + len(values) > max_games:
            return ans, f, waves
        values = next_values(ans, integer)


def paired_difference(diff) -> dict:
    """Mean of per-game paired differences with its 95% t interval (restricted play: the
    same deal with and without an action kind)."""
    diff = np.asarray(diff, dtype=np.float64)
    diff = diff[~np.isnan(diff)]  # a pair with a game ended at a simulator safety
    n = len(diff)
    mean = float(diff.mean())
    sd = float(diff.std(ddof=1)) if n > 1 else math.inf
    low, high = st.mean_interval(mean, sd, n)
    return {"mean": mean, "low": float(low), "high": float(high), "n": n}


def sentence(ans: Answer, option: str, unit: str, what: str) -> str:
    """One plain sentence on the answer, e.g. "seat 4 needs +2.3 [1.4, 3.1] gold to be fair"."""
    def v(x):
        return f"{x:+.2f}" if math.isfinite(x) else ("-inf" if x < 0 else "+inf")
    rng = f"[{ans.lo:g}, {ans.hi:g}]"
    if ans.status == "found":
        text = (f"{what} at {option} = {ans.estimate:.2f} [{v(ans.low)}, {v(ans.high)}] "
                f"{unit} (95% interval on the value; searched {rng})")
        if ans.nearest:
            text += f"; the nearest integers are {ans.nearest}"
        return text
    if ans.status == "outside_range":
        side = "above" if ans.low > ans.hi else "below"
        return (f"no value of {option} in {rng} makes {what}: the fair value lies {side} "
                f"the range ([{v(ans.low)}, {v(ans.high)}])")
    if ans.status == "no_dependence":
        return (f"the figure is not shown to depend on {option} over {rng} (slope p = "
                f"{ans.slope_p:.2g}): no fair value can be named")
    return (f"not decided: the interval on the fair value of {option} is unbounded at this "
            f"many games (slope p = {ans.slope_p:.2g})")
