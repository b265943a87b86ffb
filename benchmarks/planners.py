"""Planning agents of issue 10: the Mondo solo planner's win rate per difficulty, and the
Forbidden Desert team agents' win rate per difficulty; 95% Wilson intervals, games per
CPU-second (the per-core figure on a shared machine).

    python benchmarks/planners.py mondo-solo [--games 2000] [--agents solo_planner,greedy_placer]
    python benchmarks/planners.py desert [--games 2000] [--players 4] [--agents search]
        [--difficulties novice,normal,elite,legendary]

desert plays every agent on the same seeds and prints each later agent's team win rate minus
the first's, paired game by game (t interval), and the losses split by whether all four parts
were held.  mondo-solo also counts the setups whose four pre-placed tiles already clash (error edges
between the two pairs of neighbouring marked spaces): they bound what any agent can win.
"""
import argparse
import collections
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # this checkout first

import core_cy
from core_cy import batch
from pipelines.stats import mean_interval, wilson_interval

SOLO = {"easy": 3, "medium": 2, "hard": 1}      # win if the penalty is below this


def played(game, players, rules, agent, games, seed):
    """The result batch and the CPU seconds it took."""
    c = time.process_time()
    rb = batch.play(game, players, rules, agent, seed=seed, count=games)
    return rb, time.process_time() - c


def rate_text(wins, games, cpu):
    lo, hi = wilson_interval(wins / games, games)
    return f"win {wins / games:7.2%} [{lo:.2%}, {hi:.2%}] over {games} games, {games / cpu:,.0f} games per CPU-second"


def mondo_solo(args):
    game = core_cy.load("mondo")
    for difficulty, threshold in SOLO.items():
        rules = {"solo_difficulty": difficulty}
        clash = collections.Counter(
            game.new(1, rules=rules, seed=args.seed + i).score_breakdown()[0]["error_edges"]
            for i in range(min(args.games, 500)))
        n = sum(clash.values())
        winnable = sum(v for k, v in clash.items() if k < threshold) / n
        print(f"solo {difficulty}: pre-placed tiles' error edges {dict(sorted(clash.items()))} "
              f"in {n} setups: at most {winnable:.1%} winnable")
        for agent in args.agents.split(","):
            rb, cpu = played(game, 1, rules, agent, args.games, args.seed)
            win = np.asarray(rb.column("solo_win").to_pylist(), dtype=float)
            pen = np.asarray(rb.column("solo_penalty").to_pylist(), dtype=float)
            empty = np.asarray(rb.column("seat_empty_spaces").to_pylist(), dtype=float)
            print(f"  {agent:14s} {rate_text(int(win.sum()), len(win), cpu)}; mean penalty "
                  f"{pen.mean():.2f} (empty spaces {empty.mean():.2f})")


def desert(args):
    game = core_cy.load("forbidden_desert")
    for difficulty in args.difficulties.split(","):
        first = None            # the first agent's wins per game: the others are paired with it
        for agent in args.agents.split(","):
            rb, cpu = played(game, args.players, {"difficulty": difficulty}, agent,
                             args.games, args.seed)
            ends = rb.column("end_reason").to_pylist()
            held = rb.column("parts_collected").to_pylist()
            reasons = collections.Counter(ends)
            # Losses split by whether the team held all four parts (the endgame: policy
            # "rollout" simulates every choice there) or not yet.
            split = collections.Counter(f"{e}{'4' if h == 4 else '<4'}"
                                        for e, h in zip(ends, held) if e != "win")
            print(f"{agent} {args.players}p {difficulty:10s} "
                  f"{rate_text(reasons.get('win', 0), args.games, cpu)}; all parts held in "
                  f"{sum(h == 4 for h in held)}; losses by parts held {dict(sorted(split.items()))}")
            wins = np.asarray([e == "win" for e in ends], dtype=float)
            if first is None:
                first = (agent, wins)
                continue
            # The same seeds, so the games are paired: the mean difference with a t interval.
            diff = wins - first[1]
            lo, hi = mean_interval(diff.mean(), diff.std(ddof=1), len(diff))
            print(f"  {agent} - {first[0]}: {diff.mean():+.2%} [{lo:+.2%}, {hi:+.2%}] "
                  f"(paired by seed; {int((diff > 0).sum())} games won only by {agent}, "
                  f"{int((diff < 0).sum())} only by {first[0]})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    m = sub.add_parser("mondo-solo")
    m.add_argument("--games", type=int, default=2000)
    m.add_argument("--agents", default="solo_planner,greedy_placer")
    m.add_argument("--seed", type=int, default=1)
    d = sub.add_parser("desert")
    d.add_argument("--games", type=int, default=2000)
    d.add_argument("--players", type=int, default=4)
    d.add_argument("--agents", default="search")
    d.add_argument("--difficulties", default="novice,normal,elite,legendary")
    d.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    {"mondo-solo": mondo_solo, "desert": desert}[args.command](args)


if __name__ == "__main__":
    main()
