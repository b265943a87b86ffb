"""Reef Encounter's first balance answers and agent checks (a benchmark, not a test).

    python benchmarks/reef_balance.py [--games 2000]

Prints, with 95% Wilson intervals: greedy's win share against random in 2-player games
(agents rotated over the seats); the win share of each seat (turn order from the start
player) under all-greedy play for 2, 3 and 4 players; and for each, how the games ended
(end reasons, and the share cut by a simulator bound, which should be 0).
"""
from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

import core_cy  # noqa: E402
from core_cy import batch  # noqa: E402
from pipelines.stats import wilson_interval  # noqa: E402

GAME = core_cy.load("reef_encounter")


def share(values) -> str:
    p, n = float(np.mean(values)), len(values)
    lo, hi = wilson_interval(p, n)
    return f"{p:.3f} [{lo:.3f}, {hi:.3f}]"


def ends(rb) -> str:
    counts = Counter(rb.column("end_reason").to_pylist())
    n = rb.num_rows
    return ", ".join(f"{k} {v / n:.1%}" for k, v in counts.most_common())


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=2000)
    args = ap.parse_args(argv)
    rb = batch.play(GAME, 2, None, ["greedy", "random"], seed=1, count=args.games, rotate=True)
    seats = rb.column("seat_agent").to_pylist()
    shares = rb.column("seat_win_share").to_pylist()
    greedy = [s[a.index("greedy")] for s, a in zip(shares, seats)]
    print(f"greedy vs random, 2 players, {rb.num_rows} games: greedy wins {share(greedy)}; "
          f"ends: {ends(rb)}")
    for players in (2, 3, 4):
        rb = batch.play(GAME, players, None, "greedy", seed=2, count=args.games)
        shares = np.array(rb.column("seat_win_share").to_pylist())
        line = "  ".join(f"seat {k}: {share(shares[:, k])}" for k in range(players))
        print(f"greedy x{players}, {rb.num_rows} games, fair share {1 / players:.3f}: {line}")
        print(f"    ends: {ends(rb)}; mean length {np.mean(rb.column('length')):.0f} moves")


if __name__ == "__main__":
    main()
