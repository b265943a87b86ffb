"""Our engines against an external anchor measured in the same run: OpenSpiel's C++
connect_four played by uniform random bots (pyspiel.evaluate_bots, all in C++).

    pip install open-spiel   # or: pip install -e ".[bench]"
    python -m benchmarks.openspiel_anchor [--seconds 3]

Prints moves/s per core for connect_four and for each of our games with random agents, the
ratio ours / theirs (goal >= 1.0), and greedy's rate as a share of random's (goal >= 10%).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from benchmarks import engines  # noqa: E402
import core_cy  # noqa: E402


def connect_four_rate(seconds: float) -> dict:
    """Moves/s of connect_four with two uniform random bots, on one core."""
    import pyspiel  # imported here so that a missing open-spiel gives a clear message

    game = pyspiel.load_game("connect_four")
    bots = [pyspiel.make_uniform_random_bot(p, 1000 + p) for p in range(2)]
    games = moves = 0
    t0 = time.process_time()
    while time.process_time() - t0 < seconds:
        for _ in range(500):
            state = game.new_initial_state()
            pyspiel.evaluate_bots(state, bots, games)
            moves += len(state.history())  # evaluate_bots plays the passed state to the end
            games += 1
    elapsed = time.process_time() - t0
    return {"games_per_s": games / elapsed, "moves_per_s": moves / elapsed,
            "mean_length": moves / games}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0)
    args = ap.parse_args(argv)
    try:
        anchor = connect_four_rate(args.seconds)
    except ImportError:
        sys.exit("open-spiel is not installed: pip install open-spiel (or the [bench] extra)")
    print(f"OpenSpiel connect_four, uniform random bots: {anchor['games_per_s']:,.0f} games/s, "
          f"{anchor['moves_per_s']:,.0f} moves/s ({anchor['mean_length']:.1f} moves/game)")
    results = engines.rows(args.seconds)
    engines.print_rows(results)
    print()
    random_rate = {r["game"]: r["moves_per_s"] for r in results if r["agent"] == "random"}
    for r in results:
        if r["agent"] == "random":
            print(f"{r['game']}: random moves/s / connect_four moves/s = "
                  f"{r['moves_per_s'] / anchor['moves_per_s']:.2f} (goal >= 1.0)")
        else:
            print(f"{r['game']}: {r['agent']} moves/s = "
                  f"{100 * r['moves_per_s'] / random_rate[r['game']]:.1f}% of random "
                  f"(goal >= 10%)")


if __name__ == "__main__":
    main()
