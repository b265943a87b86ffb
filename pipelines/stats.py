"""The statistical formulas of meeplelab, each written once (numpy/scipy, vectorised).

Every function takes numbers or numpy arrays.  Conventions:
- a *rate* is the mean of a per-game outcome in [0, 1] (a seat's win share, 1/k in a k-way tie;
  a team's 0/1 result); its interval is Jeffreys' (beta quantiles), or Blaker's exact one
  below FEW_EVENTS wins or losses, with the observed variance of the outcome folded in
  through an effective count, so ties do not make it conservative;
- a *mean* (scores, paired differences) gets a t interval; n < SMALL_N is flagged by callers;
- fixed-n figures (a finished run) and always-valid figures (a run in progress: confidence
  sequences that hold at every look) come from the same inputs: mean, sd and n;
- p-values are never 0 (P_FLOOR), and a family of tests is adjusted by Benjamini-Hochberg with
  intervals at the matching false-coverage level (Benjamini & Yekutieli 2005), so an interval
  excludes the null exactly when its test is rejected.
"""
from __future__ import annotations

import functools
import hashlib

import numpy as np
from scipy import optimize, special, stats

Z95 = 1.959963984540054  # two-sided 95% normal quantile
ALPHA = 0.05
SMALL_N = 30  # below this many games a mean's t interval is flagged as approximate
SIGN_TEST_BELOW = 30  # fewer differing pairs than this: exact sign test instead of t
P_FLOOR = 1e-300  # the smallest p-value reported (a p-value is never exactly 0)
POWER = 0.8


def _arr(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


# ---- rates: Jeffreys' and Blaker's intervals --------------------------------------------
def effective_count(rate, var, n):
    """n scaled by p(1-p) / var: the count of 0/1 trials with the same information as n
    outcomes of variance var (ties make win shares less variable than 0/1 results)."""
    rate, var, n = _arr(rate), _arr(var), _arr(n)
    with np.errstate(divide="ignore", invalid="ignore"):
        scaled = n * rate * (1 - rate) / var
    return np.where((var > 0) & (rate > 0) & (rate < 1), scaled, n)


FEW_EVENTS = 10  # below this many wins (or losses) a rate gets Blaker's exact interval
FEW_EVENTS_ALPHA = 0.06  # ... at 94%: it covers every rate at least 94% of the time


def _rate_counts(rate, var, n):
    """(x, m, fewer): the effective count of wins x out of m (effective_count) and the fewer
    of wins and losses, min(x, m - x); a whole count stays whole (no rounding residue)."""
    m = _arr(effective_count(rate, var, n))
    x = _arr(rate) * m
    x = np.where(np.abs(x - np.round(x)) < 1e-9, np.round(x), x)
    return x, m, np.minimum(x, m - x)


def rate_interval(rate, var, n, alpha=ALPHA):
    """(low, high) of the interval of a rate observed over n games with outcome variance var
    (population variance; p(1-p) for 0/1 outcomes), on the effective count of wins x out of m
    (_rate_counts): Jeffreys' interval (beta quantiles) at 1 - alpha once x and m - x are both
    at least FEW_EVENTS; below that, Blaker's exact interval (2000) at 1 - FEW_EVENTS_ALPHA,
    which covers every rate at least that often (docs/statistics.md)."""
    x, m, fewer = _rate_counts(rate, var, n)
    with np.errstate(invalid="ignore"):
        low = stats.beta.ppf(_arr(alpha) / 2, x + 0.5, m - x + 0.5)
        high = stats.beta.ppf(1 - _arr(alpha) / 2, x + 0.5, m - x + 0.5)
    low, high = (np.array(b, dtype=np.float64) for b in np.broadcast_arrays(low, high))
    few = np.broadcast_to(fewer < FEW_EVENTS, low.shape)
    if few.any():
        x, m = np.broadcast_to(x, low.shape)[few], np.broadcast_to(m, low.shape)[few]
        flip = x > m - x  # Blaker's interval is symmetric: computed on the fewer events
        below, above = _blaker_bounds(np.where(flip, m - x, x), m, FEW_EVENTS_ALPHA)
        low[few] = np.where(flip, 1 - above, below)
        high[few] = np.where(flip, 1 - below, above)
    return low, high


# Counts beyond the observed one, for the opposite tail: below FEW_EVENTS events, the upper
# tail that matches the observed one (at most 6%) lies within 24 counts of it
_LATTICE = {True: np.arange(1, 25), False: np.arange(1, FEW_EVENTS + 1)}


def _tail_at_most(y, m, p):
    """P(X <= y) for X binomial(m, p), continuous in y and m through the regularized
    incomplete beta function (1 - I_p(y + 1, m - y)), so effective (fractional) counts are
    natural: it falls to 0 as y falls to -1 and is 1 from y = m on."""
    with np.errstate(invalid="ignore"):
        tail = 1 - special.betainc(np.maximum(y + 1, 1e-300), np.maximum(m - y, 1e-300), p)
    return np.where(y <= -1, 0.0, np.where(y >= m, 1.0, tail))


def _tail_at_least(y, m, p):
    """P(X >= y) = I_p(y, m - y + 1), as _tail_at_most: 1 up to y = 0, 0 from y = m + 1."""
    with np.errstate(invalid="ignore"):
        tail = special.betainc(np.maximum(y, 1e-300), np.maximum(m - y + 1, 1e-300), p)
    return np.where(y <= 0, 1.0, np.where(y >= m + 1, 0.0, tail))


def _blaker_p_value(p, x, m, upper: bool):
    """Blaker's p-value at rate p for x events out of m, where x lies in the lower tail
    (upper: p above x/m) or the upper tail: the observed tail plus the largest tail on the
    other side, over counts x +- 1, 2, ..., that is no larger."""
    if upper:
        observed = _tail_at_most(x, m, p)
        other = _tail_at_least(x[:, None] + _LATTICE[upper], m[:, None], p[:, None])
    else:
        observed = _tail_at_least(x, m, p)
        other = _tail_at_most(x[:, None] - _LATTICE[upper], m[:, None], p[:, None])
    opposite = np.where(other <= observed[:, None], other, 0.0).max(axis=1)
    return observed + opposite


def _blaker_brackets(x, m, alpha, upper: bool):
    """(inner, outer): Blaker's bound at 1 - alpha lies between the one-sided bound at alpha
    (inner: the observed tail alone is alpha) and the central one at alpha / 2 (outer: the
    p-value is at most twice the observed tail); x <= m / 2, the lower bound is 0 at x = 0."""
    if upper:
        return (stats.beta.ppf(1 - alpha, x + 1, m - x),
                stats.beta.ppf(1 - alpha / 2, x + 1, m - x))
    with np.errstate(invalid="ignore"):
        inner, outer = stats.beta.ppf(alpha, x, m - x + 1), stats.beta.ppf(alpha / 2, x, m - x + 1)
    return np.where(x > 0, inner, 0.0), np.where(x > 0, outer, 0.0)


def _blaker_bounds(x, m, alpha, scan: int = 12, steps: int = 30):
    """(low, high) of Blaker's exact interval at 1 - alpha for x events out of m (x <= m / 2):
    each bound is the last accepted rate of a scan from its inner to its outer bracket
    (_blaker_brackets), refined by bisection."""
    bounds, rows = [], np.arange(len(x))
    for upper in (False, True):
        inner, outer = _blaker_brackets(x, m, alpha, upper)
        grid = inner[:, None] + (outer - inner)[:, None] * np.linspace(0, 1, scan + 1)[1:]
        accepted = np.stack([_blaker_p_value(grid[:, k], x, m, upper) > alpha
                             for k in range(scan)], axis=1)
        last = np.where(accepted.any(axis=1), scan - 1 - np.argmax(accepted[:, ::-1], axis=1), -1)
        a = np.where(last >= 0, grid[rows, np.maximum(last, 0)], inner)
        b = grid[rows, np.minimum(last + 1, scan - 1)]
        for _ in range(steps):
            mid = (a + b) / 2
            ok = _blaker_p_value(mid, x, m, upper) > alpha
            a, b = np.where(ok, mid, a), np.where(ok, b, mid)
        bounds.append(np.where(outer == inner, inner, a))
    return bounds[0], bounds[1]


PRECISION_MIN_COUNT = 10  # the precision rule stops only after this many wins and losses
PRECISION_ESCAPE = 3  # ... or after PRECISION_ESCAPE * PRECISION_MIN_COUNT / half_width games


def precise_enough(rate, low, high, n, half_width):
    """The precision rule (stop_when.half_width) per rate: its interval [low, high] is narrower
    than +-half_width and rests on at least PRECISION_MIN_COUNT wins and as many losses, or on
    _escape(half_width) games, so that a seat that never wins stops the run there (only
    rates below a third of half_width are expected to have fewer wins by then).  Without the
    count, the rule would stop when a rare rate happens to look low (a narrow interval), and
    the intervals it stops on would under-cover (measured in docs/lab/statistics.md)."""
    rate, n = _arr(rate), _arr(n)
    counted = (np.minimum(rate, 1 - rate) * n >= PRECISION_MIN_COUNT) | \
        (n >= _escape(half_width))
    return ((_arr(high) - _arr(low)) / 2 < half_width) & counted


def _escape(half_width):
    return PRECISION_ESCAPE * PRECISION_MIN_COUNT / _arr(half_width)


def games_for_precision(rate, var, half_width, alpha=ALPHA):
    """Games after which the precision rule holds at this rate (precise_enough): the
    interval's games (games_for_rate_half_width) or those that bring PRECISION_MIN_COUNT
    wins and losses (at most _escape(half_width)), whichever is more."""
    rate = _arr(rate)
    with np.errstate(divide="ignore"):
        count = np.ceil(np.minimum(PRECISION_MIN_COUNT / np.minimum(rate, 1 - rate),
                                   _escape(half_width)) - 1e-9)
    return np.maximum(games_for_rate_half_width(rate, var, half_width, alpha), count)


# ---- means: t intervals and paired tests ------------------------------------------------------
def t_quantile(n, alpha=ALPHA):
    """Two-sided t quantile with n - 1 degrees of freedom (normal for huge n)."""
    return stats.t.ppf(1 - _arr(alpha) / 2, np.maximum(_arr(n) - 1, 1))


def mean_interval(mean, sd, n, alpha=ALPHA):
    """(low, high) of the t interval for a mean."""
    half = t_quantile(n, alpha) * _arr(sd) / np.sqrt(_arr(n))
    return _arr(mean) - half, _arr(mean) + half


SIMULTANEOUS_DRAWS = 100_000


def simultaneous_z(corr, alpha=ALPHA, draws: int = SIMULTANEOUS_DRAWS) -> float:
    """The critical value c with P(max_i |Z_i| <= c) = 1 - alpha for jointly normal Z_i of
    correlation matrix `corr` (singular allowed): intervals estimate_i +- c se_i then hold
    all together at 1 - alpha (the max-|z| method; between the plain z and Bonferroni's,
    Sidak's for uncorrelated estimates).  From `draws` seeded normal draws (the same c for
    the same matrix, its correlations to 3 decimals): its error is about 0.0006 in
    coverage at the default."""
    corr = np.atleast_2d(_arr(corr))
    if len(corr) == 1:
        return float(stats.norm.ppf(1 - alpha / 2))
    return _max_z(tuple(map(tuple, np.round(corr, 3))), float(alpha), draws)


@functools.lru_cache(maxsize=256)
def _max_z(corr: tuple, alpha: float, draws: int) -> float:
    values, vectors = np.linalg.eigh(np.array(corr))
    root = vectors * np.sqrt(np.clip(values, 0.0, None))
    z = _normal_draws(draws, len(corr)) @ root.T
    return float(np.quantile(np.abs(z).max(axis=1), 1 - alpha))


@functools.lru_cache(maxsize=8)
def _normal_draws(draws: int, dims: int) -> np.ndarray:
    """Seeded standard normal draws (draws, dims), drawn once per shape."""
    out = np.random.default_rng(0).standard_normal((draws, dims))
    out.flags.writeable = False
    return out


def correlation(cov) -> np.ndarray:
    """A covariance matrix's correlations (a zero variance: uncorrelated)."""
    sd = np.sqrt(np.clip(np.diag(_arr(cov)), 0.0, None))
    safe = np.where(sd > 0, sd, 1.0)
    out = _arr(cov) / np.outer(safe, safe)
    np.fill_diagonal(out, 1.0)
    return out


def floor_p(p):
    return np.where(np.isnan(_arr(p)), np.nan, np.maximum(_arr(p), P_FLOOR))


def sign_test_p(positive, negative):
    """Exact two-sided sign test of a zero median: p = P(|Bin(m, 1/2) - m/2| >= observed)."""
    positive, negative = _arr(positive), _arr(negative)
    m = positive + negative
    smaller = np.minimum(positive, negative)
    p = np.minimum(1.0, 2 * stats.binom.cdf(smaller, m, 0.5))
    return floor_p(np.where(m > 0, p, 1.0))


def t_test_p(mean, sd, n):
    """Two-sided p-value of Student's t test of a zero mean (0 when every difference is the
    same non-zero value, 1 when all are zero)."""
    mean, sd, n = _arr(mean), _arr(sd), _arr(n)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.abs(mean) / (sd / np.sqrt(n))
    t = np.where(np.isnan(t), 0.0, t)
    return 2 * stats.t.sf(t, np.maximum(n - 1, 1))


def paired_p_value(mean, sd, n, positive, negative):
    """Two-sided p-value of a zero mean difference: Student's t, and when fewer than
    SIGN_TEST_BELOW pairs differ (or every difference is equal) the larger of the t test's
    and the exact sign test's (each is valid, so their maximum is: few differing pairs make
    the t test alone too liberal).  NaN for n < 2."""
    p_t = t_test_p(mean, sd, n)
    few = uses_sign_test(sd, positive, negative)
    p = np.where(few, np.maximum(sign_test_p(positive, negative), p_t), p_t)
    return np.where(_arr(n) > 1, floor_p(p), np.nan)


def uses_sign_test(sd, positive, negative):
    return (_arr(positive) + _arr(negative) < SIGN_TEST_BELOW) | ~(_arr(sd) > 0)


def paired_interval(mean, sd, n, positive, negative, alpha=ALPHA):
    """(low, high) of the mean difference that matches paired_p_value at level alpha: the t
    interval, widened on sign-test rows to the test-based interval of Miettinen (1976) (the
    half-width at which the t statistic would give the row's p-value), so the interval
    excludes 0 exactly when p <= alpha.  NaN for n < 2."""
    mean, sd, n, alpha = _arr(mean), _arr(sd), _arr(n), _arr(alpha)
    df = np.maximum(n - 1, 1)
    crit = stats.t.isf(alpha / 2, df)
    half = crit * sd / np.sqrt(np.maximum(n, 1))
    p = paired_p_value(mean, sd, n, positive, negative)
    equivalent_t = stats.t.isf(np.clip(p, P_FLOOR, 1.0) / 2, df)
    with np.errstate(divide="ignore", invalid="ignore"):
        test_based = np.where(equivalent_t > 0, crit * np.abs(mean) / equivalent_t,
                              np.abs(mean))
    half = np.where(uses_sign_test(sd, positive, negative), np.maximum(half, test_based), half)
    half = np.where(n > 1, half, np.nan)
    return mean - half, mean + half


# ---- families of tests ------------------------------------------------------------------------
def benjamini_hochberg(p_values):
    """Benjamini-Hochberg adjusted p-values (q-values; same order; NaN stays NaN)."""
    p = _arr(p_values)
    out = np.full_like(p, np.nan)
    ok = ~np.isnan(p)
    if ok.any():
        out[ok] = stats.false_discovery_control(p[ok], method="bh")
    return out


def family_alpha(p_values, alpha=ALPHA):
    """The per-interval level that matches Benjamini-Hochberg at `alpha`: alpha * R / m with R
    rejections among m tests (at least one), the false-coverage-rate level of Benjamini &
    Yekutieli (2005).  An interval at this level excludes the null iff its q-value <= alpha."""
    q = benjamini_hochberg(p_values)
    m = int(np.sum(~np.isnan(q)))
    rejected = int(np.sum(q <= alpha))
    return alpha * max(rejected, 1) / max(m, 1)


FAMILY_METHOD = "Benjamini-Hochberg"


# ---- seat balance ------------------------------------------------------------------------------
PERMUTATION_BELOW = 500  # fewer units than this (one stratum): the seat-permutation test
PERMUTATION_NEAR = 0.2  # ... and at any n wherever the F p-value is at most this (the F tail
#                          is liberal where Benjamini-Hochberg looks)
PERMUTATION_REFINE = 4  # the permutation test draws more while at most this many draws reach
PERMUTATION_RESOLUTION = 20  # ... up to this many times tests / alpha draws (at least 999)


def permutation_draws(tests: int = 1, alpha=ALPHA) -> int:
    """The most draws of the seat-permutation test in a family of `tests` tests:
    PERMUTATION_RESOLUTION x tests / alpha (at least 999), so that its smallest p-value,
    1 / (draws + 1), is 20 times below the family's smallest Benjamini-Hochberg threshold
    alpha / tests: no cell can be hidden by the test's resolution."""
    return int(max(999, np.ceil(PERMUTATION_RESOLUTION * max(int(tests), 1) / float(alpha))))


def seat_contrasts(shares) -> np.ndarray:
    """Each of the first k-1 seats' share minus the mean share of the game's seats: zero in
    expectation when the seats are equal, also in games without a winner (all shares 0),
    where a share against 1/k would favour no seat yet call them unbalanced."""
    shares = _arr(shares)
    return shares[..., :-1] - shares.mean(axis=-1, keepdims=True)


def _permutation_p(kinds: np.ndarray, sizes: np.ndarray, t2: float, most: int) -> float:
    """Monte Carlo p-value of T^2 under seats exchangeable within each game: every game's
    seats turned by a random rotation (a subgroup of the permutations, which is enough for
    an exact test), seeded by the data (below).  In stages of 999, 9,999, 99,999, ...
    draws up to `most` (the later stages reuse the earlier draws):
    p = (1 + draws at or above t2) / (draws + 1), and the next stage is drawn only while at
    most PERMUTATION_REFINE draws reached t2 (the p-value of every stage is valid, and one
    is drawn further only when it is small, so the reported one is valid too: P(p <= u) <= u
    at any u).  A fair cell stops at 999 draws; a cell that could be below the family's
    threshold draws up to `most`.  Games with the same shares are alike under the
    rotations, so a draw needs only how many of each kind are turned by each rotation
    (multinomial counts) and the kinds' turned contrasts and their outer products: the cost
    of a draw does not grow with the games.  The draws' seed is the data's (a digest of the
    kinds and their counts): the same data give the same p, and different cells get
    independent draws (one seed for every cell would compare them all with the same 999
    draws, whose luck moves every cell's p alike: docs/lab/statistics.md, round 5, row 3)."""
    digest = hashlib.sha256(np.ascontiguousarray(kinds, np.float64).tobytes()
                            + np.ascontiguousarray(sizes, np.int64).tobytes()).digest()
    rng = np.random.default_rng([20_261, int.from_bytes(digest[:8], "little")])
    n, k = int(sizes.sum()), kinds.shape[1]
    x = seat_contrasts(np.stack([np.roll(kinds, -r, axis=1) for r in range(k)], axis=1))
    dim = x.shape[-1]  # x: kinds x rotations x dim
    moments = np.concatenate([x, np.einsum("...i,...j->...ij", x, x).reshape(
        len(kinds), k, dim * dim)], axis=-1).reshape(-1, dim + dim * dim)
    above, made, stage = 0, 0, 999
    while True:
        while made < stage:
            draws = min(20_000, stage - made)
            turns = np.empty((draws, len(sizes), k), dtype=np.int64)  # draws x kinds x turns
            left = np.broadcast_to(sizes, (draws, len(sizes))).copy()
            for r in range(k - 1):  # multinomial counts as successive binomials
                turns[:, :, r] = rng.binomial(left, 1 / (k - r))
                left -= turns[:, :, r]
            turns[:, :, k - 1] = left
            sums = turns.reshape(draws, -1) @ moments
            mean = sums[:, :dim] / n
            cov = (sums[:, dim:].reshape(draws, dim, dim)
                   - n * mean[:, :, None] * mean[:, None, :]) / (n - 1) + np.eye(dim) * 1e-12
            t2_draws = n * np.einsum("di,di->d", mean,
                                     np.linalg.solve(cov, mean[..., None])[..., 0])
            above += int(np.sum(t2_draws >= t2 * (1 - 1e-9)))
            made += draws
        if above > PERMUTATION_REFINE or stage >= most:
            return (1 + above) / (made + 1)
        stage = min(10 * stage + 9, most)


def seat_balance_test(shares, strata=None, tests: int = 1, alpha=ALPHA, counts=None):
    """Omnibus test that the seats are equal (every seat's expected win share the same), from
    per-game share vectors (n x k): Hotelling's T^2 on the seat contrasts (seat_contrasts)
    with their observed covariance, so ties and games without a winner are accounted for.
    With `strata` (one label per game: the agents' seating when agents rotate) the contrast
    means are averaged over strata with equal weight and the covariance is pooled within
    strata, so the agents' strength neither biases the test nor swamps it with variance.
    p-value: with one stratum, a seat-permutation test below PERMUTATION_BELOW units and at
    any n wherever the F approximation of T^2 gives at most PERMUTATION_NEAR (the F approximation is too liberal in its far tail,
    where a family's Benjamini-Hochberg thresholds lie: 12 fair cells of 100 four-player games
    were called unbalanced 9% of the time at BH 5%, and 1,000 fair cells of 500 games 7-8%),
    with up to permutation_draws(tests, alpha) draws, so its resolution is below the threshold
    of a family of `tests` tests at `alpha`; from PERMUTATION_BELOW units on above
    PERMUTATION_NEAR (no threshold of a family at alpha <= PERMUTATION_NEAR can reject
    there) and with several strata (rotated agents) the F approximation.  The reported p is valid: P(p <= u) <= u for every u up to
    PERMUTATION_NEAR, the permutation test's.  With `counts`
    each row of `shares` (and of `strata`) stands for that many games (frequency weights: the
    distinct share vectors of a cell and their counts, pipelines.sufficient).  Returns
    (statistic T^2, p-value); p is NaN when there is nothing to test."""
    shares = _arr(shares)
    rows, k = shares.shape
    weights = np.ones(rows, dtype=np.int64) if counts is None else np.asarray(counts, np.int64)
    n = int(weights.sum())
    if k < 2 or n < 3:
        return np.nan, np.nan
    labels = np.zeros(rows, dtype=np.int64) if strata is None else np.unique(
        strata, return_inverse=True)[1]
    x = seat_contrasts(shares)
    means, covs, sizes = [], [], []
    for s in np.unique(labels):
        part, w = x[labels == s], weights[labels == s]
        if w.sum() < 2:
            continue
        if counts is None:
            means.append(part.mean(axis=0))
            covs.append(np.atleast_2d(np.cov(part, rowvar=False)))
        else:
            means.append(np.average(part, axis=0, weights=w))
            covs.append(np.atleast_2d(np.cov(part, rowvar=False, fweights=w)))
        sizes.append(int(w.sum()))
    if not sizes:
        return np.nan, np.nan
    count = len(sizes)
    mean = np.mean(means, axis=0)
    var_of_mean = sum(c / m for c, m in zip(covs, sizes)) / count ** 2
    dim = k - 1
    within_df = sum(sizes) - count
    if within_df - dim + 1 < 1:
        return np.nan, np.nan
    if not np.any(var_of_mean > 0):
        return (0.0, 1.0) if np.allclose(mean, 0) else (np.inf, P_FLOOR)
    t2 = float(mean @ np.linalg.pinv(var_of_mean) @ mean)
    f = (within_df - dim + 1) / (dim * within_df) * t2
    p_f = float(floor_p(stats.f.sf(f, dim, within_df - dim + 1)))
    if count == 1 and sizes[0] == n and (n < PERMUTATION_BELOW or p_f <= PERMUTATION_NEAR):
        kinds, inverse = np.unique(shares, axis=0, return_inverse=True)
        sizes = np.bincount(inverse.reshape(-1), weights=weights).astype(np.int64)
        return t2, float(_permutation_p(kinds, sizes, t2, permutation_draws(tests, alpha)))
    return t2, p_f


# ---- always-valid (interim) figures ----------------------------------------------------------
HORIZON_LEVEL = 1.9  # the mixture's level per unit of alpha: the sequence holds to `planned`
HORIZON_TUNING = 0.5  # the mixture is tightest at this share of `planned`


def cs_half_width(sd, n, alpha=ALPHA, planned=10_000, prior_var=None):
    """Half-width of an asymptotic confidence sequence for a mean (Waudby-Smith et al. 2024,
    'Time-uniform central limit theory', Gaussian mixture): it holds at every look at once
    until `planned` units (the run's max_games: the run ends there), so a run may be watched
    and stopped at any time.  A sequence that holds for ever would spend only 2% of a 5%
    error before `planned` (Brownian motion watched at every unit), so the mixture is taken
    at HORIZON_LEVEL x alpha and tuned to be tightest at HORIZON_TUNING x `planned` (where
    runs decide: half as many games as max_games or fewer), which a mean watched after every
    unit crosses before `planned` about 4.9% of the time for 5% (fewer looks, less:
    docs/lab/statistics.md, round 4, row 1).  The mixture is tuned in
    standardized units, so the sequence is tightest there whatever the outcome's spread
    (variance-adaptive: strongly correlated arms, whose paired differences vary little,
    decide in proportionally fewer games).  With `prior_var` (the variance of one
    pseudo-unit, e.g. 1/4 for an outcome in [0, 1]) the observed variance is regularised by
    one such unit, as in Waudby-Smith & Ramdas' predictable plug-in, so that a first wave of
    identical outcomes does not look certain."""
    sd, n = _arr(sd), np.maximum(_arr(n), 1)
    alpha = np.minimum(HORIZON_LEVEL * _arr(alpha), 0.5)
    if prior_var is not None:
        sd = np.sqrt((n * sd ** 2 + _arr(prior_var)) / (n + 1))
    c = -2 * np.log(alpha) + np.log(-2 * np.log(alpha) + 1)
    rho2 = c / np.maximum(HORIZON_TUNING * _arr(planned), 1)
    v = n * rho2 + 1
    return sd * np.sqrt(2 * v / (n ** 2 * rho2) * np.log(np.sqrt(v) / alpha))


RATE_PRIOR_VAR = 0.25  # the largest variance of an outcome in [0, 1] (a win share)
DIFF_PRIOR_VAR = 1.0  # the largest variance of a difference of two outcomes in [0, 1]


def equivalence_alpha(alpha):
    """The two-sided level of the interval that shows equivalence within +-delta at error
    `alpha`: 2 alpha (Schuirmann's two one-sided tests: a 90% interval inside +-delta is
    wrong at most 5% of the time when the truth is at +-delta, since only one of its ends
    can be on the wrong side)."""
    return 2 * _arr(alpha)


def cs_comparison_decisions(diff, sd, n, delta, alpha, planned):
    """(different, equivalent) of paired win-share differences at one look of a run in
    progress (the stop_when rule): different when the confidence sequence at `alpha` excludes
    0, equivalent when the one at equivalence_alpha(alpha) lies within +-delta.  Each claim
    is wrong at most `alpha` of the time, at any number of looks."""
    diff = np.abs(_arr(diff))
    half = cs_half_width(sd, n, alpha, planned, DIFF_PRIOR_VAR)
    half_eq = cs_half_width(sd, n, equivalence_alpha(alpha), planned, DIFF_PRIOR_VAR)
    return diff > half, diff + half_eq < _arr(delta)


def cs_seat_decisions(rates, sds, n, delta, alpha, planned):
    """(unbalanced, balanced) of a cell's seats (last axis) at one look of a run in progress:
    unbalanced when some seat's confidence sequence at `alpha` excludes the fair share (the
    mean of the seats' shares), balanced when every seat's at equivalence_alpha(alpha) lies
    within +-delta of it."""
    rates = _arr(rates)
    off = np.abs(rates - rates.mean(axis=-1, keepdims=True))
    half = cs_half_width(sds, _arr(n)[..., None], alpha, planned, RATE_PRIOR_VAR)
    half_eq = cs_half_width(sds, _arr(n)[..., None], equivalence_alpha(alpha), planned,
                            RATE_PRIOR_VAR)
    return np.any(off > half, axis=-1), np.all(off + half_eq < _arr(delta)[..., None], axis=-1)


# ---- the interim rule of a run with a stored spread: a double triangular test ------------------
TRIANGLE_SLOPES = (0.43, 0.32)  # efficacy and futility slopes, shares of the drift at delta
TRIANGLE_ERROR_SHARE = 0.95  # the continuously watched design spends this share of each error
SIEGMUND = 0.5826  # a boundary watched every h (information) is one watched always, moved by this x sqrt(h)
TRIANGLE_STEPS = 150  # looks of the numerical recursion that solves the design
GUARD_Z = 2.326  # a stored spread below the running sd's one-sided 99% lower bound is contradicted
GUARD_UPPER_Z = 1.0  # ... and replaced by the running sd's upper bound at this z
GUARD_MIN_COUNT = 20  # below this many differing units (sum of squares) the data cannot check
#                       a stored spread: the triangle scales by no less than their upper bound


def power_quantile(alpha) -> float:
    """z_(1 - alpha/2) + z_POWER: the fixed-n sample for POWER at delta is (this x sd / delta)^2."""
    return float(stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(POWER))


def _triangle_errors(efficacy: float, futility: float, z: float, drift: float
                     ) -> tuple[float, float]:
    """(P(different), P(equivalent)) of the double triangular test (triangle_design) watched
    continuously, for a standard Brownian motion X(tau) of drift `drift` x z: X's density
    carried look by look on a grid (Armitage, McPherson & Rowe), TRIANGLE_STEPS looks with
    the boundaries moved in by SIEGMUND x sqrt(spacing), which is a watch at every instant."""
    a1, g1 = (share * z for share in TRIANGLE_SLOPES)
    end = (efficacy + futility) / (z - a1 - g1)  # where the boundaries meet
    h = end / TRIANGLE_STEPS
    shift, dx = SIEGMUND * np.sqrt(h), np.sqrt(h) / 4
    edge = np.ceil((efficacy + a1 * end) / dx) + 1
    x = np.arange(-edge, edge + 1) * dx
    density = (np.abs(x) < dx / 2).astype(np.float64)
    kernel = np.exp(-(np.arange(-24, 25) * dx - drift * z * h) ** 2 / (2 * h))
    kernel /= kernel.sum()
    different = equivalent = 0.0
    for step in range(1, TRIANGLE_STEPS + 1):
        density = np.convolve(density, kernel, mode="same")
        upper = efficacy - shift + a1 * step * h
        lower = upper if step == TRIANGLE_STEPS else (z - g1) * step * h - futility + shift
        shown = np.abs(x) >= upper
        equal = (np.abs(x) <= lower) & ~shown
        different += density[shown].sum()
        equivalent += density[equal].sum()
        density[shown | equal] = 0.0
    return different, equivalent


@functools.lru_cache(maxsize=256)
def triangle_design(alpha: float) -> tuple[float, float, float, float, float]:
    """(efficacy intercept, futility intercept, efficacy slope, futility slope, z) of
    Whitehead's double triangular test at error `alpha` each way.  On the information scale
    tau = n / n80 (n80 = (z spread / delta)^2, z = power_quantile(alpha)) the sum scaled by
    the spread, X = estimate x n x delta / (z spread^2), is a Brownian motion of drift
    z theta / delta; a run is 'different' once |X| >= efficacy + a1 tau and 'equivalent' once
    |X| <= (z - g1) tau - futility; the lines meet, so every run decides by then.  The
    intercepts are solved (scipy brentq, in turn until both settle) so that a run watched
    continuously says 'different' of no difference, and 'equivalent' of a difference of
    delta, each with probability TRIANGLE_ERROR_SHARE x alpha; the looks a run really has
    are corrected for in triangle_half_widths.  About half a second per alpha, cached."""
    z = power_quantile(alpha)
    target = TRIANGLE_ERROR_SHARE * alpha
    efficacy = futility = 1.5
    for _ in range(40):
        new_e = optimize.brentq(lambda e: _triangle_errors(e, futility, z, 0.0)[0] - target,
                                1e-3, 20, xtol=1e-6)
        new_f = optimize.brentq(lambda f: _triangle_errors(new_e, f, z, 1.0)[1] - target,
                                1e-3 - new_e, 20, xtol=1e-6)
        settled = abs(new_e - efficacy) + abs(new_f - futility) < 1e-5
        efficacy, futility = new_e, new_f
        if settled:
            break
    a1, g1 = (share * z for share in TRIANGLE_SLOPES)
    return efficacy, futility, a1, g1, z


def sd_bound(sd, n, mean, z):
    """A one-sided bound of an outcome's sd from n units (z < 0: lower, z > 0: upper):
    sqrt(s^2 + z sqrt((R^2 s^2 - s^4) / n)), the variance's normal bound with its standard
    error from mu4 <= R^2 s^2, R = 1 + |mean| the widest a centred outcome in [-1, 1] (a
    paired difference; a share in [0, 1] with mean 0) can be."""
    sd, n = _arr(sd), np.maximum(_arr(n), 1)
    var = sd ** 2
    reach = (1 + np.abs(_arr(mean))) ** 2
    return np.sqrt(np.clip(var + z * np.sqrt(np.clip(reach * var - var ** 2, 0, None) / n),
                           0, None))


def _count_bounds(sd, n, mean, z):
    """(low, high) one-sided bounds at z of an outcome's sd from the information its units
    hold: the sum of squares x = n (sd^2 + mean^2), at most the count of non-zero outcomes (a
    paired difference in [-1, 1] on common deals is mostly 0), taken as x events out of n
    (beta bounds, exact for a -1/0/+1 difference: its variance is the share of non-zero
    differences less mean^2), so a handful of differing pairs bounds the spread as loosely
    as it should where the normal bound (sd_bound) is too tight."""
    sd, n, mean = _arr(sd), np.maximum(_arr(n), 1), _arr(mean)
    x = np.clip(n * (sd ** 2 + mean ** 2), 0, n)
    a = stats.norm.sf(z)
    with np.errstate(invalid="ignore"):
        low = np.where(x > 0, stats.beta.ppf(a, np.maximum(x, 1e-12), n - x + 1), 0.0)
        high = stats.beta.ppf(1 - a, x + 1, np.maximum(n - x, 1e-12))
    return (np.sqrt(np.clip(low - mean ** 2, 0, None)),
            np.sqrt(np.clip(high - mean ** 2, 0, None)))


def spread_guard(spread, sd, n, mean=0.0):
    """(used, side, bound) of a stored spread at one look: `used`, the spread the triangle
    scales by: the stored one, unless the look's data contradict it, on either side, at
    one-sided GUARD_Z, by the information actually present (the normal bound of the
    variance, sd_bound, and the count bound of the units that differ, _count_bounds, the
    tighter of the two each way: with common deals most paired differences are 0 and the
    count of the others, not n, is the information):
    - stored too low (a spread below the data's lower bound raises false 'different'
      without bound): the running sd's upper bound at GUARD_UPPER_Z (the larger of the two);
    - stored too high (above the data's upper bound: the run would end undecided at
      max_games): that upper bound (still above the truth but for 1% of looks);
    while fewer than GUARD_MIN_COUNT units differ the data cannot check it, and the spread
    used is no less than the count's upper bound at GUARD_UPPER_Z.
    `side`: -1 where the data contradict a spread stored too low, +1 too high, 0 where they
    do not (raised for want of data is no contradiction); `bound`: the data's lower bound
    (side -1) or upper bound (else), what they say the spread is at least / at most."""
    spread = _arr(spread)
    c_low, c_high = _count_bounds(sd, n, mean, GUARD_Z)
    low = np.maximum(sd_bound(sd, n, mean, -GUARD_Z), c_low)
    high = np.minimum(sd_bound(sd, n, mean, GUARD_Z), c_high)
    upper = _count_bounds(sd, n, mean, GUARD_UPPER_Z)[1]
    raised = np.maximum(sd_bound(sd, n, mean, GUARD_UPPER_Z), upper)
    x = np.maximum(_arr(n), 1) * (_arr(sd) ** 2 + _arr(mean) ** 2)
    few = x < GUARD_MIN_COUNT
    too_low, too_high = spread < low, ~few & (spread > high)
    used = np.where(too_low, raised, np.where(few, np.maximum(spread, upper),
                                              np.where(too_high, high, spread)))
    side = np.where(too_low, -1, np.where(too_high, 1, 0))
    return used, side, np.where(too_low, low, high)


def guarded_spread(spread, sd, n, mean=0.0):
    """The spread the triangle scales by at one look (spread_guard's `used`)."""
    return spread_guard(spread, sd, n, mean)[0]


def triangle_half_widths(spread, n, delta, alpha, wave):
    """(h_different, h_equivalent) of the triangle (triangle_design) at a look after n units,
    the previous look `wave` units before (at most n: the first look's is n), with the sum
    scaled by `spread` (a z statistic): 'different' when |estimate| >= h_different (the
    interval estimate +- h_different excludes 0), 'equivalent' when |estimate| +
    h_equivalent <= delta.  The intercepts are moved in by SIEGMUND x sqrt(the information
    since the previous look) (Whitehead's 'Christmas tree'), so the rule holds at the looks
    a run really has, whatever their number and spacing.  Once h_different + h_equivalent
    <= delta (the boundaries have met) every estimate is decided."""
    efficacy, futility, a1, g1, z = triangle_design(float(alpha))
    n, delta = np.maximum(_arr(n), 1), _arr(delta)
    spread = np.maximum(_arr(spread), 1e-9)
    scale = (z * spread / delta) ** 2  # n80 at this spread
    moved = SIEGMUND * np.sqrt(np.minimum(np.maximum(_arr(wave), 1), n) / scale)
    per = z * spread ** 2 / (n * delta)  # the estimate's units per unit of X
    return (per * (np.maximum(efficacy - moved, 0) + a1 * n / scale),
            per * (np.maximum(futility - moved, 0) + g1 * n / scale))


def triangle_decisions(estimate, spread, n, delta, alpha, wave):
    """(different, equivalent) of estimates (a paired difference; a seat's deviation from
    fair) at one look by the triangle (triangle_half_widths; `spread` already guarded)."""
    shown, equal = triangle_half_widths(spread, n, delta, alpha, wave)
    estimate = np.abs(_arr(estimate))
    return estimate >= shown, estimate + equal <= _arr(delta)


def triangle_seat_decisions(rates, spread, n, delta, alpha, wave):
    """(unbalanced, balanced) of a cell's seats (last axis) by the triangle: unbalanced when
    some seat's deviation from the fair share (the mean of the seats' shares) is shown,
    balanced when every seat's is equivalent."""
    rates = _arr(rates)
    off = rates - rates.mean(axis=-1, keepdims=True)
    shown, equal = triangle_decisions(off, spread, _arr(n)[..., None], _arr(delta)[..., None],
                                      alpha, _arr(wave)[..., None])
    return np.any(shown, axis=-1), np.all(equal, axis=-1)


def games_for_triangle(estimate, spread, delta, alpha, wave):
    """(units until 'different', units until 'equivalent') by the triangle were the estimate
    to stay as it is: the first of a fine geometric grid, inf when never."""
    grid = np.unique(np.ceil(np.geomspace(2, 1e9, 4000)))
    estimate, spread = np.broadcast_arrays(np.abs(_arr(estimate)), _arr(spread))
    shown, equal = triangle_half_widths(spread[..., None], grid, delta, alpha, wave)
    first = lambda ok: np.where(ok.any(axis=-1), grid[np.argmax(ok, axis=-1)], np.inf)  # noqa: E731
    return first(estimate[..., None] >= shown), first(estimate[..., None] + equal <= delta)


# ---- planning -------------------------------------------------------------------------------------
def games_for_half_width(sd, half_width, alpha=ALPHA):
    """Games for a fixed-n interval of half-width `half_width` on a mean of standard
    deviation sd (normal approximation; the t correction is negligible at these sizes)."""
    z = stats.norm.ppf(1 - _arr(alpha) / 2)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return np.ceil((z * _arr(sd) / _arr(half_width)) ** 2)


def games_for_rate_half_width(rate, var, half_width, alpha=ALPHA):
    """Games (units) after which the interval of a rate observed with outcome variance var
    (rate_interval) is narrower than +-half_width: the first of a fine geometric grid (inf
    beyond a billion).  Unlike the normal approximation it stays right near 0 and 1 (a pilot
    that saw no win does not mean one game is enough).  Blaker's bounds (few events) are
    computed only where their brackets leave the answer open."""
    grid = np.unique(np.ceil(np.geomspace(2, 1e9, 4000)))
    rate, var, half_width = np.broadcast_arrays(_arr(rate), _arr(var), _arr(half_width))
    x, m, fewer = _rate_counts(rate[..., None], var[..., None], grid)
    h = np.broadcast_to(half_width[..., None], x.shape)
    with np.errstate(invalid="ignore"):
        ok = (stats.beta.ppf(1 - _arr(alpha) / 2, x + 0.5, m - x + 0.5)
              - stats.beta.ppf(_arr(alpha) / 2, x + 0.5, m - x + 0.5)) / 2 < h
    few = fewer < FEW_EVENTS
    if few.any():
        small, m_few, h_few = fewer[few], np.broadcast_to(m, x.shape)[few], h[few]
        (in_lo, out_lo), (in_hi, out_hi) = (_blaker_brackets(small, m_few, FEW_EVENTS_ALPHA, up)
                                            for up in (False, True))
        narrow = (out_hi - out_lo) / 2 < h_few  # surely narrow enough
        open_ = ~narrow & ((in_hi - in_lo) / 2 < h_few)  # perhaps: Blaker's bounds decide
        if open_.any():
            low, high = _blaker_bounds(small[open_], m_few[open_], FEW_EVENTS_ALPHA)
            narrow[open_] = (high - low) / 2 < h_few[open_]
        ok[few] = narrow
    return np.where(ok.any(axis=-1), grid[np.argmax(ok, axis=-1)], np.inf)


def games_for_power(sd, delta, alpha=ALPHA, power=POWER):
    """Games (pairs) for a two-sided test at `alpha` to detect a mean difference `delta` with
    the given power, from the standard deviation of the paired difference."""
    z = stats.norm.ppf(1 - _arr(alpha) / 2) + stats.norm.ppf(power)
    return np.ceil((z * _arr(sd) / _arr(delta)) ** 2)


def games_for_cs_half_width(sd, half_width, alpha=ALPHA, planned=10_000, prior_var=None):
    """Games after which the confidence sequence's half-width is below `half_width` (the
    first of a fine geometric grid; inf beyond a billion games)."""
    grid = np.unique(np.ceil(np.geomspace(2, 1e9, 4000)))
    sd, half_width = np.broadcast_arrays(_arr(sd), _arr(half_width))
    widths = cs_half_width(sd[..., None], grid, alpha, planned, prior_var)
    ok = widths <= half_width[..., None]
    return np.where(ok.any(axis=-1), grid[np.argmax(ok, axis=-1)], np.inf)


def games_for(sd, half_width, alpha=ALPHA, planned=None, prior_var=None):
    """Games for a half-width: of a fixed-n interval, or with `planned` of the interim
    confidence sequence; inf where half_width <= 0."""
    half_width = _arr(half_width)
    safe = np.where(half_width > 0, half_width, 1.0)
    games = (games_for_half_width(sd, safe, alpha) if planned is None
             else games_for_cs_half_width(sd, safe, alpha, planned, prior_var))
    return np.where(half_width > 0, games, np.inf)


def games_to_decide(estimate, sd, n, delta, alpha=ALPHA, planned=None, prior_var=None):
    """Total games after which an interval at the current estimate and sd would either
    exclude 0 or lie within +-delta, whichever comes first (inf when neither can); with
    `planned` (a run in progress) the confidence sequences of cs_comparison_decisions, the
    equivalence one at equivalence_alpha."""
    estimate = np.abs(_arr(estimate))
    differ = games_for(sd, estimate, alpha, planned, prior_var)
    equal = games_for(sd, _arr(delta) - estimate,
                      alpha if planned is None else equivalence_alpha(alpha), planned, prior_var)
    return np.maximum(np.minimum(differ, equal), _arr(n))
