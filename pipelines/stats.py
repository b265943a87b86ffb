"""Small statistical formulas shared by the pipelines and the runner.

The arithmetic is written with operators only, so each function works on floats, numpy arrays
and Polars expressions alike (one formula, no copies).
"""
from __future__ import annotations

Z95 = 1.959963984540054  # two-sided 95% normal quantile


def wilson_interval(p, n, z: float = Z95):
    """(low, high) of the Wilson score interval for a share p observed over n trials.
    Win shares of tied games are fractional; the interval treats them as Bernoulli trials."""
    z2n = z * z / n
    centre = (p + z2n / 2) / (1 + z2n)
    half = z * ((p * (1 - p) / n + z2n / (4 * n)) ** 0.5) / (1 + z2n)
    return centre - half, centre + half


def wilson_half_width(p, n, z: float = Z95):
    low, high = wilson_interval(p, n, z)
    return (high - low) / 2


def mean_interval(mean, sd, n, z: float = Z95):
    """(low, high) of a normal-approximation interval for a mean."""
    half = z * sd / n ** 0.5
    return mean - half, mean + half


def holm(p_values):
    """Holm step-down adjusted p-values (same order as given; NaN stays NaN)."""
    import numpy as np

    p = np.asarray(p_values, dtype=np.float64)
    out = np.full_like(p, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    if ok.size == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    m = ok.size
    adjusted = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out[order] = np.minimum(adjusted, 1.0)
    return out


def normal_p_value(mean, sd, n):
    """Two-sided p-value of a zero mean (normal approximation, valid for the large paired
    samples of an experiment); exact 1 or 0 when every difference is equal."""
    import numpy as np
    from scipy import stats

    mean, sd, n = (np.asarray(x, dtype=np.float64) for x in (mean, sd, n))
    se = sd / np.sqrt(n)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = 2 * stats.norm.sf(np.abs(mean) / se)
    degenerate = ~(se > 0)
    p = np.where(degenerate, np.where(mean == 0, 1.0, 0.0), p)
    return np.where(n > 1, p, np.nan)
