"""Planning agents of issue 10: the Mondo solo planner's win rate per difficulty, and the
Forbidden Desert team agents' win rate per difficulty; 95% Wilson intervals, games per
CPU-second (the per-core figure on a shared machine).

    python -m benchmarks.forbidden_desert.endgames mondo-solo [--games 2000]
        [--agents solo_planner,greedy_placer]
    python -m benchmarks.forbidden_desert.endgames desert [--games 2000] [--players 4]
        [--agents search] [--difficulties novice,normal,elite,legendary]
    python -m benchmarks.forbidden_desert.endgames endgame [--games 400] [--start 0] [--seed 12]
        [--agents rollout,rollout_search] [--workers 1] [--results FILE]
    python -m benchmarks.forbidden_desert.endgames thirst [--games 60] [--seed 20] [--rule-based]

desert plays every agent on the same seeds and prints each later agent's team win rate minus
the first's, paired game by game (t interval), and the losses split by whether all four parts
were held.  mondo-solo also counts the setups whose four pre-placed tiles already clash (error edges
between the two pairs of neighbouring marked spaces): they bound what any agent can win.

endgame measures the desert's endgame agents (those that play team_search until the team
holds three parts with the fourth located: "rollout", "rollout_search") where they differ.
team_search's games (cheap) find which of games start..start+games-1 get there (all four
parts located, three or four held at the end: every game where the agents simulate, and a
few more); every such agent plays exactly these games up to that point, so only they are
played by each agent, and each agent's figures are the endgame's: reached, won (the
conversion, Wilson interval), loss causes, CPU-seconds per endgame game, each later agent
paired with the first game by game (the games only one of them won) and the win rate over
all the games.
--results keeps every played game in a JSON-lines file and reuses it, so an agent is played
once per game however often it is compared; `agent@tag` names one build of an agent there
(played by this checkout when the file has no result for it), e.g. `rollout_search@main`
kept from a run on main and `rollout_search@new` from this branch.
"""
import json
import multiprocessing
import os
import argparse
import collections
import time

import numpy as np


import core_cy
from core_cy.play import batch
from pipelines.stats import mean_interval, sign_test_p
from benchmarks import share_interval

SOLO = {"easy": 3, "medium": 2, "hard": 1}      # win if the penalty is below this


def played(game, players, rules, agent, games, seed):
    """The result batch and the CPU seconds it took."""
    c = time.process_time()
    rb = batch.play(game, players, rules, agent, seed=seed, count=games)
    return rb, time.process_time() - c


def rate_text(wins, games, cpu):
    lo, hi = share_interval(wins / games, games)
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


def paired(first, agent, ends):
    """Pair an agent's games with the first agent's (the same seeds): returns the first agent's
    (name, wins per game) and this agent's win minus the first's per game (None for the first
    agent itself)."""
    wins = np.asarray([e == "win" for e in ends], dtype=float)
    if first is None:
        return (agent, wins), None
    return first, wins - first[1]


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
            first, diff = paired(first, agent, ends)
            if diff is None:
                continue
            # The same seeds, so the games are paired: the mean difference with a t interval.
            lo, hi = mean_interval(diff.mean(), diff.std(ddof=1), len(diff))
            print(f"  {agent} - {first[0]}: {diff.mean():+.2%} [{lo:+.2%}, {hi:+.2%}] "
                  f"(paired by seed; {int((diff > 0).sum())} games won only by {agent}, "
                  f"{int((diff < 0).sum())} only by {first[0]})")


def endgame_games(game, rules, args):
    """The games of start..start+games-1 where team_search's team locates all four parts and
    holds three or four at the end: a superset of those where it holds three parts while the
    fourth lies on a tile (where the endgame agents start simulating)."""
    rb = batch.play(game, args.players, rules, "team_search", seed=args.seed,
                    start=args.start, count=args.games)
    held = rb.column("parts_collected").to_pylist()
    found = rb.column("parts_found").to_pylist()
    return [args.start + i for i, (h, f) in enumerate(zip(held, found)) if f == 4 and h >= 3]


def play_one(job):
    """One game of an agent (a worker's task): its end, turns and CPU-seconds."""
    agent, players, rules, seed, index = job
    game = core_cy.load("forbidden_desert")
    c = time.process_time()
    rb = batch.play(game, players, rules, agent.split("@")[0], seed=seed, start=index, count=1)
    return {"agent": agent, "players": players, "rules": rules, "seed": seed, "game": index,
            "end": rb.column("end_reason")[0].as_py(),
            "held": rb.column("parts_collected")[0].as_py(),
            "found": rb.column("parts_found")[0].as_py(),
            "turns": rb.column("turns")[0].as_py(), "cpu": time.process_time() - c}


def played_games(agent, games, rules, args, stored):
    """The agent's results on `games` (index -> result): stored ones reused, the others
    played (by args.workers processes) and stored."""
    key = (agent, args.players, json.dumps(rules, sort_keys=True), args.seed)
    have = {g: stored[key + (g,)] for g in games if key + (g,) in stored}
    jobs = [(agent, args.players, rules, args.seed, g) for g in games if g not in have]
    with multiprocessing.Pool(args.workers) as pool:
        for r in pool.imap_unordered(play_one, jobs):
            if r["found"] != 4:
                raise RuntimeError(f"{agent}: game {r['game']} did not locate all four parts "
                                   "although team_search's did: not a team_search endgame agent")
            have[r["game"]] = r
            if args.results:
                with open(args.results, "a") as f:
                    f.write(json.dumps(r) + "\n")
    return have


def stored_results(path):
    stored = {}
    if path and os.path.exists(path):
        with open(path) as f:
            for line in f:
                r = json.loads(line)
                stored[(r["agent"], r["players"], json.dumps(r["rules"], sort_keys=True),
                        r["seed"], r["game"])] = r
    return stored


def endgame(args):
    game = core_cy.load("forbidden_desert")
    rules = {"difficulty": args.difficulty}
    games = endgame_games(game, rules, args)
    stored = stored_results(args.results)
    print(f"{args.players}p {args.difficulty}, seed {args.seed}, games {args.start}.."
          f"{args.start + args.games - 1}: all parts located and three held in {len(games)}")
    first = None
    for agent in args.agents.split(","):
        res = played_games(agent, games, rules, args, stored)
        ends = [res[g]["end"] for g in games]
        won = sum(e == "win" for e in ends)
        cpu = sum(res[g]["cpu"] for g in games)
        lo, hi = share_interval(won / len(games), len(games))
        wlo, whi = share_interval(won / args.games, args.games)
        losses = collections.Counter(e for e in ends if e != "win")
        print(f"{agent}: won {won} of {len(games)} endgames ({won / len(games):.1%} [{lo:.1%}, "
              f"{hi:.1%}]), losses {dict(sorted(losses.items()))}; "
              f"{cpu / len(games):.2f} CPU-s per endgame game; all {args.games} games: "
              f"{won / args.games:.2%} [{wlo:.2%}, {whi:.2%}]")
        first, diff = paired(first, agent, ends)
        if diff is None:
            continue
        print(f"  {agent} - {first[0]}: {int(diff.sum()):+d} wins ({int((diff > 0).sum())} "
              f"endgames won only by {agent}, {int((diff < 0).sum())} only by {first[0]}; "
              f"sign test p = {sign_test_p(int((diff > 0).sum()), int((diff < 0).sum())):.3f})")


def pawns_text(state):
    """Each pawn's water, steps to the Launch Pad and to the nearest excavated well."""
    d = state.to_dict()
    at = {e["tile"]: (r, c, e) for r, row in enumerate(d["board"]) for c, e in enumerate(row) if e}
    pad = next(t for t, (_, _, e) in at.items() if e["kind"] == "launch_pad")
    wells = [t for t, (_, _, e) in at.items() if e["kind"] == "well" and e["excavated"]]

    def steps(a, b):
        return abs(at[a][0] - at[b][0]) + abs(at[a][1] - at[b][1])
    return " ".join(f"{p['adventurer'][:5]} w{p['water']} pad{steps(p['tile'], pad)} well"
                    f"{min((steps(p['tile'], w) for w in wells), default='-')}"
                    for p in d["pawns"])


def thirst(args):
    """Plays games with rollout_search's (--rule-based: rollout's) choice rule step by step
    and traces each thirst loss after the simulations started: how many views the chosen
    action won at each decision.  Its games are its own (state seed seed * 100000 + g, the
    decision seeds the step numbers), not the games of a batch of that seed."""
    from core_cy import agents
    from core_cy.games.forbidden_desert.engine import GAME, ROLLOUT_VIEWS, rollout_values
    kinds = collections.Counter()
    for g in range(args.games):
        state = GAME.new(args.players, rules={"difficulty": args.difficulty},
                         seed=args.seed * 100000 + g)
        won, lines, step = [], [], 0
        while not state.is_terminal():
            sim = rollout_values(state, seed=step, search=not args.rule_based)
            if sim is None:
                action = agents.choose(state, "team_search", seed=step)
            else:
                values, pick = sim
                action = values[pick][0]
                won.append(int(values[pick][1]))
                lines.append(f"    turn {state.to_dict()['turns']}: {pawns_text(state)}; "
                             f"{GAME.describe(state, action)}: {won[-1]} of {ROLLOUT_VIEWS} won")
            state.apply(action)
            step += 1
        end = state.to_dict()["end_reason"]
        if won:
            kinds["endgames"] += 1
        if end != "thirst" or not won:
            continue
        kind = ("lost at the start" if max(won) == 0 else "lost from a sure win"
                if max(won) == ROLLOUT_VIEWS else "lost in between")
        kinds[kind] += 1
        print(f"game {g}: thirst after {len(won)} simulated decisions, {kind} (first {won[0]}, "
              f"most {max(won)}, last {won[-1]} of {ROLLOUT_VIEWS} won)")
        if args.verbose:
            print("\n".join(lines[-8:]))
    print(dict(kinds))


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
    e = sub.add_parser("endgame")
    e.add_argument("--games", type=int, default=400)
    e.add_argument("--start", type=int, default=0)
    e.add_argument("--players", type=int, default=4)
    e.add_argument("--agents", default="rollout,rollout_search")
    e.add_argument("--difficulty", default="novice")
    e.add_argument("--seed", type=int, default=12)
    e.add_argument("--workers", type=int, default=1)
    e.add_argument("--results", default="", help="JSON-lines file of played games (reused)")
    t = sub.add_parser("thirst")
    t.add_argument("--games", type=int, default=60)
    t.add_argument("--players", type=int, default=4)
    t.add_argument("--difficulty", default="novice")
    t.add_argument("--seed", type=int, default=20)
    t.add_argument("--rule-based", action="store_true", help="rollout instead of rollout_search")
    t.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    {"mondo-solo": mondo_solo, "desert": desert, "endgame": endgame,
     "thirst": thirst}[args.command](args)


if __name__ == "__main__":
    main()
