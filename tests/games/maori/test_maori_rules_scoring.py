"""Maori rules: island completeness (spec 5.1), the end-of-game procedure and every scoring
line (5.2), the coral-reef doubling (5.3, 7.3), the rulebook example RB-1 (5.3) and the
scoring test vectors T-4, T-7, T-8, T-15."""
import pytest

from maori_pos import GAME, Pos, SINGLE, END, MID, WATER, finish, d

STD_CELLS = 16


def _final(p):
    """Score a built position by really ending the game."""
    s = finish(p.build())
    assert s.is_terminal()
    return s, s.score_breakdown(), s.scores()


def _seat0(p):
    return _final(p)[1][0]


# ---------------------------------------------------------------- RB-1
def test_RB1_rulebook_example_scores_37():
    p = Pos(2, phase="move", current=1, shells=[3, 5])
    put = lambda r, c, t: p.put(0, r, c, t)
    # 10 palms on complete islands without a hut
    put(0, 0, SINGLE(3)); put(0, 1, SINGLE(3)); put(0, 2, SINGLE(2)); put(1, 0, SINGLE(2))
    # 6 palms on complete islands with a hut
    put(1, 1, END("E", 2, hut=1)); put(1, 2, END("W", 1)); put(1, 3, SINGLE(3, hut=1))
    # one complete lei: two halves meeting on a shared edge
    put(2, 0, WATER(lei="E")); put(2, 1, WATER(lei="W"))
    # 5 boats on tiles + 2 printed = 7
    for r, c in ((1, 4), (2, 2), (2, 3), (2, 4), (3, 2)):
        put(r, c, WATER(boats=1))
    # one unfinished island (the middle piece is open to the board edge): removed
    put(3, 3, END("E", 1)); put(3, 4, MID("EW", 2))
    s, br, sc = _final(p)
    b = br[0]
    assert (b["palms_without_hut"], b["palms_with_hut"], b["palm_points"]) == (10, 6, 22)
    assert (b["leis"], b["lei_points"]) == (1, 10)
    assert (b["boats"], b["boat_points"]) == (7, 7)
    assert (b["shells"], b["shell_points"]) == (3, 0)       # the other player has 5
    assert (b["empty_cells"], b["empty_points"]) == (2, -2)
    assert b["removed_at_end"] == 2
    assert b["total"] == 37 and sc[0] == 37


# ---------------------------------------------------------------- completeness (5.1)
def test_T04_incomplete_island_removed_before_scoring():
    p = Pos(2, shells=[0, 5])
    e = p.put(0, 1, 0, END("E", 2))
    m = p.put(0, 1, 1, MID("EW", 1))
    p.put(0, 2, 0, SINGLE(1, hut=1))
    p.put(1, 1, 1, WATER(boats=1))              # seat 1 takes both majorities
    s, br, sc = _final(p)
    assert br[0]["removed_at_end"] == 2 and br[0]["palm_points"] == 2
    assert br[0]["empty_cells"] == 15
    assert br[0]["boat_points"] == 0 and br[0]["shell_points"] == 0
    assert sc[0] == -13
    x = d(s)
    assert x["seats"][0]["board"][1][0] is None and x["seats"][0]["board"][1][1] is None
    assert {e, m} <= set(x["box"])


@pytest.mark.parametrize("name,tiles", [
    ("open edge to an empty cell", [((1, 1), END("E", 2))]),
    ("open edge to the board edge", [((1, 4), END("E", 2))]),
    ("open edge to printed land", [((1, 3), END("N", 2))]),          # (0,3) is printed
    ("open edge to a water tile", [((1, 1), END("E", 2)), ((1, 2), WATER())]),
    ("open edge to a single", [((1, 1), END("E", 2)), ((1, 2), SINGLE(0))]),
    ("open edge to an end facing away", [((1, 1), END("E", 2)), ((1, 2), END("E", 0))]),
    ("middle with one end missing", [((1, 1), END("E", 1)), ((1, 2), MID("EW", 1))]),
    ("perpendicular middle", [((1, 1), END("E", 1)), ((1, 2), MID("NS", 1))]),
])
def test_incomplete_islands_score_nothing_and_are_removed(name, tiles):
    p = Pos(2)
    for (r, c), t in tiles:
        p.put(0, r, c, t)
    b = _seat0(p)
    land = sum(1 for _, t in tiles if t["shape"] != "WATER") - (1 if name == "open edge to a single" else 0)
    assert b["palm_points"] == 0, name
    assert b["removed_at_end"] == land, name
    water = len(tiles) - land
    assert b["empty_cells"] == STD_CELLS - water, name


@pytest.mark.parametrize("tiles,palms", [
    ([((1, 0), END("E", 2)), ((1, 1), END("W", 1))], 3),
    ([((0, 0), END("S", 2)), ((1, 0), END("N", 1))], 3),
    ([((1, 0), END("E", 1)), ((1, 1), MID("EW", 2)), ((1, 2), MID("EW", 1)), ((1, 3), END("W", 3))], 7),
    ([((0, 2), END("S", 1)), ((1, 2), MID("NS", 1)), ((2, 2), MID("NS", 1)), ((3, 2), END("N", 1))], 4),
    ([((2, 2), SINGLE(3))], 3),
])
def test_complete_straight_islands_score_one_per_palm(tiles, palms):
    p = Pos(2)
    for (r, c), t in tiles:
        p.put(0, r, c, t)
    b = _seat0(p)
    assert (b["palms_without_hut"], b["palm_points"], b["removed_at_end"]) == (palms, palms, 0)
    assert b["empty_cells"] == STD_CELLS - len(tiles)


def test_neighbouring_islands_without_joined_edges_are_separate():
    # a hut on one single does not double the palms of the single next to it
    p = Pos(2)
    p.put(0, 1, 1, SINGLE(2, hut=1))
    p.put(0, 1, 2, SINGLE(3))
    p.put(0, 2, 1, END("E", 1)); p.put(0, 2, 2, END("W", 1))   # below: a separate island
    b = _seat0(p)
    assert (b["palms_with_hut"], b["palms_without_hut"], b["palm_points"]) == (2, 5, 9)


def test_hut_doubles_its_island_and_extra_huts_add_nothing():
    p = Pos(2)
    p.put(0, 1, 0, END("E", 2, hut=1)); p.put(0, 1, 1, END("W", 1))
    b = _seat0(p)
    assert (b["palms_with_hut"], b["palm_points"]) == (3, 6)
    p = Pos(2)
    p.put(0, 1, 0, END("E", 2, hut=1)); p.put(0, 1, 1, MID("EW", 1, hut=1)); p.put(0, 1, 2, END("W", 1, hut=1))
    b = _seat0(p)
    assert (b["palms_with_hut"], b["palm_points"]) == (4, 8)


def test_incomplete_island_boats_no_longer_count_for_the_majority():
    p = Pos(2)
    p.put(0, 1, 1, END("E", 1, boats=1))        # incomplete: removed with its boat
    s, br, sc = _final(p)
    assert br[0]["boats"] == 2 and br[1]["boats"] == 2
    assert br[0]["boat_points"] == 2 and br[1]["boat_points"] == 2   # a tie, both score


def test_complete_island_and_water_boats_count():
    p = Pos(2)
    p.put(0, 1, 0, END("E", 0, boats=1)); p.put(0, 1, 1, END("W", 1))
    p.put(0, 2, 2, WATER(boats=1))
    s, br, _ = _final(p)
    assert br[0]["boats"] == 4 and br[0]["boat_points"] == 4 and br[1]["boat_points"] == 0


# ---------------------------------------------------------------- leis
def test_lei_halves_meeting_on_a_shared_edge_score_10():
    p = Pos(2)
    p.put(0, 1, 1, WATER(lei="S")); p.put(0, 2, 1, WATER(lei="N"))
    b = _seat0(p)
    assert (b["leis"], b["lei_points"]) == (1, 10)


@pytest.mark.parametrize("a,b", [("E", "E"), ("N", "S"), ("W", "E")])
def test_lei_halves_not_meeting_score_nothing(a, b):
    p = Pos(2)
    p.put(0, 1, 1, WATER(lei=a)); p.put(0, 1, 2, WATER(lei=b))     # side by side
    assert _seat0(p)["leis"] == 0


def test_lei_half_on_a_removed_island_is_lost():
    p = Pos(2)
    p.put(0, 1, 0, WATER(lei="E"))
    p.put(0, 1, 1, END("E", 1, lei="W"))            # open to the empty (1,2): removed
    b = _seat0(p)
    assert b["leis"] == 0 and b["removed_at_end"] == 1
    p.put(0, 1, 2, END("W", 1))                      # now complete: the lei counts
    b = _seat0(p)
    assert b["leis"] == 1 and b["palm_points"] == 2


def test_lei_whole_on_tile_model_counts_each_lei_on_a_complete_island():
    rules = {"lei_model": "whole_on_tile"}
    p = Pos(2, rules)
    p.put(0, 1, 1, SINGLE(1, lei="E"))
    p.put(0, 2, 0, END("E", 1, lei="W")); p.put(0, 2, 1, END("W", 1, lei="E"))
    p.put(0, 0, 0, END("S", 1, lei="N"))               # incomplete: removed, no lei
    b = _seat0(p)
    assert (b["leis"], b["lei_points"]) == (3, 30)


# ---------------------------------------------------------------- majorities
def test_T07_boat_majority_ties_all_score():
    p = Pos(3)
    for c in range(3):
        p.put(0, 1, c, WATER(boats=1)); p.put(1, 1, c, WATER(boats=1))
    p.put(2, 1, 0, WATER(boats=1))
    _, br, _ = _final(p)
    assert [b["boats"] for b in br] == [5, 5, 3]
    assert [b["boat_points"] for b in br] == [5, 5, 0]


def test_T08_shell_majority_all_at_zero_score_zero():
    _, br, _ = _final(Pos(2, shells=[0, 0]))
    assert [b["shell_points"] for b in br] == [0, 0]


@pytest.mark.parametrize("shells,points", [([3, 7, 1], [0, 7, 0]), ([4, 4, 1], [4, 4, 0])])
def test_shell_majority_with_ties(shells, points):
    _, br, _ = _final(Pos(3, shells=shells))
    assert [b["shell_points"] for b in br] == points


def test_printed_shells_do_not_count_for_the_majority():
    p = Pos(2, shells=[3, 4])
    p.put(0, 1, 1, WATER(shells=2)); p.put(0, 1, 2, SINGLE(1, shells=2))
    _, br, _ = _final(p)
    assert [b["shell_points"] for b in br] == [0, 4]


# ---------------------------------------------------------------- empty cells, storage
def test_empty_cells_cost_one_each_printed_cells_nothing():
    p = Pos(2, shells=[0, 0])
    p.put(0, 2, 2, WATER())
    b = _seat0(p)
    assert (b["empty_cells"], b["empty_points"]) == (15, -15)
    assert b["total"] == 2 - 15            # tied boats 2, no palms, shells 0


def test_the_stored_tile_scores_nothing():
    p = Pos(2, shells=[0, 0])
    p.store(0, SINGLE(3, hut=1, boats=1, lei="E"))
    p.put(0, 1, 1, WATER(lei="W"))
    b = _seat0(p)
    assert (b["palm_points"], b["leis"], b["boats"]) == (0, 0, 2)
    assert b["empty_cells"] == 15


# ---------------------------------------------------------------- coral reef (5.3, 7.3)
REEF = {"board_side": "coral_reef"}


def test_coral_palms_on_islands_entirely_inside_the_reef_double():
    p = Pos(2, REEF)
    p.put(0, 1, 1, SINGLE(2))                              # inside: 4
    p.put(0, 1, 2, END("E", 1, hut=1)); p.put(0, 1, 3, END("W", 2))   # inside, hut: 3*4
    p.put(0, 2, 0, END("E", 1)); p.put(0, 2, 1, END("W", 1))   # straddles the reef: 2
    p.put(0, 0, 0, SINGLE(3))                              # outside: 3
    b = _seat0(p)
    assert b["palm_points"] == 4 + 12 + 2 + 3


def test_coral_leis_are_not_doubled():
    p = Pos(2, REEF)
    p.put(0, 1, 1, WATER(lei="E")); p.put(0, 1, 2, WATER(lei="W"))
    b = _seat0(p)
    assert (b["leis"], b["lei_points"]) == (1, 10)


def test_T15_coral_reef_boat_cell_left_empty_costs_one_and_its_boat_counts():
    p = Pos(2, REEF)
    b = _seat0(p)
    assert b["empty_cells"] == 20 and b["boats"] == 2
    p.put(0, 2, 2, SINGLE(1))                               # covered: no longer counts
    b = _seat0(p)
    assert b["empty_cells"] == 19 and b["boats"] == 1


def test_coral_reef_boat_option_off():
    p = Pos(2, {**REEF, "reef_boat_counts_while_uncovered": False})
    assert _seat0(p)["boats"] == 1


def test_standard_side_has_no_doubling():
    p = Pos(2)
    p.put(0, 1, 1, SINGLE(2)); p.put(0, 2, 2, SINGLE(1, hut=1))
    assert _seat0(p)["palm_points"] == 4


def test_coral_reef_cells_are_rows_1_2_columns_1_3():
    reef = {(r, c) for r in (1, 2) for c in (1, 2, 3)}
    for r in range(4):
        for c in range(5):
            p = Pos(2, REEF)
            p.put(0, r, c, SINGLE(1))
            assert _seat0(p)["palm_points"] == (2 if (r, c) in reef else 1), (r, c)


def test_coral_reef_boat_counts_again_when_its_island_is_removed():
    # reading of spec 2.4 with 8.5: removed tiles leave empty water, uncovering the boat
    p = Pos(2, REEF)
    p.put(0, 2, 2, END("E", 1))                  # incomplete: removed before scoring
    b = _seat0(p)
    assert b["removed_at_end"] == 1 and b["boats"] == 2 and b["empty_cells"] == 20


def test_turned_lei_half_follows_the_turn():
    # a palm-less water tile with its half on N, turned a quarter: the half is on E
    p = Pos(2, phase="discover", ship=0)
    p.disp(0, 0, WATER(lei="N"))
    p.put(0, 1, 1, WATER(lei="W"))
    s = p.build()
    from maori_pos import TAKE, takes, take_cell, take_rot
    rots = {take_rot(a) for a in takes(s.legal_actions()) if take_cell(a) == (1, 0)}
    assert rots == {0, 1, 2, 3}
    s.apply(TAKE(1, 1, 0, 1))
    assert finish(s).score_breakdown()[0]["leis"] == 1


# ---------------------------------------------------------------- component data (2.3, 2.4)
def test_default_tiles_match_the_spec_distribution():
    from collections import Counter
    tiles = GAME.new(2).to_dict()["rules"]["tiles"]
    assert len(tiles) == 97
    assert Counter(t["shape"] for t in tiles) == {"SINGLE": 10, "END": 54, "MIDDLE": 14,
                                                    "WATER": 17, "VOLCANO": 2}
    assert Counter(t["open"] for t in tiles if t["shape"] == "END") == {"E": 14, "W": 14, "S": 13, "N": 13}
    assert Counter(t["open"] for t in tiles if t["shape"] == "MIDDLE") == {"EW": 7, "NS": 7}
    total = lambda f: sum(t[f] for t in tiles)
    assert (total("palms"), total("hut"), total("boats"), total("shells")) == (106, 16, 17, 19)
    assert sum(1 for t in tiles if t["lei"]) == 15
    opposite = {"N": "S", "S": "N", "E": "W", "W": "E"}
    assert all(t["lei"] == opposite[t["open"]] for t in tiles if t["shape"] == "END" and t["lei"])
    assert Counter(t["lei"] for t in tiles if t["shape"] == "WATER" and t["lei"]) == {
        "N": 1, "E": 2, "S": 1, "W": 2}
    assert not any(t["palms"] or t["boats"] or t["shells"] or t["lei"]
                   for t in tiles if t["shape"] == "VOLCANO")


def test_standard_board_has_16_cells_and_2_printed_boats():
    x = GAME.new(2).to_dict()["rules"]["boards"]["standard"]
    assert x["cells"] == ["...PP", ".....", ".....", "PP..."] and x["fixed_boats"] == 2
