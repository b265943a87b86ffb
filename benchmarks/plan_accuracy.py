"""How close `meeplelab plan` comes to the games a run really needs (issue 11's goal: +-25%).

For each setting: the plan's estimate of games per cell for a target 95% half-width (from its
200-game pilot, seed spec.seed + 1), then the games the precision rule really needed: the
experiment's games are played in steps of `STEP` per cell (what a run with stop_when
half_width and games_per_arm = STEP does) until every win share's Jeffreys half-width is
below the target.  Several experiment seeds show the spread.

    nice -n 10 python benchmarks/plan_accuracy.py            # about a minute on one core
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import core_cy  # noqa: E402
from core_cy import batch  # noqa: E402
from pipelines import stats as st  # noqa: E402
from services.plan import plan_experiment  # noqa: E402
from services.spec import ExperimentSpec  # noqa: E402

STEP = 100
SETTINGS = [
    ("maori 3p greedy, +-2 points", {"game": "maori", "players": 3, "agents": "greedy",
                                     "arms": {"basic": {"mode": "basic"}}}, 0.02),
    ("maori 2p greedy, +-2 points", {"game": "maori", "players": 2, "agents": "greedy",
                                     "arms": {"basic": {"mode": "basic"}}}, 0.02),
    ("desert 3p search novice, +-3 points", {"game": "forbidden_desert", "players": 3,
                                             "agents": "search",
                                             "arms": {"novice": {"difficulty": "novice"}}}, 0.03),
]


def games_needed(spec: ExperimentSpec, half_width: float, limit: int) -> int | None:
    """Games per cell after which every win share (team win rate) of every cell is precise."""
    game = core_cy.load(spec.game)
    worst = 0
    for cell in spec.cells():
        rows = batch.play(game, cell.players, cell.rules, spec.agent_list(cell.players),
                          seed=spec.seed, count=limit)
        shares = np.array(rows.column("seat_win_share").to_pylist(), dtype=np.float64)
        safe = ~np.isin(np.array(rows.column("end_reason").to_pylist()),
                        game.safety_end_reasons)
        shares = shares[safe][:, :1] if game.cooperative else shares[safe]
        for n in range(STEP, len(shares) + 1, STEP):
            part = shares[:n]
            half = st.rate_half_width(part.mean(axis=0), part.var(axis=0), n)
            if np.all(half < half_width):
                worst = max(worst, n)
                break
        else:
            return None
    return worst


def main() -> None:
    print(f"{'setting':<38} {'seed':>4} {'plan':>6} {'needed':>6} {'plan/needed':>11}")
    for label, data, half_width in SETTINGS:
        for seed in (1, 2, 3):
            spec = ExperimentSpec.model_validate({**data, "seed": seed})
            began = time.process_time()
            plan = plan_experiment(spec, half_width=half_width, pilot_games=200, workers=1)
            needed = games_needed(spec, half_width, 3 * plan["games_per_cell"] + STEP)
            ratio = plan["games_per_cell"] / needed if needed else float("nan")
            print(f"{label:<38} {seed:>4} {plan['games_per_cell']:>6} {needed or '-':>6} "
                  f"{ratio:>11.2f}   ({time.process_time() - began:.0f} CPU-s)", flush=True)


if __name__ == "__main__":
    main()
