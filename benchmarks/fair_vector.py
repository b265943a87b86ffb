"""Every seat at once (pipelines/fair_vector.py) on known truths, synthetic games (issue 52).

    nice -n 19 python -m benchmarks.fair_vector [--reps 300] [--players 2,3,4] [--seed 1]

A k-player game whose seats' win chances follow a known rule in the vector of a per-seat
option: seat i (the first at 0) has log odds u_i(v) against the first seat, its win chance
the multinomial logit's exp(u_i) / sum exp(u); nobody wins with probability NOBODY (every
seat's figure 1/k).  Every vector of a wave plays the same deals, and a deal's draw is
shared between vectors (common random numbers) with probability SHARED.  The true fair
vector v* (every seat's chance equal) is set by each truth's intercepts a = -f(v*).
Truths (TRUTHS), every seat a few points of share a unit around v*:
- logit: u_i = a_i + b v_i (the model, linear log odds);
- cross: each seat's slope its own, and a seat's bonus also costs the next seat
  (u_i = a_i + b_i v_i - g v_(i-1)): unequal effects on the others;
- curved: the own effect saturates (b s tanh(v_i / s), s = 4) with the cross effect: the log
  odds are not linear over the range, only near v*;
- steep: like curved with 4 times the slope (about 10-20 points of share a unit).
Per truth and player count: how often the simultaneous box (every free seat's interval at
the level at which they hold together) holds v*, how often the joint region (fair_vector.in_region) does, each
seat's own coverage (the least of the seats), how often the integer vector answered is v*
rounded, the median games and the median largest half-width.
"""
from __future__ import annotations

import argparse
import multiprocessing
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from pipelines import fair_vector as fvec

NOBODY, SHARED = 0.05, 0.7
LO, HI = -4, 8
PRECISION, WAVE_GAMES, MAX_GAMES = 0.5, 1000, 2_000_000
STARS = (0.7, 2.3, 3.6)        # v* of the free seats (seats 2, 3, 4)
TRUTHS = ("logit", "cross", "curved", "steep")


def truth(name: str, players: int):
    """(u, v*): u(V) maps (m, k-1) free vectors to (m, k-1) log odds against the first seat."""
    free = players - 1
    star = np.array(STARS[:free])
    slope = {"steep": 0.4}.get(name, 0.1) * np.ones(free)
    cross = 0.0 if name == "logit" else 0.04 * (4 if name == "steep" else 1)
    if name != "logit":
        slope = slope * (1 + 0.3 * np.arange(free) / max(free - 1, 1))

    def f(v):
        v = np.atleast_2d(np.asarray(v, dtype=float))
        own = slope * (4 * np.tanh(v / 4) if name in ("curved", "steep") else v)
        before = np.column_stack([np.zeros(len(v)), v[:, :-1]])
        return own - cross * before

    a = -f(star)[0]
    return (lambda v: a + f(v)), star


def player(rng, u, players: int):
    """play(vectors, start, count) -> (count, m, k) figures of the truth u."""
    def play(vectors, start, count):
        p = (1 - NOBODY) * fvec._softmax(u(np.asarray(vectors, dtype=float)))   # (m, k)
        edges = np.cumsum(p, axis=1)                                            # (m, k)
        common = rng.random((count, 1))
        own = rng.random((count, len(vectors)))
        draw = np.where(rng.random((count, 1)) < SHARED, common, own)           # (count, m)
        seat = (draw[:, :, None] >= edges[None]).sum(axis=2)                    # k: nobody
        y = (seat[:, :, None] == np.arange(players)).astype(float)
        y[seat == players] = 1.0 / players
        return y
    return play


def row(name: str, players: int, reps: int, seed: int) -> dict:
    u, star = truth(name, players)
    best = tuple(int(x) for x in np.round(star))
    rng = np.random.default_rng([seed, players, TRUTHS.index(name)])
    box = region = nearest = 0
    seats = np.zeros(players - 1)
    games, halves = [], []
    for _ in range(reps):
        ans, c, waves = fvec.search(player(rng, u, players), players, LO, HI, PRECISION,
                                    WAVE_GAMES, MAX_GAMES)
        games.append(sum(y.shape[0] * y.shape[1] for _, y in waves))
        if ans.status == "not_identified":
            continue
        inside = (np.array(ans.low) <= star) & (star <= np.array(ans.high))
        seats += inside
        box += bool(inside.all())
        region += bool(fvec.in_region(c, star[None])[0])
        nearest += tuple(ans.vector[1:]) == best
        halves.append(ans.half_width)
    return {"truth": name, "players": players, "reps": reps, "box": box / reps,
            "region": region / reps, "seat_min": float(seats.min()) / reps,
            "nearest": nearest / reps, "median_games": float(np.median(games)),
            "median_half_width": float(np.median(halves)) if halves else None}


def _row_line(job) -> str:
    began = time.process_time()
    r = row(*job)
    return (f"| {r['truth']} | {r['players']} | {r['reps']} | {100 * r['box']:.1f}% | "
            f"{100 * r['region']:.1f}% | {100 * r['seat_min']:.1f}% | "
            f"{100 * r['nearest']:.0f}% | {r['median_games']:,.0f} | "
            f"{r['median_half_width']:.2f} | {time.process_time() - began:.0f} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--players", default="2,3,4")
    ap.add_argument("--truths", default=",".join(TRUTHS))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=1)
    args = ap.parse_args(argv)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=Path(__file__).resolve().parents[1]).stdout.strip()
    print(f"commit {commit}; v* = {STARS} (free seats), range {LO}..{HI}; nobody wins "
          f"{NOBODY:.0%}; shared draws {SHARED:.0%}; to +-{PRECISION} from {WAVE_GAMES:,} "
          f"games a vector, at most {MAX_GAMES:,}")
    print("| truth | players | replicates | box covers v* | joint region covers v* | "
          "least seat's coverage | answered v* rounded | median games | "
          "median largest half-width | CPU-s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    jobs = [(name, int(k), args.reps, args.seed) for name in args.truths.split(",")
            for k in args.players.split(",")]
    with multiprocessing.Pool(args.workers) as pool:
        for line in pool.imap(_row_line, jobs):
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
