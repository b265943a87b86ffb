"""Mondo agent measurements (issue 5): greedy vs random win share, spaces filled by greedy at
7, 6 and 5 minute timers, solo win rates, the value of speed, and moves per second.

    python -m benchmarks.mondo.agents [--games N] [--solo-games N]
"""
import argparse
import time


import numpy as np


import core_cy
from core_cy.play import batch

GAME = core_cy.load("mondo")


def rate(players, rules, agents, games, seed=1):
    t = time.perf_counter()
    b = batch.play(GAME, players, rules, agents, seed=seed, count=games)
    dt = time.perf_counter() - t
    moves = int(np.sum(b.column("length").to_numpy()))
    return b, moves / dt


def col(b, name):
    return np.array(b.column(name).to_pylist(), dtype=float)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--games", type=int, default=200)
    ap.add_argument("--solo-games", type=int, default=2000)
    args = ap.parse_args()
    n = args.games
    for agent in ("random", "greedy", "greedy_placer"):
        _, r = rate(4, {}, agent, n)
        print(f"moves/s, 4 players beginner, all {agent}: {r:,.0f}")
    for who, other in (("greedy", "random"), ("greedy_placer", "random"), ("greedy", "greedy_placer")):
        for players in (2, 4):
            wins = []
            for seat in range(players):     # the agent in every seat in turn
                agents = [other] * players
                agents[seat] = who
                b, _ = rate(players, {}, agents, n, seed=seat)
                wins.append(col(b, "seat_win_share")[:, seat].mean())
            print(f"{who} vs {players - 1} {other}, {players} players: win share {np.mean(wins):.3f} "
                  f"(fair {1 / players:.3f})")
    for who in ("greedy", "greedy_placer"):
        for minutes, level in ((7, "beginner"), (6, "advanced"), (5, "master")):
            for players in (1, 4):
                rules = {"timer_seconds": 60 * minutes} if players == 1 else {"level": level}
                b, _ = rate(players, rules, who, n)
                rounds = 1 if players == 1 else 3
                filled = 24 - col(b, "seat_empty_spaces").mean() / rounds
                print(f"{who}, {players} player(s), {minutes} min ({level if players > 1 else 'solo'}): "
                      f"fills {filled:.1f} of 24, error edges/round {col(b, 'seat_error_edges').mean() / rounds:.1f}, "
                      f"score/round {col(b, 'seat_score').mean() / rounds:.1f}, "
                      f"chips/round {col(b, 'seat_bonus_chips').mean() / rounds:.2f}")
    for who in ("greedy", "greedy_placer"):
        for diff in ("easy", "medium", "hard"):
            b, _ = rate(1, {"solo_difficulty": diff}, who, args.solo_games)
            win = col(b, "solo_win")
            se = np.sqrt(win.mean() * (1 - win.mean()) / len(win))
            print(f"solo {diff}: {who} win rate {win.mean():.4f} +- {se:.4f} over {len(win)} games, "
                  f"mean penalty {col(b, 'solo_penalty').mean():.2f} (empty spaces "
                  f"{col(b, 'seat_empty_spaces').mean():.2f}, error edges {col(b, 'seat_error_edges').mean():.2f})")
    for who in ("greedy", "greedy_placer"):
        b = batch.play(GAME, 4, {}, who, seed=7, count=n, speeds=[1.2, 1.0, 1.0, 1.0])
        print(f"{who} seat 0 at speed 1.2 vs three at 1.0: win share "
              f"{col(b, 'seat_win_share')[:, 0].mean():.3f} (fair 0.25)")


if __name__ == "__main__":
    main()
