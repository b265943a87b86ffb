"""The Golden Island: the default component data equal the spec's tables (sections 2.2-2.7),
and each data option is what the engine plays (a change to it changes the game)."""
from collections import Counter

import pytest

from golden_island_pos import (GAME, ABILITY, LAND, IMITATE, PASS, base, build, give_pirates,
                               set_hand, set_permits, LANDING_2, IMITATOR)
from test_golden_island_rules_end import final_turn, place, score

RULES = GAME.resolve_rules({}, 2)


def test_nest_ring_is_the_spec_table():
    kinds = [sp["kind"] + ("/" + sp["colour"] if "colour" in sp else "")
             for sp in RULES["nest_spaces"]]
    assert kinds == ["lighthouse", "island_card", "pirates/black", "permit", "gamble",
                     "pirates/white", "island_card", "pirates/purple", "permit", "gamble",
                     "pirates/natural", "island_card"]


def test_sea_graph_is_the_spec_graph_with_its_distances():
    edges = RULES["sea_graph"]["edges"]
    assert len(edges) == 24
    dist = {"H": 0}
    frontier = ["H"]
    while frontier:
        nxt = []
        for node in frontier:
            for a, b in edges:
                for u, v in ((a, b), (b, a)):
                    if u == node and v not in dist:
                        dist[v] = dist[node] + 1
                        nxt.append(v)
        frontier = nxt
    by_distance = {}
    for node, k in dist.items():
        by_distance.setdefault(k, set()).add(node)
    assert by_distance == {0: {"H"}, 1: {"T1", "T2", "T3"}, 2: {"VL", "T4", "T5", "T6"},
                           3: {"T7", "T8", "T9"}, 4: {"T10", "T11", "T12"}, 5: {"VU"}}
    assert sorted(map(sorted, edges)) == sorted(map(sorted, [
        ["H", "T1"], ["H", "T2"], ["H", "T3"], ["T1", "T2"], ["T2", "T3"], ["T1", "VL"],
        ["VL", "T4"], ["T1", "T4"], ["T2", "T5"], ["T3", "T6"], ["T4", "T5"], ["T5", "T6"],
        ["T4", "T7"], ["T5", "T8"], ["T6", "T9"], ["T7", "T8"], ["T8", "T9"], ["T7", "T10"],
        ["T8", "T11"], ["T9", "T12"], ["T10", "T11"], ["T11", "T12"], ["T10", "VU"],
        ["T12", "VU"]]))


def test_deck_is_the_spec_table():
    deck = RULES["deck_table"]
    assert Counter(c["ability"] for c in deck) == {
        "landing": 6, "thief": 2, "master_thief": 1, "fortune_teller": 2, "pirate": 2,
        "veteran_pirate": 2, "imitator": 1}
    assert Counter(c["move"] for c in deck) == {1: 2, 2: 3, 3: 4, 4: 3, 5: 2, "lighthouse": 2}
    assert sum(c["symbol"] for c in deck) == 6


def test_colours_chests_and_relic_gold_are_the_spec_values():
    assert list(RULES["island_colours"].values()) == ["black", "white", "purple", "natural"] * 3
    assert sorted(RULES["chest_values"]) == [4, 4, 5, 5, 5, 6, 6, 6, 7, 7, 8, 8]
    assert RULES["relic_gold"] == [2, 2, 2, 2]


def test_island_colours_option_decides_the_single_landing_pirate():
    colours = dict(RULES["island_colours"], T5="white")
    d = base(4, seed=5, rules={"island_colours": colours})
    set_hand(d, 0, [LANDING_2])
    d["seats"][0]["ship"] = "T5"
    d["phase"] = "ability"
    give_pirates(d, 0, "white")
    set_permits(d, 0, held=[3])
    assert build(d).legal_actions() == [PASS, ABILITY(0, LAND(3, "white"))]


def test_relic_gold_option_is_what_a_relic_scores():
    d = final_turn(golden="T3", rules={"relic_gold": [2, 5, 2, 2]})
    place(d, "T3", 5, (0, 6))
    d["relics_free"].remove("R2")
    d["seats"][0]["relic"] = "R2"
    line = score(d).score_breakdown()[0]
    assert line["relic"] == 5 and line["total"] == 5 + 5 + 3


def test_deck_table_option_is_the_deck_every_seat_plays():
    deck = [{"ability": "fortune_teller", "move": 1, "symbol": False}] * 6
    d = base(2, seed=2, rules={"deck_table": deck})
    for s in d["seats"]:
        assert sorted(s["deck"] + s["hand"]) == list(range(6)) and len(s["hand"]) == 4
    state = build(d)
    assert GAME.actions.kind_of(state.legal_actions()[0]) == "move"
    assert "fortune_teller, 1" in state.describe(state.legal_actions()[0])


def test_seat_decks_option_gives_each_colour_its_own_deck():
    # Seat 1 (yellow) plays six fortune tellers; seat 0 keeps the spec's deck.
    tellers = [{"ability": "fortune_teller", "move": 1, "symbol": False}] * 6
    decks = [RULES["deck_table"], tellers, RULES["deck_table"], RULES["deck_table"]]
    d = base(2, seed=2, rules={"seat_decks": decks})
    assert len(d["seats"][0]["deck"] + d["seats"][0]["hand"]) == 16
    assert sorted(d["seats"][1]["deck"] + d["seats"][1]["hand"]) == list(range(6))
    assert GAME.from_dict(d).to_dict() == d
    # Seat 0's Imitator copies seat 1's top discard, card 0: a fortune teller there (in
    # seat 0's own deck card 0 is a landing card, useless in the harbour).
    set_hand(d, 0, [IMITATOR])
    d["seats"][1]["hand"] = sorted(d["seats"][1]["hand"] + d["seats"][1]["discard"]
                                   + d["seats"][1]["deck"])[1:5]
    d["seats"][1]["deck"] = [c for c in range(1, 6) if c not in d["seats"][1]["hand"]]
    d["seats"][1]["discard"] = [0]
    d["phase"] = "ability"
    state = build(d)
    state.apply(ABILITY(0, IMITATE(1)))
    assert [GAME.actions.kind_of(a) for a in state.legal_actions()] == ["peek"] * 12
    same = base(2, seed=2, rules={"seat_decks": [RULES["deck_table"]] * 4})
    assert same["rules"]["seat_decks"] == []        # four equal decks: the deck_table game


def test_seat_decks_must_name_every_colour():
    with pytest.raises(ValueError, match="seat_decks' must be a list"):
        GAME.new(2, rules={"seat_decks": {}})
    with pytest.raises(ValueError, match="seat_decks"):
        GAME.new(2, rules={"seat_decks": [RULES["deck_table"]] * 2})
    with pytest.raises(ValueError, match=r"seat_decks'\[1\]"):
        GAME.new(2, rules={"seat_decks": [RULES["deck_table"], [{"ability": "x"}], [], []]})
