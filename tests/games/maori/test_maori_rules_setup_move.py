"""Maori rules: setup (spec section 3), explorer-ship movement (4.1), the display line
geometry (2.5), reach and skip costs (4.2 A/B, 8.3) and the volcano (4.4)."""
from collections import Counter

import pytest

from maori_pos import (GAME, Pos, MOVE, STORE, TAKE, PASS, SINGLE, END, WATER, VOLCANO,
                       moves, stores, takes, take_k, d)

TOP_COL0 = [(0, 0), (1, 0), (2, 0), (3, 0)]      # column 0 seen from position 0


# ---------------------------------------------------------------- setup (section 3)
@pytest.mark.parametrize("players,bank", [(2, 20), (3, 15), (4, 10), (5, 5)])
def test_setup_display_shells_bank_and_ship_placer(players, bank):
    s = GAME.new(players, seed=11)
    x = d(s)
    flat = [t for row in x["display"] for t in row]
    assert len(flat) == 16 and None not in flat                      # 4 x 4 face up
    assert len(set(flat) | set(x["pile"])) == 97                     # the rest is the pile
    assert len(flat) + len(x["pile"]) == 97 and x["box"] == []
    assert [seat["shells"] for seat in x["seats"]] == [5] * players
    assert x["bank"] == bank
    assert all(seat["storage"] is None for seat in x["seats"])       # storage starts empty
    assert all(seat["small_ship"] is None for seat in x["seats"])
    # the oldest player (the seat right of seat 0, i.e. the last seat) places the ship
    assert x["phase"] == "ship_start" and s.current_player == players - 1
    assert x["ship_position"] is None
    assert s.legal_actions() == list(range(16))                      # any of the 16 positions


@pytest.mark.parametrize("pos", [0, 7, 15])
def test_seat_0_starts_after_the_ship_is_placed(pos):
    s = GAME.new(3, seed=5)
    s.apply(pos)
    assert s.current_player == 0
    assert d(s)["ship_position"] == pos and d(s)["phase"] == "move"


def test_ship_start_random_option_skips_the_choice():
    positions = set()
    for seed in range(40):
        s = GAME.new(2, rules={"ship_start": "random"}, seed=seed)
        assert d(s)["phase"] == "move" and s.current_player == 0
        positions.add(d(s)["ship_position"])
    assert len(positions) > 8


def _is_volcano(x, t):
    return x["rules"]["tiles"][t]["shape"] == "VOLCANO"


def test_setup_never_shows_a_volcano_and_shuffles_them_back():
    where = Counter()
    for seed in range(150):
        x = d(GAME.new(2, seed=seed))
        assert not any(_is_volcano(x, t) for row in x["display"] for t in row)
        vol = [i for i, t in enumerate(x["pile"]) if _is_volcano(x, t)]
        assert len(vol) == 2                                         # both are in the pile
        where.update(vol)
    # shuffled back in: not always on top or at the bottom of the pile
    assert len(where) > 30


def test_setup_sets_volcanoes_aside_even_when_many_are_drawn():
    # 16 islands and 10 volcanoes: the display must end up with exactly the 16 islands
    tiles = [SINGLE(1)] * 16 + [VOLCANO()] * 10
    for seed in range(20):
        x = d(GAME.new(2, rules={"tiles": tiles}, seed=seed))
        shown = sorted(t for row in x["display"] for t in row)
        assert shown == list(range(16))
        assert sorted(x["pile"]) == list(range(16, 26))


def test_set_aside_volcanoes_are_shuffled_into_the_pile_not_put_on_top():
    # 36 islands and 4 volcanoes: about 1.8 volcanoes are set aside per setup.  Shuffled
    # back, the pile's top is a volcano with chance 4/24; left on top, most of the time.
    tiles = [SINGLE(1)] * 36 + [VOLCANO()] * 4
    tops = 0
    for seed in range(200):
        x = d(GAME.new(2, rules={"tiles": tiles}, seed=seed))
        tops += _is_volcano(x, x["pile"][-1])
    assert 10 < tops < 70


def test_setup_same_seed_same_game_other_seed_other_display():
    a, b, c = (d(GAME.new(3, seed=s)) for s in (9, 9, 10))
    assert a == b and a["display"] != c["display"]


# ---------------------------------------------------------------- the display line (2.5)
def _line_of(pos):
    """Spec 2.5 table: the display slots faced from ship position `pos`, 1st to 4th."""
    if pos < 4:
        return [(r, pos) for r in range(4)]
    if pos < 8:
        return [(pos - 4, c) for c in (3, 2, 1, 0)]
    if pos < 12:
        return [(r, 11 - pos) for r in (3, 2, 1, 0)]
    return [(15 - pos, c) for c in range(4)]


@pytest.mark.parametrize("pos", range(16))
def test_each_ship_position_faces_its_line_and_costs_grow_per_skipped_tile(pos):
    for k in range(1, 5):
        p = Pos(2, phase="discover", ship=pos, shells=[9, 5])
        ids = {(r, c): p.disp(r, c, SINGLE(1)) for r in range(4) for c in range(4)}
        s = p.build()
        s.apply(STORE(k))
        x = d(s)
        r, c = _line_of(pos)[k - 1]
        assert x["seats"][0]["storage"] == ids[(r, c)]
        assert x["display"][r][c] is None                      # empty pile: the hole stays
        assert x["seats"][0]["shells"] == 9 - (k - 1)          # 1st free, 2nd 1, 3rd 2, 4th 3
        assert x["bank"] == 16 + (k - 1)                       # paid shells go to the bank


# ---------------------------------------------------------------- movement (4.1)
def test_T01_two_printed_boats_one_shell_ship_at_15():
    p = Pos(2, ship=15, shells=[1, 5])
    p.disp(0, 0, SINGLE(1))
    s = p.build()
    assert moves(s.legal_actions()) == [1, 2, 3]                 # distance 0 illegal
    s.apply(MOVE(3))
    x = d(s)
    assert x["ship_position"] == 2                               # 15 -> 0 -> 1 -> 2
    assert x["seats"][0]["shells"] == 0 and x["bank"] == 30 - 5
    assert x["phase"] == "discover" and s.current_player == 0


def test_move_costs_one_shell_per_step_beyond_the_boats():
    p = Pos(2, ship=3, shells=[5, 5])
    s = p.build()
    assert moves(s.legal_actions()) == list(range(1, 8))          # 2 boats + 5 shells
    for dist, cost in ((1, 0), (2, 0), (3, 1), (5, 3), (7, 5)):
        t = s.clone()
        t.apply(MOVE(dist))
        assert d(t)["seats"][0]["shells"] == 5 - cost
        assert d(t)["bank"] == 20 + cost
        assert d(t)["ship_position"] == (3 + dist) % 16


def test_move_without_shells_is_limited_to_the_boats():
    s = Pos(2, ship=0, shells=[0, 5]).build()
    assert moves(s.legal_actions()) == [1, 2]


def test_boats_on_board_tiles_count_for_movement_but_storage_does_not():
    p = Pos(2, ship=0, shells=[0, 5])
    p.put(0, 1, 0, WATER(boats=1))
    p.put(0, 2, 2, END("E", 1, boats=1))       # counts while on the board, complete or not
    p.store(0, WATER(boats=1))                 # storage does not count
    s = p.build()
    assert moves(s.legal_actions()) == [1, 2, 3, 4]


def test_boat_tile_counts_from_the_next_move_after_placing_it():
    p = Pos(2, phase="discover", ship=0, shells=[0, 0], bank=30)
    p.disp(0, 0, WATER(boats=1))
    s = p.build()
    s.apply(TAKE(1, 1, 1))
    s.apply(MOVE(1)); s.apply(PASS)             # seat 1
    assert s.current_player == 0
    assert moves(s.legal_actions()) == [1, 2, 3]


def test_coral_reef_printed_boat_counts_for_movement_only_while_uncovered():
    rules = {"board_side": "coral_reef"}
    s = Pos(2, rules, shells=[0, 5]).build()
    assert moves(s.legal_actions()) == [1, 2]         # margin boat + uncovered reef boat
    p = Pos(2, rules, shells=[0, 5])
    p.put(0, 2, 2, SINGLE(1))                         # the reef boat cell is covered
    assert moves(p.build().legal_actions()) == [1]
    off = {**rules, "reef_boat_counts_while_uncovered": False}
    assert moves(Pos(2, off, shells=[0, 5]).build().legal_actions()) == [1]


# ---------------------------------------------------------------- reach and skip costs
def _full_col0(p, specs=None):
    specs = specs or [SINGLE(1), SINGLE(2), SINGLE(3), END("E", 1)]
    return p.line(TOP_COL0, specs)


def test_T03_fourth_tile_costs_three_and_is_illegal_with_two_shells():
    p = Pos(2, phase="discover", ship=0, shells=[2, 5])
    _full_col0(p)
    s = p.build()
    acts = s.legal_actions()
    assert stores(acts) == [1, 2, 3]
    assert sorted({take_k(a) for a in takes(acts)}) == [1, 2, 3]
    p = Pos(2, phase="discover", ship=0, shells=[3, 5])
    _full_col0(p)
    s = p.build()
    assert 4 in {take_k(a) for a in takes(s.legal_actions())}
    s.apply(TAKE(4, 1, 1))
    assert d(s)["seats"][0]["shells"] == 0


def test_take_to_board_pays_the_same_skip_cost():
    for k, cost in ((1, 0), (2, 1), (3, 2), (4, 3)):
        p = Pos(2, phase="discover", ship=0, shells=[5, 5])
        _full_col0(p)
        s = p.build()
        s.apply(TAKE(k, 2, 2))
        assert d(s)["seats"][0]["shells"] == 5 - cost


def test_T02_volcano_blocks_what_lies_behind_it_reachable_from_the_other_side():
    p = Pos(2, phase="discover", ship=0, shells=[5, 5])
    ids = p.line(TOP_COL0, [WATER(boats=1), VOLCANO(), END("E", 1), END("W", 2)])
    dd = p.build_dict()
    s = GAME.from_dict(dd)
    acts = s.legal_actions()
    assert {take_k(a) for a in takes(acts)} == {1} and stores(acts) == [1]
    # from position 11 (below column 0): row 3 is free, row 2 costs 1, the volcano blocks row 0
    dd["ship_position"] = 11
    s = GAME.from_dict(dd)
    acts = s.legal_actions()
    assert {take_k(a) for a in takes(acts)} == {1, 2} and stores(acts) == [1, 2]
    t = s.clone()
    t.apply(STORE(2))
    assert d(t)["seats"][0]["storage"] == ids[2] and d(t)["seats"][0]["shells"] == 4
    t = s.clone()
    t.apply(STORE(1))
    assert d(t)["seats"][0]["storage"] == ids[3] and d(t)["seats"][0]["shells"] == 5


def test_volcano_next_to_the_ship_blocks_the_whole_line():
    p = Pos(2, phase="discover", ship=0, shells=[5, 5])
    p.line(TOP_COL0, [VOLCANO(), SINGLE(1), SINGLE(1), SINGLE(1)])
    acts = p.build().legal_actions()
    assert takes(acts) == [] and stores(acts) == [] and PASS in acts


def test_empty_slots_are_free_to_skip_under_per_tile():
    # column 0 from position 0: [empty, A, empty, B]
    p = Pos(2, phase="discover", ship=0, shells=[5, 5])
    ids = p.line(TOP_COL0, [None, SINGLE(1), None, SINGLE(2)])
    dd = p.build_dict()
    s = GAME.from_dict(dd)
    acts = s.legal_actions()
    assert stores(acts) == [2, 4]                  # empty slots cannot be taken
    t = s.clone(); t.apply(STORE(2))
    assert d(t)["seats"][0]["storage"] == ids[1] and d(t)["seats"][0]["shells"] == 5
    t = s.clone(); t.apply(STORE(4))
    assert d(t)["seats"][0]["storage"] == ids[3] and d(t)["seats"][0]["shells"] == 4


def test_empty_slots_are_paid_under_per_position():
    p = Pos(2, {"skip_cost": "per_position"}, phase="discover", ship=0, shells=[5, 5])
    p.line(TOP_COL0, [None, SINGLE(1), None, SINGLE(2)])
    dd = p.build_dict()
    s = GAME.from_dict(dd)
    t = s.clone(); t.apply(STORE(2))
    assert d(t)["seats"][0]["shells"] == 4
    t = s.clone(); t.apply(STORE(4))
    assert d(t)["seats"][0]["shells"] == 2
    dd["seats"][0]["shells"], dd["bank"] = 0, 25
    assert stores(GAME.from_dict(dd).legal_actions()) == []
