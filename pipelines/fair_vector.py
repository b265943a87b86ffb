"""Every seat at once: the values of a per-seat option (a starting bonus) that make every seat
fair together, with intervals that hold for all seats at once (numpy/scipy; no engine, no
service).  services/all_seats.py plays the games; benchmarks/fair_vector.py checks it on
known truths.

The question: k seats, the first at a fixed value (0: the book), the other k - 1 free; which
free vector v makes every seat's figure (fair_value.seat_figure: its win share plus 1/k of the
share nobody won) 1/k?

The model (an assumption): near the answer the seats' figures follow a multinomial logit in
the vector.  Seat i's log odds against the first seat are u_i(v) = a_i + sum_j B_ij v_j
(i = 2..k, j over the free seats), so a seat's value may move every seat's share, and
unequally (B's off-diagonal terms: a bonus that hurts one neighbour more than the others).
Every seat is fair exactly where u(v) = 0: v* = -B^-1 a.  The fit is quasi-maximum likelihood
(Newton), with a covariance robust to the deals the vectors share (a cluster sandwich, one
cluster per deal of a wave, G/(G-1) corrected), and it uses only the vectors played around
the current answer (every free value within one unit of it), so the log odds need be linear
only over those neighbouring integers.

The intervals: per free seat, the ends along that seat of Fieller's region {w : u(w)'
Cov(u(w))^-1 u(w) <= c^2} (fieller_box), with c the simultaneous critical value of the
seats' correlated estimates (stats.simultaneous_z: the max-|z| over the seats, under the
estimates' own correlation), so all k-1 hold together at 1 - alpha, neither more
(Bonferroni's and Sidak's boxes are conservative here: every seat is judged against the same
first seat, so the estimates are correlated) nor less.  Near the data it is the delta
method's v*_i +- c se_i; but the log odds' covariance is taken at the interval's end, not at
the estimate, so a slope known only roughly (the star spans one unit either side) widens the
side away from the vectors played, as Fieller's interval of a ratio does (exactly his with
one free seat).  The delta method's symmetric interval, its se taken at the estimate, held
all seats together in 91% of searches at 4 players (docs/lab/2026-12-07-all-seats.md: the
looks stop where that se happens to be small).  And a joint region,
the vectors at which "every seat is fair" is not rejected (Fieller's construction in k-1
dimensions: a chi-square test on u(v) with k-1 degrees of freedom), which names the integer
vectors still possible.

The search (search): a first look plays the book's vector and, one seat at a time, three
values over the range (the others at the book); each later look plays the *star* around the
rounded estimate (that vector and each free value one up and one down, within the range) on
common deals, as many games as the previous look said the precision needs, and refits on the
vectors around the new estimate (a Newton step on a small grid).  It stops from the third
look on when the estimate lies inside the star (every free value within one unit of its
centre: the integers on either side of it were played), the star did not move for this look
(a look on a new star rests on its first games and on the old star's neighbours: at a steep
truth such stops erred by up to 1.6 times the stated se), every seat's interval is within
+-precision and the look played what was planned; or at max_games.  The star moves only when
the estimate leaves it (a stop that waited for the estimate to round to the centre would
choose the estimate's side of a half-integer by luck: the intervals covered 87% at 3 players
with cross effects).
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np
from scipy import stats as sps

from pipelines import fair_value as fv
from pipelines import stats as st

MAX_ITER = 60
REACH = 1            # the fit's vectors: every free value within this of the estimate
MAX_STEP = 2         # a look's centre moves at most this far in any seat
MIN_LOOKS = 3        # the first look a search may stop at (the screen, one star, this one)
MOST_NAMED = 8       # the integer vectors still possible named at most


def figures(shares: np.ndarray) -> np.ndarray:
    """(games, k) win shares -> (games, k) seat figures (fair_value.seat_figure of every
    seat; they sum to 1 in every game)."""
    shares = np.asarray(shares, dtype=np.float64)
    return np.column_stack([fv.seat_figure(shares, s) for s in range(shares.shape[1])])


def _softmax(u: np.ndarray) -> np.ndarray:
    """Shares of (m, k-1) log odds against the first seat: (m, k)."""
    full = np.column_stack([np.zeros(len(u)), u])
    full -= full.max(axis=1, keepdims=True)
    e = np.exp(full)
    return e / e.sum(axis=1, keepdims=True)


def _design(vectors: np.ndarray) -> np.ndarray:
    """(m, k-1) free vectors -> (m, k) rows (1, v)."""
    vectors = np.atleast_2d(np.asarray(vectors, dtype=np.float64))
    return np.column_stack([np.ones(len(vectors)), vectors])


@dataclass
class Fit:
    """The multinomial logit of the seats' figures around the answer: theta[i] = (a, B[i])
    of free seat i's log odds against the first seat, their sandwich covariance (flattened
    row by row), and the data it rests on."""

    vectors: np.ndarray           # (m, k-1) the distinct free vectors used, as played
    means: np.ndarray             # (m, k) the mean figures there
    counts: np.ndarray            # (m,) games there
    theta: np.ndarray             # (k-1, k)
    cov: np.ndarray               # ((k-1) k, (k-1) k)
    games: int

    @property
    def free(self) -> int:
        return self.theta.shape[0]

    def log_odds(self, v) -> tuple[np.ndarray, np.ndarray]:
        """(u(v), its covariance): the free seats' log odds against the first at vector v."""
        z = _design(v)[0]
        d = np.kron(np.eye(self.free), z)
        return self.theta @ z, d @ self.cov @ d.T

    def shares(self, v) -> np.ndarray:
        """The model's figure of every seat at vector v."""
        return _softmax(np.atleast_2d(self.theta @ _design(v)[0]))[0]


def fit(waves: list, centre=None, reach: int = REACH) -> Fit | None:
    """The model fitted to waves [(vectors (m, k-1), Y (deals, m, k) figures), ...] (a NaN
    row: a deal not observed at that vector), on the vectors within `reach` of `centre`
    (every free value; None: all).  None when those vectors cannot identify it (fewer than
    k affinely independent ones)."""
    keep = []
    for vectors, y in waves:
        vectors = np.atleast_2d(np.asarray(vectors, dtype=np.float64))
        near = np.ones(len(vectors), bool) if centre is None else \
            np.all(np.abs(vectors - np.asarray(centre, float)) <= reach + 1e-9, axis=1)
        if near.any():
            keep.append((vectors[near], np.asarray(y, dtype=np.float64)[:, near, :]))
    if not keep:
        return None
    distinct = np.unique(np.concatenate([v for v, _ in keep]), axis=0)
    z = _design(distinct)
    if np.linalg.matrix_rank(z) < z.shape[1]:
        return None
    index = {tuple(v): i for i, v in enumerate(distinct)}
    m, k = len(distinct), z.shape[1]
    sums, counts = np.zeros((m, k)), np.zeros(m)
    for vectors, y in keep:
        seen = ~np.isnan(y).any(axis=2)
        at = [index[tuple(v)] for v in vectors]
        np.add.at(sums, at, np.where(seen[:, :, None], y, 0.0).sum(axis=0))
        np.add.at(counts, at, seen.sum(axis=0))
    if np.any(counts == 0):
        return None
    means = sums / counts[:, None]
    theta = _newton(z, means, counts)
    if theta is None:
        return None
    info = _information(z, counts, theta)
    meat, clusters = np.zeros_like(info), 0
    for vectors, y in keep:                  # one cluster per deal of a wave
        seen = ~np.isnan(y).any(axis=2)
        zw = _design(vectors)
        p = _softmax(zw @ theta.T)[:, 1:]
        resid = np.where(seen[:, :, None], y[:, :, 1:] - p[None], 0.0)    # (d, m, k-1)
        score = np.einsum("dja,jc->dac", resid, zw).reshape(len(y), -1)
        meat += score.T @ score
        clusters += int(seen.any(axis=1).sum())
    bread = np.linalg.pinv(info)
    g = clusters / max(clusters - 1, 1)
    return Fit(distinct, means, counts, theta, bread @ meat @ bread * g, int(counts.sum()))


def _information(z: np.ndarray, counts: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """The Fisher information of theta (flattened row by row) at the vectors' rows z."""
    p = _softmax(z @ theta.T)[:, 1:]
    w = np.einsum("ja,ab->jab", p, np.eye(p.shape[1])) - np.einsum("ja,jb->jab", p, p)
    r, q = theta.shape
    return np.einsum("j,jab,jc,jd->acbd", counts, w, z, z).reshape(r * q, r * q)


def _log_likelihood(z, means, counts, theta) -> float:
    p = _softmax(z @ theta.T)
    return float(np.sum(counts[:, None] * means * np.log(np.maximum(p, 1e-300))))


def _newton(z: np.ndarray, means: np.ndarray, counts: np.ndarray) -> np.ndarray | None:
    """theta maximising the quasi-likelihood sum_j n_j sum_i mean_ji log p_i(v_j) (Newton,
    halving a step that lowers it); None when it does not converge (a seat that never
    wins at some vector: the log odds run off)."""
    r, q = means.shape[1] - 1, z.shape[1]
    theta = np.zeros((r, q))
    now = _log_likelihood(z, means, counts, theta)
    for _ in range(MAX_ITER):
        p = _softmax(z @ theta.T)
        score = np.einsum("j,ja,jc->ac", counts, means[:, 1:] - p[:, 1:], z).ravel()
        step = np.linalg.lstsq(_information(z, counts, theta), score, rcond=None)[0]
        size = 1.0
        for _ in range(30):
            trial = theta + size * step.reshape(r, q)
            after = _log_likelihood(z, means, counts, trial)
            if after >= now - 1e-12:
                break
            size /= 2
        theta, now = trial, after
        if np.max(np.abs(size * step)) < 1e-10:
            return theta if np.all(np.isfinite(theta)) and np.max(np.abs(theta)) < 50 else None
    return None


# ---- the answer -------------------------------------------------------------------------------
@dataclass
class Answer:
    """The vector of free values that makes every seat fair, with simultaneous intervals."""

    players: int
    status: str                   # "found" | "outside_range" | "not_identified"
    lo: float                     # the searched range of every free value
    hi: float
    first: int                    # the first seat's fixed value
    estimate: list = field(default_factory=list)   # free seats' fair values (seats 2..k)
    low: list = field(default_factory=list)        # their intervals, 95% together
    high: list = field(default_factory=list)
    vector: list = field(default_factory=list)     # every seat's integer value to play
    possible: list = field(default_factory=list)   # integer vectors still possible (joint)
    possible_count: int = 0
    seat_alpha: float = st.ALPHA                   # each interval's own level

    @property
    def half_width(self) -> float:
        if not self.low:
            return math.inf
        return max((h - l_) / 2 for l_, h in zip(self.low, self.high))

    def as_dict(self) -> dict:
        def num(v):
            return float(v) if math.isfinite(v) else None
        return {"status": self.status, "players": self.players, "range": [self.lo, self.hi],
                "first_seat_value": self.first,
                "estimate": [num(v) for v in self.estimate],
                "low": [num(v) for v in self.low], "high": [num(v) for v in self.high],
                "vector": list(self.vector), "possible": [list(v) for v in self.possible],
                "possible_count": self.possible_count, "seat_alpha": self.seat_alpha}


def solve(c: Fit) -> tuple[np.ndarray, np.ndarray] | None:
    """(v*, its covariance by the delta method), or None when B is singular (some seat's
    log odds are not shown to move with the values)."""
    a, b = c.theta[:, 0], c.theta[:, 1:]
    if not np.all(np.isfinite(b)) or np.linalg.cond(b) > 1e8:
        return None
    v = -np.linalg.solve(b, a)
    _, cov_u = c.log_odds(v)
    inv = np.linalg.inv(b)
    return v, inv @ cov_u @ inv.T


def _vector_cov(c: Fit, v: np.ndarray, inv: np.ndarray) -> np.ndarray:
    """The delta method's covariance of the fair vector with the log odds' covariance taken
    at `v` (B^-1 Cov(u(v)) B^-T)."""
    _, cov_u = c.log_odds(v)
    return inv @ cov_u @ inv.T


def fieller_box(c: Fit, v: np.ndarray, z: float, span: float,
                iterations: int = 40) -> tuple[np.ndarray, np.ndarray]:
    """Each free seat's interval, Fieller's construction with the simultaneous critical value
    z: the ends are the fixed points end = v + z Cov_v(end) e_i / se_i(end), the delta
    method's ellipsoid extreme with the log odds' covariance taken at the end, not at the
    estimate, so a slope known only roughly widens the side away from the vectors played.
    With one free seat that is Fieller's interval exactly; with more, about the ends along
    the seat of the region {w : u(w)' Cov(u(w))^-1 u(w) <= z^2} (a few percent inside them
    on a wide region, as the covariance's own slope is left out).  An end that runs past
    `span` from the estimate is open (+-inf)."""
    inv = np.linalg.inv(c.theta[:, 1:])
    ends = np.empty((2, len(v)))
    for i in range(len(v)):
        for side, sign in enumerate((-1.0, 1.0)):
            step = np.zeros(len(v))
            for _ in range(iterations):
                cov = _vector_cov(c, v + step, inv)
                new = sign * z * cov[:, i] / math.sqrt(max(cov[i, i], 1e-300))
                if abs(new[i]) > span:
                    new[i] = sign * math.inf
                    break
                done = np.max(np.abs(new - step)) < 1e-7
                step = new
                if done:
                    break
            ends[side, i] = v[i] + step[i] if math.isfinite(new[i]) else new[i]
    return ends[0], ends[1]


def region_statistics(c: Fit, vectors) -> np.ndarray:
    """The chi-square statistics (k-1 degrees of freedom) of 'every seat is fair at v', one
    per row of `vectors` (m, k-1)."""
    z = _design(vectors)
    r, q = c.theta.shape
    u = z @ c.theta.T                                                    # (m, k-1)
    cov = np.einsum("jc,jd,acbd->jab", z, z, c.cov.reshape(r, q, r, q))  # (m, k-1, k-1)
    try:
        return np.einsum("ja,ja->j", u, np.linalg.solve(cov, u[:, :, None])[:, :, 0])
    except np.linalg.LinAlgError:
        return np.full(len(z), math.inf)


def in_region(c: Fit, v, alpha=st.ALPHA) -> np.ndarray:
    """Whether each vector (a row of v) lies in the joint 1 - alpha region."""
    return region_statistics(c, v) <= sps.chi2.ppf(1 - alpha, c.free)


def answer(c: Fit | None, players: int, lo: float, hi: float, first: int = 0,
           alpha=st.ALPHA) -> Answer:
    """The fair vector of a fit: the estimate, the per-seat intervals that hold together at
    1 - alpha (simultaneous_z), the integer vector nearest it (within the range) and the integer
    vectors of the range in the joint region (the box's, at most MOST_NAMED named)."""
    found = None if c is None else solve(c)
    if found is None:
        return Answer(players, "not_identified", lo, hi, first)
    v, cov = found
    z = st.simultaneous_z(st.correlation(cov), alpha)
    level = float(2 * sps.norm.sf(z))
    low, high = fieller_box(c, v, z, hi - lo)
    vector = [first] + [int(x) for x in np.clip(np.round(v), lo, hi)]
    outside = bool(np.any(high < lo) or np.any(low > hi))
    axes = [range(int(max(lo, math.ceil(max(a, lo - 1)))), int(min(hi, math.floor(
        min(b, hi + 1)))) + 1) for a, b in zip(low, high)]
    sizes = [len(r) for r in axes]
    possible = []
    if 0 < math.prod(sizes) <= 20_000:
        grid_ = np.array(list(itertools.product(*axes)), dtype=np.float64)
        possible = [[int(x) for x in p] for p in grid_[in_region(c, grid_, alpha)]]
    return Answer(players, "outside_range" if outside else "found", lo, hi, first,
                  [float(x) for x in v], [float(x) for x in low], [float(x) for x in high],
                  vector, [[first] + p for p in possible[:MOST_NAMED]], len(possible), level)


# ---- the search -------------------------------------------------------------------------------
def screen(free: int, lo: int, hi: int, base: int) -> list:
    """The first look's vectors: the book's (every free value at `base`, clipped to the
    range) and, one seat at a time, fair_value.grid's three values over the range."""
    start = int(min(max(base, lo), hi))
    out = [(start,) * free]
    for j in range(free):
        for g in fv.grid(lo, hi, 3, integer=True):
            v = [start] * free
            v[j] = g
            if tuple(v) not in out:
                out.append(tuple(v))
    return out


def star(centre, lo: int, hi: int) -> list:
    """The vectors around `centre`: itself and each free value one up and one down, within
    the range."""
    centre = tuple(int(x) for x in centre)
    out = [centre]
    for j in range(len(centre)):
        for step in (-1, 1):
            v = list(centre)
            v[j] += step
            if lo <= v[j] <= hi:
                out.append(tuple(v))
    return out


def _step(centre, estimate) -> tuple:
    """The next star's centre: the rounded estimate, at most MAX_STEP from the last centre
    in every seat (a Newton step in a trust region: far from the data the local fit's
    straight log odds are an extrapolation)."""
    estimate, centre = np.asarray(estimate, dtype=int), np.asarray(centre, dtype=int)
    return tuple(int(x) for x in centre + np.clip(estimate - centre, -MAX_STEP, MAX_STEP))


def games_to_precision(ans: Answer, c: Fit, precision: float) -> float | None:
    """About how many more games would bring every seat's interval within +-precision (it
    narrows as one over the root of the games); None without an answer or with an interval
    open to a side (the slopes not yet shown: no number can be named)."""
    if ans.status == "not_identified" or c is None or not math.isfinite(ans.half_width):
        return None
    return max(c.games * ((ans.half_width / precision) ** 2 - 1), 0.0)


def search(play, players: int, lo: int, hi: int, precision: float, wave_games: int,
           max_games: int, base: int = 0, alpha=st.ALPHA,
           on_look=None) -> tuple[Answer, Fit | None, list]:
    """The sequential search (see the module).  play(vectors, start, count) -> Y (count
    deals, len(vectors), players) of figures (figures()) plays deals start..start+count-1 at
    every vector (k-1 free values each; the same deals for each).  Returns (answer, fit,
    waves).  on_look(answer, fit, waves, planned), when given, sees every interim answer and
    the games planned next (None: not known)."""
    free = players - 1
    waves, start, used, looks = [], 0, 0, 0
    vectors = screen(free, lo, hi, base)
    book = vectors[0]
    count = max(1, min(wave_games, max_games // len(vectors)))
    planned, centre, moved = None, None, True
    c, ans = None, answer(None, players, lo, hi, base, alpha)
    while count > 0 and used + count * len(vectors) <= max_games:
        y = np.asarray(play(vectors, start, count), dtype=np.float64)
        waves.append((np.asarray(vectors, dtype=np.float64), y))
        start, used, looks = start + count, used + count * len(vectors), looks + 1
        c = fit(waves, centre)
        ans = answer(c, players, lo, hi, base, alpha)
        found = ans.status != "not_identified"
        inside = centre is not None and found and bool(np.all(
            np.abs(np.subtract(ans.estimate, centre)) <= REACH + 1e-9))
        at_edge = centre is not None and found and tuple(ans.vector[1:]) == tuple(centre)
        if looks >= MIN_LOOKS and ((ans.status == "outside_range" and at_edge) or (
                inside and not moved and ans.half_width <= precision
                and (planned is None or used >= planned))):
            break
        more = games_to_precision(ans, c, precision) if found else None
        # a Newton step (at most MAX_STEP a seat) once the estimate leaves the star: the
        # star around it (inside, the star already holds the integers on either side of it)
        last = book if centre is None else centre
        centre = _step(last, ans.vector[1:]) if found and not inside else last
        moved = centre != last
        vectors = star(centre, lo, hi)
        total = used if more is None or looks == 1 else min(max(more, used // 2), 3 * used)
        total = min(max(total, wave_games * len(vectors)), max_games - used)
        count = int(total // len(vectors))
        planned = used + count * len(vectors)
        if on_look:
            on_look(ans, c, waves, planned)
    return ans, c, waves


# ---- the confirmation -------------------------------------------------------------------------
def confirmation(shares: np.ndarray, delta: float, alpha=st.ALPHA) -> dict:
    """Every seat's figure at one vector on fresh deals, as 'its win share less the others'
    mean' (0 when fair), with t intervals at the level at which all k hold together at
    1 - alpha (stats.simultaneous_z under the seats' observed correlation): 'fair' when every
    interval lies within +-delta, 'unfair' when some interval lies wholly beyond +-delta (the
    seats shown unfair: `beyond`), else 'not decided' (as the one-seat recommendation counts
    a value not fair).  `off`: the seats whose interval excludes 0 (shown off fair, perhaps
    by less than delta)."""
    shares = np.asarray(shares, dtype=np.float64)
    shares = shares[~np.isnan(shares).any(axis=1)]
    n, k = shares.shape
    points = np.column_stack([fv.figure_points(fv.seat_figure(shares, s), k)
                              for s in range(k)])
    level = float(2 * sps.norm.sf(st.simultaneous_z(st.correlation(np.cov(points.T)),
                                                    alpha))) if n > 1 else alpha
    seats = []
    for s in range(k):
        mean = float(points[:, s].mean())
        sd = float(points[:, s].std(ddof=1)) if n > 1 else math.inf
        low, high = (float(x) for x in st.mean_interval(mean, sd, n, level))
        seats.append({"seat": s, "mean": mean, "low": low, "high": high})
    off = [r["seat"] for r in seats if r["high"] < 0 or r["low"] > 0]
    beyond = [r["seat"] for r in seats if r["high"] < -delta or r["low"] > delta]
    if all(-delta <= r["low"] and r["high"] <= delta for r in seats):
        verdict = "fair"
    elif beyond:
        verdict = "unfair"
    else:
        verdict = "not decided"
    return {"games": n, "seats": seats, "verdict": verdict, "off": off, "beyond": beyond,
            "seat_alpha": level}
