"""Mondo's cut-off judgement (mcts(judge=fitted)): the features are the heuristic's parts
(the heuristic is their sum with its own weights) and what else the round says, equal seats
share, a seat far ahead is valued higher, and the search uses the judgement only where a
seat has rivals (the chances as the logit of the weights, and bad weights refused by name:
tests/engine/test_leaf_values.py)."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from core_cy import agents
from core_cy.engine.codec import load_data
from core_cy.games.mondo import engine as mondo
from core_cy.play import batch
from mondo_pos import GAME, NO_SKILL

FEATURES = mondo.LEAF_FEATURES
# The heuristic's own weights on the features (engine.pyx compose: past rounds + the board +
# chip + the chip jumped for + the incoming tile - empty spaces + 1.5 per fillable one).
HEURISTIC = {"banked": 1, "board": 1, "chip": 1, "jump_bonus": 1, "incoming": 1, "empty": -1,
             "fill": 1.5, "round_lines": 0, "late": 0}


def played(players, seed, moves, rules=None):
    """A running game after up to `moves` greedy decisions."""
    state = GAME.new(players, rules, seed=seed)
    while not state.is_terminal() and state.num_moves < moves:
        state.apply(agents.choose(state, "greedy_placer", seed=state.num_moves))
    return state


def test_the_engine_holds_the_weights_of_its_data_file():
    data = load_data("core_cy.games.mondo", "data/leaf_value.json")
    assert mondo.leaf_weights() == {"weights": {k: float(v) for k, v in data["weights"].items()}}
    assert any(v != 0 for v in data["weights"].values())


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(2, 4), st.integers(0, 2**31), st.integers(0, 440))
def test_the_heuristic_is_the_sum_of_its_features(players, seed, moves):
    state = played(players, seed, moves)
    if state.is_terminal():
        return
    x = np.asarray(mondo.leaf_features(state))
    h = np.array([HEURISTIC[k] for k in FEATURES])
    heuristic = [state.heuristic(k) for k in range(players)]
    assert x @ h == pytest.approx(heuristic, abs=1e-9)
    d = state.to_dict()
    assert x[:, FEATURES.index("banked")].tolist() == [
        sum(seat["round_scores"][:d["round"]]) for seat in d["seats"]]
    played_share = (d["round"] + min(d["clock"] / 420.0, 1.0)) / 3
    assert x[:, FEATURES.index("late")] == pytest.approx(played_share * np.asarray(heuristic))


def test_equal_seats_share_and_a_seat_far_ahead_leads():
    fresh = GAME.new(3, {"timing": NO_SKILL}, seed=4)
    assert fresh.leaf_values() == pytest.approx([1 / 3] * 3)
    state = played(3, 9, 250)
    d = state.to_dict()
    assert d["round"] >= 1 and not state.is_terminal()
    before = state.leaf_values()
    d["seats"][1]["round_scores"][0] += 30
    after = GAME.from_dict(d).leaf_values()
    assert after[1] > before[1] and after[1] == max(after)
    assert after[0] < before[0] and after[2] < before[2]


def test_solo_keeps_the_gain_judgement():
    """One seat has no rival to out-score: judge=fitted plays the margin judge's solo games."""
    a = batch.play_columns(GAME, 1, None, "mcts(iterations=20, cutoff=6, judge=fitted)",
                           seed=5, count=1)
    b = batch.play_columns(GAME, 1, None, "mcts(iterations=20, cutoff=6)", seed=5, count=1)
    for key in ("seat_score", "seat_win_share", "length"):
        assert np.array_equal(a[key], b[key])
