"""The Golden Island measurements (issue 14): greedy vs random win share, seat advantage per
player count under greedy, the value of perfect memory (written notes on vs off), how often
games end by the rules, and where the winners' gold comes from.

    python benchmarks/golden_island.py [--games N] [--recall 200]

Win shares come with 95% Wilson intervals (pipelines.stats); agents rotate seats where two
agents meet, so every agent sits in every seat equally often.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout first

import core_cy  # noqa: E402
from core_cy import batch  # noqa: E402
from pipelines.stats import wilson_interval  # noqa: E402

GAME = core_cy.load("golden_island")


def play(players, rules, agents, games, rotate=False, seed=14):
    t = time.process_time()
    rb = batch.play(GAME, players, rules, agents, seed=seed, count=games, rotate=rotate)
    return rb.to_pydict(), time.process_time() - t


def share_text(wins, n):
    lo, hi = wilson_interval(wins / n, n)
    return f"{100 * wins / n:5.1f}% [{100 * lo:5.1f}, {100 * hi:5.1f}]"


def agent_share(d, games, players, name, agents):
    """Win share of agent `name` over all its seats, with rotation (game i, seat k holds
    agents[(k + i) % players])."""
    shares = np.array(d["seat_win_share"])
    wins = n = 0.0
    for i in range(games):
        for k in range(players):
            if agents[(k + i) % players] == name:
                wins += shares[i, k]
                n += 1
    return wins, n


def ended_by_rules(d):
    reasons = d["end_reason"]
    return sum(r == "sixth_permit" for r in reasons) / len(reasons)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=2000)
    ap.add_argument("--recall", type=int, default=200,
                    help="recall_error_per_mille of the forgetful arm")
    args = ap.parse_args(argv)
    n = args.games

    print("greedy vs random, 2 players (seats rotated):")
    agents = ["greedy", "random"]
    d, _ = play(2, None, agents, n, rotate=True)
    wins, seats = agent_share(d, n, 2, "greedy", agents)
    print(f"  greedy win share {share_text(wins, seats)}; ended by the rules "
          f"{100 * ended_by_rules(d):.1f}%")

    print("\nseat advantage under greedy (seat 0 starts):")
    for p in (2, 3, 4):
        d, _ = play(p, None, "greedy", n)
        shares = np.array(d["seat_win_share"])
        cells = "  ".join(f"seat {k}: {share_text(shares[:, k].sum(), n)}" for k in range(p))
        print(f"  {p}p  {cells}")
        print(f"      ended by the rules {100 * ended_by_rules(d):.1f}%, no winner "
              f"{100 * np.mean(d['no_winner']):.1f}%, eliminated per seat "
              f"{100 * np.mean(d['seat_eliminated']):.1f}%, mean length "
              f"{np.mean(d['length']):.0f} moves")
        winner = shares.argmax(axis=1)
        won = shares.max(axis=1) > 0
        for src in ("gold_chests", "gold_coins", "gold_golden_coin", "gold_relic"):
            vals = np.array(d["seat_" + src])[np.arange(n), winner][won]
            print(f"      winner's {src}: {vals.mean():.2f}", end="")
        print()

    print(f"\nwritten notes on vs off (recall_error_per_mille={args.recall}), greedy, "
          "same deals:")
    for p in (2, 3, 4):
        on, _ = play(p, {"written_notes": True}, "greedy", n)
        off, _ = play(p, {"recall_error_per_mille": args.recall}, "greedy", n)
        for name, d in (("notes", on), ("forgetful", off)):
            elim = np.array(d["seat_eliminated"])
            lo, hi = wilson_interval(elim.mean(), elim.size)
            nw = np.mean(d["no_winner"])
            print(f"  {p}p {name:<9} eliminated {100 * elim.mean():5.1f}% [{100 * lo:.1f}, "
                  f"{100 * hi:.1f}] of seats, no winner {100 * nw:4.1f}%, winner's gold "
                  f"{np.mean(np.array(d['seat_gold_total'])[np.array(d['seat_win_share']) > 0]):.1f}")

    print("\nthroughput (one core, CPU time):")
    for agent in ("random", "greedy"):
        d, dt = play(3, None, agent, n)
        moves = sum(d["length"])
        print(f"  3p {agent:<7} {n / dt:8.0f} games/s {moves / dt:10.0f} moves/s; ended by the "
              f"rules {100 * ended_by_rules(d):.1f}% (the rest: max_rounds)")


if __name__ == "__main__":
    main()
