"""The statistics' audit with known truth (issue 26), the long version of
tests/pipelines/test_calibration.py: seeded synthetic outcomes pushed through pipelines.stats.

    nice -n 19 python benchmarks/calibration.py            # about a minute on one core

Prints, per property, the goal and the measured figure with its Monte Carlo +- (2 s.e.):
- seat test: some cell of 12 fair cells of 100 games called unbalanced (BH 5%), 3 and 4 seats;
- rare rates: the least exact coverage of the rate interval at rates 0.5-5%, n 50-100;
- sign-test rows: the interval and the p-value agree;
- the sequential rule (stop_when.delta): a false 'different' at 20/100/1000 looks, and the
  games it needs against the fixed-n sample with 80% power at the same delta, at true
  differences 0 and 2 x delta, for independent and strongly correlated (rho 0.9) arms.
"""
from __future__ import annotations

import os
import sys

import numpy as np
from scipy import stats

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from pipelines import stats as st  # noqa: E402


def _pm(hits: np.ndarray) -> str:
    p = float(np.mean(hits))
    return f"{100 * p:.1f}% +-{200 * np.sqrt(p * (1 - p) / hits.size):.1f}"


def seat_family(rng, k: int, reps: int = 150, cells: int = 12, n: int = 100) -> str:
    anyone = []
    for _ in range(reps):
        p = [st.seat_balance_test(np.eye(k)[rng.integers(0, k, n)])[1] for _ in range(cells)]
        anyone.append(bool((st.benjamini_hochberg(np.array(p)) <= 0.05).any()))
    return _pm(np.array(anyone))


def rare_coverage() -> float:
    worst = 1.0
    for n in range(50, 101, 5):
        x = np.arange(n + 1)
        low, high = st.rate_interval(x / n, x / n * (1 - x / n), n)
        for p in np.linspace(0.005, 0.05, 46):
            worst = min(worst, float((stats.binom.pmf(x, n, p) * ((low <= p) & (p <= high))).sum()))
    return worst


def sign_rows(rng, reps: int = 20_000) -> str:
    agree = []
    for _ in range(reps):
        n = int(rng.integers(5, 60))
        d = rng.choice([-1.0, 0.0, 1.0], p=[0.1, 0.8, 0.1], size=n)
        pos, neg = (d > 0).sum(), (d < 0).sum()
        if not st.uses_sign_test(d.std(ddof=1), pos, neg):
            continue
        low, high = st.paired_interval(d.mean(), d.std(ddof=1), n, pos, neg)
        p = st.paired_p_value(d.mean(), d.std(ddof=1), n, pos, neg)
        agree.append(bool(((low > 0) | (high < 0)) == (p <= 0.05)))
    return _pm(np.array(agree))


def _differences(rng, reps, n, shift, rho):
    """Paired differences of two arms' 0/1 results at base rate 0.3 (arm B + shift): with
    probability rho the two games share their result (common deals)."""
    a = rng.random((reps, n)) < 0.3
    b_own = rng.random((reps, n)) < 0.3 + shift
    same = rng.random((reps, n)) < rho
    b = np.where(same & (shift == 0), a, b_own)
    if shift:
        b = np.where(same, a | (rng.random((reps, n)) < shift / 0.7), b_own)
    return b.astype(float) - a


def sequential(rng, delta=0.05, rho=0.0, looks=20, reps=2000, shift=0.0, alpha=0.05):
    """(share of runs that decide wrongly, mean games to decide, p90, fixed-n games)."""
    sd_truth = np.sqrt(_differences(rng, 1, 200_000, shift, rho).var())
    fixed = float(st.games_for_power(sd_truth, delta))
    total = int(4 * fixed)
    d = _differences(rng, reps, total, shift, rho)
    at = np.unique(np.linspace(total / looks, total, looks).astype(int))
    s1, s2 = np.cumsum(d, axis=1)[:, at - 1], np.cumsum(d * d, axis=1)[:, at - 1]
    mean = s1 / at
    sd = np.sqrt(np.maximum(s2 / at - mean ** 2, 0))
    half = st.cs_half_width(sd, at, alpha, total, st.DIFF_PRIOR_VAR)
    differ = np.abs(mean) > half
    equal = np.abs(mean) + half < delta
    decided = differ | equal
    first = np.where(decided.any(axis=1), np.argmax(decided, axis=1), len(at) - 1)
    games = at[first]
    wrong = differ[np.arange(reps), first] if shift == 0 else equal[np.arange(reps), first]
    wrong &= decided[np.arange(reps), first]
    return wrong, games, fixed


def main() -> None:
    rng = np.random.default_rng(2026)
    print("property | goal | measured", flush=True)
    for k in (3, 4):
        print(f"seat test, 12 fair cells x 100 games, {k} seats: some cell unbalanced | <= 5% | "
              f"{seat_family(rng, k)}")
    print(f"rare rates 0.5-5%, n 50-100: least exact coverage | >= 92% | "
          f"{100 * rare_coverage():.1f}% (exact)")
    print(f"sign-test rows: interval agrees with its p-value | 100% | {sign_rows(rng)}")
    for looks in (20, 100, 1000):
        wrong, _, _ = sequential(rng, looks=looks, reps=1000 if looks == 1000 else 2000)
        print(f"stop_when.delta, no difference, {looks} looks: 'different' | 3-5%, <= 5% | "
              f"{_pm(wrong)}")
    for rho in (0.0, 0.9):
        ratios = []
        for shift in (0.0, 0.1):
            wrong, games, fixed = sequential(rng, rho=rho, looks=100, shift=shift)
            ratios.append(games.mean() / fixed)
            print(f"rho {rho}, true difference {shift}: games to decide / fixed-n 80% power "
                  f"({fixed:.0f}) | | mean {games.mean() / fixed:.2f}, p90 "
                  f"{np.percentile(games, 90) / fixed:.2f}; wrong {_pm(wrong)}")
        print(f"rho {rho}: mean ratio over 0 and 2 x delta | <= 1 | {np.mean(ratios):.2f}")


if __name__ == "__main__":
    main()
