"""The Golden Island's cut-off judgement (mcts(judge=fitted)): the features read what the
position says, the chances are the conditional logit of data/leaf_value.json's weights
(checked against a numpy evaluation), they read nothing a seat cannot see, and bad weights
are refused by name."""
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from core_cy import agents
from core_cy.engine.codec import load_data
from core_cy.games.golden_island import engine as golden_island
from core_cy.play import batch
from golden_island_pos import GAME, base, build, give_island_cards, give_pirates, set_permits

FEATURES = golden_island.LEAF_FEATURES


def played(players, seed, moves):
    """A running game after up to `moves` greedy decisions."""
    state = GAME.new(players, seed=seed)
    while not state.is_terminal() and state.num_moves < moves:
        state.apply(agents.choose(state, "greedy", seed=state.num_moves))
    return state


def test_the_engine_holds_the_weights_of_its_data_file():
    data = load_data("core_cy.games.golden_island", "data/leaf_value.json")
    assert golden_island.leaf_weights() == {
        "weights": {k: float(v) for k, v in data["weights"].items()},
        "no_winner": float(data["no_winner"])}
    assert any(v != 0 for v in data["weights"].values())     # fitted, not the blank


def test_features_say_what_the_position_holds():
    d = base(3, seed=5)
    give_pirates(d, 1, "black", "white")
    give_island_cards(d, 1, *[c for c in d["island_deck"][:2]])
    set_permits(d, 1, held=[2, 5], placed=[("T3", 1), ("T7", 4)])
    d["current_player"] = 0
    f = dict(zip(FEATURES, golden_island.leaf_features(build(d))[1]))
    seat = d["seats"][1]
    assert f["pirates"] == 2
    assert f["permits"] == 2 and f["permit_values"] == 7
    assert f["placed"] == 2
    assert f["known"] == len(set(seat["island_cards"]) | set(seat["remembered_islands"]))
    assert f["to_act"] == 0 and golden_island.leaf_features(build(d))[0][FEATURES.index("to_act")] == 1
    unknown = 12 - f["known"]
    on_unknown = sum(1 for isl in ("T3", "T7")
                     if isl not in set(seat["island_cards"]) | set(seat["remembered_islands"]))
    assert f["survive"] == pytest.approx(on_unknown / unknown)
    assert f["survive_late"] == pytest.approx(f["survive"] * 2 / 6)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(2, 4), st.integers(0, 2**31), st.integers(0, 150))
def test_chances_are_the_logit_of_the_weights(players, seed, moves):
    state = played(players, seed, moves)
    if state.is_terminal():
        with pytest.raises(ValueError, match="over"):
            golden_island.leaf_values(state)
        return
    w = golden_island.leaf_weights()
    x = np.asarray(golden_island.leaf_features(state))
    z = np.append(x @ np.array([w["weights"][k] for k in FEATURES]), w["no_winner"])
    want = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    got = golden_island.leaf_values(state)
    assert got == pytest.approx(want[:-1].tolist(), rel=1e-9, abs=1e-12)
    assert all(0.0 <= p <= 1.0 for p in got) and sum(got) <= 1.0 + 1e-12


def test_chances_read_nothing_a_seat_cannot_see():
    """A seat's view redraws what it cannot see: its own features stay as they were."""
    state = played(3, 11, 60)
    seat = state.current_player
    mine = golden_island.leaf_features(state)[seat]
    for k in range(4):
        assert golden_island.leaf_features(GAME.view(state, seat, seed=k))[seat] == mine


@pytest.mark.parametrize("data, field", [
    ({"weights": {k: 0.0 for k in FEATURES if k != "gold"}, "no_winner": 0.0}, "gold"),
    ({"weights": {**{k: 0.0 for k in FEATURES}, "luck": 1.0}, "no_winner": 0.0}, "luck"),
    ({"weights": {**{k: 0.0 for k in FEATURES}, "coin": math.nan}, "no_winner": 0.0}, "coin"),
    ({"weights": {**{k: 0.0 for k in FEATURES}, "relic": "1"}, "no_winner": 0.0}, "relic"),
    ({"weights": {k: 0.0 for k in FEATURES}}, "no_winner"),
    ([], "weights"),
])
def test_bad_weights_are_refused_by_name_and_change_nothing(data, field):
    before = golden_island.leaf_weights()
    with pytest.raises(ValueError, match=field):
        golden_island.set_leaf_weights(data)
    assert golden_island.leaf_weights() == before


def test_the_fitted_judge_changes_the_search_and_plays_legal_games():
    fitted = "mcts(iterations=40, cutoff=4, judge=fitted)"
    a = batch.play_columns(GAME, 3, None, fitted, seed=3, count=3)
    b = batch.play_columns(GAME, 3, None, "mcts(iterations=40, cutoff=4)", seed=3, count=3)
    assert list(a["end_reason"]) == ["sixth_permit"] * 3
    assert not np.array_equal(a["length"], b["length"]) or not np.array_equal(
        a["seat_score"], b["seat_score"])
