"""The form's agent presets (each game's core_cy/games/<game>/presets.json, read through
core_cy.catalogue.presets) in one run: per game and preset
the CPU seconds a game, the moves a game and the minutes a 9,000-game verdict takes on 2
cores, and each search preset's strength head-to-head against the search with the game's
own defaults (`mcts`); `--write` stores the costs in each game's presets.json
(games_per_cpu_second: the service's cost estimates start from them, core_cy.catalogue).

    python -m benchmarks.strong_play [--games 8] [--h2h 0] [--game mondo] [--write]

Costs: every (game, preset) plays slices of --slice games in turn, round after round, until
each has played --games games, so that the load on the machine falls on all of them alike;
CPU time of this one process (time.process_time), at the player count of the presets
(3, the desert 4).  Minutes for 9,000 games on 2 cores = 9,000 x CPU seconds a game / 2 / 60.

Strength (--h2h N, N games per preset): the preset in one seat and `mcts` in the others,
seats rotated (every agent in every seat equally often), the same deals for every preset.
Per game, the preset's pairwise score against each mcts seat (1 ahead, 0.5 level, 0 behind:
win share, then score); the mean over games with a 95% interval (normal, games the unit).
50% is equal strength (the `mcts` preset itself plays that by construction).  In the
cooperative desert the row gives the team's win rate instead (Wilson interval).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import time

import numpy as np

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # idle BLAS threads would share our core

import core_cy  # noqa: E402
from core_cy.catalogue import presets, presets_path  # noqa: E402
from core_cy.play import batch  # noqa: E402

VERDICT_GAMES = 9000
CORES = 2
BASELINE = "mcts"
SEED = 24680


def minutes(cpu_per_game: float) -> float:
    return VERDICT_GAMES * cpu_per_game / CORES / 60.0


def costs(entries: dict, games: int, slice_: int) -> dict:
    """{(game, preset): (cpu seconds, moves, games)} by interleaved slices."""
    done = {key: [0.0, 0, 0] for key in entries}
    loaded = {name: core_cy.load(name) for name, _ in entries}
    start = 0
    while any(v[2] < games for v in done.values()):
        for (name, preset), (players, agent) in entries.items():
            acc = done[(name, preset)]
            if acc[2] >= games:
                continue
            count = min(slice_, games - acc[2])
            t0 = time.process_time()
            cols = batch.play_columns(loaded[name], players, None, agent, seed=SEED,
                                      start=start, count=count)
            acc[0] += time.process_time() - t0
            acc[1] += int(cols["length"].sum())
            acc[2] += count
        start += slice_
    return {k: tuple(v) for k, v in done.items()}


def pairwise(cols: dict, seat_is_candidate: np.ndarray) -> np.ndarray:
    """Per game: the candidate's mean pairwise score against the other seats."""
    share = np.asarray(cols["seat_win_share"], dtype=float)
    score = np.asarray(cols["seat_score"], dtype=float)
    out = np.empty(share.shape[0])
    for g in range(share.shape[0]):
        c = int(np.flatnonzero(seat_is_candidate[g])[0])
        vals = []
        for k in range(share.shape[1]):
            if k == c:
                continue
            key_c = (share[g, c], score[g, c])
            key_k = (share[g, k], score[g, k])
            vals.append(1.0 if key_c > key_k else 0.5 if key_c == key_k else 0.0)
        out[g] = sum(vals) / len(vals)
    return out


def head_to_head(game, players: int, agent: str, games: int, seed: int = SEED,
                 baseline: str = BASELINE) -> tuple[float, float, float]:
    """Mean pairwise score of `agent` in one seat against `baseline` in the others, 95% CI
    (another seed: the same agents on other deals)."""
    agents = [agent] + [baseline] * (players - 1)
    cols = batch.play_columns(game, players, None, agents, seed=seed, start=0, count=games,
                              rotate=True)
    names = np.asarray([list(a) for a in cols["seat_agent"]], dtype=object)
    # rotate: game i puts agents[(k + i) % players] in seat k; the candidate is agents[0]
    cand = np.zeros(names.shape, dtype=bool)
    for g in range(games):
        cand[g, (-g) % players] = True
    x = pairwise(cols, cand)
    m = float(x.mean())
    half = 1.96 * float(x.std(ddof=1)) / math.sqrt(games) if games > 1 else float("nan")
    return m, m - half, m + half


def team_rate(game, players: int, agent: str, games: int) -> tuple[float, float, float]:
    """The cooperative team's win rate and its Wilson 95% interval."""
    cols = batch.play_columns(game, players, None, agent, seed=SEED, start=0, count=games)
    wins = int((np.asarray(cols["seat_win_share"], dtype=float)[:, 0] > 0).sum())
    z, n = 1.96, games
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return p, centre - half, centre + half


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=8, help="games per preset for the costs")
    ap.add_argument("--slice", type=int, default=2, help="games per preset per round")
    ap.add_argument("--h2h", type=int, default=0, help="games per search preset head-to-head "
                    "against mcts (0: costs only; the issue asks for at least 400)")
    ap.add_argument("--game", action="append", help="only this game (repeatable)")
    ap.add_argument("--preset", action="append", help="only this preset (repeatable)")
    ap.add_argument("--write", action="store_true", help="store the costs in each game's "
                    "presets.json")
    args = ap.parse_args(argv)
    data = {"games": {name: presets(name) for name in core_cy.game_names()}}
    entries = {}
    for name, entry in data["games"].items():
        if args.game and name not in args.game:
            continue
        for preset, about in entry["presets"].items():
            if args.preset and preset not in args.preset:
                continue
            entries[(name, preset)] = (entry["players"], about["agent"])
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
          f"{args.games} games per preset, head-to-head {args.h2h} games", flush=True)
    measured = costs(entries, args.games, args.slice)
    print(f"| game | players | preset | agent | CPU ms a game | moves a game | minutes for "
          f"{VERDICT_GAMES:,} games on {CORES} cores | head-to-head vs {BASELINE} [95% CI] |")
    print("|---|---|---|---|---|---|---|---|")
    for (name, preset), (players, agent) in entries.items():
        cpu, moves, n = measured[(name, preset)]
        game = core_cy.load(name)
        strength = ""
        if agent == BASELINE:
            strength = "the baseline itself"
        elif args.h2h and not agent.startswith(("greedy", "random", "search", "deep_search")):
            if game.cooperative:
                p, lo, hi = team_rate(game, players, agent, args.h2h)
                strength = f"team wins {100 * p:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]"
            else:
                m, lo, hi = head_to_head(game, players, agent, args.h2h)
                strength = f"{100 * m:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]"
        print(f"| {name} | {players} | {preset} | `{agent}` | {1000 * cpu / n:,.1f} | {moves / n:.0f} "
              f"| {minutes(cpu / n):.1f} | {strength} |", flush=True)
        rate = n / cpu
        data["games"][name]["presets"][preset]["games_per_cpu_second"] = round(
            rate, 1 if rate < 10 else 0)
    if args.write:
        for name in {name for name, _ in entries}:
            presets_path(name).write_text(json.dumps(data["games"][name], indent=2) + "\n")


if __name__ == "__main__":
    main()
