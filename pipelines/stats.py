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
