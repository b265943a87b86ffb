"""Reef Encounter components and setup (spec sections 2 and 3, test vector TV-26)."""
import itertools
import json
from collections import Counter

import pytest

import core_cy
from core_cy.games.reef_encounter.engine import ALGAE, COLOURS, DEFAULT_BOARDS, DEFAULT_TILES
from reef_pos import FISH, PICK, GAME, counts

CYCLE = ["white", "yellow", "orange", "pink", "grey"]


def test_catalogue_loads_reef_encounter():
    assert core_cy.load("reef_encounter") is GAME
    info = GAME.info()
    assert info["min_players"] == 2 and info["max_players"] == 4
    props = info["rules"]["properties"]
    for name in ("advanced_no_extra_growth", "advanced_eat_return_plus_one",
                 "end4_literal_bag_lt3", "larva_play_min_polyps", "bonus_shortage",
                 "larva_pick_duplicates", "open_sea_cycle", "tiles", "boards", "start_player"):
        assert name in props
    for name in ("end4_literal_bag_lt3", "larva_play_min_polyps", "bonus_shortage",
                 "open_sea_cycle", "start_player"):
        assert props[name].get("x-assumption"), name
    # End condition 4 reads the seed's end-of-game text by default (spec A10).
    assert props["end4_literal_bag_lt3"]["default"] is True
    json.dumps(info)


def test_coral_tiles_data_is_the_ten_pairs_and_a_regular_tournament_on_both_sides():
    pairs = {frozenset((t["strong"], t["weak"])) for t in DEFAULT_TILES}
    assert pairs == {frozenset(p) for p in itertools.combinations(COLOURS, 2)}
    for side in ("strong", "weak"):
        assert Counter(t[side] for t in DEFAULT_TILES) == {c: 2 for c in COLOURS}
    for t in DEFAULT_TILES:
        assert t["front"] != t["back"]
    assert Counter(a for t in DEFAULT_TILES for a in (t["front"], t["back"])) == {a: 5 for a in ALGAE}
    fronts = {t["id"]: t["front"] for t in DEFAULT_TILES}
    assert sorted(i for i, a in fronts.items() if a == "green") == [1, 5, 8]
    assert sorted(i for i, a in fronts.items() if a == "blue") == [3, 6, 10]
    backs = {t["id"]: t["back"] for t in DEFAULT_TILES}
    assert sorted(i for i, a in backs.items() if a == "purple") == [2, 8, 9]


def test_reef_boards_have_nine_deep_cells_a_light_rock_at_3_3_and_five_start_spaces():
    assert len(DEFAULT_BOARDS) == 4
    for name, rows in DEFAULT_BOARDS.items():
        text = "".join(rows)
        assert len(rows) == 6 and all(len(r) == 7 for r in rows)
        assert text.count(".") == 9 and len(text) - text.count(".") == 33, name
        assert rows[3][3] == "L"
        assert sorted(ch for ch in text if ch in "WYOPG") == sorted("WYOPG")


@pytest.mark.parametrize("players,hands,bag", [(2, [6, 9], 158), (3, [6, 7, 9], 146),
                                               (4, [6, 7, 8, 9], 133)])
def test_setup_sizes_per_player_count_tv26(players, hands, bag):
    for seed in range(4):
        s = GAME.new(players, seed=seed, rules={"start_player": "random"})
        d = s.to_dict()
        start = d["start_player"]
        assert d["current_player"] == start and d["phase"] == "fish"
        for i in range(players):
            assert sum(d["seats"][(start + i) % players]["screen"].values()) == hands[i]
        assert sum(d["bag"].values()) == bag
        assert d["bonus_row"] == counts(grey=1, orange=1, pink=1, white=1, yellow=1)
        assert len({b["layout"] for b in d["boards"]}) == players
        for b in d["boards"]:
            layout = DEFAULT_BOARDS[b["layout"]]
            assert b["cells"] == layout and b["shrimps"] == []
        assert len({t["side"] for t in d["tiles"]}) == 1
        assert not any(t["covered"] for t in d["tiles"])
        assert [sp["colour"] for sp in d["open_sea"]] == CYCLE
        assert sorted(sum(sp["polyps"].values()) for sp in d["open_sea"]) == [1, 2, 3, 3, 3]
        assert all(sp["cube"] for sp in d["open_sea"])
        assert d["larva_supply"] == {c: 9 for c in COLOURS}
        assert d["alga_supply"] == {a: 5 for a in ALGAE} and d["alga_space"] is None
        for seat in d["seats"]:
            assert seat["shrimps_behind_screen"] == 4 and sum(seat["fish"].values()) == 0


def test_open_sea_deal_runs_3_3_3_2_1_along_the_cycle():
    for seed in range(20):
        d = GAME.new(2, seed=seed).to_dict()
        piles = [sum(sp["polyps"].values()) for sp in d["open_sea"]]
        k = piles.index(1)            # the last of the five piles dealt
        assert [piles[(k - 4 + j) % 5] for j in range(5)] == [3, 3, 3, 2, 1]


def test_both_tile_faces_occur_and_the_option_fixes_the_face():
    sides = {GAME.new(2, seed=seed).to_dict()["tiles"][0]["side"] for seed in range(30)}
    assert sides == {"S", "N"}
    for side in ("S", "N"):
        d = GAME.new(2, seed=1, rules={"initial_side": side}).to_dict()
        assert {t["side"] for t in d["tiles"]} == {side}


def test_seat_zero_starts_by_default_and_random_start_varies():
    assert {GAME.new(3, seed=s).to_dict()["start_player"] for s in range(10)} == {0}
    starts = {GAME.new(3, seed=s, rules={"start_player": "random"}).to_dict()["start_player"]
              for s in range(40)}
    assert starts == {0, 1, 2}


def test_each_seat_drops_one_polyp_into_its_fish_then_picks_two_larva_cubes_in_turn_order():
    s = GAME.new(3, seed=5)
    for seat in (0, 1, 2):
        assert s.current_player == seat
        screen = s.to_dict()["seats"][seat]["screen"]
        legal = s.legal_actions()
        assert legal == [FISH(c) for c in COLOURS if screen[c] > 0]
        colour = next(c for c in COLOURS if screen[c] > 0)
        s.apply(FISH(colour))
        d = s.to_dict()["seats"][seat]
        assert d["fish"][colour] == 1 and d["screen"][colour] == screen[colour] - 1
    assert s.to_dict()["phase"] == "pick"
    for seat in (0, 1, 2):
        assert s.current_player == seat
        s.apply(PICK("pink"))
        assert s.current_player == seat and PICK("pink") in s.legal_actions()  # A19
        s.apply(PICK("pink"))
        assert s.to_dict()["seats"][seat]["larva"]["pink"] == 2
    d = s.to_dict()
    assert d["phase"] == "turn" and s.current_player == 0
    assert d["larva_supply"]["pink"] == 10 - 1 - 6


def test_larva_pick_duplicates_can_be_forbidden():
    s = GAME.new(2, seed=5, rules={"larva_pick_duplicates": False})
    s.apply(s.legal_actions()[0])
    s.apply(s.legal_actions()[0])
    s.apply(PICK("grey"))
    assert PICK("grey") not in s.legal_actions() and PICK("white") in s.legal_actions()


def test_bad_data_options_are_rejected_naming_the_field():
    tiles = [dict(t) for t in DEFAULT_TILES]
    tiles[1]["strong"], tiles[1]["weak"] = "yellow", "white"
    with pytest.raises(ValueError, match="tiles"):
        GAME.new(2, rules={"tiles": tiles})
    with pytest.raises(ValueError, match="boards"):
        GAME.new(2, rules={"boards": {"x": ["+X+"]}})
    with pytest.raises(ValueError, match="boards"):
        GAME.new(3, rules={"boards": {"a": ["+++"], "b": ["+++"]}})
    with pytest.raises(ValueError, match="open_sea_cycle"):
        GAME.new(2, rules={"open_sea_cycle": ["white"] * 5})
    with pytest.raises(ValueError, match="setup"):
        GAME.new(2, rules={"setup": {"polyps_per_colour": 40}})
