"""The Golden Island's cut-off judgement (mcts(judge=fitted)): the features read what the
position says and nothing a seat cannot see (the chances as the logit of the weights, and bad
weights refused by name: tests/engine/test_leaf_values.py)."""
import pytest

from core_cy import agents
from core_cy.engine.codec import load_data
from core_cy.games.golden_island import engine as golden_island
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


def test_chances_read_nothing_a_seat_cannot_see():
    """A seat's view redraws what it cannot see: its own features stay as they were."""
    state = played(3, 11, 60)
    seat = state.current_player
    mine = golden_island.leaf_features(state)[seat]
    for k in range(4):
        assert golden_island.leaf_features(GAME.view(state, seat, seed=k))[seat] == mine
