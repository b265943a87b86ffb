"""Fair-value search statistics: which value of a rule option meets a target, with an interval
on the value itself (numpy/scipy only; no engine, no service).

The data are *waves*: each wave plays a few option values on the same deals, so it is a matrix
Y (deals x values) of per-game figures in [0, 1] (services/balance.py builds them):
- equal seats (seat_figure): the seat's own win share, and 1/k in a game nobody wins; its fair
  value is fair_share(k) = 1/k at every player count (the seat wins (1 - no-winner share)/k,
  as often as each other seat on average).  The figure spans [0, 1] at 2, 3 and 4 players
  alike (a figure that mixes in the others' mean lives in [1/3, 1] at 4 players and biases any
  curve fitted on [0, 1]);
- a target rate: the seat's (or the team's) win share, the target the rate.

The curve is *not* assumed to be one logistic over the range.  It is the mean figure at each
value played, joined by straight lines (a local fit: between two neighbouring values only
their own games count), with the covariance of the means robust to the deals the values
share (a cluster sandwich, one cluster per deal of a wave, G/(G-1) corrected): common deals
make it narrower without making it wrong.

The interval on the fair value is the set of values x at which "the curve meets the target"
is not rejected at level alpha: on each segment, |interpolated mean - target| <= z se, a
quadratic inequality solved exactly (Fieller's construction, segment by segment).  It may be
several pieces where the curve is near the target in several places; it is unbounded on a
side where it reaches the end of the range.  It is exact where the curve is straight between
neighbouring values played, whatever its shape elsewhere (steep ends, bumps), and the later
waves play the integers around the answer, where that holds best.  "Not fair anywhere in the
range" is claimed only when every value in the range is rejected; otherwise the values still
possible are named.  The answer also says when the means are shown not monotone (a shown rise
and a shown fall, Bonferroni over the pairs) and when the curve is shown to cross the target
more than once (values shown above, below and above it again).

The search is adaptive: after a first look over the range (first_look: every integer of a
short range, else a grid; a segment with unplayed integers inside that is shown curved is
taken whole, _unplayed_inside) each look plays the values that
inform the answer most (next_wave: the integers around the estimate and the pieces' ends,
weighted by what they carry), as many games as the previous look said the precision needs
(games_to_precision), until the set is narrower than asked and rests on values played
around it (done).  benchmarks/fair_value.py measures its coverage and width on known truths.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import stats as sps

from pipelines import stats as st

MAX_ITER = 50


# ---- the figure -------------------------------------------------------------------------------
def seat_figure(shares: np.ndarray, seat: int) -> np.ndarray:
    """Per game, the equal-seats figure of `seat` from (games, seats) win shares: its share,
    plus 1/k of the share nobody won (a game without a winner counts as fair: 1/k).  Its
    mean is fair_share(k) exactly when the seat wins as often as each other seat on average."""
    shares = np.asarray(shares, dtype=np.float64)
    k = shares.shape[1]
    return shares[:, seat] + (1.0 - shares.sum(axis=1)) / k


def fair_share(players: int) -> float:
    """The equal-seats target of seat_figure: 1/k."""
    return 1.0 / players


def figure_points(y, players: int):
    """seat_figure's values as 'the seat's win share less the others' mean' (0 when fair):
    k/(k-1) (y - 1/k)."""
    return players / (players - 1) * (np.asarray(y, dtype=np.float64) - 1.0 / players)


def logit(p):
    p = np.asarray(p, dtype=np.float64)
    return np.log(p / (1.0 - p))


def expit(z):
    return 1.0 / (1.0 + np.exp(-np.asarray(z, dtype=np.float64)))


# ---- the curve --------------------------------------------------------------------------------
@dataclass
class Curve:
    """The observed curve: the mean figure at each distinct value played, their deal-robust
    covariance, the figure's sd at each value, and a logistic trend fitted over all of it
    (its slope's p-value says whether the figure depends on the option at all)."""

    values: np.ndarray            # the distinct values played, ascending
    means: np.ndarray             # the mean figure at each
    counts: np.ndarray            # games at each
    cov: np.ndarray               # covariance of the means (cluster sandwich)
    sd: np.ndarray                # the per-game figure's sd at each value
    trend: np.ndarray             # logistic (a, b) over all the data
    trend_cov: np.ndarray
    games: int

    def at(self, x):
        """(mean, se) of the interpolated curve at x (ends: the nearest segment, extended)."""
        x = np.atleast_1d(np.asarray(x, dtype=np.float64))
        v = self.values
        if len(v) == 1:
            se = math.sqrt(max(self.cov[0, 0], 0.0))
            return np.full(x.shape, self.means[0]), np.full(x.shape, se)
        j = np.clip(np.searchsorted(v, x, side="right") - 1, 0, len(v) - 2)
        t = (x - v[j]) / (v[j + 1] - v[j])
        mean = (1 - t) * self.means[j] + t * self.means[j + 1]
        var = ((1 - t) ** 2 * self.cov[j, j] + 2 * t * (1 - t) * self.cov[j, j + 1]
               + t * t * self.cov[j + 1, j + 1])
        return mean, np.sqrt(np.maximum(var, 0.0))

    def band(self, x, alpha=st.ALPHA):
        """(curve, low, high) at x: the interpolated figure and its pointwise interval."""
        mean, se = self.at(x)
        z = sps.norm.ppf(1 - alpha / 2)
        return mean, mean - z * se, mean + z * se

    def slope_at(self, x) -> float:
        """The curve's slope (figure per unit) on the segment holding x."""
        v = self.values
        if len(v) < 2:
            return 0.0
        j = int(np.clip(np.searchsorted(v, x, side="right") - 1, 0, len(v) - 2))
        return float((self.means[j + 1] - self.means[j]) / (v[j + 1] - v[j]))

    def index(self, value) -> int | None:
        hit = np.nonzero(self.values == value)[0]
        return int(hit[0]) if len(hit) else None


def _trend(x, s, n):
    """The logistic quasi-likelihood fit of sums s over counts n at values x: (coef, bread)."""
    X = np.column_stack([np.ones_like(x), x])
    total = min(max(s.sum() / n.sum(), 1e-6), 1 - 1e-6)
    coef = np.array([math.log(total / (1 - total)), 0.0])
    for _ in range(MAX_ITER):                  # IRLS (Newton on the quasi-likelihood)
        mu = expit(X @ coef)
        w = n * mu * (1 - mu)
        step = np.linalg.solve(X.T @ (X * w[:, None]) + 1e-12 * np.eye(2), X.T @ (s - n * mu))
        coef = coef + step
        if np.max(np.abs(step)) < 1e-10 or not np.all(np.isfinite(coef)):
            break
    return coef, X


def fit(waves: list[tuple[np.ndarray, np.ndarray]]) -> Curve:
    """The observed curve of waves [(values (m,), Y (deals, m)), ...]; a NaN in Y is a deal
    not observed at that value (a game that ended at a simulator safety)."""
    xs, sums, counts = [], [], []
    for values, y in waves:
        xs.append(np.asarray(values, dtype=np.float64))
        sums.append(np.nansum(np.asarray(y, dtype=np.float64), axis=0))
        counts.append((~np.isnan(np.asarray(y, dtype=np.float64))).sum(axis=0)
                      .astype(np.float64))
    x, s, n = np.concatenate(xs), np.concatenate(sums), np.concatenate(counts)
    distinct = np.unique(x)
    m = len(distinct)
    col = {float(v): i for i, v in enumerate(distinct)}
    total_s = np.array([s[x == v].sum() for v in distinct])
    total_n = np.array([n[x == v].sum() for v in distinct])
    means = total_s / total_n
    coef, X = _trend(x, s, n)
    mu = expit(X @ coef)
    meat_c = np.zeros((m, m))                  # the means' cluster sandwich
    meat_t = np.zeros((2, 2))                  # the trend's
    sq = np.zeros(m)
    clusters, at = 0, 0
    for values, y in waves:                    # one cluster per deal of a wave
        y = np.asarray(y, dtype=np.float64)
        seen = ~np.isnan(y)                    # NaN: the deal not observed at that value
        idx = [col[float(v)] for v in values]
        k = len(values)
        dev = np.where(seen, y - means[idx][None, :], 0.0)
        full = np.zeros((y.shape[0], m))
        full[:, idx] = dev / total_n[idx][None, :]
        meat_c += full.T @ full
        sq[idx] += (dev ** 2).sum(axis=0)
        rt = np.where(seen, y - mu[at:at + k][None, :], 0.0) @ X[at:at + k]
        meat_t += rt.T @ rt
        clusters += int(seen.any(axis=1).sum())
        at += k
    g = clusters / max(clusters - 1, 1)
    bread = X.T @ (X * (n * mu * (1 - mu))[:, None])
    inv = np.linalg.inv(bread + 1e-12 * np.eye(2))
    sd = np.sqrt(sq / np.maximum(total_n - 1, 1))
    return Curve(distinct, means, total_n, meat_c * g, sd, coef, inv @ meat_t @ inv * g,
                 int(n.sum()))


# ---- the answer -------------------------------------------------------------------------------
def _quadratic_set(A: float, B: float, C: float, lo: float, hi: float) -> list:
    """The pieces of [lo, hi] where A t^2 + B t + C <= 0."""
    scale = max(abs(A), abs(B), abs(C), 1e-300)
    A, B, C = A / scale, B / scale, C / scale
    if abs(A) < 1e-12:
        if abs(B) < 1e-12:
            return [[lo, hi]] if C <= 0 else []
        r = -C / B
        piece = [lo, min(hi, r)] if B > 0 else [max(lo, r), hi]
        return [piece] if piece[0] <= piece[1] else []
    disc = B * B - 4 * A * C
    if disc < 0:
        return [[lo, hi]] if A < 0 else []
    r = math.sqrt(disc)
    r1, r2 = sorted(((-B - r) / (2 * A), (-B + r) / (2 * A)))
    if A > 0:
        pieces = [[max(lo, r1), min(hi, r2)]]
    else:
        pieces = [[lo, min(hi, r1)], [max(lo, r2), hi]]
    return [p for p in pieces if p[0] <= p[1]]


def _merge(pieces: list) -> list:
    out = []
    for a, b in sorted(pieces):
        if out and a <= out[-1][1] + 1e-9:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def confidence_set(c: Curve, target: float, lo: float, hi: float, alpha=st.ALPHA) -> list:
    """The values x in [lo, hi] where 'the curve meets the target' is not rejected: pieces
    [[a, b], ...] (segment by segment; beyond the values played, the end segment extended)."""
    z2 = sps.norm.ppf(1 - alpha / 2) ** 2
    v = c.values
    if len(v) == 1:
        se2 = max(c.cov[0, 0], 0.0)
        return [[lo, hi]] if (c.means[0] - target) ** 2 <= z2 * se2 else []
    pieces = []
    edges = list(v)
    for j in range(len(v) - 1):
        a, b = (lo if j == 0 else edges[j]), (hi if j == len(v) - 2 else edges[j + 1])
        a, b = max(a, lo), min(b, hi)
        if a > b:
            continue
        x0, w = v[j], v[j + 1] - v[j]
        m0, d = c.means[j] - target, c.means[j + 1] - c.means[j]
        c00, c01, c11 = c.cov[j, j], c.cov[j, j + 1], c.cov[j + 1, j + 1]
        # (m0 + t d)^2 <= z2 ((1-t)^2 c00 + 2 t (1-t) c01 + t^2 c11), t = (x - x0) / w
        A = d * d - z2 * (c00 - 2 * c01 + c11)
        B = 2 * (m0 * d - z2 * (c01 - c00))
        C = m0 * m0 - z2 * c00
        for ta, tb in _quadratic_set(A, B, C, (a - x0) / w, (b - x0) / w):
            pieces.append([x0 + ta * w, x0 + tb * w])
    return _merge(pieces)


def crossings(c: Curve, target: float, lo: float, hi: float) -> list:
    """Where the interpolated curve meets the target inside [lo, hi] (ascending)."""
    out = []
    v, m = c.values, c.means - target
    for j in range(len(v) - 1):
        if m[j] == 0:
            out.append(float(v[j]))
        elif m[j] * m[j + 1] < 0:
            out.append(float(v[j] + (v[j + 1] - v[j]) * m[j] / (m[j] - m[j + 1])))
    if len(v) and m[-1] == 0:
        out.append(float(v[-1]))
    return sorted({x for x in out if lo <= x <= hi})


def shape(c: Curve, target: float, alpha=st.ALPHA) -> dict:
    """What the means show about the curve's shape: 'not_monotone' (a rise and a fall, each
    shown at alpha over the pairs, Bonferroni), 'crossings_shown' (the number of sign changes
    among the values shown off the target, Bonferroni over the values; > 0 means a crossing
    is shown, > 1 several)."""
    m = len(c.values)
    rise = fall = False
    if m >= 2:
        pairs = m * (m - 1) / 2
        zc = sps.norm.ppf(1 - alpha / (2 * pairs))
        for i in range(m):
            for j in range(i + 1, m):
                var = c.cov[i, i] + c.cov[j, j] - 2 * c.cov[i, j]
                if var <= 0:
                    continue
                zij = (c.means[j] - c.means[i]) / math.sqrt(var)
                rise |= zij > zc
                fall |= zij < -zc
    zv = sps.norm.ppf(1 - alpha / (2 * max(m, 1)))
    signs = []
    for i in range(m):
        se = math.sqrt(max(c.cov[i, i], 0.0))
        off = c.means[i] - target
        if se > 0 and abs(off) > zv * se:
            s = 1 if off > 0 else -1
            if not signs or signs[-1] != s:
                signs.append(s)
    return {"not_monotone": bool(rise and fall), "crossings_shown": max(len(signs) - 1, 0),
            "rise": bool(rise), "fall": bool(fall)}


@dataclass
class Answer:
    """The fair value of one search: where the curve meets the target, with its interval."""

    estimate: float | None        # where the curve meets the target (None: nowhere named)
    low: float                    # the hull of the values still possible (-inf/inf: open)
    high: float
    status: str                   # "found" | "edge" | "outside_range" | "no_dependence" | "unresolved"
    slope_p: float                # p-value of "the figure does not depend on the value" (trend)
    lo: float                     # the searched range
    hi: float
    target: float
    nearest: list = field(default_factory=list)   # integers to confirm: those around the
    #                                               estimate (edge: the range's end beside it)
    pieces: list = field(default_factory=list)    # the values still possible, [[a, b], ...]
    crossings: list = field(default_factory=list)  # where the observed curve meets the target
    not_monotone: bool = False
    crossings_shown: int = 0
    side: str | None = None       # outside_range / edge: "above" or "below" the range
    unplayed: list = field(default_factory=list)  # segments [a, b] under the values still
    #                       possible whose inner integers were never played (_unplayed_inside)
    curved: list = field(default_factory=list)    # ... of them, those shown curved: taken whole

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2

    def as_dict(self) -> dict:
        def num(v):
            return None if v is None or not math.isfinite(v) else float(v)
        return {"estimate": num(self.estimate), "low": num(self.low), "high": num(self.high),
                "status": self.status, "slope_p": float(self.slope_p), "range": [self.lo, self.hi],
                "target": self.target, "nearest": list(self.nearest),
                "possible": [[float(a), float(b)] for a, b in self.pieces],
                "crossings": [float(x) for x in self.crossings],
                "not_monotone": self.not_monotone, "crossings_shown": self.crossings_shown,
                "side": self.side, "unplayed": [[float(a), float(b)] for a, b in self.unplayed],
                "curved": [[float(a), float(b)] for a, b in self.curved]}


def _trend_p(c: Curve) -> float:
    b = c.trend[1]
    se_b = math.sqrt(max(c.trend_cov[1, 1], 0.0))
    if not math.isfinite(b):
        return 0.0
    return float(2 * sps.norm.sf(abs(b) / se_b)) if se_b > 0 else (0.0 if b else 1.0)


def _beyond(c: Curve, target: float, side: str) -> float | None:
    """The end segment's line extended to the target on `side` (an extrapolation)."""
    if len(c.values) < 2:
        return None
    j = len(c.values) - 2 if side == "above" else 0
    d = c.means[j + 1] - c.means[j]
    if d == 0:
        return None
    x = c.values[j] + (target - c.means[j]) * (c.values[j + 1] - c.values[j]) / d
    ok = x > c.values[-1] if side == "above" else x < c.values[0]
    return float(x) if ok else None


def _slope_change(c: Curve, j: int) -> float:
    """|z| of the change of slope between the segments j - 1 and j (meeting at values[j])."""
    v = c.values
    g = np.zeros(len(v))
    g[j - 1], g[j + 1] = 1 / (v[j] - v[j - 1]), 1 / (v[j + 1] - v[j])
    g[j] = -g[j - 1] - g[j + 1]
    var = float(g @ c.cov @ g)
    return abs(float(g @ c.means)) / math.sqrt(var) if var > 0 else 0.0


def _unplayed_inside(c: Curve, pieces: list, alpha: float) -> tuple[list, list]:
    """(unplayed, curved): the segments between neighbouring integers played that hold
    integers never played and a piece of the values still possible, and of them those where
    the curve is shown not straight (its slope differs from a neighbouring segment's, at
    alpha, Bonferroni over the two).  On a curved one the line between the ends says
    nothing of where inside the curve meets the target (the steep truth: the line from 2 to
    4 meets it at 3.04, the curve's integers at 3.32), so the answer takes it whole."""
    v = c.values
    unplayed, curved = [], []
    zc = sps.norm.ppf(1 - alpha / 4)
    for j in range(len(v) - 1):
        a, b = float(v[j]), float(v[j + 1])
        if b - a <= 1 + 1e-9 or not any(p < b and q > a for p, q in pieces):
            continue
        unplayed.append([a, b])
        near = [i for i in (j, j + 1) if 1 <= i <= len(v) - 2]
        if any(_slope_change(c, i) > zc for i in near):
            curved.append([a, b])
    return unplayed, curved


def answer(c: Curve, lo: float, hi: float, target: float, alpha=st.ALPHA,
           integer: bool = False) -> Answer:
    """The fair value of a curve over the range [lo, hi].  An integer option's segment whose
    inner integers were never played and that is shown curved is taken whole into the
    values still possible (_unplayed_inside); the answer names such segments (not final)."""
    slope_p = _trend_p(c)
    pieces = confidence_set(c, target, lo, hi, alpha)
    unplayed, curved = _unplayed_inside(c, pieces, alpha) if integer else ([], [])
    pieces = _merge(pieces + [list(s) for s in curved])
    cross = crossings(c, target, lo, hi)
    sh = shape(c, target, alpha)
    common = dict(slope_p=slope_p, lo=lo, hi=hi, target=target, pieces=pieces,
                  crossings=cross, not_monotone=sh["not_monotone"],
                  crossings_shown=sh["crossings_shown"], unplayed=unplayed, curved=curved)
    if not pieces:
        # every value in the range is shown off the target
        above = bool(np.all(c.means > target))
        rising = c.trend[1] > 0
        side = ("below" if above == rising else "above") if (
            np.all(c.means > target) or np.all(c.means < target)) else None
        est = _beyond(c, target, side) if side else None
        return Answer(est, math.nan, math.nan, "outside_range", side=side, **common)
    low, high = pieces[0][0], pieces[-1][1]
    if low <= lo and high >= hi:
        status = "no_dependence" if slope_p > alpha else "unresolved"
        return Answer(cross[0] if len(cross) == 1 else None, -math.inf, math.inf, status,
                      **common)
    # a piece that reaches an end of the range leaves the values beyond it possible
    low = -math.inf if low <= lo else low
    high = math.inf if high >= hi else high
    if cross:
        # several crossings: the one most clearly crossed (the largest |slope| / se)
        def clarity(x):
            mean, se = c.at(x)
            return abs(c.slope_at(x)) / max(float(se[0]), 1e-300)
        estimate = max(cross, key=clarity) if len(cross) > 1 else cross[0]
        status, side = "found", None
    else:
        side = "above" if math.isinf(high) else "below"
        estimate = _beyond(c, target, side)
        status = "edge"
    nearest = []
    if integer and status == "found":
        nearest = sorted({int(math.floor(estimate)), int(math.ceil(estimate))}
                         & set(range(int(lo), int(hi) + 1)))
    elif integer:            # the end of the range nearest the fair value
        nearest = [int(hi) if side == "above" else int(lo)]
    return Answer(estimate, low, high, status, nearest=nearest, side=side, **common)


def grid(lo: float, hi: float, points: int, integer: bool) -> list:
    """The first wave's values: `points` spread evenly over [lo, hi] (integers: rounded)."""
    values = np.linspace(lo, hi, points)
    if integer:
        return sorted({int(round(v)) for v in values})
    return [float(v) for v in values]


ALL_INTEGERS = 13   # an integer range of at most this many values: the first look plays each


def first_look(lo: float, hi: float, points: int, integer: bool, games: int) -> tuple:
    """(values, games a value) of the first look, `points` x `games` games in all: an integer
    range of at most ALL_INTEGERS values plays every integer (so no segment around an answer
    has an inside never played: the straight line between neighbouring values is then the
    integer option's own curve, and the first answer is as honest as a final one), a wider
    range or a real option the grid of `points` values (games a value each)."""
    if integer and hi - lo + 1 <= ALL_INTEGERS:
        values = list(range(int(lo), int(hi) + 1))
        return values, max(1, int(round(games * points / len(values))))
    return grid(lo, hi, points, integer), games


def _points_of_interest(ans: Answer, faint: dict) -> list:
    """(x, weight) of the values the answer rests on: the estimate and the ends of the pieces
    still possible (an end at the range's end is the range's end); a piece that is all but
    excluded (ALL_BUT_EXCLUDED) weighs LIGHT; without a piece to aim at, the range's ends and
    middle."""
    lo, hi = ans.lo, ans.hi
    if ans.status not in ("found", "edge"):
        return [(lo, 1.0), ((lo + hi) / 2, 1.0), (hi, 1.0)]
    out = [] if ans.estimate is None else [(min(max(ans.estimate, lo), hi), 1.0)]
    for a, b in ans.pieces:
        held = ans.estimate is not None and a <= ans.estimate <= b
        weight = 1.0 if held or not faint.get((a, b)) else LIGHT
        out += [(a, weight), (b, weight)]
    return out


LIGHT = 0.15                  # the weight of a piece all but excluded, beside 1
ALL_BUT_EXCLUDED = 0.8        # ... a piece whose best point is this share of z from the target


def _bracket(x: float, lo: float, hi: float, integer: bool, precision: float) -> list:
    """[(value, coefficient)]: the values to play around x and their coefficients in the
    interpolated curve there (integers: floor and ceil; a real option: x -+ precision / 2)."""
    if integer:
        a, b = int(math.floor(x)), int(math.ceil(x))
        if a == b:
            return [(a, 1.0)]
    else:
        half = precision / 2
        a, b = max(lo, x - half), min(hi, x + half)
        if b - a <= 1e-12:
            return [(float(a), 1.0)]
    t = (x - a) / (b - a)
    return [(a, 1.0 - t), (b, t)]


def next_wave(ans: Answer, c: Curve, integer: bool, precision: float = 0.5,
              alpha=st.ALPHA) -> dict:
    """The next wave's values and their shares of its games: the values around the estimate
    and around the ends of the pieces still possible (_points_of_interest, clamped to the
    range), each weighted by the information it carries there.  A value's share is Neyman's
    for the variance of the curve at those points: sd x sqrt(sum of its squared
    interpolation coefficients x the point's weight), so the integers on either side of the
    estimate get most of the games, the nearer one more, and the ends of a piece all but
    excluded few.  A value gets at least MIN_SHARE of the largest share (every segment keeps
    both ends)."""
    lo, hi = ans.lo, ans.hi
    need: dict = {}
    faint = _faint_pieces(ans, c, alpha) if len(c.values) else {}
    for x, weight in _points_of_interest(ans, faint):
        x = min(max(x, lo), hi)
        for v, coef in _bracket(x, lo, hi, integer, precision):
            v = int(v) if integer else float(v)
            if lo <= v <= hi:
                need[v] = need.get(v, 0.0) + weight * coef * coef
    if integer and len(need) == 1:         # a segment needs two ends
        v = next(iter(need))
        need[v + 1 if v + 1 <= hi else v - 1] = 0.0
    sd_max = float(np.max(c.sd)) if len(c.sd) else 0.5
    shares = {}
    for v, w in need.items():
        i = c.index(v)
        sd = float(c.sd[i]) if i is not None and c.counts[i] > 1 else sd_max
        shares[v] = max(sd, 1e-3) * math.sqrt(w)
    top = max(shares.values())
    shares = {v: max(s, MIN_SHARE * top) for v, s in shares.items()}
    total = sum(shares.values())
    return {v: s / total for v, s in sorted(shares.items())}


MIN_SHARE = 0.2


def _played_around(values: np.ndarray, x: float, integer: bool, precision: float) -> bool:
    """Whether the curve at x rests on values played close enough for a straight line between
    them to be the option's own curve: an integer option, the integers on both sides of x
    (x itself when it is one); a real option, the played values around x within precision of
    each other."""
    if integer:
        need = {int(math.floor(x + 1e-9)), int(math.ceil(x - 1e-9))}
        return need <= {int(v) for v in values if float(v).is_integer()}
    below, above = values[values <= x + 1e-12], values[values >= x - 1e-12]
    return bool(len(below) and len(above) and above.min() - below.max() <= precision + 1e-12)


def done(ans: Answer, precision: float, c: Curve | None = None, integer: bool = False) -> bool:
    """Stop: the range surely holds no fair value (every value is shown off the target), or
    the values still possible lie within +-precision *and* rest on values played around them
    (_played_around: the estimate and every end of a piece it names, within the range), so
    the search never stops on a segment whose inside was never played (the straight line
    there is exact only if the curve is).  Without the curve (c None) the second condition
    cannot be checked and the search does not stop but on the first."""
    if ans.status == "outside_range":
        return True
    if ans.status != "found" or ans.half_width > precision or c is None:
        return False
    points = [ans.estimate] + [e for p in ans.pieces for e in p]
    return all(_played_around(c.values, min(max(x, ans.lo), ans.hi), integer, precision)
               for x in points)


def _faint_pieces(ans: Answer, c: Curve, alpha: float) -> dict:
    """{(a, b): True} for the pieces all but excluded: at their best point (the middle) the
    curve is still ALL_BUT_EXCLUDED x z standard errors from the target."""
    z = sps.norm.ppf(1 - alpha / 2)
    out = {}
    for a, b in ans.pieces:
        mean, se = c.at((a + b) / 2)
        out[(a, b)] = bool(abs(mean[0] - ans.target) > ALL_BUT_EXCLUDED * z * max(se[0], 1e-12))
    return out


def _wave_counts(shares: dict, total: int) -> list:
    """The wave's games split by shares into nested waves of common deals: [(values, count)],
    the first playing every value, each later one the values that get more."""
    want = {v: max(1, int(round(total * s))) for v, s in shares.items()}
    out, given = [], 0
    for level in sorted(set(want.values())):
        values = [v for v in shares if want[v] >= level]
        out.append((values, level - given))
        given = level
    return out


MIN_LOOKS = 3  # the first look a search may stop at (the grid, one adaptive look, then this)


def search(play, lo: float, hi: float, target: float, precision: float, wave_games: int,
           max_games: int, integer: bool = False, first_points: int = 5,
           alpha=st.ALPHA, on_wave=None) -> tuple[Answer, Curve, list]:
    """The sequential search.  play(values, start, count) -> Y (count deals x len(values))
    plays deals start..start+count-1 at every value (the same deals for each).  The first
    look is first_look's (first_points x wave_games games); each later look plays the
    games the previous look said the precision needs (games_to_precision; between half and
    three times the games so far, as many again while it cannot say), spread by next_wave
    over the values that inform the answer most, as nested waves of common deals (several
    play calls, each on deals of its own).  It stops when done() holds at a look that has
    played what the previous one planned, from the MIN_LOOKS-th look on (a stop on the
    first adaptive look is chosen for luck: the error of the curve at the fair value was
    1.15-1.37 times its stated se in the runs that stopped there), or at max_games; returns
    (answer, curve, waves).  on_wave(answer, curve, waves), when given, sees every interim
    answer (after each look)."""
    waves, start, used = [], 0, 0
    values, count = first_look(lo, hi, first_points, integer, wave_games)
    plan = [(values, None)]
    planned, looks = None, 0
    while True:
        if waves:
            total = used if planned is None else min(max(planned - used, used // 2), 3 * used)
            total = min(max(total, wave_games * len(shares)), max_games - used)
            plan = _wave_counts(shares, total)
        else:
            plan = [(values, max(1, min(count, max_games // max(len(values), 1))))]
        before, first = used, not waves
        for values, count in plan:
            if not first:
                count = min(count, (max_games - used) // len(values))
            if count <= 0:
                continue
            y = np.asarray(play(values, start, count), dtype=np.float64)
            waves.append((np.asarray(values, dtype=np.float64), y))
            start += count
            used += count * len(values)
        if used == before:                   # max_games leaves no game to play
            return ans, c, waves
        c = fit(waves)
        ans = answer(c, lo, hi, target, alpha, integer)
        if on_wave:
            on_wave(ans, c, waves)
        shares = next_wave(ans, c, integer, precision, alpha)
        looks += 1
        reached = planned is not None and used >= planned and looks >= MIN_LOOKS
        if ans.status == "outside_range" or (reached and done(ans, precision, c, integer)) \
                or used + len(shares) > max_games:
            return ans, c, waves
        more = games_to_precision(ans, c, precision, alpha)
        planned = None if more is None or not math.isfinite(more) else used + int(more)


def at_value(c: Curve, value) -> tuple[float, float]:
    """(mean, sd) of the per-game figure at `value` as the search saw it (a value not played:
    the interpolated mean and the largest sd seen)."""
    i = c.index(value)
    if i is None:
        return float(c.at(value)[0][0]), float(np.max(c.sd))
    return float(c.means[i]), float(c.sd[i])


def games_to_precision(ans: Answer, c: Curve, precision: float,
                       alpha=st.ALPHA) -> float | None:
    """About how many more games would bring the values still possible within +-precision;
    0 when they are there.  A bounded interval narrows as one over the root of the games:
    games * ((half-width / precision)^2 - 1).  An open one (an edge, or every value still
    possible) is as narrow as asked once the curve's se at the fair value is precision *
    slope / z: the slope is the logistic trend's at the target (over all the games, so that
    a few noisy means do not set it), the fair value the estimate (or the end of the range
    beside it), and the se falls as one over the root of the games.  None when the figure is
    not shown to depend on the option (no slope: no number of games can be named).  A
    segment taken whole for its unplayed inside (Answer.curved) is narrowed by playing it,
    not by more games: the forecast is the straight lines' (confidence_set's)."""
    half = ans.half_width
    if ans.curved:
        line = confidence_set(c, ans.target, ans.lo, ans.hi, alpha)
        half = (line[-1][1] - line[0][0]) / 2 if line else 0.0
    if ans.status == "outside_range" or (ans.status == "found" and half <= precision):
        return 0.0
    if math.isfinite(half):
        return c.games * ((half / precision) ** 2 - 1)
    if ans.slope_p > alpha:
        return None
    t = min(max(ans.target, 1e-6), 1 - 1e-6)
    slope = abs(float(c.trend[1])) * t * (1 - t)     # the trend's figure per unit there
    if ans.estimate is not None:
        x = ans.estimate
    else:
        x = ans.hi if ans.side == "above" else ans.lo
    se_now = float(c.at(min(max(x, ans.lo), ans.hi))[1][0])
    se_goal = precision * slope / sps.norm.ppf(1 - alpha / 2)
    if se_goal <= 0:
        return None
    return max(c.games * ((se_now / se_goal) ** 2 - 1), 0.0)


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


def bound_text(x: float, lo: float, hi: float, signed: bool = False) -> str:
    """One end of an interval on the fair value: the number, or for an end open to a side
    (the values still possible reach the end of the range) which end of the range it reaches
    ('at or below the range's low end 0'), never an infinity."""
    if math.isfinite(x):
        return f"{x:+.2f}" if signed else f"{x:.2f}"
    return (f"at or below the range's low end {lo:g}" if x < 0
            else f"at or above the range's high end {hi:g}")


def interval_text(ans: Answer, signed: bool = False) -> str:
    """The answer's interval on the fair value in words: '[0.37, 1.20]', or with an end open
    to a side '[at or below the range's low end 0, 3.13]' (bound_text)."""
    return (f"[{bound_text(ans.low, ans.lo, ans.hi, signed)}, "
            f"{bound_text(ans.high, ans.lo, ans.hi, signed)}]")


def _pieces_text(pieces: list) -> str:
    return " and ".join(f"{a:+.2f}..{b:+.2f}" for a, b in pieces)


def shape_text(ans: Answer) -> str:
    """The shape warnings of an answer ('' when there are none)."""
    out = []
    if ans.unplayed:
        spans = " and ".join(f"{a:g}..{b:g}" for a, b in ans.unplayed)
        out.append(f"not final: the integers inside {spans} were not played yet" + (
            " and the curve is shown curved there, so the interval takes "
            + " and ".join(f"{a:g}..{b:g}" for a, b in ans.curved) + " whole"
            if ans.curved else ", the interval assumes the curve straight there"))
    if ans.crossings_shown > 1:
        out.append("the curve crosses the target more than once (values shown on either side "
                   "of it in turn): several values are fair")
    if ans.not_monotone:
        out.append("the curve is not monotone over the range (a rise and a fall are both "
                   "shown)")
    return "; ".join(out)


def sentence(ans: Answer, option: str, unit: str, what: str) -> str:
    """One plain sentence on the answer, e.g. "the seat fair at seat_bonus_gold = 2.31
    [+1.40, +3.10] gold (...)"."""
    rng = f"{ans.lo:g}..{ans.hi:g}"
    if ans.status == "found":
        text = (f"{what} at {option} = {ans.estimate:.2f} {interval_text(ans, signed=True)} "
                f"{unit} (95% interval on the value; searched {rng})")
        if len(ans.pieces) > 1:
            text += f"; the values still possible: {_pieces_text(ans.pieces)}"
        if ans.nearest:
            text += f"; the nearest integers: {ans.nearest}"
    elif ans.status == "edge":
        end = ans.hi if ans.side == "above" else ans.lo
        text = (f"{option} = {_pieces_text(ans.pieces)} {unit} is not shown unfair (the values "
                f"still possible in {rng}), but the observed curve stays on one side of the "
                f"target there: the value that makes {what} lies there or {ans.side} {end:g}")
        if ans.estimate is not None:
            text += (f" (the last values' line meets the target at {ans.estimate:.2f}, an "
                     "extrapolation)")
    elif ans.status == "outside_range":
        if ans.side is None:
            text = (f"every value of {option} in {rng} is shown unfair, on both sides of the "
                    f"target: no value in the range makes {what}")
        else:
            text = (f"no value of {option} in {rng} makes {what}: every value is shown unfair "
                    f"and the fair value lies {ans.side} the range")
            if ans.estimate is not None:
                text += (f" (the last values' line meets the target at {ans.estimate:.2f}, an "
                         "extrapolation)")
    elif ans.status == "no_dependence":
        text = (f"no value of {option} in {rng} is shown unfair and the figure is not shown to "
                f"depend on {option} (slope p = {ans.slope_p:.2g}): every value is still "
                "possible, no fair value can be named")
    else:
        text = (f"not decided: every value of {option} in {rng} is still possible at this many "
                f"games, though the figure depends on it (slope p = {ans.slope_p:.2g})")
    warn = shape_text(ans)
    return text + (f"; {warn}" if warn else "")
