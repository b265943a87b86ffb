"""Engine throughput on one core: games/s and moves/s per game and agent.

    python -m benchmarks.engines [--seconds 3] [--game maori] [--players 3]
    python -m benchmarks.engines --game forbidden_desert --ab /tmp/old /tmp/new [--rounds 10]
    python -m benchmarks.engines --ratio greedy [--game mondo] [--rounds 4] [--seconds 1.5]
    python -m benchmarks.engines --game mondo --same /tmp/old /tmp/new [--agents "greedy;quick"]
        [--rules '[null, {"level": "advanced"}]'] [--games 25] [--seed 777]

Each row plays shards of games with core_cy.play.batch.play (the same nogil loop the experiment
runner uses) in this single process until --seconds of CPU time have passed.  Numbers are
CPU-time rates of one core, so other work on the machine affects them less than wall time.

--ab compares builds of one game's module (checkouts built in place with the same engine
contract, e.g. before and after a change to that module) in one process, alternating short
slices, so that the load on the machine falls on all of them alike: a few percent is visible
here that separate runs lose in noise.

--ratio AGENT measures AGENT's moves/s over random's per game the same way: alternating
slices in one process (issue 35 asks greedy for 10% of random's rate in every game).

--same tells whether builds play the same games (a speed change must not change them): per
build, one SHA-256 over every result column of seeded batches, for each agent, rule set and
player count the rules allow.
"""
from __future__ import annotations

import argparse
import glob
import hashlib
import importlib.machinery
import json
import importlib.util
import os
import statistics
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # idle BLAS threads would share our core

import numpy as np  # noqa: E402

import core_cy  # noqa: E402
from core_cy.play import batch  # noqa: E402


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
    for name in core_cy.game_names():
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


def load_build(name: str, checkout: str):
    """The game object of module core_cy.<name> as built in place in another checkout."""
    module = f"{core_cy.CATALOGUE[name]}"
    core_cy.load(name)                # its package first: the module reads its data through it
    paths = glob.glob(os.path.join(checkout, *module.split(".")) + ".*.so")
    if not paths:
        raise SystemExit(f"no built {module} in {checkout}")
    sys.modules.pop(module, None)     # each build is executed afresh under the module's name
    loader = importlib.machinery.ExtensionFileLoader(module, paths[0])
    mod = importlib.util.module_from_spec(importlib.util.spec_from_file_location(
        module, paths[0], loader=loader))
    loader.exec_module(mod)
    return mod.GAME


def ab(name: str, checkouts: list[str], players: int, agent: str, rounds: int,
       seconds: float) -> None:
    """Moves/s of each build, `seconds` per slice, in alternating order for `rounds`; prints
    each build's median and its per-round ratio to the first build (median, range)."""
    games = [load_build(name, c) for c in checkouts]
    rates = [[] for _ in games]
    for r in range(rounds):
        for i in (range(len(games)) if r % 2 == 0 else reversed(range(len(games)))):
            rates[i].append(measure(games[i], players, agent, seconds)["moves_per_s"])
    for c, v in zip(checkouts, rates):
        rel = [a / b for a, b in zip(v, rates[0])]
        print(f"{c:<40}{statistics.median(v):>14,.0f} moves/s   x first: median "
              f"{statistics.median(rel):.3f} [{min(rel):.3f}, {max(rel):.3f}]")


def column_hash(game, players: int, rules: dict | None, agent: str, games: int,
                seed: int) -> str:
    """SHA-256 of every result column of games 0..games-1 (object columns by their values)."""
    cols = batch.play_columns(game, players, rules, agent, seed=seed, start=0, count=games)
    h = hashlib.sha256()
    for name in sorted(cols):
        a = cols[name]
        h.update(name.encode())
        h.update(repr(a.tolist()).encode() if a.dtype == object
                 else np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def same(name: str, checkouts: list[str], agents: list[str], rule_sets: list, games: int,
         seed: int) -> None:
    """Per build, one SHA-256 over the column hashes of each agent's batch for every rule set
    and player count (a rule set a player count refuses is left out; the batches are
    counted)."""
    for checkout in checkouts:
        game = load_build(name, checkout)
        h, batches = hashlib.sha256(), 0
        for rules in rule_sets:
            for players in range(game.min_players, game.max_players + 1):
                try:
                    game.resolve_rules(rules, players)
                except ValueError:
                    continue
                for agent in agents:
                    h.update(column_hash(game, players, rules, agent, games, seed).encode())
                    batches += 1
        print(f"{checkout:<40}{h.hexdigest()}  ({batches} batches of {games} games)")


def rule_sets(text: str) -> list:
    """--rules: a JSON list of rule dicts (null: the defaults)."""
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if not isinstance(value, list) or not value or not all(
            r is None or isinstance(r, dict) for r in value):
        raise argparse.ArgumentTypeError(f"a JSON list of rule objects or null, got {text!r}")
    return value


def ratio(agent: str, only: str | None, players: int | None, rounds: int,
          seconds: float) -> None:
    """AGENT's moves/s over random's per game, `seconds` per slice, alternating for `rounds`;
    prints each round's ratio and their median."""
    for name in core_cy.game_names():
        if only and name != only:
            continue
        game = core_cy.load(name)
        p = players or default_players(game)
        rel = []
        for _ in range(rounds):
            base = measure(game, p, "random", seconds)["moves_per_s"]
            rel.append(measure(game, p, agent, seconds)["moves_per_s"] / base)
        print(f"{name:<18}{p:>3} players  {agent} / random: median {statistics.median(rel):.2%}"
              f"  rounds {', '.join(f'{r:.2%}' for r in rel)}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, help="CPU seconds per row (default 3; --ab, "
                    "--ratio: per slice, default 1)")
    ap.add_argument("--game", help="only this game")
    ap.add_argument("--players", type=int, help="player count (default: 3 where allowed)")
    ap.add_argument("--ab", nargs="+", metavar="CHECKOUT", help="compare the --game module "
                    "built in place in these checkouts, in one process")
    ap.add_argument("--agent", default="random", help="with --ab: the agent")
    ap.add_argument("--ratio", metavar="AGENT", help="per game: AGENT's moves/s over "
                    "random's, in alternating slices (--rounds, --seconds per slice)")
    ap.add_argument("--rounds", type=int, default=10, help="with --ab or --ratio: slices per "
                    "build or agent")
    ap.add_argument("--same", nargs="+", metavar="CHECKOUT", help="whether the --game module "
                    "built in place in these checkouts plays the same games (column hashes)")
    ap.add_argument("--agents", default="greedy", help="with --same: agents, ';'-separated")
    ap.add_argument("--rules", type=rule_sets, default=[None], help="with --same: a JSON "
                    "list of rule sets (null: the defaults)")
    ap.add_argument("--games", type=int, default=25, help="with --same: games per batch")
    ap.add_argument("--seed", type=int, default=777, help="with --same: the batches' seed")
    args = ap.parse_args(argv)
    if args.same:
        if not args.game:
            ap.error("--same needs --game")
        if args.games < 1:
            ap.error("--games: at least 1")
        same(args.game, args.same, [a.strip() for a in args.agents.split(";") if a.strip()],
             args.rules, args.games, args.seed)
        return
    if args.ab:
        if not args.game:
            ap.error("--ab needs --game")
        players = args.players or default_players(core_cy.load(args.game))
        ab(args.game, args.ab, players, args.agent, args.rounds, args.seconds or 1.0)
        return
    if args.ratio:
        ratio(args.ratio, args.game, args.players, args.rounds, args.seconds or 1.0)
        return
    print_rows(rows(args.seconds or 3.0, args.game, args.players))


if __name__ == "__main__":
    main()
