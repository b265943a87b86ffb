"""Reef Encounter's search at a designer's pace (issue 35): cost and length of a game under each
agent, and a candidate's strength against another head to head (a benchmark, not a test).

    python -m benchmarks.reef_encounter.search cost [--agents "greedy;mcts;..."] [--games 40]
                                                   [--players 3] [--seed 1]
    python -m benchmarks.reef_encounter.search duel --a AGENT --b AGENT [--games 400]
                                                   [--players 2] [--seed 1] [--workers 2]

cost: every seat plays the agent; CPU seconds a game (time.process_time, one core), moves a game,
and the minutes a 9,000-game verdict takes on 2 cores (CPU s a game x 9,000 / 2 / 60).
duel: A in one seat, B in the others, seats rotated (game i turns them i times): A's win share
with its 95% Wilson interval (even: 1 / players), and the moves a game.  --workers plays the
games in that many processes (game ranges of the same seed: the same games as one process).
Measure the release build.
"""
from __future__ import annotations

import argparse
import os
import time
from concurrent.futures import ProcessPoolExecutor

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import core_cy  # noqa: E402
from core_cy import agents  # noqa: E402
from core_cy.play import batch  # noqa: E402
from benchmarks import share_interval

GAME = "reef_encounter"


def cost(agent: str, games: int, players: int, seed: int, name: str = GAME) -> dict:
    game = core_cy.load(name)
    t0 = time.process_time()
    rows = batch.play(game, players, None, agent, seed=seed, count=games)
    cpu = (time.process_time() - t0) / games
    return {"agent": agent, "cpu_per_game": cpu,
            "moves": float(np.mean(rows.column("length").to_numpy())),
            "minutes_9000_on_2": cpu * 9000 / 2 / 60}


def _duel_part(a: str, b: str, players: int, seed: int, start: int, count: int,
               name: str) -> tuple:
    game = core_cy.load(name)
    rows = batch.play(game, players, None, [a] + [b] * (players - 1), seed=seed, start=start,
                      count=count, rotate=True)
    shares = np.array(rows.column("seat_win_share").to_pylist())
    seats = np.array(rows.column("seat_agent").to_pylist())
    mine = shares[seats == agents.canonical_agent(game, a)]
    return float(mine.sum()), len(mine), float(rows.column("length").to_numpy().sum()), rows.num_rows


def duel(a: str, b: str, games: int, players: int, seed: int, workers: int,
         name: str = GAME) -> dict:
    step = -(-games // workers)
    parts = [(a, b, players, seed, s, min(step, games - s), name)
             for s in range(0, games, step)]
    t0 = time.time()
    with ProcessPoolExecutor(workers) as pool:
        results = list(pool.map(_duel_part, *zip(*parts)))
    won, n = sum(r[0] for r in results), sum(r[1] for r in results)
    share = won / n
    lo, hi = share_interval(share, n)
    return {"a": a, "b": b, "players": players, "games": n, "share": share, "low": lo,
            "high": hi, "moves": sum(r[2] for r in results) / sum(r[3] for r in results),
            "wall_s": time.time() - t0}


def main(argv=None, name: str = GAME, doc: str = __doc__) -> None:
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("what", choices=("cost", "duel"))
    p.add_argument("--agents", default="greedy;mcts(turns=false);mcts")
    p.add_argument("--a")
    p.add_argument("--b", default="mcts(turns=false)")
    p.add_argument("--games", type=int, default=None)
    p.add_argument("--players", type=int, default=None)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--workers", type=int, default=2)
    args = p.parse_args(argv)
    if args.what == "cost":
        for agent in args.agents.split(";"):
            r = cost(agent, args.games or 40, args.players or 3, args.seed, name)
            print(f"{agent}: {r['cpu_per_game']:.3f} CPU s a game, {r['moves']:.0f} moves a "
                  f"game, {r['minutes_9000_on_2']:.1f} min for 9,000 games on 2 cores",
                  flush=True)
    else:
        r = duel(args.a, args.b, args.games or 400, args.players or 2, args.seed, args.workers,
                 name)
        print(f"{r['a']} vs {r['b']} ({r['players']} players, seats rotated): share "
              f"{r['share']:.3f} [{r['low']:.3f}, {r['high']:.3f}] over {r['games']} games "
              f"(even {1 / r['players']:.3f}), {r['moves']:.0f} moves a game, "
              f"{r['wall_s']:.0f} s wall", flush=True)


if __name__ == "__main__":
    main()
