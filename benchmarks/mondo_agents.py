"""Mondo agent measurements (issue 5): greedy vs random win share, spaces filled by greedy at
7, 6 and 5 minute timers, solo win rates, the value of speed, and moves per second.

    python benchmarks/mondo_agents.py [--games N]
"""
import argparse
import time

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout first

import core_cy
from core_cy import batch

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
    n = ap.parse_args().games
    for agent in ("random", "greedy", "greedy_placer"):
        _, r = rate(4, {}, agent, n if agent != "greedy" else max(10, n // 10))
        print(f"moves/s, 4 players beginner, all {agent}: {r:,.0f}")
    for who in ("greedy", "greedy_placer"):
        for players in (2, 4):
            wins = []
            for seat in range(players):     # the greedy agent in every seat in turn
                agents = ["random"] * players
                agents[seat] = who
                b, _ = rate(players, {}, agents, n if who != "greedy" else max(10, n // 10), seed=seat)
                wins.append(col(b, "seat_win_share")[:, seat].mean())
            print(f"{who} vs {players - 1} random, {players} players: win share {np.mean(wins):.3f}")
    for minutes, level in ((7, "beginner"), (6, "advanced"), (5, "master")):
        for players in (1, 4):
            rules = {"timer_seconds": 60 * minutes} if players == 1 else {"level": level}
            b, _ = rate(players, rules, "greedy_placer", n)
            rounds = 1 if players == 1 else 3
            filled = 24 - col(b, "seat_empty_spaces").mean() / rounds
            print(f"greedy_placer, {players} player(s), {minutes} min ({level if players > 1 else 'solo'}): "
                  f"fills {filled:.1f} of 24, error edges/round {col(b, 'seat_error_edges').mean() / rounds:.1f}, "
                  f"score/round {col(b, 'seat_score').mean() / rounds:.1f}, "
                  f"chips/round {col(b, 'seat_bonus_chips').mean() / rounds:.2f}")
    for diff in ("easy", "medium", "hard"):
        b, _ = rate(1, {"solo_difficulty": diff}, "greedy_placer", n)
        print(f"solo {diff}: greedy_placer win rate {col(b, 'solo_win').mean():.3f}, "
              f"mean penalty {col(b, 'solo_penalty').mean():.2f}")
    b = batch.play(GAME, 4, {}, "greedy_placer", seed=7, count=n, speeds=[1.2, 1.0, 1.0, 1.0])
    print(f"greedy_placer seat 0 at speed 1.2 vs three at 1.0: win share "
          f"{col(b, 'seat_win_share')[:, 0].mean():.3f} (fair 0.25)")


if __name__ == "__main__":
    main()
