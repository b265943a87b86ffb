"""Forbidden Desert team-planner benchmark: team win rate per difficulty (4 players), loss
causes, games/s (wall, and per CPU-second: the per-core figure on a shared machine) and
random-agent moves/s on one core.

    python -m benchmarks.forbidden_desert.planner_strength [--games 10000] [--players 4]
        [--difficulties novice,normal] [--agent search,deep_search,team_search,planner]
        [--no-random] [--seed 1] [--set team_beam=16 ...]

--set gives the agents a parameter other than its default (an agent parameter, e.g.
team_search(team_beam=16)).  With several values (--set line_sharing=false/true) the same
games are played once per value and each later value's win-rate difference to the first is
printed, paired by game.

Agents: "search" (the team planner: a beam search over each adventurer's turn), "deep_search"
(the same with a wider beam: stronger, slower), "team_search" (deep_search's best lines, each
followed by the teammates' searched turns of the round: strongest, slowest), "planner" (the
rule-based plan alone).
"""
import argparse
import collections
import math
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # idle BLAS threads would share our core

import numpy as np


import core_cy
from core_cy.play import batch
from pipelines.stats import mean_interval
from benchmarks import share_interval


def run(game, players, difficulty, agent, games, seed=1, weights=None):
    """One agent and difficulty: win rate, loss causes (also split by whether all four parts
    were held: "thirst4" is a thirst loss in the endgame), speed.  weights: the agent's
    parameters that differ from their defaults ({name: value as written}), or None."""
    rules = {"difficulty": difficulty}
    if weights:
        agent += "(" + ", ".join(f"{k}={v}" for k, v in weights.items()) + ")"
    t, c = time.perf_counter(), time.process_time()
    rb = batch.play(game, players, rules, agent, seed=seed, count=games)
    dt, cpu = time.perf_counter() - t, time.process_time() - c
    reasons = collections.Counter(rb.column("end_reason").to_pylist())
    # Losses split by whether the team held all four parts (the endgame) or not yet.
    held = rb.column("parts_collected").to_pylist()
    split = collections.Counter(f"{r}{'4' if h == 4 else '<4'}"
                                for r, h in zip(rb.column("end_reason").to_pylist(), held)
                                if r != "win")
    wins = reasons.get("win", 0)
    lo, hi = share_interval(wins / games, games)
    moves = int(np.sum(rb.column("length").to_numpy()))
    parts = float(np.mean(rb.column("parts_collected").to_numpy()))
    turns = float(np.mean(rb.column("turns").to_numpy()))
    print(f"{agent:8s} {difficulty:10s} win {wins / games:6.2%} [{lo:.2%}, {hi:.2%}]  "
          f"parts held {parts:4.2f}  turns {turns:5.1f}  losses {dict(reasons)}  "
          f"(by parts held: {dict(sorted(split.items()))})  "
          f"{games / dt:8.0f} games/s ({games / cpu:.0f} per CPU-second)  {moves / dt:10.0f} moves/s")
    return [r == "win" for r in rb.column("end_reason").to_pylist()]


def paired(base, other, label):
    """The win-rate difference of two variants over the same games, with its 95% interval
    (paired by game: the t interval of the per-game differences), and the games only one won."""
    diffs = np.array(other, dtype=float) - np.array(base, dtype=float)
    lo, hi = mean_interval(diffs.mean(), diffs.std(ddof=1), len(diffs))
    print(f"  {label}: {diffs.mean():+.2%} [{lo:+.2%}, {hi:+.2%}] "
          f"against the first variant; won only here {int(np.sum(diffs > 0))}, only there "
          f"{int(np.sum(diffs < 0))}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--games", type=int, default=10_000)
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--difficulties", default="novice,normal,elite,legendary")
    ap.add_argument("--agent", default="search",
                    help="team policies, comma-separated: search, deep_search, team_search, "
                    "planner")
    ap.add_argument("--no-random", action="store_true", help="skip the random-agent rows")
    ap.add_argument("--seed", type=int, default=1, help="games seed, seed + 1, ...")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                    help="an agent parameter other than its default (repeatable); several "
                    "values separated by '/' play the same games once per value (then the "
                    "differences to the first value, paired by game)")
    args = ap.parse_args()
    game = core_cy.load("forbidden_desert")
    print(f"core_cy from {core_cy.__file__}; {args.players} players, {args.games} games each")
    variants = [{}]
    for item in args.set:
        name, _, values = item.partition("=")
        variants = [{**v, name: x} for v in variants for x in values.split("/")]
    for agent in args.agent.split(","):
        for difficulty in args.difficulties.split(","):
            results = [run(game, args.players, difficulty, agent, args.games, args.seed, w)
                       for w in variants]
            for w, wins in zip(variants[1:], results[1:]):
                paired(results[0], wins, f"{w}")
    if not args.no_random:
        for difficulty in ("novice", "legendary"):
            run(game, args.players, difficulty, "random", args.games, args.seed)


if __name__ == "__main__":
    main()
