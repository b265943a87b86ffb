"""Mondo's cut-off judgement (mcts(judge=fitted)): the features are the heuristic's parts
(the heuristic is their sum with its own weights), the chances are the conditional logit of
data/leaf_value.json's weights over the seats (checked against a numpy evaluation; ties
share, nobody is not an outcome), a seat far ahead is valued higher, bad weights are
refused by name, and the search uses the judgement only where a seat has rivals."""
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from core_cy import agents
from core_cy.engine.codec import load_data
from core_cy.games.mondo import engine as mondo
from core_cy.play import batch
from mondo_pos import GAME, NO_SKILL

FEATURES = mondo.LEAF_FEATURES
# The heuristic's own weights on the features (engine.pyx compose: past rounds + board +
# chip + the chip jumped for + the incoming tile - empty spaces + 1.5 per fillable one).
HEURISTIC = {"banked": 1, "animals": 1, "closed": 2, "errors": -1, "matched": 0.25,
             "volcanoes": 1, "chip": 1, "jump_bonus": 1, "incoming": 1, "empty": -1,
             "fill": 1.5, "round_lines": 0, "late": 0}


def played(players, seed, moves, rules=None):
    """A running game after up to `moves` greedy decisions."""
    state = GAME.new(players, rules, seed=seed)
    while not state.is_terminal() and state.num_moves < moves:
        state.apply(agents.choose(state, "greedy_placer", seed=state.num_moves))
    return state


def numpy_chances(state):
    w = np.array([mondo.leaf_weights()["weights"][k] for k in FEATURES])
    z = np.asarray(mondo.leaf_features(state)) @ w
    e = np.exp(z - z.max())
    return e / e.sum()


def test_the_engine_holds_the_weights_of_its_data_file():
    data = load_data("core_cy.games.mondo", "data/leaf_value.json")
    assert mondo.leaf_weights() == {"weights": {k: float(v) for k, v in data["weights"].items()}}
    assert any(v != 0 for v in data["weights"].values())


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(2, 4), st.integers(0, 2**31), st.integers(0, 480))
def test_the_heuristic_is_the_sum_of_its_features_and_chances_their_logit(players, seed, moves):
    state = played(players, seed, moves)
    if state.is_terminal():
        with pytest.raises(ValueError, match="over"):
            mondo.leaf_values(state)
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
    got = mondo.leaf_values(state)
    assert got == pytest.approx(numpy_chances(state).tolist(), rel=1e-9, abs=1e-12)
    assert sum(got) == pytest.approx(1.0) and all(0.0 < p < 1.0 for p in got)


def test_equal_seats_share_and_a_seat_far_ahead_leads():
    fresh = GAME.new(3, {"timing": NO_SKILL}, seed=4)
    assert mondo.leaf_values(fresh) == pytest.approx([1 / 3] * 3)
    state = played(3, 9, 250)
    d = state.to_dict()
    assert d["round"] >= 1 and not state.is_terminal()
    before = mondo.leaf_values(state)
    d["seats"][1]["round_scores"][0] += 30
    after = mondo.leaf_values(GAME.from_dict(d))
    assert after[1] > before[1] and after[1] == max(after)
    assert after[0] < before[0] and after[2] < before[2]


BAD = [
    ({k: 0.0 for k in FEATURES if k != "fill"}, "fill"),
    ({**{k: 0.0 for k in FEATURES}, "luck": 1.0}, "luck"),
    ({**{k: 0.0 for k in FEATURES}, "errors": math.nan}, "errors"),
    ({**{k: 0.0 for k in FEATURES}, "chip": "1"}, "chip"),
    ({**{k: 0.0 for k in FEATURES}, "late": True}, "late"),
    ([], "weights"),
]


@pytest.mark.parametrize("weights, field", BAD)
def test_bad_weights_are_refused_by_name_and_change_nothing(weights, field):
    before = mondo.leaf_weights()
    with pytest.raises(ValueError, match=field):
        mondo.set_leaf_weights({"weights": weights})
    assert mondo.leaf_weights() == before


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(FEATURES),
       st.one_of(st.none(), st.text(max_size=3), st.booleans(), st.just(math.inf),
                 st.just(-math.nan), st.lists(st.floats(), max_size=2)))
def test_any_weight_that_is_not_a_finite_number_is_refused_by_name(name, junk):
    before = mondo.leaf_weights()
    weights = {**before["weights"], name: junk}
    with pytest.raises(ValueError, match=repr(name)):
        mondo.set_leaf_weights({"weights": weights})
    assert mondo.leaf_weights() == before


def test_finite_weights_are_taken_and_a_failed_load_names_the_file():
    before = mondo.leaf_weights()
    try:
        mondo.set_leaf_weights({"weights": {k: 0 for k in FEATURES}})
        assert mondo.leaf_values(played(3, 2, 60)) == pytest.approx([1 / 3] * 3)
    finally:
        mondo.set_leaf_weights(before)
    assert mondo.leaf_weights() == before
    with pytest.raises(ValueError, match="mine.json"):
        mondo.set_leaf_weights({}, where="mine.json")


def test_the_fitted_judge_changes_the_search_and_plays_legal_games():
    fitted = "mcts(iterations=30, cutoff=6, judge=fitted)"
    a = batch.play_columns(GAME, 3, None, fitted, seed=3, count=2)
    b = batch.play_columns(GAME, 3, None, "mcts(iterations=30, cutoff=6)", seed=3, count=2)
    assert list(a["end_reason"]) == ["rounds_complete"] * 2
    assert not np.array_equal(a["length"], b["length"]) or not np.array_equal(
        a["seat_score"], b["seat_score"])


def test_solo_keeps_the_gain_judgement():
    """One seat has no rival to out-score: judge=fitted plays the margin judge's solo games."""
    a = batch.play_columns(GAME, 1, None, "mcts(iterations=20, cutoff=6, judge=fitted)",
                           seed=5, count=1)
    b = batch.play_columns(GAME, 1, None, "mcts(iterations=20, cutoff=6)", seed=5, count=1)
    for key in ("seat_score", "seat_win_share", "length"):
        assert np.array_equal(a[key], b[key])
