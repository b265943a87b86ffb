"""Reef Encounter's first balance answers and agent checks (a benchmark, not a test).

    python -m benchmarks.reef_encounter.balance [--games 400] [--search-games 60] [--duel-games 200]
                                      [--search "mcts(iterations=200)"] [--part all] [--seed S]
    python -m benchmarks.reef_encounter.balance --speed [--seconds 3]

Prints, with 95% Wilson intervals: how the games end under random, greedy and the search
agent (end reasons; `turn_limit` is the simulator safety, its share should be 0); greedy's win
share against random and the search agent's against greedy in 2-player games (agents rotated
over the seats, so every agent sits in every seat equally often); and the win share of each
seat (turn order: seat 0 starts) under all-greedy and all-search play for 2, 3 and 4 players,
with the seat-balance test of pipelines.stats (Hotelling's T^2 on the shares).  --part runs
one section only (ends, duels, greedy_seats, search_seats), e.g. to use two cores; --seed S
is added to each section's own seed (1-5), to play a fresh sample of games.

--speed: random and greedy moves/s on one core for 2, 3 and 4 players against OpenSpiel's C++
connect_four measured in the same run (goals: random >= 1.5x connect_four, greedy >= 10% of
random).  Measure the release build (`python setup.py build_ext --inplace`, no
MEEPLELAB_DEBUG).
"""
from __future__ import annotations

import argparse
import os
import time
from collections import Counter

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import core_cy  # noqa: E402
from core_cy.play import batch  # noqa: E402
from pipelines.stats import seat_balance_test
from benchmarks import share_interval

GAME = core_cy.load("reef_encounter")


def share(values) -> str:
    p, n = float(np.mean(values)), len(values)
    lo, hi = share_interval(p, n)
    return f"{p:.3f} [{lo:.3f}, {hi:.3f}]"


def ends(rb) -> str:
    counts = Counter(rb.column("end_reason").to_pylist())
    n = rb.num_rows
    cut = counts.get("turn_limit", 0) / n
    return (f"truncated (turn_limit) {cut:.1%}; ends: "
            + ", ".join(f"{k} {v / n:.1%}" for k, v in counts.most_common()))


def head_to_head(agent: str, rival: str, games: int, seed: int) -> None:
    t0 = time.perf_counter()
    rb = batch.play(GAME, 2, None, [agent, rival], seed=seed, count=games, rotate=True)
    seats = rb.column("seat_agent").to_pylist()
    shares = rb.column("seat_win_share").to_pylist()
    name = agent.split("(")[0]           # rows spell each agent with all its parameters
    mine = [s[[x.split("(")[0] for x in a].index(name)] for s, a in zip(shares, seats)]
    print(f"{agent} vs {rival}, 2 players, {rb.num_rows} games (seats rotated): {agent} wins "
          f"{share(mine)}; {ends(rb)} [{time.perf_counter() - t0:.0f} s]")


def seat_shares(agent: str, players: int, games: int, seed: int) -> None:
    t0 = time.perf_counter()
    rb = batch.play(GAME, players, None, agent, seed=seed, count=games)
    shares = np.array(rb.column("seat_win_share").to_pylist())
    _, p = seat_balance_test(shares)
    line = "  ".join(f"seat {k}: {share(shares[:, k])}" for k in range(players))
    print(f"{agent} x{players}, {rb.num_rows} games, fair share {1 / players:.3f}: {line}; "
          f"seat-balance p = {p:.3g}")
    print(f"    {ends(rb)}; mean length {np.mean(rb.column('length')):.0f} moves "
          f"[{time.perf_counter() - t0:.0f} s]")


def speed(seconds: float) -> None:
    from benchmarks import engines, openspiel_anchor
    anchor = openspiel_anchor.connect_four_rate(seconds)["moves_per_s"]
    print(f"OpenSpiel connect_four, uniform random bots: {anchor:,.0f} moves/s")
    for players in (2, 3, 4):
        rnd = engines.measure(GAME, players, "random", seconds)["moves_per_s"]
        greedy = engines.measure(GAME, players, "greedy", seconds)["moves_per_s"]
        print(f"{players} players: random {rnd:,.0f} moves/s = {rnd / anchor:.2f} x connect_four"
              f" (goal >= 1.5); greedy {greedy:,.0f} moves/s = {100 * greedy / rnd:.1f}% of "
              f"random (goal >= 10%)")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=400, help="games per greedy/random row")
    ap.add_argument("--search-games", type=int, default=60, help="games per search seat row")
    ap.add_argument("--duel-games", type=int, default=200, help="search vs greedy games")
    ap.add_argument("--part", default="all",
                    choices=("all", "ends", "duels", "greedy_seats", "search_seats"))
    ap.add_argument("--players", type=int, nargs="+", default=[2, 3, 4],
                    help="player counts of the seat rows")
    ap.add_argument("--search", default="mcts(iterations=200)", help="the search agent")
    ap.add_argument("--seed", type=int, default=0, help="added to every section's seed")
    ap.add_argument("--speed", action="store_true", help="measure speed instead")
    ap.add_argument("--seconds", type=float, default=3.0, help="CPU seconds per speed row")
    args = ap.parse_args(argv)
    if args.speed:
        speed(args.seconds)
        return
    part = args.part
    if part in ("all", "ends"):
        for players in (2, 3, 4):
            rb = batch.play(GAME, players, None, "random", seed=3 + args.seed, count=args.games)
            print(f"random x{players}, {rb.num_rows} games: {ends(rb)}")
    if part in ("all", "duels"):
        head_to_head("greedy", "random", args.games, seed=1 + args.seed)
        head_to_head(args.search, "greedy", args.duel_games, seed=4 + args.seed)
    if part in ("all", "greedy_seats"):
        for players in args.players:
            seat_shares("greedy", players, args.games, seed=2 + args.seed)
    if part in ("all", "search_seats"):
        for players in args.players:
            seat_shares(args.search, players, args.search_games, seed=5 + args.seed)


if __name__ == "__main__":
    main()
