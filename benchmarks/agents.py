"""The search agent's goals (issue 10), measured on one core of this machine.

    python benchmarks/agents.py strength [--game maori] [--games 400] [--a AGENT] [--b greedy]
                                         [--players 3 --mode pro]
    python benchmarks/agents.py speed [--seconds 10]
    python benchmarks/agents.py tradeoff [--game maori,mondo,reef_encounter,golden_island]
                                         [--agents A;B;...] [--games 200] [--seconds 3]
    python benchmarks/agents.py memory
    python benchmarks/agents.py truncation [--games 400] [--agent AGENT]
    python benchmarks/agents.py budget [--games 50] [--agent AGENT] [--run]
    python benchmarks/agents.py solo [--games 100]
    python benchmarks/agents.py desert [--games 100]

strength: A against B over two-player games with seats rotated (game i seats A first when i is
even), A's win share with its 95% Wilson interval, and CPU seconds per game.  Goals: mcts (the
default settings) and mcts(400) vs greedy >= 0.65 in every game; mcts(1000) vs mcts(100) >= 0.60.
speed: moves simulated inside the search (tree descent and rollouts) per CPU second, against
the same engine's random-agent moves/s (goal >= 50%), and OpenSpiel's C++ MCTSBot with random
rollouts on connect_four (its simulations/s times the mean random playout length from the
searched positions), reported as ours / theirs (goal >= 1.0).
tradeoff: for every game and search agent, the speed ratio (search moves/s over the random
agent's, measured in the same run) next to its strength against greedy (share with 95% Wilson
interval, seats rotated): the table from which the default is chosen.
memory: the node pool and buffers per agent, and the process's resident memory before and
after a game of mcts(iterations=1000) (goal: no growth).
truncation: share of Maori pro games (3 players) that end at the move limit (default agent: the
demo's, services/maori_demo.json), and CPU seconds per game.
budget: the 3-player Maori seat-balance question to +-1 point (about 9,000 games) with the
search (default settings) in every seat: CPU s/game and the extrapolated time on two cores;
with --run, plays --games of them on two processes: wall time and the seat intervals.
solo / desert: Mondo solo win rate per difficulty; Forbidden Desert 4-player team win rate.
Rates are CPU time (time.process_time), so other work on the machine affects them less.
"""
from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
ROOT = __import__("pathlib").Path(__file__).resolve().parent.parent
__import__("sys").path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

import core_cy  # noqa: E402
from core_cy import agents, batch  # noqa: E402
from pipelines.stats import wilson_interval  # noqa: E402


def _share_text(share: float, n: int) -> str:
    lo, hi = wilson_interval(share, n)
    return f"{share:.3f} [{lo:.3f}, {hi:.3f}] over {n} games"


def strength(game_name: str, a: str, b: str, games: int, seed: int = 1, players: int = 2,
             rules: dict | None = None) -> dict:
    """A's mean win share against B (in every other seat), seats rotated."""
    game = core_cy.load(game_name)
    t0 = time.process_time()
    rows = batch.play(game, players, rules, [a] + [b] * (players - 1), seed=seed, count=games,
                      rotate=True)
    cpu = time.process_time() - t0
    shares = np.array(rows.column("seat_win_share").to_pylist())
    seats = np.array(rows.column("seat_agent").to_pylist())
    share = float(shares[seats == agents.canonical_agent(game, a)].mean())
    return {"game": game_name, "a": a, "b": b, "share": share, "games": games,
            "cpu_per_game": cpu / games}


def random_moves_per_second(game, players: int, seconds: float) -> float:
    games = moves = 0
    t0 = time.process_time()
    while time.process_time() - t0 < seconds:
        rows = batch.play(game, players, None, "random", seed=3, start=games, count=200)
        games += rows.num_rows
        moves += int(rows.column("length").to_numpy().sum())
    return moves / (time.process_time() - t0)


def positions(game, players: int, count: int, seed: int = 5) -> list:
    """Positions along greedy games (where a search has more than one action to choose)."""
    out, k = [], 0
    while len(out) < count:
        state = game.new(players, seed=seed + k)
        while not state.is_terminal() and len(out) < count:
            if len(state.legal_actions()) > 1 and state.num_moves % 7 == 0:
                out.append(state.clone())
            state.apply(agents.choose(state, "greedy", seed=k))
        k += 1
    return out


def search_moves_per_second(game, players: int, agent: str, seconds: float) -> float:
    moves = 0
    t0 = time.process_time()
    for i, state in enumerate(positions(game, players, 200)):
        moves += agents.search_stats(state, agent, seed=i)[1]
        if time.process_time() - t0 > seconds:
            break
    return moves / (time.process_time() - t0)


def _connect_four_position(game, rng):
    """connect_four after 0-11 random moves, not over."""
    while True:
        state = game.new_initial_state()
        for _ in range(int(rng.integers(0, 12))):
            if state.is_terminal():
                break
            state.apply_action(int(rng.choice(state.legal_actions())))
        if not state.is_terminal():
            return state


def openspiel_mcts_moves_per_second(simulations: int, seconds: float) -> dict | None:
    """OpenSpiel's C++ MCTSBot (random rollouts) on connect_four: simulations/s, and moves/s
    estimated as simulations/s times the mean random playout length from the positions."""
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game("connect_four")
    rng = np.random.default_rng(0)
    evaluator = pyspiel.RandomRolloutEvaluator(1, 0)
    bot = pyspiel.MCTSBot(game, evaluator, 1.4, simulations, 1000, False, 0, False)
    sims = steps = 0
    t0 = time.process_time()
    while time.process_time() - t0 < seconds:
        state = _connect_four_position(game, rng)
        bot.step(state)
        sims += simulations
        steps += 1
    cpu = time.process_time() - t0
    playout = []
    for _ in range(2000):   # mean remaining length of a random playout from such positions
        state = _connect_four_position(game, rng)
        n = 0
        while not state.is_terminal():
            state.apply_action(int(rng.choice(state.legal_actions())))
            n += 1
        playout.append(n)
    return {"simulations_per_s": sims / cpu, "moves_per_s": sims / cpu * float(np.mean(playout)),
            "mean_playout": float(np.mean(playout)), "decisions": steps}


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def cmd_strength(args) -> None:
    pairs = [(args.a, args.b)] if args.a else [
        ("mcts", "greedy"), ("mcts(iterations=400)", "greedy"),
        ("mcts(iterations=1000)", "mcts(iterations=100)")]
    rules = {"mode": args.mode} if args.mode else None
    for game in args.game.split(","):
        for a, b in pairs:
            r = strength(game, a, b, args.games, args.seed, args.players, rules)
            print(f"{game} {args.players}p{' ' + args.mode if args.mode else ''}: {a} vs {b}: "
                  f"share {_share_text(r['share'], r['games'])} (even: {1 / args.players:.3f}), "
                  f"{r['cpu_per_game']:.3f} CPU s/game", flush=True)


def cmd_speed(args) -> None:
    anchor = openspiel_mcts_moves_per_second(400, args.seconds)
    if anchor:
        print(f"OpenSpiel MCTSBot(400, random rollouts) connect_four: "
              f"{anchor['simulations_per_s']:,.0f} simulations/s x {anchor['mean_playout']:.1f}"
              f" moves per playout = {anchor['moves_per_s']:,.0f} moves/s", flush=True)
    for name in args.game.split(","):
        game = core_cy.load(name)
        base = random_moves_per_second(game, 2, args.seconds)
        print(f"{name} 2p: random agent {base:,.0f} moves/s", flush=True)
        for agent in (args.agent, "mcts(iterations=400, rollout=random, cutoff=0)"):
            ours = search_moves_per_second(game, 2, agent, args.seconds)
            line = (f"{name} 2p: {agent} simulates {ours:,.0f} moves/s; search/random = "
                    f"{ours / base:.2f} (goal >= 0.5)")
            if anchor:
                line += f"; ours/OpenSpiel = {ours / anchor['moves_per_s']:.2f} (goal >= 1.0)"
            print(line, flush=True)


# The candidate defaults the tradeoff command compares (issue 10: speed vs strength).
TRADEOFF_AGENTS = ("mcts", "mcts(rollout=greedy)", "mcts(rollout=quick, cutoff=8)",
                   "mcts(rollout=quick, cutoff=16)",
                   "mcts(iterations=400, rollout=quick, cutoff=8)",
                   "mcts(rollout=random, cutoff=8)", "mcts(rollout=random, cutoff=0)")


def cmd_tradeoff(args) -> None:
    candidates = args.agents.split(";") if args.agents else TRADEOFF_AGENTS
    anchor = openspiel_mcts_moves_per_second(400, args.seconds)
    if anchor:
        print(f"OpenSpiel MCTSBot(400, random rollouts) connect_four: "
              f"{anchor['moves_per_s']:,.0f} moves/s", flush=True)
    print("game | agent | search/random moves/s | ours/OpenSpiel | share vs greedy [95%] | "
          "CPU s/game", flush=True)
    for name in args.game.split(","):
        game = core_cy.load(name)
        base = random_moves_per_second(game, 2, args.seconds)
        for agent in candidates:
            ours = search_moves_per_second(game, 2, agent, args.seconds)
            r = strength(name, agent, "greedy", args.games, args.seed)
            versus = f"{ours / anchor['moves_per_s']:.2f}" if anchor else "-"
            print(f"{name} | {agent} | {ours / base:.2f} | {versus} | "
                  f"{_share_text(r['share'], r['games'])} | {r['cpu_per_game']:.3f}", flush=True)


def cmd_memory(args) -> None:
    game = core_cy.load("maori")
    for agent in ("mcts(iterations=400)", "mcts(iterations=1000)"):
        print(f"{agent}: {agents.memory_bytes(game, agent) / 1024:,.0f} KiB per agent "
              f"(node pool of {2 * int(agent.split('=')[1][:-1]) + 2} nodes and buffers)")
    agent = "mcts(iterations=1000)"
    for k in range(2):   # warm up the allocator, Arrow and the modules
        batch.play(game, 2, None, agent, seed=k, count=1)
    start = rss_bytes()
    batch.play(game, 2, None, agent, seed=2, count=1)
    one = rss_bytes()
    batch.play(game, 2, None, agent, seed=3, count=args.games)
    print(f"{agent} in both seats, resident memory: {(one - start) / 1024:+,.0f} KiB over a "
          f"batch of 1 game, then {(rss_bytes() - one) / 1024:+,.0f} KiB over a batch of "
          f"{args.games} games (the agents' trees live for a whole batch: no growth per game)")


def cmd_truncation(args) -> None:
    from services.demo import demo_spec

    game = core_cy.load("maori")
    agent = args.agent if args.agent_given else demo_spec()["agents"]
    t0 = time.process_time()
    rows = batch.play(game, 3, {"mode": "pro"}, agent, seed=args.seed, count=args.games)
    cpu = time.process_time() - t0
    reasons = rows.column("end_reason").to_pylist()
    cut = sum(r in game.safety_end_reasons for r in reasons)
    lo, hi = wilson_interval(cut / len(reasons), len(reasons))
    print(f"maori pro 3p, {agent}: {cut} of {len(reasons)} games truncated "
          f"({100 * cut / len(reasons):.2f}% [{100 * lo:.2f}, {100 * hi:.2f}]), "
          f"{cpu / len(reasons):.3f} CPU s/game")


def _budget_part(task):
    """One process's share of the budget run: games [start, start + count)."""
    agent, seed, start, count = task
    game = core_cy.load("maori")
    t0 = time.process_time()
    rows = batch.play(game, 3, None, agent, seed=seed, start=start, count=count)
    return (np.array(rows.column("seat_win_share").to_pylist()),
            rows.column("end_reason").to_pylist(), time.process_time() - t0)


def budget_run(agent: str, games: int, seed: int, workers: int = 2) -> None:
    """Plays the budget question itself: `games` 3-player Maori games on `workers` processes,
    the wall time, and every seat's win share with its 95% Wilson interval."""
    import multiprocessing

    game = core_cy.load("maori")
    chunk = 100
    tasks = [(agent, seed, s, min(chunk, games - s)) for s in range(0, games, chunk)]
    t0 = time.perf_counter()
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        parts = pool.map(_budget_part, tasks, chunksize=1)
    wall = time.perf_counter() - t0
    shares = np.concatenate([p[0] for p in parts])
    reasons = [r for p in parts for r in p[1]]
    cpu = sum(p[2] for p in parts) / games
    kept = np.array([r not in game.safety_end_reasons for r in reasons])
    print(f"maori 3p, {agents.canonical_agent(game, agent)} in every seat: {games:,} games on "
          f"{workers} processes in {wall / 60:.1f} min wall (goal <= 10 for 9,000; a loaded "
          f"machine stretches it); {cpu:.3f} CPU s/game in the workers, so 9,000 games take "
          f"{9000 * cpu / workers / 60:.1f} min on {workers} free cores; "
          f"{int((~kept).sum())} truncated")
    for seat in range(3):
        share = float(shares[kept, seat].mean())
        lo, hi = wilson_interval(share, int(kept.sum()))
        print(f"  seat {seat}: {share:.4f} [{lo:.4f}, {hi:.4f}] (half-width "
              f"{100 * (hi - lo) / 2:.2f} points)")


def cmd_budget(args) -> None:
    """The 3-player Maori seat-balance question to +-1 point: a seat's share near 1/3 needs
    n = (1.96 / 0.01)^2 * (1/3)(2/3) ~ 8,500 games (about 9,000); CPU seconds per game of
    the agent in every seat, and the wall time of 9,000 games on two cores (extrapolated)."""
    agent = args.agent if args.agent_given else "mcts"
    if args.run:
        budget_run(agent, args.games, args.seed)
        return
    game = core_cy.load("maori")
    needed = int(np.ceil((1.96 / 0.01) ** 2 * (1 / 3) * (2 / 3)))
    t0 = time.process_time()
    batch.play(game, 3, None, agent, seed=args.seed, count=args.games)
    cpu = (time.process_time() - t0) / args.games
    print(f"maori 3p, {agents.canonical_agent(game, agent)} in every seat: {cpu:.3f} CPU s/game"
          f" over {args.games} games; +-1 point needs {needed:,} games: "
          f"{needed * cpu / 2 / 60:.1f} min on 2 cores, 9,000 games: "
          f"{9000 * cpu / 2 / 60:.1f} min (goal <= 10)")


def cmd_solo(args) -> None:
    game = core_cy.load("mondo")
    difficulty = next(o for o in game.options if "solo" in o.name and o.kind == "enum")
    for level in difficulty.choices:
        rows = batch.play(game, 1, {difficulty.name: level}, args.agent, seed=1,
                          count=args.games)
        wins = float(np.mean(rows.column("solo_win").to_numpy()))
        print(f"mondo solo {level}, {args.agent}: wins {_share_text(wins, args.games)}",
              flush=True)


def cmd_desert(args) -> None:
    game = core_cy.load("forbidden_desert")
    t0 = time.process_time()
    rows = batch.play(game, 4, None, args.agent, seed=1, count=args.games)
    cpu = time.process_time() - t0
    wins = float(np.mean([s[0] for s in rows.column("seat_win_share").to_pylist()]))
    print(f"forbidden desert 4p default difficulty, {args.agent}: team wins "
          f"{_share_text(wins, args.games)}, {args.games / cpu:.2f} games per CPU s")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=["strength", "speed", "tradeoff", "memory", "truncation", "budget",
                                     "solo", "desert"])
    ap.add_argument("--game", default="maori,mondo")
    ap.add_argument("--games", type=int, default=400)  # memory: try 20
    ap.add_argument("--a", default=None)
    ap.add_argument("--b", default="greedy")
    ap.add_argument("--agent", default=None)
    ap.add_argument("--agents", default=None, help="tradeoff: agent strings separated by ';'")
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--players", type=int, default=2, help="strength: seats (A in one, B in "
                    "the others, rotated)")
    ap.add_argument("--mode", default=None, help="strength: Maori's mode rule (e.g. pro)")
    ap.add_argument("--run", action="store_true", help="budget: play the --games themselves "
                    "on 2 processes and report the wall time and the seat intervals")
    args = ap.parse_args(argv)
    args.agent_given = args.agent is not None
    args.agent = args.agent or "mcts"
    globals()["cmd_" + args.what](args)


if __name__ == "__main__":
    main()
