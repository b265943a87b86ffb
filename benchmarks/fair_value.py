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
  the crossing;
- steep / logistic / gentle wide (WIDE): logistic curves (25, 3 and 0.5 points a unit)
  through 13.4 in 0..40, wider than the first look plays every integer of.
For each truth and player count: the coverage of x* by the interval of a single wave (the
first look, fair_value.first_look: SINGLE_GAMES x 5 games in all) and by the sequential search (to +-0.5 unit, integer
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
import multiprocessing
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from pipelines import fair_value as fv  # noqa: E402

NOBODY, SHARED = 0.05, 0.7
SINGLE_GAMES = 3000           # games per value of a single wave
WAVE_GAMES, MAX_GAMES = 1000, 400_000


def _logistic(players: int, per_unit: float, star: float):
    """p(x) crossing the fair share at `star`, `per_unit` of share a unit there, logit-linear."""
    fair = (1 - NOBODY) / players
    slope = per_unit / (fair * (1 - fair))
    return lambda x: fv.expit(fv.logit(fair) + slope * (np.asarray(x, dtype=float) - star))


def truth(name: str, players: int):
    """(p(x), lo, hi, x*) of a named truth at `players` players (x*: where p crosses the fair
    share; two crossings: the first; outside the range: beyond it)."""
    fair = (1 - NOBODY) / players
    if name == "logistic":                            # 3 points of share per unit at x*
        return _logistic(players, 0.03, 3.4), 0, 8, 3.4
    if name == "steep":                               # 25 points a unit at x* (issue 52)
        return _logistic(players, 0.25, 3.4), 0, 8, 3.4
    if name == "concave":                             # flattening as it rises: 2.7 a unit at x*
        return (lambda x: fair + 0.08 * (1 - np.exp(-(np.asarray(x, float) - 3.4) / 3))), \
            0, 8, 3.4
    if name.endswith(" wide"):                        # the same over 0..40: a first grid of five
        per_unit = {"steep": 0.25, "logistic": 0.03, "gentle": 0.005}[name.split()[0]]
        return _logistic(players, per_unit, 13.4), 0, 40, 13.4
    if name == "edge":                                # the logistic, crossing near the top
        return _logistic(players, 0.03, 7.6), 0, 8, 7.6
    if name == "outside":                             # ... crossing above the range
        return _logistic(players, 0.03, 9.5), 0, 8, 9.5
    if name == "two crossings":                       # a hump: up through 2.4, down through 6.3
        return (lambda x: fair + 0.04 * (1 - ((np.asarray(x, float) - 4.35) / 1.95) ** 2)), \
            0, 8, 2.4
    if name == "linear":
        star, lo, hi = 3.4, 0, 8
        return (lambda x: fair + 0.03 * (x - star)), lo, hi, star
    if name == "steep-ended":
        # -4: about 9 points below fair, -2..0 nearly flat about 2 below, fair at +3.4
        star, lo, hi = 3.4, -4, 4
        return (lambda x: fair + 0.006 * (x - star) - 0.08 * np.exp(-(x - lo) / 0.8)), lo, hi, star
    if name in ("non-monotone", "bump"):
        # rises to a bump at 1.5 (still below fair), falls back by 3, then rises through x*
        star, lo, hi = 5.4, 0, 8
        return (lambda x: fair + 0.03 * (x - star) + 0.1 * np.exp(-((x - 1.5) / 0.9) ** 2)
                - 0.1 * np.exp(-((star - 1.5) / 0.9) ** 2)), lo, hi, star
    raise ValueError(name)


def fair_values(name: str, players: int) -> tuple[list, str | None]:
    """(values, side): the integer option's true fair values, where the line between the true
    figures at neighbouring integers meets the target (a designer sets integers; between
    them the fair value is that line's, which is what the search estimates), and, when there
    is none in the range, the side of the range the fair value lies on."""
    p, lo, hi, star = truth(name, players)
    xs = np.arange(lo, hi + 1, dtype=float)
    off = np.clip(p(xs), 0.0, 1.0 - NOBODY) - (1 - NOBODY) / players
    out = [float(xs[j] + off[j] / (off[j] - off[j + 1])) for j in range(len(xs) - 1)
           if off[j] < 0 <= off[j + 1] or off[j] > 0 >= off[j + 1]]
    side = None if out else ("above" if off[-1] * (off[-1] - off[0]) < 0 else "below")
    return out, side


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


def covers(ans, values: list, side: str | None) -> float:
    """The share of the true fair values the answer leaves possible; with none in the range,
    1 when the answer says the value lies beyond the range on the right side (or leaves that
    end possible), else 0."""
    if values:
        return float(np.mean([any(a <= x <= b for a, b in ans.pieces) for x in values]))
    if ans.status == "outside_range":
        return float(ans.side == side)
    end = ans.hi if side == "above" else ans.lo
    return float(any(a <= end <= b for a, b in ans.pieces))


def width(ans) -> float:
    """The length of the values still possible (the pieces, within the range)."""
    return float(sum(b - a for a, b in ans.pieces))


IDEAL_GAMES, IDEAL_REPS = 20_000, 200


def ideal_width(name: str, players: int, rng) -> float | None:
    """The mean width of the ideal design's interval at IDEAL_GAMES games: one wave of common
    deals on the integers on either side of each true fair value (where a search that knew
    the answer would play), equal games a value.  None when no fair value is in the range."""
    p, lo, hi, _ = truth(name, players)
    values, _ = fair_values(name, players)
    if not values:
        return None
    ints = sorted({int(np.clip(f(x), lo, hi)) for x in values for f in (np.floor, np.ceil)})
    if len(ints) == 1:
        ints = sorted({ints[0], ints[0] + 1 if ints[0] < hi else ints[0] - 1})
    out = []
    for _ in range(IDEAL_REPS):
        y = player(rng, p, players)(ints, 0, IDEAL_GAMES // len(ints))
        c = fv.fit([(np.asarray(ints, float), y)])
        # the straight lines' interval: two crossings' ideal leaves 4 and 5 unplayed, and
        # taking that curved segment whole (integer=True) is no part of the ideal
        out.append(width(fv.answer(c, lo, hi, fv.fair_share(players))))
    return float(np.mean(out))


def coverage_row(name, players, mode, reps, rng, ideal: float | None = None) -> dict:
    p, lo, hi, star = truth(name, players)
    values, side = fair_values(name, players)
    target = fv.fair_share(players)
    covered = named = not_monotone = 0
    games, ratios, of_star = [], [], 0
    for _ in range(reps):
        play = player(rng, p, players)
        if mode == "single":
            grid, count = fv.first_look(lo, hi, 5, True, SINGLE_GAMES)
            c = fv.fit([(np.asarray(grid, float), play(grid, 0, count))])
            ans = fv.answer(c, lo, hi, target, integer=True)
        else:
            ans, c, _ = fv.search(play, lo, hi, target, 0.5, WAVE_GAMES, MAX_GAMES,
                                  integer=True)
        covered += covers(ans, values, side)
        of_star += any(a <= star <= b for a, b in ans.pieces) if values else covers(ans, [], side)
        named += ans.status == "found"
        not_monotone += ans.not_monotone
        games.append(c.games)
        if ideal and ans.pieces:
            ratios.append(width(ans) / (ideal * np.sqrt(IDEAL_GAMES / c.games)))
    return {"truth": name, "players": players, "mode": mode, "reps": reps,
            "coverage": covered / reps, "coverage_star": of_star / reps, "named": named / reps,
            "not_monotone": not_monotone / reps, "median_games": float(np.median(games)),
            "width_ratio": float(np.median(ratios)) if ratios else None}


TRUTHS = ("logistic", "steep", "concave", "bump", "two crossings", "edge", "outside")
WIDE = ("steep wide", "logistic wide", "gentle wide")   # 0..40: more integers than the first
#                                                        look plays (fair_value.ALL_INTEGERS)


def reference(example: Path, values: list[int], games: int, seed: int) -> None:
    """Plain batch play of `example`'s seat question at each value (see the module)."""
    import json

    import core_cy
    from core_cy.play.batch import play_columns
    from pipelines import stats as st

    spec = json.loads(example.read_text())
    b, players = spec["balance"], spec["players"]
    game = core_cy.load(spec["game"])
    seat = players - 1 if b["seat"] < 0 else b["seat"] - 1    # the spec counts from 1
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


def _row_line(job) -> str:
    name, players, mode, reps, seed = job
    began = time.process_time()
    rng = np.random.default_rng([seed, players, len(name), mode == "single"])
    ideal = ideal_width(name, players, np.random.default_rng([seed, players, len(name), 7]))
    row = coverage_row(name, players, mode, reps, rng, ideal)
    ratio = "-" if row["width_ratio"] is None else f"{row['width_ratio']:.2f}"
    return (f"| {name} | {players} | {mode} | {reps} | {100 * row['coverage']:.1f}% | "
            f"{100 * row['coverage_star']:.1f}% | {100 * row['named']:.0f}% | "
            f"{100 * row['not_monotone']:.0f}% | {row['median_games']:,.0f} | {ratio} | "
            f"<!-- {time.process_time() - began:.0f} CPU-s -->")


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
    ap.add_argument("--workers", type=int, default=1)
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
          f"value, at most {MAX_GAMES:,}; ideal design at {IDEAL_GAMES:,} games, "
          f"{IDEAL_REPS} replicates")
    print("| truth | players | mode | replicates | coverage | coverage of x* | named a fair "
          "value | said not monotone | median games | width / ideal (median) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    jobs = [(name, players, mode, reps, args.seed)
            for name in args.truths.split(",")
            for players in (int(k) for k in args.players.split(","))
            for mode, reps in (("single", args.single), ("sequential", args.sequential))
            if reps > 0]
    with multiprocessing.Pool(args.workers) as pool:
        for line in pool.imap(_row_line, jobs):
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
