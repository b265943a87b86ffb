"""Reef Encounter's engine policy `quick` (a cheap rollout policy for the search): it plays a
legal action in every reached state, the same seed gives the same choice, and it decides only
from what the acting seat sees (that it beats random play: test_reef_properties.py)."""
from hypothesis import HealthCheck, given, settings, strategies as st

from core_cy import agents
from agent_checks import play_checking
from test_reef_properties import GAME, hidden_twin, mid_game

RULE_ENDS = ("all_tiles_covered", "fourth_shrimp", "reef_full", "supply_exhausted")


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(2, 4), st.integers(0, 2**32), st.booleans(), st.integers(0, 1),
       st.sampled_from(["action", "placement"]))
def test_quick_plays_a_legal_action_in_every_reached_state(players, seed, no_growth, min_polyps,
                                                          full_check):
    rules = {"advanced_no_extra_growth": no_growth, "larva_play_min_polyps": min_polyps,
             "reef_full_check": full_check}
    state = play_checking(GAME.new(players, rules=rules, seed=seed), "quick")
    assert state.to_dict()["end_reason"] in RULE_ENDS


def test_quick_decides_from_what_the_seat_sees():
    """Twin states that differ only in a rival's hidden screen and fish and in the future
    chance give the same quick choices and the same search with quick rollouts."""
    for moves in (60, 90, 130):
        d = mid_game(moves=moves).to_dict()
        seat = d["current_player"]
        a, b = GAME.from_dict(d), GAME.from_dict(hidden_twin(d, (seat + 1) % 3))
        assert a != b
        for k in range(5):
            assert agents.choose(a, "quick", seed=k) == agents.choose(b, "quick", seed=k)
        search = "mcts(iterations=30, rollout=quick, cutoff=8)"
        assert agents.search_visits(a, search, seed=1) == agents.search_visits(b, search, seed=1)
