"""Engine throughput on one core: games/s and moves/s per game and agent.

    python benchmarks/engines.py [--seconds 3] [--game maori] [--players 3]

Each row plays shards of games with core_cy.batch.play (the same nogil loop the experiment
runner uses) in this single process until --seconds of CPU time have passed.  Numbers are
CPU-time rates of one core, so other work on the machine affects them less than wall time.
"""
from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # idle BLAS threads would share our core
# Measure this checkout's engines, not whichever meeplelab is installed.
ROOT = __import__("pathlib").Path(__file__).resolve().parent.parent
__import__("sys").path.insert(0, str(ROOT))

import core_cy  # noqa: E402
from core_cy import batch  # noqa: E402


def measure(game, players: int, agent: str, seconds: float, shard: int = 200) -> dict:
    """Plays shards until `seconds` of CPU time; returns games/s and moves/s on one core."""
    games = moves = 0
    start = 0
    t0 = time.process_time()
    while True:
        rb = batch.play(game, players, None, agent, seed=12345, start=start, count=shard)
        games += rb.num_rows
        moves += int(rb.column("length").to_numpy().sum())
        start += shard
        elapsed = time.process_time() - t0
        if elapsed >= seconds:
            break
        # Aim the next shard at about a tenth of the budget.
        shard = max(10, min(20000, int(games / elapsed * seconds / 10)))
    return {"game": game.name, "players": players, "agent": agent, "games": games,
            "games_per_s": games / elapsed, "moves_per_s": moves / elapsed,
            "mean_length": moves / games}


def default_players(game) -> int:
    return min(max(3, game.min_players), game.max_players)


def rows(seconds: float, only: str | None = None, players: int | None = None) -> list[dict]:
    out = []
    for name in core_cy.games():
        if only and name != only:
            continue
        game = core_cy.load(name)
        p = players or default_players(game)
        for agent in game.agents:
            out.append(measure(game, p, agent, seconds))
    return out


def print_rows(results: list[dict]) -> None:
    print(f"{'game':<18}{'players':>8}{'agent':>14}{'games/s':>12}{'moves/s':>14}{'moves/game':>12}")
    for r in results:
        print(f"{r['game']:<18}{r['players']:>8}{r['agent']:>14}{r['games_per_s']:>12,.0f}"
              f"{r['moves_per_s']:>14,.0f}{r['mean_length']:>12.1f}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0, help="CPU seconds per row")
    ap.add_argument("--game", help="only this game")
    ap.add_argument("--players", type=int, help="player count (default: 3 where allowed)")
    args = ap.parse_args(argv)
    print_rows(rows(args.seconds, args.game, args.players))


if __name__ == "__main__":
    main()
