"""Family error of the seat test over 1,000 fair cells (issue 52, item 7b): the share of
families in which Benjamini-Hochberg at 5% calls some fair cell unbalanced, with the F
approximation of Hotelling's T^2 alone and with the product's test (stats.seat_balance_test:
the seat-permutation test wherever F says at most PERMUTATION_NEAR).

    nice -n 19 python benchmarks/seat_family.py [--families 300] [--seats 3] [--games 100,500,1000]

A fair cell: each game one seat wins (equal chances) or, 5% of the games, nobody.  Per
family the 1,000 cells' T^2 and F p-values are computed at once from their counts; the
product's p-value is computed (stats.seat_balance_test, counts as frequency weights) for
every cell whose F p-value is at most SCREEN (F is liberal there, so a cell whose exact p is
that small has an F p smaller still): BH at 5% over 1,000 cells rejects only at
p_(j) <= j x 0.00005, and fair cells with p <= 0.002 number about 2 a family, so no other
cell can be rejected; the others keep F's p (which does not change the family's verdict).  A true 5% lands within +-2.5 points of 5% with probability
0.95 at 300 families (+-1 at 2,000).
"""
from __future__ import annotations

import argparse
import multiprocessing
import sys

import numpy as np
from scipy import stats

from pipelines import stats as st  # noqa: E402

CELLS, NOBODY, SCREEN = 1000, 0.05, 0.002


def _kinds(seats: int) -> np.ndarray:
    return np.vstack([np.eye(seats), np.zeros((1, seats))])


def f_p_values(counts: np.ndarray, kinds: np.ndarray) -> np.ndarray:
    """The F approximation's p-value of T^2 for every cell (rows of counts per kind)."""
    x = st.seat_contrasts(kinds)                      # kinds x dim
    n = counts.sum(axis=1, keepdims=True).astype(float)
    mean = counts @ x / n                             # cells x dim
    second = np.einsum("ck,ki,kj->cij", counts, x, x)
    cov = (second - n[:, :, None] * mean[:, :, None] * mean[:, None, :]) / (n[:, :, None] - 1)
    t2 = n[:, 0] * np.einsum("ci,ci->c", mean, np.linalg.solve(cov, mean[..., None])[..., 0])
    dim, df = x.shape[1], n[:, 0] - 1
    return stats.f.sf((df - dim + 1) / (dim * df) * t2, dim, df - dim + 1)


def family(job) -> tuple[bool, bool]:
    """(F alone rejects some cell, the product's test does) for one family of fair cells."""
    seed, seats, games = job
    rng = np.random.default_rng(seed)
    kinds = _kinds(seats)
    probs = np.r_[np.full(seats, (1 - NOBODY) / seats), NOBODY]
    counts = rng.multinomial(games, probs, size=CELLS)
    p_f = f_p_values(counts, kinds)
    p = p_f.copy()
    for i in np.nonzero(p_f <= SCREEN)[0]:
        keep = counts[i] > 0
        p[i] = st.seat_balance_test(kinds[keep], tests=CELLS, counts=counts[i][keep])[1]
    return (bool(np.any(st.benjamini_hochberg(p_f) <= 0.05)),
            bool(np.any(st.benjamini_hochberg(p) <= 0.05)))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--families", type=int, default=300)
    ap.add_argument("--seats", default="3,4")
    ap.add_argument("--games", default="100,500,1000")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args(argv)
    print("| seats | games a cell | families | some fair cell called unbalanced: F alone | "
          "the product's test |")
    print("|---|---|---|---|---|")
    with multiprocessing.Pool(args.workers) as pool:
        for seats in (int(s) for s in args.seats.split(",")):
            for games in (int(g) for g in args.games.split(",")):
                jobs = [([52, seats, games, f], seats, games) for f in range(args.families)]
                out = np.array(pool.map(family, jobs))
                print(f"| {seats} | {games:,} | {args.families} | {100 * out[:, 0].mean():.1f}% "
                      f"| {100 * out[:, 1].mean():.1f}% |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
