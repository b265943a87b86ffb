"""The engines' leaf values (Engine.leaf_values, the search's cut-off judgement with
mcts(judge=fitted); State.leaf_values): in every game that has them, each seat's chance is
the conditional logit of the game's fitted weights (data/leaf_value.json) over its leaf
features, checked against a numpy evaluation (with "nobody wins" where the game has it);
bad weights are refused by name and change nothing; a game without them says so."""
import importlib
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import core_cy
from core_cy import agents
from core_cy.engine.codec import leaf_weight_values
from core_cy.play import batch

# The games whose engines judge a cut-off by fitted chances, and a cheap agent of each.
GREEDY = {"golden_island": "greedy", "mondo": "greedy_placer"}
MOVES = {"golden_island": 150, "mondo": 480}


def engine(name):
    return importlib.import_module(f"core_cy.games.{name}.engine")


def played(name, players, seed, moves):
    state = core_cy.load(name).new(players, seed=seed)
    while not state.is_terminal() and state.num_moves < moves:
        state.apply(agents.choose(state, GREEDY[name], seed=state.num_moves))
    return state


@settings(max_examples=24, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(GREEDY)), st.integers(2, 4), st.integers(0, 2**31),
       st.floats(0.0, 1.1))
def test_chances_are_the_logit_of_the_weights(name, players, seed, progress):
    state = played(name, players, seed, int(progress * MOVES[name]))
    if state.is_terminal():
        with pytest.raises(ValueError, match="while the game runs"):
            state.leaf_values()
        return
    eng = engine(name)
    w = eng.leaf_weights()
    z = np.asarray(eng.leaf_features(state)) @ np.array([w["weights"][k] for k in eng.LEAF_FEATURES])
    z = np.append(z, w.get("no_winner", -np.inf))
    want = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    got = state.leaf_values()
    assert got == pytest.approx(want[:-1].tolist(), rel=1e-9, abs=1e-12)
    assert all(0.0 < p < 1.0 for p in got)
    assert sum(got) == pytest.approx(1.0) if "no_winner" not in w else sum(got) < 1.0


@pytest.mark.parametrize("name, ending", [("golden_island", "sixth_permit"),
                                          ("mondo", "rounds_complete")])
def test_the_fitted_judge_changes_the_search_and_plays_whole_games(name, ending):
    game = core_cy.load(name)
    a = batch.play_columns(game, 3, None, "mcts(iterations=30, cutoff=4, judge=fitted)",
                           seed=3, count=2)
    b = batch.play_columns(game, 3, None, "mcts(iterations=30, cutoff=4)", seed=3, count=2)
    assert list(a["end_reason"]) == [ending] * 2
    assert not np.array_equal(a["length"], b["length"]) or not np.array_equal(
        a["seat_score"], b["seat_score"])


def test_a_game_without_leaf_values_says_so():
    with pytest.raises(ValueError, match="maori has no leaf values"):
        core_cy.load("maori").new(3, seed=1).leaf_values()


def bad_cases(name):
    eng = engine(name)
    good = eng.leaf_weights()
    first, last = eng.LEAF_FEATURES[0], eng.LEAF_FEATURES[-1]
    return [
        ({**good, "weights": {k: v for k, v in good["weights"].items() if k != first}}, first),
        ({**good, "weights": {**good["weights"], "luck": 1.0}}, "luck"),
        ({**good, "weights": {**good["weights"], first: math.nan}}, first),
        ({**good, "weights": {**good["weights"], last: "1"}}, last),
        ({**good, "weights": {**good["weights"], last: True}}, last),
        ({**good, "weights": []}, "weights"),
        ([], "weights"),
    ] + [({k: v for k, v in good.items() if k != extra}, extra)
         for extra in good if extra != "weights"]


@pytest.mark.parametrize("name, data, field",
                         [(n, d, f) for n in sorted(GREEDY) for d, f in bad_cases(n)])
def test_bad_weights_are_refused_by_name_and_change_nothing(name, data, field):
    eng = engine(name)
    before = eng.leaf_weights()
    with pytest.raises(ValueError, match=field):
        eng.set_leaf_weights(data)
    assert eng.leaf_weights() == before
    with pytest.raises(ValueError, match="mine.json"):
        eng.set_leaf_weights(data, where="mine.json")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from("abcdef"), min_size=1, max_size=4, unique=True),
       st.data())
def test_weights_are_taken_exactly_when_every_one_is_a_finite_number(names, data):
    features = tuple(names)
    values = {k: data.draw(st.one_of(st.floats(allow_nan=True), st.integers(-5, 5),
                                     st.none(), st.booleans(), st.text(max_size=2)), label=k)
              for k in features}
    bad = [k for k in features if isinstance(values[k], bool)
           or not isinstance(values[k], (int, float)) or not math.isfinite(values[k])]
    if not bad:
        assert leaf_weight_values({"weights": values}, features, (), "w") == [
            float(values[k]) for k in features]
    else:
        with pytest.raises(ValueError, match=repr(bad[0])):
            leaf_weight_values({"weights": values}, features, (), "w")
