"""Maori rules: the advanced and pro modes (spec 7.1, 7.2, T-12) and the coral-reef side's
player limit (7.3)."""
import pytest

from maori_pos import (GAME, Pos, STORE, TAKE, FROM_STORE, REMOVE, PASS, SINGLE,
                       WATER, takes, take_k, take_cell, from_stores, removes, small_ships, SMALL_SHIP, d)

COL0 = [(0, 0), (1, 0), (2, 0), (3, 0)]
PLAYABLE = [(0, 0), (0, 1), (0, 2)] + [(r, c) for r in (1, 2) for c in range(5)] + [(3, 2), (3, 3), (3, 4)]


def _pos(mode, shells=(5, 5), tiles=(), ship=None, line=None):
    p = Pos(2, {"mode": mode}, phase="discover", ship=0, shells=list(shells))
    p.line(COL0, line or [SINGLE(1), SINGLE(2), SINGLE(3), WATER(boats=1)])
    for rc in tiles:
        p.put(0, *rc, WATER())
    p.small_ship[0] = ship
    return p


def _cells_k1(s):
    return {take_cell(a) for a in takes(s.legal_actions()) if take_k(a) == 1}


def _king(rc, others):
    return {o for o in others if max(abs(o[0] - rc[0]), abs(o[1] - rc[1])) == 1}


# ---------------------------------------------------------------- basic: no small ship
def test_basic_has_no_small_ship():
    p = _pos("basic", tiles=[(1, 1)])
    s = p.build()
    assert _cells_k1(s) == set(PLAYABLE) - {(1, 1)}
    s.apply(TAKE(1, 3, 4))
    assert d(s)["seats"][0]["small_ship"] is None and d(s)["phase"] == "move"


# ---------------------------------------------------------------- advanced (7.1)
@pytest.mark.parametrize("mode", ["advanced", "pro"])
def test_first_tile_anywhere_and_the_ship_goes_onto_it(mode):
    s = _pos(mode).build()
    assert _cells_k1(s) == set(PLAYABLE)
    s.apply(TAKE(1, 2, 3))
    assert d(s)["seats"][0]["small_ship"] == [2, 3]


@pytest.mark.parametrize("mode", ["advanced", "pro"])
def test_T12_placement_next_to_the_ship_incl_diagonal(mode):
    tiles = [rc for rc in PLAYABLE if rc not in ((0, 0), (3, 3))]
    s = _pos(mode, shells=(0, 5), tiles=tiles, ship=(1, 1)).build()
    assert _cells_k1(s) == {(0, 0)}                      # diagonal; (3,3) is too far
    assert (1, 1) not in removes(s.legal_actions())      # the ship's tile stays
    assert len(removes(s.legal_actions())) == len(tiles) - 1
    # with one shell the ship may first step (1,1) -> (2,2), next to (3,3)
    s = _pos(mode, shells=(1, 5), tiles=tiles, ship=(1, 1)).build()
    assert _cells_k1(s) == {(0, 0), (3, 3)}
    s.apply(TAKE(1, 3, 3))
    assert d(s)["seats"][0]["shells"] == 0 and d(s)["bank"] == 25


@pytest.mark.parametrize("mode", ["advanced", "pro"])
def test_paid_ship_steps_are_king_steps_over_tiles_one_shell_each(mode):
    row = [(1, 0), (1, 1), (1, 2), (1, 3)]
    for target, cost in (((2, 1), 0), ((2, 2), 1), ((2, 3), 2), ((2, 4), 3)):
        for shells in (cost, cost - 1):
            if shells < 0:
                continue
            s = _pos(mode, shells=(shells, 5), tiles=row, ship=(1, 0)).build()
            legal = target in _cells_k1(s)
            assert legal == (shells >= cost), (target, shells)
            if legal:
                s.apply(TAKE(1, *target))
                assert d(s)["seats"][0]["shells"] == shells - cost
    # a step never crosses an empty cell: without (1,2) the far cells are out of reach
    s = _pos(mode, shells=(9, 5), tiles=[(1, 0), (1, 1), (1, 3)], ship=(1, 0)).build()
    cells = _cells_k1(s)
    assert (2, 4) not in cells and (1, 4) not in cells and (2, 2) in cells


@pytest.mark.parametrize("mode", ["advanced", "pro"])
def test_paid_steps_apply_to_placing_from_storage_too(mode):
    p = _pos(mode, shells=(1, 5), tiles=[(1, 0), (1, 1)], ship=(1, 0))
    p.store(0, SINGLE(1))
    s = p.build()
    cells = {divmod(((a - FROM_STORE(0, 0)) // 4), 5) for a in from_stores(s.legal_actions())}
    assert (2, 2) in cells and (2, 3) not in cells
    s.apply(FROM_STORE(2, 2))
    assert d(s)["seats"][0]["shells"] == 0


@pytest.mark.parametrize("discover", ["take", "store", "remove", "pass"])
def test_advanced_step_3_free_move_onto_any_tile(discover):
    tiles = [(0, 0), (1, 0), (2, 4), (3, 4)]
    s = _pos("advanced", shells=(0, 5), tiles=tiles, ship=(1, 0)).build()
    act = {"take": TAKE(1, 2, 0), "store": STORE(1), "remove": REMOVE(0, 0), "pass": PASS}[discover]
    s.apply(act)
    x = d(s)
    assert x["phase"] == "small_ship" and s.current_player == 0
    on_board = {(r, c) for r in range(4) for c in range(5) if x["seats"][0]["board"][r][c]}
    assert set(small_ships(s.legal_actions())) == on_board     # any tile, never an empty cell
    assert small_ships(s.legal_actions()) == sorted(on_board) and len(s.legal_actions()) == len(on_board)
    keep = s.clone()
    keep.apply(SMALL_SHIP(1, 0))                               # leaving it is allowed
    assert d(keep)["seats"][0]["small_ship"] == [1, 0]
    s.apply(SMALL_SHIP(3, 4))                                  # far away, and free
    y = d(s)
    assert y["seats"][0]["small_ship"] == [3, 4]
    assert y["seats"][0]["shells"] == x["seats"][0]["shells"]
    assert s.current_player == 1 and y["phase"] == "move"


def test_advanced_ship_tile_cannot_be_removed():
    s = _pos("advanced", tiles=[(1, 0)], ship=(1, 0)).build()
    assert removes(s.legal_actions()) == []


# ---------------------------------------------------------------- pro (7.2)
@pytest.mark.parametrize("how", ["display", "storage"])
def test_pro_ship_moves_onto_the_placed_tile(how):
    p = _pos("pro", shells=(0, 5), tiles=[(1, 0), (3, 4)], ship=(1, 0))
    if how == "storage":
        p.store(0, SINGLE(1))
    s = p.build()
    s.apply(TAKE(1, 2, 1) if how == "display" else FROM_STORE(2, 1))
    x = d(s)
    assert x["seats"][0]["small_ship"] == [2, 1]
    assert x["phase"] == "move" and s.current_player == 1     # no free move in pro


@pytest.mark.parametrize("act", [STORE(1), REMOVE(3, 4), PASS])
def test_pro_ship_does_not_move_after_storage_remove_or_pass(act):
    s = _pos("pro", tiles=[(1, 0), (3, 4)], ship=(1, 0)).build()
    s.apply(act)
    x = d(s)
    assert x["seats"][0]["small_ship"] == [1, 0]
    assert x["phase"] == "move" and s.current_player == 1


def test_pro_ship_tile_cannot_be_removed():
    s = _pos("pro", tiles=[(1, 0), (2, 2)], ship=(2, 2)).build()
    assert removes(s.legal_actions()) == [(1, 0)]


# ---------------------------------------------------------------- coral-reef side limit
@pytest.mark.parametrize("mode", ["basic", "advanced", "pro"])
def test_coral_reef_side_allows_2_to_4_players(mode):
    for n in (2, 3, 4):
        GAME.new(n, rules={"board_side": "coral_reef", "mode": mode})
    with pytest.raises(ValueError, match="board_side"):
        GAME.new(5, rules={"board_side": "coral_reef", "mode": mode})
    GAME.new(5, rules={"board_side": "standard", "mode": mode})


def test_coral_reef_board_has_20_playable_cells():
    p = Pos(2, {"board_side": "coral_reef"}, phase="discover", ship=0)
    p.disp(0, 0, SINGLE(1))
    cells = _cells_k1(p.build())
    assert cells == {(r, c) for r in range(4) for c in range(5)}


@pytest.mark.parametrize("mode", ["advanced", "pro"])
def test_skip_cost_and_ship_steps_are_paid_together(mode):
    row = [(1, 0), (1, 1)]
    # the 2nd tile (1 shell) onto (2,2) (one ship step, 1 shell): 2 shells needed
    s = _pos(mode, shells=(1, 5), tiles=row, ship=(1, 0)).build()
    assert (2, 2) not in {take_cell(a) for a in takes(s.legal_actions()) if take_k(a) == 2}
    assert (2, 2) in {take_cell(a) for a in takes(s.legal_actions()) if take_k(a) == 1}
    s = _pos(mode, shells=(2, 5), tiles=row, ship=(1, 0)).build()
    s.apply(TAKE(2, 2, 2))
    assert d(s)["seats"][0]["shells"] == 0 and d(s)["bank"] == 25


@pytest.mark.parametrize("mode", ["advanced", "pro"])
def test_storage_remove_and_pass_stay_available_when_no_cell_is_reachable(mode):
    tiles = [rc for rc in PLAYABLE if rc not in ((3, 3),)]
    s = _pos(mode, shells=(0, 5), tiles=tiles, ship=(0, 0)).build()
    acts = s.legal_actions()
    assert takes(acts) == []
    assert STORE(1) in acts and PASS in acts and removes(acts)


def test_advanced_small_ship_never_on_an_empty_cell_after_a_remove():
    tiles = [(1, 0), (1, 1), (2, 2)]
    s = _pos("advanced", tiles=tiles, ship=(1, 0)).build()
    s.apply(REMOVE(2, 2))
    assert small_ships(s.legal_actions()) == [(1, 0), (1, 1)]
