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
