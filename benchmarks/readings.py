"""How much one rule reading matters: the same deals played under two values of one option.

    python -m benchmarks.readings --game reef_encounter --option end_stops_turn \
        --values true,false [--players 2,3,4] [--games 1000] [--agent greedy] [--seed 29]
        [--set NAME=JSON ...] [--outcome NAME ...]

Both values play games 0..games-1 of the same seed (the same deals, the same agent
streams), so each game is compared with itself: the share of games whose scores differ in
any seat and whose win shares differ (another winner or another tie), each with its Wilson
95% interval.  --outcome prints the mean of a game outcome column under each value (e.g.
Golden Island's bank_short: the share of games in which the box's bank would run short).
Values are JSON where they parse (true, 3), else strings.  Run it at nice 19 on one core.
"""
import argparse
import json
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # idle BLAS threads would share our core

import numpy as np  # noqa: E402

import core_cy  # noqa: E402
from core_cy.play import batch  # noqa: E402
from benchmarks import share_interval


def value(text: str):
    """An option value from the command line: JSON where it parses (true, 3), else text."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def share(flags: np.ndarray) -> str:
    k, n = int(flags.sum()), len(flags)
    lo, hi = share_interval(k / n, n)
    return f"{100 * k / n:5.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--game", required=True)
    ap.add_argument("--option", required=True)
    ap.add_argument("--values", required=True, help="two values: baseline,other")
    ap.add_argument("--players", default="2,3,4")
    ap.add_argument("--games", type=int, default=1000)
    ap.add_argument("--agent", default="greedy")
    ap.add_argument("--seed", type=int, default=29)
    ap.add_argument("--set", nargs="*", default=[], help="NAME=JSON rule options for both arms")
    ap.add_argument("--outcome", nargs="*", default=[], help="game outcome columns to average")
    args = ap.parse_args()
    game = core_cy.load(args.game)
    values = [value(v) for v in args.values.split(",")]
    fixed = {}
    for item in args.set:
        name, text = item.split("=", 1)
        fixed[name] = value(text)
    print(f"{args.game} {args.option}: {values[0]} vs {values[1]}; {fixed}, agent "
          f"{args.agent}, {args.games} deals per player count, seed {args.seed}, engine "
          f"{game.engine_version}")
    for players in (int(p) for p in args.players.split(",")):
        cols = [batch.play_columns(game, players, {**fixed, args.option: v}, args.agent,
                                   seed=args.seed, count=args.games) for v in values]
        scores = [np.asarray(c["seat_score"], dtype=float) for c in cols]
        shares = [np.asarray(c["seat_win_share"], dtype=float) for c in cols]
        line = (f"  {players} players: scores differ {share((scores[0] != scores[1]).any(1))}, "
                f"winner differs {share((shares[0] != shares[1]).any(1))}")
        for name in args.outcome:
            line += f"; {name} " + " vs ".join(
                f"{np.asarray(c[name], dtype=float).mean():.3f}" for c in cols)
        print(line)


if __name__ == "__main__":
    main()
