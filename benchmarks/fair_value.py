"""The fair-value search's calibration and cost on known truths (issue 36), synthetic games.

    nice -n 19 python benchmarks/fair_value.py [--single 2000] [--sequential 400] [--seed 1]

A k-player seat question whose true curve is known: the judged seat wins a game with
probability p(x), nobody wins with probability NOBODY, another seat wins otherwise; the figure
is pipelines.fair_value.seat_figure's (the seat's share, 1/k when nobody wins), so the true fair
value x* solves p(x*) = (1 - NOBODY) / k.  Every value of a wave plays the same deals, and a
deal's draw is shared between values (common random numbers) with probability SHARED.  Truths
(TRUTHS; each crosses the fair share once, at x*):
- logistic: logit p linear in x (the old search's model);
- linear: p linear in x;
- steep-ended: like Reef Encounter at 3 players (docs/balance.md): far below fair at the low
  end of the range, nearly flat in its middle, crossing at its upper end;
- non-monotone: a rising line with a bump that falls back (a shown rise and fall), away from
  the crossing.
For each truth and player count: the coverage of x* by the interval of a single wave (the
first grid, SINGLE_GAMES games per value) and by the sequential search (to +-0.5 unit, integer
option), with the median games, how often the search said "not monotone", and how often it
named the fair value.  A true 95% lands in 93.5-96.5% with probability 0.97 at 2,000
replicates, and in 92-98% at 400.

    nice -n 19 python benchmarks/fair_value.py --reference EXAMPLE.json --values=3,4,5 \
        --games 50000 [--reference-seed 1000]

The reference for a real answer (examples/balance/*.json): plain batch play of the example's
game, players and agents at each value of the compensated seat (core_cy.play.batch directly,
not the search's player or statistics), on seeds of its own, printing the seat's win share
less the others' mean with a 95% t interval, so that a stated fair value can be checked
against where the plain figure changes sign.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

if __name__ == "__main__":      # run as a script from the checkout (the suite imports it)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from pipelines import fair_value as fv  # noqa: E402

NOBODY, SHARED = 0.05, 0.7
SINGLE_GAMES = 3000           # games per value of a single wave
WAVE_GAMES, MAX_GAMES = 1000, 400_000


def truth(name: str, players: int):
    """(p(x), lo, hi, x*) of a named truth at `players` players."""
    fair = (1 - NOBODY) / players
    if name == "logistic":
        slope = 0.03 / (fair * (1 - fair))            # 3 points of share per unit at x*
        star, lo, hi = 3.4, 0, 8
        return (lambda x: fv.expit(fv.logit(fair) + slope * (x - star))), lo, hi, star
    if name == "linear":
        star, lo, hi = 3.4, 0, 8
        return (lambda x: fair + 0.03 * (x - star)), lo, hi, star
    if name == "steep-ended":
        # -4: about 9 points below fair, -2..0 nearly flat about 2 below, fair at +3.4
        star, lo, hi = 3.4, -4, 4
        return (lambda x: fair + 0.006 * (x - star) - 0.08 * np.exp(-(x - lo) / 0.8)), lo, hi, star
    if name == "non-monotone":
        # rises to a bump at 1.5 (still below fair), falls back by 3, then rises through x*
        star, lo, hi = 5.4, 0, 8
        return (lambda x: fair + 0.03 * (x - star) + 0.1 * np.exp(-((x - 1.5) / 0.9) ** 2)
                - 0.1 * np.exp(-((star - 1.5) / 0.9) ** 2)), lo, hi, star
    raise ValueError(name)


def player(rng, p, players):
    other = (1.0 - NOBODY)

    def play(values, start, count):
        values = np.asarray(values, dtype=float)
        pv = np.clip(p(values), 0.0, other)[None, :]
        common = rng.random((count, 1))
        own = rng.random((count, len(values)))
        u = np.where(rng.random((count, 1)) < SHARED, common, own)
        return np.where(u < pv, 1.0, np.where(u >= other, 1.0 / players, 0.0))
    return play


def coverage_row(name, players, mode, reps, rng) -> dict:
    p, lo, hi, star = truth(name, players)
    target = fv.fair_share(players)
    covered = named = not_monotone = 0
    games = []
    for _ in range(reps):
        play = player(rng, p, players)
        if mode == "single":
            values = fv.grid(lo, hi, 5, True)
            c = fv.fit([(np.asarray(values, float), play(values, 0, SINGLE_GAMES))])
            ans = fv.answer(c, lo, hi, target, integer=True)
        else:
            ans, c, _ = fv.search(play, lo, hi, target, 0.5, WAVE_GAMES, MAX_GAMES,
                                  integer=True)
        covered += any(a <= star <= b for a, b in ans.pieces)
        named += ans.status == "found"
        not_monotone += ans.not_monotone
        games.append(c.games)
    return {"truth": name, "players": players, "mode": mode, "reps": reps,
            "coverage": covered / reps, "named": named / reps,
            "not_monotone": not_monotone / reps, "median_games": float(np.median(games))}


TRUTHS = ("logistic", "linear", "steep-ended", "non-monotone")


def reference(example: Path, values: list[int], games: int, seed: int) -> None:
    """Plain batch play of `example`'s seat question at each value (see the module)."""
    import json

    import core_cy
    from core_cy.play.batch import play_columns
    from pipelines import stats as st

    spec = json.loads(example.read_text())
    b, players = spec["balance"], spec["players"]
    game = core_cy.load(spec["game"])
    seat = b["seat"] % players
    agents = spec["agents"] if isinstance(spec["agents"], list) else [spec["agents"]] * players
    print(f"{example.name}: {spec['game']}, {players} players, {agents[seat]}, seat "
          f"{seat + 1}, {games:,} games a value, seed {seed}")
    for v in values:
        bonus = [0] * players
        bonus[seat] = v
        began = time.process_time()
        cols = play_columns(game, players, {b["option"]: bonus}, agents, seed, 0, games)
        kept = ~np.isin(cols["end_reason"], list(game.safety_end_reasons))
        shares = cols["seat_win_share"][kept]
        diff = shares[:, seat] - (shares.sum(axis=1) - shares[:, seat]) / (players - 1)
        mean, sd = float(diff.mean()), float(diff.std(ddof=1))
        low, high = st.mean_interval(mean, sd, len(diff))
        print(f"  {b['option']} = {v:+d}: {100 * mean:+.2f} points [{100 * low:+.2f}, "
              f"{100 * high:+.2f}] over {len(diff):,} games ({time.process_time() - began:.0f} "
              "CPU-s)", flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", type=Path, help="an example spec: plain play at --values")
    ap.add_argument("--values", default="0")
    ap.add_argument("--games", type=int, default=50_000)
    ap.add_argument("--reference-seed", type=int, default=1000,
                    help="seeds of its own: not the examples' 28 and 29")
    ap.add_argument("--single", type=int, default=2000, help="replicates of a single wave")
    ap.add_argument("--sequential", type=int, default=400, help="replicates of a search")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--truths", default=",".join(TRUTHS))
    ap.add_argument("--players", default="2,3,4")
    args = ap.parse_args(argv)
    if args.reference:
        reference(args.reference, [int(v) for v in args.values.split(",")], args.games,
                  args.reference_seed)
        return 0
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=Path(__file__).resolve().parents[1]).stdout.strip()
    print(f"commit {commit}; nobody wins {NOBODY:.0%}; shared draws {SHARED:.0%}; single wave "
          f"{SINGLE_GAMES:,} games per value; search to +-0.5 from {WAVE_GAMES:,} games per "
          f"value, at most {MAX_GAMES:,}")
    print("| truth | players | mode | replicates | coverage of x* | named a fair value | said "
          "not monotone | median games |")
    print("|---|---|---|---|---|---|---|---|")
    for name in args.truths.split(","):
        for players in (int(k) for k in args.players.split(",")):
            for mode, reps in (("single", args.single), ("sequential", args.sequential)):
                if reps <= 0:
                    continue
                began = time.process_time()
                row = coverage_row(name, players, mode, reps,
                                   np.random.default_rng([args.seed, players, len(name)]))
                print(f"| {name} | {players} | {mode} | {reps} | {100 * row['coverage']:.1f}% | "
                      f"{100 * row['named']:.0f}% | {100 * row['not_monotone']:.0f}% | "
                      f"{row['median_games']:,.0f} |", flush=True)
                print(f"<!-- {time.process_time() - began:.0f} CPU-s -->", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
