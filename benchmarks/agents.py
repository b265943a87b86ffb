"""The search agent's goals (issue 10), measured on one core of this machine.

    python -m benchmarks.agents strength [--game maori] [--games 400] [--a AGENT] [--b greedy]
                                         [--players 2,3] [--mode pro]
    python -m benchmarks.agents speed [--game maori,mondo] [--players 2] [--seconds 10]
                                      [--repeats 3]
    python -m benchmarks.agents tradeoff [--game maori,mondo,reef_encounter,golden_island]
                                         [--agents A;B;...] [--games 200] [--seconds 3]
    python -m benchmarks.agents memory
    python -m benchmarks.agents truncation [--games 400] [--agent AGENT]
    python -m benchmarks.agents budget [--game maori] [--players 3] [--games 50] [--agent AGENT]
                                       [--run]
    python -m benchmarks.agents solo [--games 100]
    python -m benchmarks.agents desert [--games 100]

--game and --players take comma-separated lists (every pair is measured).
strength: A in one seat against B in the others, seats rotated (game i turns the seats i
times; two players: A first when i is even), A's win share with its 95% Wilson interval, and CPU seconds per game.  Goals: mcts (the
default settings) and mcts(400) vs greedy >= 0.65 in every game; mcts(1000) vs mcts(100) >= 0.60.
speed: moves simulated inside the search (tree descent and rollouts) per CPU second of the
search alone (the positions searched from are set up outside the timed part), against the same
engine's random-agent moves/s (goal >= 50%), and OpenSpiel's C++ MCTSBot with random rollouts on
connect_four (its simulations/s times the mean random playout length from the searched
positions), reported as ours / theirs (goal >= 1.0).  --repeats interleaved rounds: every
ratio is the median of the rounds' same-round ratios, with their range.
tradeoff: for every game and search agent, the speed ratio (search moves/s over the random
agent's, measured in the same run) next to its strength against greedy (share with 95% Wilson
interval, seats rotated): the table from which the default is chosen.
memory: the node pool and buffers per agent, and the process's resident memory before and
after a game of mcts(iterations=1000) (goal: no growth).
truncation: share of Maori pro games (3 players) that end at the move limit (default agent: the
demo's, services/maori_demo.json), and CPU seconds per game.
budget: a seat-balance question to +-1 point (goal: 3-player Maori, about 9,000 games) with the
search (each game's default settings) in every seat: CPU s/game and the extrapolated time on two
cores, per game and player count (default: Maori, 3 players); with --run, plays --games of them
on two processes: wall time and the seat win shares with intervals.
solo / desert: Mondo solo win rate per difficulty; Forbidden Desert 4-player team win rate.
Rates are CPU time (time.process_time), so other work on the machine affects them less.
"""
from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import core_cy  # noqa: E402
from core_cy import agents  # noqa: E402
from core_cy.play import batch  # noqa: E402
from pipelines.stats import games_for_half_width
from benchmarks import share_interval


def _share_text(share: float, n: int) -> str:
    lo, hi = share_interval(share, n)
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
    """Moves/s of whole random-agent games (batches of 200 from game 0 on, so that repeated
    runs play the same games)."""
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


def search_moves_per_second(game, players: int, agent: str, seconds: float,
                            searched: list | None = None) -> float:
    """Moves simulated inside the search (tree descent and rollouts) per CPU second of the
    search alone: the positions (`searched`, else 200 along greedy games), the agent's
    allocation and the result dict are set-up, outside the timed part.  Position i is searched
    with seed i, from the first position on, until `seconds` of search or the last position."""
    moves = cpu = 0
    for i, state in enumerate(searched or positions(game, players, 200)):
        _, n, seconds_used = agents.search_stats(state, agent, seed=i, timed=True)
        moves += n
        cpu += seconds_used
        if cpu > seconds:
            break
    return moves / cpu


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
    for game in args.games_named:
        for players in args.player_counts:
            for a, b in pairs:
                r = strength(game, a, b, args.games, args.seed, players, rules)
                print(f"{game} {players}p{' ' + args.mode if args.mode else ''}: {a} vs {b}: "
                      f"share {_share_text(r['share'], r['games'])} (even: "
                      f"{1 / players:.3f}), {r['cpu_per_game']:.3f} CPU s/game", flush=True)


def _spread(values: list) -> str:
    """The median of repeated measurements and their range."""
    return f"{np.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def speed_rounds(names: list, player_counts: list, agent_strings: list, seconds: float,
                 repeats: int) -> dict:
    """Interleaved rounds: each round measures OpenSpiel's anchors, then per game and player
    count the random agent and every search agent (`seconds` each), so that a ratio compares
    rates taken close together and the rounds show its noise.  Every round plays the same
    random games and searches the same positions with the same seeds."""
    from benchmarks.openspiel_anchor import connect_four_rate

    cells = [(name, players) for name in names for players in player_counts]
    searched = {cell: positions(core_cy.load(cell[0]), cell[1], 200) for cell in cells}
    rates = {"mcts_bot": [], "connect_four": []}
    for _ in range(repeats):
        anchor = openspiel_mcts_moves_per_second(400, seconds)
        rates["mcts_bot"].append(anchor["moves_per_s"] if anchor else float("nan"))
        rates["connect_four"].append(connect_four_rate(seconds)["moves_per_s"]
                                     if anchor else float("nan"))
        for name, players in cells:
            game = core_cy.load(name)
            rates.setdefault((name, players, "random"), []).append(
                random_moves_per_second(game, players, seconds))
            for agent in agent_strings:
                rates.setdefault((name, players, agent), []).append(search_moves_per_second(
                    game, players, agent, seconds, searched[(name, players)]))
    return {key: np.array(values) for key, values in rates.items()}


def cmd_speed(args) -> None:
    agent_strings = (args.agent, "mcts(iterations=400, rollout=random, cutoff=0)")
    rates = speed_rounds(args.games_named, args.player_counts, agent_strings, args.seconds,
                         args.repeats)
    bot, c4 = rates["mcts_bot"], rates["connect_four"]
    print(f"{args.repeats} interleaved rounds of {args.seconds:g} CPU s per measurement; "
          "rates are medians; ratios are the median (range) of the rounds' ratios")
    if not np.isnan(bot).any():
        print(f"OpenSpiel connect_four: MCTSBot(400, random rollouts) {np.median(bot):,.0f} "
              f"moves/s, uniform random bots {np.median(c4):,.0f} moves/s", flush=True)
    for name in args.games_named:
        for players in args.player_counts:
            base = rates[(name, players, "random")]
            line = f"{name} {players}p: random agent {np.median(base):,.0f} moves/s"
            if not np.isnan(c4).any():
                line += f"; random / OpenSpiel random = {_spread(list(base / c4))}"
            print(line)
            for agent in agent_strings:
                ours = rates[(name, players, agent)]
                line = (f"{name} {players}p: {agent} simulates {np.median(ours):,.0f} moves/s; "
                        f"search/random = {_spread(list(ours / base))} (goal >= 0.5)")
                if not np.isnan(bot).any():
                    line += f"; ours/MCTSBot = {_spread(list(ours / bot))} (goal >= 1.0)"
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
    for name in args.games_named:
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
    lo, hi = share_interval(cut / len(reasons), len(reasons))
    print(f"maori pro 3p, {agent}: {cut} of {len(reasons)} games truncated "
          f"({100 * cut / len(reasons):.2f}% [{100 * lo:.2f}, {100 * hi:.2f}]), "
          f"{cpu / len(reasons):.3f} CPU s/game")


def games_needed(players: int, half_width: float = 0.01) -> int:
    """Games that decide a seat's win share near 1/players to +-half_width (95%; the share's
    sd is sqrt(p (1 - p))); 3 players: about 8,500 (the goal's "about 9,000")."""
    even = 1 / players
    return int(games_for_half_width(np.sqrt(even * (1 - even)), half_width))


def _budget_part(task):
    """One process's share of the budget run: games [start, start + count)."""
    name, players, agent, seed, start, count = task
    game = core_cy.load(name)
    t0 = time.process_time()
    rows = batch.play(game, players, None, agent, seed=seed, start=start, count=count)
    return (np.array(rows.column("seat_win_share").to_pylist()),
            rows.column("end_reason").to_pylist(), time.process_time() - t0)


def budget_run(name: str, players: int, agent: str, games: int, seed: int,
               workers: int = 2) -> None:
    """Plays the budget question itself: `games` games of `players` on `workers` processes,
    the wall time, and every seat's win share with its 95% Wilson interval."""
    import multiprocessing

    game = core_cy.load(name)
    chunk = 100
    tasks = [(name, players, agent, seed, s, min(chunk, games - s))
             for s in range(0, games, chunk)]
    t0 = time.perf_counter()
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        parts = pool.map(_budget_part, tasks, chunksize=1)
    wall = time.perf_counter() - t0
    shares = np.concatenate([p[0] for p in parts])
    reasons = [r for p in parts for r in p[1]]
    cpu = sum(p[2] for p in parts) / games
    kept = np.array([r not in game.safety_end_reasons for r in reasons])
    print(f"{name} {players}p, {agents.canonical_agent(game, agent)} in every seat: {games:,} "
          f"games on {workers} processes in {wall / 60:.1f} min wall (a loaded machine "
          f"stretches it); {cpu:.3f} CPU s/game in the workers, so 9,000 games take "
          f"{9000 * cpu / workers / 60:.1f} min on {workers} free cores (goal <= 10); "
          f"{int((~kept).sum())} truncated")
    for seat in range(players):
        share = float(shares[kept, seat].mean())
        lo, hi = share_interval(share, int(kept.sum()))
        print(f"  seat {seat}: {share:.4f} [{lo:.4f}, {hi:.4f}] (half-width "
              f"{100 * (hi - lo) / 2:.2f} points; even {1 / players:.4f})")


def cmd_budget(args) -> None:
    """A seat-balance question to +-1 point (games_needed; the goal: 3-player Maori, about
    9,000 games, <= 10 min on two cores): CPU seconds per game of the agent in every seat, and
    the wall time on two cores (extrapolated), per game and player count."""
    agent = args.agent if args.agent_given else "mcts"
    for name in args.games_named:
        game = core_cy.load(name)
        for players in args.player_counts:
            if args.run:
                budget_run(name, players, agent, args.games, args.seed)
                continue
            needed = games_needed(players)
            t0 = time.process_time()
            batch.play(game, players, None, agent, seed=args.seed, count=args.games)
            cpu = (time.process_time() - t0) / args.games
            print(f"{name} {players}p, {agents.canonical_agent(game, agent)} in every seat: "
                  f"{cpu:.3f} CPU s/game over {args.games} games; +-1 point needs "
                  f"{needed:,} games: {needed * cpu / 2 / 60:.1f} min on 2 cores, 9,000 games: "
                  f"{9000 * cpu / 2 / 60:.1f} min (goal <= 10)", flush=True)


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


# Per command: the games and player counts measured when --game / --players are not given.
DEFAULT_GAMES = {"budget": "maori"}
DEFAULT_PLAYERS = {"budget": "3"}


def _check_games_and_players(ap, args) -> None:
    """--game and --players as lists (args.games_named, args.player_counts), every game known
    and every player count one it seats; else a usage error naming the option."""
    args.game = args.game or DEFAULT_GAMES.get(args.what, "maori,mondo")
    try:
        loaded = [core_cy.load(name) for name in args.game.split(",")]
    except ValueError as e:
        ap.error(f"--game: {e}")
    args.games_named = [game.name for game in loaded]
    text = args.players or DEFAULT_PLAYERS.get(args.what, "2")
    try:
        args.player_counts = [int(p) for p in text.split(",")]
    except ValueError:
        ap.error(f"--players: a player count or a comma-separated list of them, got {text!r}")
    for game in loaded:
        for players in args.player_counts:
            try:
                game.check_players(players)
            except ValueError as e:
                ap.error(f"--players: {e}")
            if players < 2 and args.what in ("strength", "budget"):
                ap.error(f"--players: {args.what} compares seats: at least 2 players, got "
                         f"{players}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=["strength", "speed", "tradeoff", "memory", "truncation", "budget",
                                     "solo", "desert"])
    ap.add_argument("--game", default=None, help="games, comma-separated (default maori,mondo; "
                    "budget: maori)")
    ap.add_argument("--games", type=int, default=400)  # memory: try 20
    ap.add_argument("--a", default=None)
    ap.add_argument("--b", default="greedy")
    ap.add_argument("--agent", default=None)
    ap.add_argument("--agents", default=None, help="tradeoff: agent strings separated by ';'")
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--repeats", type=int, default=3, help="speed: interleaved rounds (the "
                    "ratios are their median)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--players", default=None, help="strength and budget: player counts, "
                    "comma-separated (strength: A in one seat, B in the others, rotated; "
                    "default 2; budget: default 3)")
    ap.add_argument("--mode", default=None, help="strength: Maori's mode rule (e.g. pro)")
    ap.add_argument("--run", action="store_true", help="budget: play the --games themselves "
                    "on 2 processes and report the wall time and the seat intervals")
    args = ap.parse_args(argv)
    _check_games_and_players(ap, args)
    if args.repeats < 1:
        ap.error(f"--repeats: at least 1 round, got {args.repeats}")
    args.agent_given = args.agent is not None
    args.agent = args.agent or "mcts"
    globals()["cmd_" + args.what](args)


if __name__ == "__main__":
    main()
