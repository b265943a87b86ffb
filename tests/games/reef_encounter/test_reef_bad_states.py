"""Reef Encounter states from outside: from_dict refuses a state no play reaches, naming the
field, where the engine would otherwise misbehave (issue 27 item 8; the property test over
every game is tests/engine/test_from_dict_props.py)."""
import random

import pytest

from reef_pos import FINAL_PASS, GAME, counts, position


def refused(d, field, words=""):
    with pytest.raises(ValueError, match=field) as err:
        GAME.from_dict(d)
    assert words in str(err.value)


def test_a_shrimp_off_the_playable_cells_or_on_another_shrimp_is_named_as_such():
    d = position(rules={"boards": {f"r{i}": ["++++"] for i in range(4)}})
    d["boards"][0]["shrimps"] = [[3, 3, 0]]
    d["seats"][0]["shrimps_behind_screen"] -= 1
    refused(d, r"state.boards\[0\].shrimps\[0\]", "cell (3, 3) is not a playable cell")
    d = position(polyps={(0, 0): "W"})
    d["boards"][0]["shrimps"] = [[0, 0, 0], [0, 0, 1]]
    for seat in d["seats"]:
        seat["shrimps_behind_screen"] -= 1
    refused(d, r"state.boards\[0\].shrimps\[1\]", "cell (0, 0) already holds a shrimp")


def test_an_open_sea_pile_holds_at_most_three_polyps():
    d = position(open_sea={"white": {"pink": 3, "grey": 3}})
    refused(d, r"state.open_sea\[0\].polyps", "6 polyps")


def test_a_running_open_sea_space_holds_its_cube_and_a_polyp():
    d = position(open_sea={"white": {}})
    refused(d, r"state.open_sea\[0\].polyps", "0 polyps")
    d = position()
    d["open_sea"][1]["cube"] = False
    d["larva_supply"]["yellow"] += 1
    refused(d, r"state.open_sea\[1\].cube")


def final_round(**kw):
    """Seat 0 covered the last tile in a 3-player game: seat 1 has the first final turn."""
    d = position(players=3, phase="final", current=1, **kw)
    d.update(ender=0, final_left=2, end_pending="all_tiles_covered")
    return d


def test_the_final_round_counts_its_turns_left():
    state = GAME.from_dict(final_round())
    state.apply(FINAL_PASS)
    state.apply(FINAL_PASS)
    assert state.is_terminal()
    d = final_round()
    d["final_left"] = 0                              # would never end (-1, -2, ... passes)
    refused(d, "state.final_left", "expected 1..2 final turns left")
    d = final_round()
    d["current_player"] = 2
    refused(d, "state.current_player", "seat 1 plays")
    d = final_round()
    d["ender"] = None
    refused(d, "state.ender")
    d = final_round()
    d["end_pending"] = "reef_full"
    refused(d, "state.end_pending")
    d = position()
    d["final_left"] = 1
    refused(d, "state.final_left", "only a final round")


def finished():
    state = GAME.new(2, seed=3)
    rng = random.Random(3)
    while not state.is_terminal():
        state.apply(rng.choice(state.legal_actions()))
    return state.to_dict()


def test_a_finished_games_results_are_its_scoring_not_taken_as_given():
    d = finished()
    assert GAME.from_dict(d).to_dict() == d
    d["seats"][0]["score"] = 999
    refused(d, r"state.seats\[0\].score", "scoring of this finished position")
    d = finished()
    d["seats"][0]["win_share"], d["seats"][1]["win_share"] = (d["seats"][1]["win_share"],
                                                              d["seats"][0]["win_share"])
    if d["seats"][0]["win_share"] != d["seats"][1]["win_share"]:
        refused(d, r"state.seats\[0\].win_share")


def test_a_running_game_has_no_results_yet():
    d = position()
    d["seats"][1]["score"] = 3
    refused(d, r"state.seats\[1\].score", "no results yet")
    d = position()
    d["seats"][0]["win_share"] = 1.0
    refused(d, r"state.seats\[0\].win_share", "no results yet")


def test_an_end_pending_needs_end_stops_turn_off():
    d = position()
    d["end_pending"] = "reef_full"
    refused(d, "state.end_pending", "end_stops_turn off")
    d = position(rules={"end_stops_turn": False})
    d["end_pending"] = "reef_full"
    assert GAME.from_dict(d).to_dict()["end_pending"] == "reef_full"


def test_a_seat_that_cannot_drop_a_polyp_in_its_fish_is_a_dead_state():
    d = position(phase="fish", seats=[{"screen": counts()}, {"screen": counts(white=1)}])
    refused(d, "state", "no action is legal")
