"""The effect of one Forbidden Desert rule option on the team win rate, paired game by game.

    python -m benchmarks.forbidden_desert.rule_effect --option storm_discard_timing \
        --values end_of_phase,per_card [--players 2,3,4] [--games 4000] [--agent search]
        [--difficulty novice] [--seed 9001] [--set NAME=JSON ...]

Both values play the same games (common random numbers: the same seeds give the same
deals and storm decks), so the difference of win rates is estimated from the paired
per-game differences (mean with a t 95% interval and the two-sided t test's p-value); each win
rate has its Wilson 95% interval.  --set fixes other rule options for both arms (JSON
values, e.g. --set climber_hops_blocked_tunnels=true).  Values are JSON where they parse
(true, 3), else strings.
"""
import argparse
import json
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # idle BLAS threads would share our core

import numpy as np  # noqa: E402

import core_cy  # noqa: E402
from core_cy.play import batch  # noqa: E402
from pipelines.stats import mean_interval, t_test_p
from benchmarks import share_interval


def value(text):
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def wins(game, players, rules, agent, games, seed):
    rb = batch.play(game, players, rules, agent, seed=seed, count=games)
    return rb.column("win").to_numpy()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--option", required=True)
    ap.add_argument("--values", required=True, help="two values: baseline,other")
    ap.add_argument("--players", default="2,3,4")
    ap.add_argument("--games", type=int, default=4000)
    ap.add_argument("--agent", default="search")
    ap.add_argument("--difficulty", default="novice")
    ap.add_argument("--seed", type=int, default=9001)
    ap.add_argument("--set", nargs="*", default=[], help="NAME=JSON rule options for both arms")
    args = ap.parse_args()
    game = core_cy.load("forbidden_desert")
    base_value, other_value = (value(v) for v in args.values.split(","))
    fixed = {"difficulty": args.difficulty}
    for item in args.set:
        name, text = item.split("=", 1)
        fixed[name] = value(text)
    print(f"{args.option}: {base_value} -> {other_value}; {fixed}, agent {args.agent}, "
          f"{args.games} paired games per player count, seed {args.seed}")
    for players in (int(p) for p in args.players.split(",")):
        t = time.process_time()
        a = wins(game, players, {**fixed, args.option: base_value}, args.agent, args.games,
                 args.seed)
        b = wins(game, players, {**fixed, args.option: other_value}, args.agent, args.games,
                 args.seed)
        n = args.games
        d = b - a
        lo, hi = mean_interval(d.mean(), d.std(ddof=1), n)
        p = float(t_test_p(d.mean(), d.std(ddof=1), n))
        (alo, ahi), (blo, bhi) = share_interval(a.mean(), n), share_interval(b.mean(), n)
        print(f"{players}p  {base_value}: {a.mean():6.2%} [{alo:.2%}, {ahi:.2%}]   "
              f"{other_value}: {b.mean():6.2%} [{blo:.2%}, {bhi:.2%}]   "
              f"difference {d.mean():+.2%} [{lo:+.2%}, {hi:+.2%}] p={p:.3g}   "
              f"(games differing: {int(np.count_nonzero(d))}; "
              f"{2 * n / (time.process_time() - t):.0f} games/CPU-s)", flush=True)


if __name__ == "__main__":
    main()
