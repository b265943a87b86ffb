"""The Golden Island measurements (issue 14): how often games end by a simulator safety
(truncated share) per agent, head-to-head win shares with rotated seats (greedy vs random,
the search agent vs greedy), seat advantage per player count with intervals under greedy and
under the search agent, the value of perfect memory (written notes on vs off) for one agent,
and throughput; `search`: issue 10's goal, the search agents against greedy (release build:
about 0.2 CPU s a game), with what decides the game.

    nice -n 10 python -m benchmarks.golden_island.seats [--games 2000] [--search-games 200]
        [--search "mcts(iterations=200)"] [--recall 200]
        [--strong "mcts(iterations=400);mcts"] [--strength-games 400] [--seed 1]
        [--only truncated,duel,seats,memory,speed,search]

Win shares come with 95% Wilson intervals (pipelines.stats) over the games that ended by the
rules (a game cut by `max_rounds` is truncated and left out, as in every figure of the
service); where two agents meet, seats rotate so that each agent sits in every seat equally
often.  Times are CPU seconds of this one process.
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np


import core_cy  # noqa: E402
from core_cy.play import batch  # noqa: E402
from benchmarks import share_interval

GAME = core_cy.load("golden_island")
SECTIONS = ("truncated", "duel", "seats", "memory", "speed", "search")


_PLAYED: dict = {}


def play(players, rules, agents, games, rotate=False, seed=14):
    """(results as a dict of columns, CPU seconds); a cell asked twice is played once."""
    key = (players, repr(rules), repr(agents), games, rotate, seed)
    if key not in _PLAYED:
        t = time.process_time()
        rb = batch.play(GAME, players, rules, agents, seed=seed, count=games, rotate=rotate)
        _PLAYED[key] = rb.to_pydict(), time.process_time() - t
    return _PLAYED[key]


def by_rules(d):
    """Indices of the games that ended by the rules (not truncated by max_rounds)."""
    return np.array([r not in GAME.safety_end_reasons for r in d["end_reason"]])


def share_text(wins, n):
    lo, hi = share_interval(wins / n, n)
    return f"{100 * wins / n:5.1f}% [{100 * lo:5.1f}, {100 * hi:5.1f}]"


def agent_share(d, players, name, agents):
    """Win share of agent `name` over its seats in the games that ended by the rules, with
    rotation (game i, seat k holds agents[(k + i) % players])."""
    shares = np.array(d["seat_win_share"])
    kept = by_rules(d)
    wins = n = 0.0
    for i in np.flatnonzero(kept):
        for k in range(players):
            if agents[(k + i) % players] == name:
                wins += shares[i, k]
                n += 1
    return wins, n


def truncated(args):
    print("truncated share (games ended by max_rounds, a simulator safety), default rules:")
    for agent, n in (("random", args.games), ("greedy", args.games),
                     (args.search, args.search_games)):
        cells = []
        for p in (2, 3, 4):
            d, _ = play(p, None, agent, n)
            cut = int((~by_rules(d)).sum())
            cells.append(f"{p}p {cut}/{n} ({100 * cut / n:.1f}%), median "
                         f"{np.median(d['rounds']):.0f} rounds")
        print(f"  {agent:<22} " + "; ".join(cells))


def duel(args):
    print("\nhead to head, 2 players, seats rotated (win share of the first agent):")
    for agents, n in ((["greedy", "random"], args.games),
                      ([args.search, "greedy"], args.search_games)):
        d, dt = play(2, None, agents, n, rotate=True)
        wins, seats = agent_share(d, 2, agents[0], agents)
        print(f"  {agents[0]} vs {agents[1]}: {share_text(wins, seats)} over {int(seats)} "
              f"games ({n - int(seats)} truncated), {dt:.0f} CPU s")


def seats(args):
    for agent, n in (("greedy", args.games), (args.search, args.search_games)):
        print(f"\nseat advantage under {agent} in every seat (seat 0 starts), n = {n} per count:")
        for p in (2, 3, 4):
            d, _ = play(p, None, agent, n)
            kept = by_rules(d)
            shares = np.array(d["seat_win_share"])[kept]
            m = int(kept.sum())
            cells = "  ".join(f"seat {k}: {share_text(shares[:, k].sum(), m)}" for k in range(p))
            print(f"  {p}p  {cells}  (fair {100 / p:.1f}%)")
            print(f"      {m} games by the rules, no winner {100 * np.mean(np.array(d['no_winner'])[kept]):.1f}%, "
                  f"eliminated per seat {100 * np.mean(np.array(d['seat_eliminated'])[kept]):.1f}%, "
                  f"mean length {np.mean(np.array(d['length'])[kept]):.0f} moves")
            won = shares.max(axis=1) > 0
            winner = shares.argmax(axis=1)
            print("      winner's gold by source: " + ", ".join(
                f"{src} {np.array(d['seat_' + src])[kept][np.arange(m), winner][won].mean():.2f}"
                for src in ("gold_chests", "gold_coins", "gold_golden_coin", "gold_relic")))


def memory(args):
    print(f"\nwritten notes on vs off (recall_error_per_mille={args.recall}), greedy in every "
          "seat, same deals:")
    for p in (2, 3, 4):
        on, _ = play(p, {"written_notes": True}, "greedy", args.games)
        off, _ = play(p, {"recall_error_per_mille": args.recall}, "greedy", args.games)
        for name, d in (("notes", on), ("forgetful", off)):
            kept = by_rules(d)
            elim = np.array(d["seat_eliminated"])[kept]
            lo, hi = share_interval(elim.mean(), elim.size)
            nw = np.mean(np.array(d["no_winner"])[kept])
            gold = np.array(d["seat_gold_total"])[kept][np.array(d["seat_win_share"])[kept] > 0]
            print(f"  {p}p {name:<9} eliminated {100 * elim.mean():5.1f}% [{100 * lo:.1f}, "
                  f"{100 * hi:.1f}] of seats, no winner {100 * nw:4.1f}%, winner's gold "
                  f"{gold.mean():.1f}")
    print("  one forgetful seat among noting ones is not a rule of the game (written notes "
          "bind the table), so the value of memory is measured table-wide.")


def speed(args):
    print("\nthroughput (one core, CPU time):")
    for agent, n in (("random", args.games), ("greedy", args.games),
                     (args.search, max(10, args.search_games // 10))):
        d, dt = play(3, None, agent, n)
        moves = sum(d["length"])
        print(f"  3p {agent:<22} {n / dt:10.1f} games/s {moves / dt:12.0f} moves/s")


def search(args):
    """Issue 10's strength goal for this game, and why it is a race: among games where both
    seats survive and only one placed six permits (the one that triggered the end), how
    often that seat won."""
    print(f"\nsearch vs greedy, 2 players, seats rotated, {args.strength_games} games each:")
    for agent in args.strong.split(";"):
        agents = [agent, "greedy"]
        d, dt = play(2, None, agents, args.strength_games, rotate=True, seed=args.seed)
        wins, n = agent_share(d, 2, agent, agents)
        mine = np.array([[agents[(k + i) % 2] == agent for k in range(2)]
                         for i in range(len(d["length"]))])
        elim = np.array(d["seat_eliminated"])
        placed = np.array(d["seat_permits_placed"])
        shares = np.array(d["seat_win_share"])
        both = by_rules(d) & (elim.sum(axis=1) == 0)
        alone = both & ((placed >= 6).sum(axis=1) == 1)
        first = (placed >= 6)[alone]
        print(f"  {agent}: {share_text(wins, n)} over {int(n)} games, {dt / len(mine):.2f} CPU "
              f"s a game; eliminated: search {100 * elim[mine].mean():.1f}%, greedy "
              f"{100 * elim[~mine].mean():.1f}%")
        print(f"      both survive in {int(both.sum())} games; the seat that alone placed six "
              f"permits won {share_text(shares[alone][first].sum(), int(alone.sum()))} of "
              f"{int(alone.sum())}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=2000, help="games per cell (random, greedy)")
    ap.add_argument("--search-games", type=int, default=200, help="games per cell (search)")
    ap.add_argument("--search", default="mcts(iterations=200)", help="the search agent")
    ap.add_argument("--recall", type=int, default=200,
                    help="recall_error_per_mille of the forgetful arm")
    ap.add_argument("--strong", default="mcts(iterations=400);mcts",
                    help="search: the agents to set against greedy, ';'-separated")
    ap.add_argument("--strength-games", type=int, default=400, help="games per search duel")
    ap.add_argument("--seed", type=int, default=1, help="search: the duels' seed")
    ap.add_argument("--only", default=",".join(SECTIONS), help="sections, comma-separated")
    args = ap.parse_args(argv)
    for name in args.only.split(","):
        if name not in SECTIONS:
            sys.exit(f"--only: unknown section {name!r}; sections: {', '.join(SECTIONS)}")
        globals()[name](args)


if __name__ == "__main__":
    main()
