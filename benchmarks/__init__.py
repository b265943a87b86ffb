"""meeplelab's benchmarks: measurements, never timed tests (their figures go to docs/lab/).

Run them as modules from the root of a checkout built in place
(`python setup.py -q build_ext --inplace`): Python then puts the checkout first on the path,
so a benchmark measures this checkout's engines, not whichever meeplelab is installed.

    python -m benchmarks.engines                       # games/s and moves/s per game and agent
    python -m benchmarks.forbidden_desert.endgames -h  # a per-game study

At the top, the shared scripts: engines, openspiel_anchor (the same against OpenSpiel's C++),
agents (the search agent's strength, speed and budget), strong_play (the form's presets: cost
and strength against mcts), search_ab (builds of two commits side by side), pairing, plan_accuracy, pipeline (end
to end on Ray), api_load (the service under load).  In benchmarks/<game>/, that game's
studies and tuners.  Each module's docstring gives its options.
"""
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # the checkout these benchmarks measure


def share_interval(share: float, n: int) -> tuple[float, float]:
    """(low, high) of a share of n 0/1 outcomes by the product's interval for a rate
    (pipelines.stats.rate_interval at 95%), for a benchmark's summary line."""
    from pipelines.stats import rate_interval

    low, high = rate_interval(share, share * (1 - share), n)
    return float(low), float(high)


def wilson_interval(p, n, z: float = 1.959963984540054):
    """(low, high) of Wilson's score interval, which the product does not use: a candidate
    the calibration benchmark compares with rate_interval, and stop_rule's bound on a
    variance."""
    z2n = z * z / n
    centre = (p + z2n / 2) / (1 + z2n)
    half = z * ((p * (1 - p) / n + z2n / (4 * n)) ** 0.5) / (1 + z2n)
    return centre - half, centre + half
