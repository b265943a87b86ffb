"""How often the fair-value answer's recommendation (services/balance.py, issue 52 item 3) is
right, on known truths played through the product's own search, confirmation and
reconciliation (services.balance.run_fair_value, its games simulated).

    nice -n 19 python benchmarks/recommendation.py [--reps 200] [--seed 1] [--confirm 3000]

A 3-player seat question (Reef Encounter's last seat, seat_bonus_polyps in -4..8, the
spec's other fields as REEF): the last seat's figure at value v is points(v), a straight line
through 0 at x* with a slope in points a unit (TRUTHS); another seat wins every game it does
not.  Each replicate is the whole answer on seeds of its own.  Per truth: the share of answers
of each verdict, how often a 'give v' names a v that is truly fair within +-delta
(|points(v)| <= delta), how often 'between a and b' is true (both off by more than delta, on
either side), and the mean games played (search + confirming).
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from services import balance as sb  # noqa: E402
from services.spec import ExperimentSpec  # noqa: E402

PLAYERS = 3
REEF = {"name": "reef", "game": "reef_encounter", "players": PLAYERS, "agents": "greedy",
        "balance": {"option": "seat_bonus_polyps", "seat": -1, "range": [-4, 8],
                    "wave_games": 400, "max_games": 20_000, "confirm_games": 3000}}
TRUTHS = {                          # (points a unit, x*)
    "gentle, 4 fair": (4.5, 3.9),   # 4: -0.45 points, 3: -4.05 (delta 2)
    "flat, 3 and 4 fair": (1.5, 3.4),
    "steep, none fair": (9.0, 3.5),  # 3 and 4 both 4.5 points off
    "outside the range": (2.0, 9.5),
}


def win_chance(points: float) -> float:
    """The last seat's win chance whose figure (its share less the others' mean) is `points`
    at 3 players, nobody else but one other seat winning."""
    return 1 / PLAYERS + points / 100 / 1.5


class Truth:
    """Plays parts as services.balance._play would, from a known truth: points(value, agent)
    -> the seat's figure in points; game i of a seed is dealt the same at every value (common
    deals), and a part played again with more games keeps its first ones.  `games`: per arm,
    the games played."""

    def __init__(self, points):
        self.points, self.games = points, {}

    def __call__(self, player, spec, parts):
        out = []
        for part in parts:
            value = part.cell.rules[spec.balance.option][-1]
            agent = part.play["agents"][-1]
            u = np.random.default_rng(part.seed).random(part.start + part.count)[part.start:]
            shares = np.zeros((part.count, part.cell.players))
            won = u < win_chance(self.points(value, agent))
            shares[won, -1], shares[~won, 0] = 1.0, 1.0
            self.games[part.cell.arm] = max(self.games.get(part.cell.arm, 0),
                                            part.start + part.count)
            out.append({"seat_win_share": shares})
        return out


class Quiet:
    """A stand-in for the runner's Player: the progress is not shown, nothing is timed."""

    cpu_seconds = 0.0

    def expect(self, *args, **kwargs):
        pass


def answer(spec, points) -> tuple[dict, Truth]:
    """run_fair_value of `spec` with its games simulated from `points` (services.balance's
    _play replaced while it runs)."""
    truth, kept = Truth(points), sb._play
    sb._play = truth
    try:
        return sb.run_fair_value(spec, Quiet()), truth
    finally:
        sb._play = kept


def row(name: str, reps: int, seed: int, raw: dict = REEF) -> dict:
    slope, star = TRUTHS[name]
    points = lambda v: slope * (v - star)  # noqa: E731
    delta = 100 * ExperimentSpec.model_validate(raw).balance.delta   # in points
    counts: dict = {}
    right = {"give": 0, "between": 0, "outside": 0}
    games = 0
    for r in range(reps):
        spec = ExperimentSpec.model_validate({**raw, "seed": seed * 100_000 + 2 * r})
        result, _ = answer(spec, lambda v, agent: points(v))
        (cell,) = result["cells"]
        rec = cell["recommendation"]
        counts[rec["verdict"]] = counts.get(rec["verdict"], 0) + 1
        games += cell["games"] + sum(c["games"] for c in cell["confirmations"])
        if rec["verdict"] == "give":
            right["give"] += abs(points(rec["value"])) <= delta
        elif rec["verdict"] == "between":
            a, b = rec["values"]
            right["between"] += points(a) < -delta and points(b) > delta
        elif rec["verdict"] == "outside":
            right["outside"] += all(abs(points(v)) > delta for v in range(-4, 9))
    return {"counts": counts, "right": right, "games": games / reps}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--confirm", type=int, default=REEF["balance"]["confirm_games"],
                    help="balance.confirm_games (the answer's budget: max_games + twice it)")
    args = ap.parse_args(argv)
    raw = {**REEF, "balance": {**REEF["balance"], "confirm_games": args.confirm}}
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=ROOT).stdout.strip()
    print(f"commit {commit}; {args.reps} answers a truth; {raw['balance']}")
    print("| truth | give | give right | between | between right | outside | outside right "
          "| undecided | mean games |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in TRUTHS:
        got = row(name, args.reps, args.seed, raw)
        c, ok = got["counts"], got["right"]

        def share(k):
            return f"{100 * c.get(k, 0) / args.reps:.1f}%"

        def of(k):
            return f"{ok[k]}/{c.get(k, 0)}"
        print(f"| {name} | {share('give')} | {of('give')} | {share('between')} | "
              f"{of('between')} | {share('outside')} | {of('outside')} | {share('undecided')} "
              f"| {got['games']:,.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
