"""A plan whose pilot could not play enough games of some cells in its time plans the others
and says which it could not estimate, and why (issue 51: a plan says what it could and
could not estimate, instead of failing whole)."""
import numpy as np
import polars as pl
import pytest

from services import plan as sp
from services.plan import Plan, PilotTooSlow
from services.spec import ExperimentSpec

SPEC = {"name": "p", "game": "maori", "players": [2, 3], "agents": "greedy", "seed": 2,
        "arms": {"base": {}, "pro": {"mode": "pro"}}, "baseline": "base",
        "games_per_arm": 100}


def _frame(players: int, units: int = 200, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed + players)
    wins = rng.integers(0, players, units)
    shares = np.eye(players)[wins]
    return pl.DataFrame({"game_index": np.arange(units),
                         "seat_win_share": shares.tolist()})


def _slow(arm: str, players: int) -> dict:
    return {"arm": arm, "players": players, "games": 3,
            "reason": f"the pilot played only 3 games of arm {arm!r} with {players} players"}


def test_a_cell_without_enough_pilot_games_is_named_and_the_others_are_planned(monkeypatch):
    spec = ExperimentSpec.model_validate(SPEC)

    def pilot(player, spec_, cells, units, seconds, first=0):
        out = {(c.arm, c.players): (_frame(c.players), 1e-3) for c in cells
               if (c.arm, c.players) != ("pro", 3)}
        return out, [_slow("pro", 3)] if len(cells) > 2 else []

    class Quiet:
        def expect(self, *args, **kwargs):
            pass

    monkeypatch.setattr(sp, "_play_pilot", pilot)
    plan = sp.plan_experiment(spec, Quiet(), half_width=0.05, workers=2)
    shown = Plan.model_validate(plan)
    assert [(c.arm, c.players) for c in shown.cells] == [("base", 2), ("base", 3), ("pro", 2)]
    assert [(m.arm, m.players) for m in shown.not_estimated] == [("pro", 3)]
    assert "Not estimated: arm 'pro' with 3 players (the pilot played only 3 games" in \
        shown.verdict and "MEEPLELAB_PLAN_SECONDS" in shown.verdict
    assert shown.total_games == shown.games_per_cell * 4  # the run plays every cell


def test_a_missing_baseline_takes_its_player_counts_differences_with_it():
    spec = ExperimentSpec.model_validate(SPEC)
    pilots = {("pro", 2): (_frame(2), 1e-3), ("base", 3): (_frame(3), 1e-3),
              ("pro", 3): (_frame(3), 1e-3)}
    missing = sp._estimable(spec, pilots, [_slow("base", 2)], "base")
    assert [(m["arm"], m["players"]) for m in missing] == [("base", 2), ("pro", 2)]
    assert "its baseline arm 'base' with 2 players could not be estimated" in \
        missing[1]["reason"]
    assert set(pilots) == {("base", 3), ("pro", 3)}
    with pytest.raises(PilotTooSlow, match="give the plan more time"):
        sp._estimable(spec, {}, [_slow("base", 2), _slow("base", 3)], "base")


def test_one_arm_alone_is_its_own_baseline():
    spec = ExperimentSpec.model_validate({**SPEC, "arms": {"base": {}}})
    pilots = {("base", 3): (_frame(3), 1e-3)}
    assert sp._estimable(spec, pilots, [_slow("base", 2)], "base") == [_slow("base", 2)]
    assert set(pilots) == {("base", 3)}
