"""The statistical formulas of meeplelab, each written once (numpy/scipy, vectorised).

Every function takes numbers or numpy arrays.  Conventions:
- a *rate* is the mean of a per-game outcome in [0, 1] (a seat's win share, 1/k in a k-way tie;
  a team's 0/1 result); its interval is Jeffreys' (beta quantiles), with the observed variance
  of the outcome folded in through an effective count, so ties do not make it conservative;
- a *mean* (scores, paired differences) gets a t interval; n < SMALL_N is flagged by callers;
- fixed-n figures (a finished run) and always-valid figures (a run in progress: confidence
  sequences that hold at every look) come from the same inputs: mean, sd and n;
- p-values are never 0 (P_FLOOR), and a family of tests is adjusted by Benjamini-Hochberg with
  intervals at the matching false-coverage level (Benjamini & Yekutieli 2005), so an interval
  excludes the null exactly when its test is rejected.
"""
from __future__ import annotations

import numpy as np
from scipy import stats

Z95 = 1.959963984540054  # two-sided 95% normal quantile
ALPHA = 0.05
SMALL_N = 30  # below this many games a mean's t interval is flagged as approximate
SIGN_TEST_BELOW = 30  # fewer differing pairs than this: exact sign test instead of t
P_FLOOR = 1e-300  # the smallest p-value reported (a p-value is never exactly 0)
POWER = 0.8


def _arr(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


# ---- rates: Jeffreys intervals ---------------------------------------------------------------
def wilson_interval(p, n, z: float = Z95):
    """(low, high) of the Wilson score interval (operators only: works on Polars expressions
    too).  Kept for the benchmarks' quick summaries; the product shows rate_interval."""
    z2n = z * z / n
    centre = (p + z2n / 2) / (1 + z2n)
    half = z * ((p * (1 - p) / n + z2n / (4 * n)) ** 0.5) / (1 + z2n)
    return centre - half, centre + half


def effective_count(rate, var, n):
    """n scaled by p(1-p) / var: the count of 0/1 trials with the same information as n
    outcomes of variance var (ties make win shares less variable than 0/1 results)."""
    rate, var, n = _arr(rate), _arr(var), _arr(n)
    with np.errstate(divide="ignore", invalid="ignore"):
        scaled = n * rate * (1 - rate) / var
    return np.where((var > 0) & (rate > 0) & (rate < 1), scaled, n)


def rate_interval(rate, var, n, alpha=ALPHA):
    """(low, high) of Jeffreys' interval for a rate observed over n games with outcome
    variance var (population variance; p(1-p) for 0/1 outcomes).  At 0 and 1 observed
    successes the interval reaches the boundary (Brown, Cai & DasGupta 2001)."""
    rate, alpha = _arr(rate), _arr(alpha)
    m = effective_count(rate, var, n)
    x = rate * m
    with np.errstate(invalid="ignore"):
        low = stats.beta.ppf(alpha / 2, x + 0.5, m - x + 0.5)
        high = stats.beta.ppf(1 - alpha / 2, x + 0.5, m - x + 0.5)
    low = np.where(x <= 0, 0.0, low)
    high = np.where(x >= m, 1.0, high)
    return low, high


def rate_half_width(rate, var, n, alpha=ALPHA):
    low, high = rate_interval(rate, var, n, alpha)
    return (high - low) / 2


# ---- means: t intervals and paired tests ------------------------------------------------------
def t_quantile(n, alpha=ALPHA):
    """Two-sided t quantile with n - 1 degrees of freedom (normal for huge n)."""
    return stats.t.ppf(1 - _arr(alpha) / 2, np.maximum(_arr(n) - 1, 1))


def mean_interval(mean, sd, n, alpha=ALPHA):
    """(low, high) of the t interval for a mean."""
    half = t_quantile(n, alpha) * _arr(sd) / np.sqrt(_arr(n))
    return _arr(mean) - half, _arr(mean) + half


def floor_p(p):
    return np.where(np.isnan(_arr(p)), np.nan, np.maximum(_arr(p), P_FLOOR))


def sign_test_p(positive, negative):
    """Exact two-sided sign test of a zero median: p = P(|Bin(m, 1/2) - m/2| >= observed)."""
    positive, negative = _arr(positive), _arr(negative)
    m = positive + negative
    smaller = np.minimum(positive, negative)
    p = np.minimum(1.0, 2 * stats.binom.cdf(smaller, m, 0.5))
    return floor_p(np.where(m > 0, p, 1.0))


def paired_p_value(mean, sd, n, positive, negative):
    """Two-sided p-value of a zero mean difference: Student's t, or the exact sign test when
    fewer than SIGN_TEST_BELOW pairs differ (or every difference is equal).  NaN for n < 2."""
    mean, sd, n = _arr(mean), _arr(sd), _arr(n)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.abs(mean) / (sd / np.sqrt(n))
    p_t = 2 * stats.t.sf(t, np.maximum(n - 1, 1))
    few = (_arr(positive) + _arr(negative) < SIGN_TEST_BELOW) | ~(sd > 0)
    p = np.where(few, sign_test_p(positive, negative), p_t)
    return np.where(n > 1, floor_p(p), np.nan)


def uses_sign_test(sd, positive, negative):
    return (_arr(positive) + _arr(negative) < SIGN_TEST_BELOW) | ~(_arr(sd) > 0)


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
def seat_balance_test(shares, strata=None):
    """Omnibus test that every seat's expected win share is 1/k, from per-game share vectors
    (n x k, rows summing to 1).  Hotelling's T^2 on the first k-1 seats (the last is implied)
    with the observed covariance of the shares, so ties are accounted for.  With `strata` (one
    label per game: the agents' seating when agents rotate) the seat means are averaged over
    strata with equal weight and the covariance is pooled within strata, so the agents'
    strength neither biases the test nor swamps it with variance.
    Returns (statistic T^2, p-value); p is NaN when there is nothing to test."""
    shares = _arr(shares)
    n, k = shares.shape
    if k < 2 or n < 3:
        return np.nan, np.nan
    labels = np.zeros(n, dtype=np.int64) if strata is None else np.unique(strata,
                                                                          return_inverse=True)[1]
    x = shares[:, :k - 1] - 1.0 / k
    means, covs, sizes = [], [], []
    for s in np.unique(labels):
        part = x[labels == s]
        if len(part) < 2:
            continue
        means.append(part.mean(axis=0))
        covs.append(np.atleast_2d(np.cov(part, rowvar=False)))
        sizes.append(len(part))
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
    return t2, float(floor_p(stats.f.sf(f, dim, within_df - dim + 1)))


# ---- always-valid (interim) figures ----------------------------------------------------------
def cs_half_width(sd, n, alpha=ALPHA, planned=10_000, scale=0.5):
    """Half-width of an asymptotic confidence sequence for a mean (Waudby-Smith et al. 2021,
    Gaussian mixture): it holds at every look at once, so a run may be watched and stopped at
    any time.  The mixture is tuned to be tightest near `planned` games for an outcome of
    standard deviation `scale` (0.5: the largest of a [0, 1] outcome)."""
    sd, n, alpha = _arr(sd), np.maximum(_arr(n), 1), _arr(alpha)
    c = -2 * np.log(alpha) + np.log(-2 * np.log(alpha) + 1)
    rho2 = c / (planned * scale ** 2)
    v = n * sd ** 2 * rho2 + 1
    return np.sqrt(2 * v / (n ** 2 * rho2) * np.log(np.sqrt(v) / alpha))


# ---- planning -------------------------------------------------------------------------------------
def games_for_half_width(sd, half_width, alpha=ALPHA):
    """Games for a fixed-n interval of half-width `half_width` on a mean of standard
    deviation sd (normal approximation; the t correction is negligible at these sizes)."""
    z = stats.norm.ppf(1 - _arr(alpha) / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.ceil((z * _arr(sd) / _arr(half_width)) ** 2)


def games_for_rate_half_width(rate, var, half_width, alpha=ALPHA):
    """Games (units) after which the Jeffreys interval of a rate observed with outcome
    variance var (as rate_interval) is narrower than +-half_width: the first of a fine
    geometric grid (inf beyond a billion).  Unlike the normal approximation it stays right
    near 0 and 1 (a pilot that saw no win does not mean one game is enough)."""
    grid = np.unique(np.ceil(np.geomspace(2, 1e9, 4000)))
    rate, var, half_width = np.broadcast_arrays(_arr(rate), _arr(var), _arr(half_width))
    widths = rate_half_width(rate[..., None], var[..., None], grid, alpha)
    ok = widths < half_width[..., None]
    return np.where(ok.any(axis=-1), grid[np.argmax(ok, axis=-1)], np.inf)


def games_for_power(sd, delta, alpha=ALPHA, power=POWER):
    """Games (pairs) for a two-sided test at `alpha` to detect a mean difference `delta` with
    the given power, from the standard deviation of the paired difference."""
    z = stats.norm.ppf(1 - _arr(alpha) / 2) + stats.norm.ppf(power)
    return np.ceil((z * _arr(sd) / _arr(delta)) ** 2)


def games_for_cs_half_width(sd, half_width, alpha=ALPHA, planned=10_000, scale=0.5):
    """Games after which the confidence sequence's half-width is below `half_width` (the
    first of a fine geometric grid; inf beyond a billion games)."""
    grid = np.unique(np.ceil(np.geomspace(2, 1e9, 4000)))
    sd, half_width = np.broadcast_arrays(_arr(sd), _arr(half_width))
    widths = cs_half_width(sd[..., None], grid, alpha, planned, scale)
    ok = widths <= half_width[..., None]
    return np.where(ok.any(axis=-1), grid[np.argmax(ok, axis=-1)], np.inf)


def games_for(sd, half_width, alpha=ALPHA, planned=None):
    """Games for a half-width: of a fixed-n interval, or with `planned` of the interim
    confidence sequence; inf where half_width <= 0."""
    half_width = _arr(half_width)
    safe = np.where(half_width > 0, half_width, 1.0)
    games = (games_for_half_width(sd, safe, alpha) if planned is None
             else games_for_cs_half_width(sd, safe, alpha, planned))
    return np.where(half_width > 0, games, np.inf)


def games_to_decide(estimate, sd, n, delta, alpha=ALPHA, planned=None):
    """Total games after which an interval at the current estimate and sd would either
    exclude 0 or lie within +-delta, whichever comes first (inf when neither can)."""
    estimate = np.abs(_arr(estimate))
    differ = games_for(sd, estimate, alpha, planned)
    equal = games_for(sd, _arr(delta) - estimate, alpha, planned)
    return np.maximum(np.minimum(differ, equal), _arr(n))
