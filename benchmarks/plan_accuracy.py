"""How close `meeplelab plan` comes to the games a run really needs (issue 11's goal: +-25%).

For each setting, a spec with stop_when {half_width} and waves of games_per_arm (`STEP`, or a
multiple of the player count with pairing 'rotations'): the plan's estimate of games per cell
(from its 200-game pilot, seed spec.seed + 1; rounded up to whole waves, as the run stops
only between waves), then the games the precision rule really needed: the experiment's games
are played wave by wave until every win share's interval's half-width is below the target (with
rotations: over the deals, each the mean of its games, as pipelines computes it).  Several experiment seeds
show the spread.

    nice -n 10 python -m benchmarks.plan_accuracy            # about a minute on one core
"""
from __future__ import annotations

import tempfile
import time

import numpy as np


import core_cy  # noqa: E402
from core_cy.play import batch  # noqa: E402
from pipelines import stats as st  # noqa: E402
from services.plan import plan_experiment  # noqa: E402
from services.runner import Player  # noqa: E402
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
    ("desert 4p planner normal, +-1 point", {"game": "forbidden_desert", "players": 4,
                                             "agents": "planner",
                                             "arms": {"normal": {"difficulty": "normal"}}}, 0.01),
    ("maori 3p rotations mixed, +-2 points", {"game": "maori", "players": 3,
                                              "agents": ["mcts(iterations=10)", "greedy",
                                                         "greedy"], "pairing": "rotations",
                                              "games_per_arm": 102,
                                              "arms": {"basic": {"mode": "basic"}}}, 0.02),
]


def games_needed(spec: ExperimentSpec, half_width: float, limit: int) -> int | None:
    """Games per cell after which every win share (team win rate) of every cell is precise
    (the precision rule, st.precise_enough)."""
    game = core_cy.load(spec.game)
    worst = 0
    step = spec.games_per_arm  # one wave
    limit = -(-limit // step) * step
    for cell in spec.cells():
        k = spec.games_per_deal(cell.players)
        rows = batch.play(game, cell.players, cell.rules, spec.agent_list(cell.players, cell),
                          seed=spec.seed, count=limit, rotate=spec.rotates(),
                          games_per_deal=k)
        shares = np.array(rows.column("seat_win_share").to_pylist(), dtype=np.float64)
        safe = ~np.isin(np.array(rows.column("end_reason").to_pylist()),
                        game.safety_end_reasons)
        shares = shares[:, :1] if game.cooperative else shares
        for n in range(step, limit + 1, step):
            # the units: the games that count, or the deals whose every game counts
            whole = safe[:n].reshape(-1, k).all(axis=1)
            part = shares[:n].reshape(-1, k, shares.shape[1]).mean(axis=1)[whole]
            rate = part.mean(axis=0)
            low, high = st.rate_interval(rate, part.var(axis=0), len(part))
            if np.all(st.precise_enough(rate, low, high, len(part), half_width)):
                worst = max(worst, n)
                break
        else:
            return None
    return worst


def main() -> None:
    print(f"{'setting':<38} {'seed':>4} {'plan':>6} {'needed':>6} {'plan/needed':>11}")
    for label, data, half_width in SETTINGS:
        for seed in (1, 2, 3):
            spec = ExperimentSpec.model_validate({
                "games_per_arm": STEP, **data, "seed": seed,
                "stop_when": {"half_width": half_width, "max_games": 3_000_000}})
            began = time.process_time()
            with tempfile.TemporaryDirectory() as folder:
                pilot = Player(spec.game, folder, "pilot", seed=spec.seed)
                plan = plan_experiment(spec, pilot, half_width=half_width, pilot_games=200,
                                       workers=1)
            needed = games_needed(spec, half_width, 3 * plan["games_per_cell"] + STEP)
            ratio = plan["games_per_cell"] / needed if needed else float("nan")
            print(f"{label:<38} {seed:>4} {plan['games_per_cell']:>6} {needed or '-':>6} "
                  f"{ratio:>11.2f}   ({time.process_time() - began:.0f} CPU-s)", flush=True)


if __name__ == "__main__":
    main()
