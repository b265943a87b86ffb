"""The Golden Island: bad rule data and bad state dicts raise ValueError naming the field;
the 7-permit counts like any other once placed (spec 8.14)."""
import copy

import pytest

from golden_island_pos import (GAME, ABILITY, LAND, base, build, give_pirates, set_hand,
                               set_permits, LANDING_2)


@pytest.mark.parametrize("rules,field", [
    ({"nest_spaces": [{"kind": "lighthouse"}, {"kind": "lighthouse"}, {"kind": "permit"}]},
     "nest_spaces"),
    ({"nest_spaces": [{"kind": "lighthouse"}, {"kind": "pirates"}, {"kind": "permit"}]},
     r"nest_spaces'\[1\].colour"),
    ({"sea_graph": {"edges": [["H", "T1"]]}}, "cannot be reached from the harbour"),
    ({"sea_graph": {"edges": [["H", "T99"]]}}, r"sea_graph'.edges\[0\]"),
    ({"deck_table": [{"ability": "landing", "move": 9, "symbol": False}]}, r"deck_table'\[0\].move"),
    ({"deck_table": [{"ability": "juggler", "move": 1, "symbol": False}]}, "ability"),
    ({"chest_values": [5] * 11}, "chest_values"),
    ({"relic_gold": [2, 2, 2]}, "relic_gold"),
    ({"island_colours": {"T1": "black"}}, "island_colours"),
    ({"recall_error_per_mille": 1001}, "recall_error_per_mille"),
])
def test_bad_rule_data_names_the_option(rules, field):
    with pytest.raises(ValueError, match=field):
        GAME.new(3, rules=rules)


def test_bad_state_dicts_name_the_path_and_change_nothing():
    d = base(3, seed=2)
    cases = []
    x = copy.deepcopy(d)
    x["seats"][1]["pirates"]["black"] = 1                      # one pirate too many
    cases.append((x, "pirates per colour"))
    x = copy.deepcopy(d)
    x["island_deck"].append(x["seats"][0]["island_cards"][0])  # a card in two places
    cases.append((x, "is also"))
    x = copy.deepcopy(d)
    x["seats"][2]["permits_held"] = [7]
    cases.append((x, r"state.seats\[2\]: permits"))
    x = copy.deepcopy(d)
    x["seats"][0]["remembered_islands"] = [x["golden_island"]]
    cases.append((x, "nobody has seen the Golden Island"))
    x = copy.deepcopy(d)
    x["seats"][0]["ship"] = "T4"
    x["seats"][0]["captain"] = 3
    cases.append((x, "the ship may be away only while the captain is on the lighthouse"))
    x = copy.deepcopy(d)
    x["islands"][3]["permits"] = [[0, 2], [0, 3]]
    cases.append((x, r"state.islands\[3\].permits\[1\]: seat 0 has two permits"))
    x = copy.deepcopy(d)
    x["phase"] = "bidding"
    cases.append((x, r"state.phase: expected one of"))
    for bad, message in cases:
        with pytest.raises(ValueError, match=message):
            GAME.from_dict(bad)
    assert GAME.from_dict(d).to_dict() == d


def test_the_seven_counts_as_a_sixth_permit():
    d = base(3, seed=4)
    d["phase"] = "ability"
    set_hand(d, 0, [LANDING_2])
    give_pirates(d, 0, "black")
    set_permits(d, 0, held=[7], pool=[6],
                placed=[("T1", 1), ("T2", 2), ("T3", 3), ("T4", 4), ("T6", 5)])
    d["seats"][0]["ship"] = "T5"
    state = build(d)
    state.apply(ABILITY(0, LAND(7, "black")))
    assert state.to_dict()["end_trigger"] == 0


def refused(d, field, words=""):
    with pytest.raises(ValueError, match=field) as err:
        GAME.from_dict(d)
    assert words in str(err.value)


def test_phase_copy_needs_an_opponent_with_a_discard_pile():
    d = base(3, seed=2)
    d["phase"] = "copy"
    d["copy_target"] = 1                       # seat 1 has discarded nothing yet
    refused(d, "state.copy_target", "discard pile is empty")
    d["copy_target"] = 0
    refused(d, "state.copy_target", "an opponent")


def finished(players=3, seed=4):
    import random
    state = GAME.new(players, seed=seed)
    rng = random.Random(seed)
    while not state.is_terminal():
        state.apply(rng.choice(state.legal_actions()))
    return state.to_dict()


def test_a_running_game_holds_no_gold_lines_they_would_count_twice():
    d = base(3, seed=2)
    d["seats"][0]["gold"]["chests"] = 5
    refused(d, r"state.seats\[0\].gold", "no results yet")
    for key, value in (("bank_short", True), ("golden_coin_owner", 1)):
        d = base(3, seed=2)
        d[key] = value
        refused(d, f"state.{key}", "no results yet")
    d = base(3, seed=2)
    d["islands"][0]["chest_owner"] = 1
    refused(d, r"state.islands\[0\].chest_owner")


def test_a_finished_games_gold_is_its_scoring_not_taken_as_given():
    d = finished()
    assert GAME.from_dict(d).to_dict() == d
    bad = copy.deepcopy(d)
    bad["seats"][1]["gold"]["total"] += 10
    refused(bad, r"state.seats\[1\].gold", "scoring of this finished position")
    bad = copy.deepcopy(d)
    bad["bank_short"] = not bad["bank_short"]
    refused(bad, "state.bank_short")
    bad = copy.deepcopy(d)
    bad["phase"] = "ability"
    refused(bad, "state.phase", "finished game")
