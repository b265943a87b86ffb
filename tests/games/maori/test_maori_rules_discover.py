"""Maori rules: the five discover options and their preconditions (spec 4.2), palms upright
and rotation of palm-less tiles (2.2, 8.2), shell gain and the bank limit (4.2, 8.9) and
refilling the display (4.2, 8.8)."""
import pytest

from maori_pos import (GAME, Pos, STORE, TAKE, FROM_STORE, REMOVE, PASS, SINGLE, END,
                       MID, WATER, VOLCANO, moves, stores, takes, take_k, take_cell, take_rot,
                       from_stores, removes, finish, d)

COL0 = [(0, 0), (1, 0), (2, 0), (3, 0)]
PLAYABLE = [(0, 0), (0, 1), (0, 2)] + [(r, c) for r in (1, 2) for c in range(5)] + [(3, 2), (3, 3), (3, 4)]


def _discover(shells=(5, 5), rules=None, line=None, bank=None):
    p = Pos(2, rules, phase="discover", ship=0, shells=list(shells), bank=bank)
    ids = p.line(COL0, line or [SINGLE(1), SINGLE(2), SINGLE(3), WATER(boats=1)])
    return p, ids


# ---------------------------------------------------------------- A: take and place
def test_A_take_places_on_any_empty_playable_cell_without_matching():
    p, ids = _discover()
    p.put(0, 1, 1, END("E", 2))                   # (1,2) east of it: anything may go there
    s = p.build()
    cells = {take_cell(a) for a in takes(s.legal_actions()) if take_k(a) == 1}
    assert cells == set(PLAYABLE) - {(1, 1)}        # not occupied, not printed land
    s.apply(TAKE(1, 1, 2))                           # a SINGLE next to an open END edge
    x = d(s)
    assert x["seats"][0]["board"][1][2] == {"tile": ids[0], "rotation": 0}
    assert s.current_player == 1 and x["phase"] == "move"


def test_A_needs_an_empty_cell():
    p, _ = _discover()
    for (r, c) in PLAYABLE:
        p.put(0, r, c, WATER())
    acts = p.build().legal_actions()
    assert takes(acts) == [] and from_stores(acts) == []
    assert stores(acts) == [1, 2, 3, 4] and PASS in acts


# ---------------------------------------------------------------- B: storage
def test_B_storage_takes_the_tile_and_gains_no_shells():
    p, ids = _discover(line=[SINGLE(1, shells=2), SINGLE(2), SINGLE(3), WATER()])
    s = p.build()
    s.apply(STORE(1))
    x = d(s)
    assert x["seats"][0]["storage"] == ids[0]
    assert x["seats"][0]["shells"] == 5 and x["bank"] == 20
    assert all(c is None for row in x["seats"][0]["board"] for c in row)


def test_T09_storage_full_forbids_B_only():
    p, _ = _discover()
    p.store(0, SINGLE(2))
    p.put(0, 1, 1, SINGLE(1))
    acts = p.build().legal_actions()
    assert stores(acts) == []                        # B: storage holds at most one tile
    assert takes(acts)                               # A
    assert from_stores(acts)                         # C
    assert removes(acts) == [(1, 1)]                 # D
    assert PASS in acts                              # E


# ---------------------------------------------------------------- C: storage to board
def test_C_places_the_stored_tile_and_gains_its_shells():
    p, _ = _discover(line=[VOLCANO(), SINGLE(1), SINGLE(1), SINGLE(1)])   # nothing takable
    st = p.store(0, SINGLE(1, shells=2))
    s = p.build()
    acts = s.legal_actions()
    assert takes(acts) == [] and len(from_stores(acts)) == 16
    disp_before = d(s)["display"]
    s.apply(FROM_STORE(2, 3))
    x = d(s)
    assert x["seats"][0]["storage"] is None
    assert x["seats"][0]["board"][2][3] == {"tile": st, "rotation": 0}
    assert x["seats"][0]["shells"] == 7 and x["bank"] == 18
    assert x["display"] == disp_before                 # no refill after C


def test_C_needs_a_stored_tile():
    p, _ = _discover()
    assert from_stores(p.build().legal_actions()) == []


# ---------------------------------------------------------------- D: remove
def test_D_remove_sends_the_tile_to_the_box_without_refund():
    p, _ = _discover()
    t = p.put(0, 2, 2, SINGLE(3, shells=1))
    p.put(0, 1, 1, WATER())
    s = p.build()
    assert removes(s.legal_actions()) == [(1, 1), (2, 2)]   # any own tile
    box0, disp0 = d(s)["box"], d(s)["display"]
    s.apply(REMOVE(2, 2))
    x = d(s)
    assert x["seats"][0]["board"][2][2] is None
    assert t in x["box"] and len(x["box"]) == len(box0) + 1
    assert x["seats"][0]["shells"] == 5 and x["bank"] == 20
    assert x["display"] == disp0


def test_D_needs_a_tile_on_the_board():
    p, _ = _discover()
    p.store(0, SINGLE(1))               # a stored tile is not on the board
    assert removes(p.build().legal_actions()) == []


# ---------------------------------------------------------------- E: pass
def test_E_do_nothing_changes_nothing_but_the_turn():
    p, _ = _discover()
    s = p.build()
    before = d(s)
    assert PASS in s.legal_actions()
    s.apply(PASS)
    after = d(s)
    assert after["current_player"] == 1 and after["phase"] == "move"
    for key in ("display", "pile", "box", "bank", "ship_position"):
        assert after[key] == before[key]
    assert after["seats"][0]["board"] == before["seats"][0]["board"]
    assert after["seats"][0]["shells"] == before["seats"][0]["shells"]


def test_moving_is_mandatory_before_discovering():
    s = Pos(2, phase="move").build()
    acts = s.legal_actions()
    assert acts and all(1 <= m for m in moves(acts)) and len(moves(acts)) == len(acts)


# ---------------------------------------------------------------- palms upright / rotation
def test_tiles_with_palms_are_never_turned():
    p, _ = _discover(line=[END("E", 1), MID("NS", 2), SINGLE(3), END("N", 1, boats=1)])
    acts = p.build().legal_actions()
    assert {take_rot(a) for a in takes(acts)} == {0}
    assert len(from_stores(acts)) == 0


def test_palmless_end_tile_may_face_any_direction():
    p, _ = _discover(line=[END("E", 0, boats=1), SINGLE(1), SINGLE(1), SINGLE(1)])
    rots = {take_rot(a) for a in takes(p.build().legal_actions())
            if take_k(a) == 1 and take_cell(a) == (1, 0)}
    assert rots == {0, 1, 2, 3}


def test_palmless_tiles_stay_upright_when_rotate_palmless_is_off():
    p, _ = _discover(rules={"rotate_palmless": False},
                     line=[END("E", 0, boats=1), MID("EW", 0, shells=1), SINGLE(1), SINGLE(1)])
    assert {take_rot(a) for a in takes(p.build().legal_actions())} == {0}


def test_palmless_middle_tile_may_take_either_axis():
    p, _ = _discover(line=[MID("EW", 0, boats=1), SINGLE(1), SINGLE(1), SINGLE(1)])
    s = p.build()
    rots = {take_rot(a) for a in takes(s.legal_actions())
            if take_k(a) == 1 and take_cell(a) == (1, 1)}
    assert {r % 2 for r in rots} == {0, 1}                          # both axes offered
    # turned a quarter, the E-W middle piece joins a north and a south end into an island
    vert = next(r for r in rots if r % 2 == 1)
    p.put(0, 0, 1, END("S", 2))
    p.put(0, 2, 1, END("N", 1))
    s = p.build()
    s.apply(TAKE(1, 1, 1, vert))
    assert d(s)["seats"][0]["board"][1][1]["rotation"] == vert
    br = finish(s).score_breakdown()[0]
    assert br["palms_without_hut"] == 3 and br["removed_at_end"] == 0


def test_a_turned_end_tile_counts_its_turned_open_edge():
    # END open E, no palm, turned a quarter clockwise: open S, joining an END open N below
    p, _ = _discover(line=[END("E", 0, boats=1), SINGLE(1), SINGLE(1), SINGLE(1)])
    p.put(0, 2, 0, END("N", 2))
    s = p.build()
    s.apply(TAKE(1, 1, 0, 1))
    br = finish(s).score_breakdown()[0]
    assert br["palms_without_hut"] == 2 and br["removed_at_end"] == 0
    assert br["boats"] == 3
    p2, _ = _discover(line=[END("E", 0, boats=1), SINGLE(1), SINGLE(1), SINGLE(1)])
    p2.put(0, 2, 0, END("N", 2))
    s = p2.build()
    s.apply(TAKE(1, 1, 0, 0))                      # unturned it faces east: both incomplete
    br = finish(s).score_breakdown()[0]
    assert br["palms_without_hut"] == 0 and br["removed_at_end"] == 2


# ---------------------------------------------------------------- shell gain and the bank
def test_placing_from_the_display_gains_printed_shells_from_the_bank():
    p, _ = _discover(line=[WATER(shells=2), SINGLE(1), SINGLE(1), SINGLE(1)])
    s = p.build()
    s.apply(TAKE(1, 1, 1))
    x = d(s)
    assert x["seats"][0]["shells"] == 7 and x["bank"] == 18


def test_second_tile_pays_skip_then_gains_shells():
    p, _ = _discover(line=[SINGLE(1), WATER(shells=2), SINGLE(1), SINGLE(1)])
    s = p.build()
    s.apply(TAKE(2, 1, 1))
    assert d(s)["seats"][0]["shells"] == 5 - 1 + 2 and d(s)["bank"] == 20 + 1 - 2


def test_T16_bank_short_partial_gain_from_storage():
    p, _ = _discover(shells=(9, 20), bank=1)
    p.store(0, SINGLE(1, shells=2))
    s = p.build()
    s.apply(FROM_STORE(1, 1))
    assert d(s)["seats"][0]["shells"] == 10 and d(s)["bank"] == 0


def test_bank_short_gains_nothing_under_shortfall_none():
    p, _ = _discover(shells=(9, 20), bank=1, rules={"shell_shortfall": "none"})
    p.store(0, SINGLE(1, shells=2))
    s = p.build()
    s.apply(FROM_STORE(1, 1))
    assert d(s)["seats"][0]["shells"] == 9 and d(s)["bank"] == 1


def test_bank_enough_gains_all_under_shortfall_none():
    p, _ = _discover(shells=(8, 20), bank=2, rules={"shell_shortfall": "none"})
    p.store(0, SINGLE(1, shells=2))
    s = p.build()
    s.apply(FROM_STORE(1, 1))
    assert d(s)["seats"][0]["shells"] == 10 and d(s)["bank"] == 0


def test_empty_bank_gains_nothing():
    p, _ = _discover(shells=(10, 20), bank=0, line=[WATER(shells=2), SINGLE(1), SINGLE(1), SINGLE(1)])
    s = p.build()
    s.apply(TAKE(1, 1, 1))
    assert d(s)["seats"][0]["shells"] == 10 and d(s)["bank"] == 0


# ---------------------------------------------------------------- refilling the display
@pytest.mark.parametrize("action", [TAKE(2, 1, 1), STORE(2)])
def test_hole_is_refilled_from_the_pile(action):
    p, ids = _discover()
    under = p.pile_push(SINGLE(2))
    top = p.pile_push(SINGLE(3))
    s = p.build()
    s.apply(action)
    x = d(s)
    assert x["display"][1][0] == top and x["pile"] == [under]


def test_volcano_drawn_in_a_refill_stays_and_blocks():
    p, ids = _discover()
    v = p.pile_push(VOLCANO())
    s = p.build()
    s.apply(STORE(1))
    x = d(s)
    assert x["display"][0][0] == v and x["pile"] == []
    # a player at position 0 now faces the volcano first: nothing in that line is takable
    dd = d(s)
    dd["phase"], dd["ship_position"] = "discover", 0
    acts = GAME.from_dict(dd).legal_actions()
    assert takes(acts) == [] and stores(acts) == []


def test_empty_pile_leaves_the_hole():
    p, ids = _discover()
    s = p.build()
    s.apply(TAKE(3, 1, 1))
    assert d(s)["display"][2][0] is None and d(s)["pile"] == []


def test_no_refill_after_remove_or_pass():
    p, _ = _discover()
    p.put(0, 1, 1, WATER())
    p.pile_push(SINGLE(2))
    for a in (REMOVE(1, 1), PASS):
        s = p.build()
        s.apply(a)
        assert len(d(s)["pile"]) == 1
