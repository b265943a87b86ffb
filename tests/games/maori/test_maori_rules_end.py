"""Maori rules: the end trigger and the final round (spec 6, T-11), stall and turn-limit
safety, the winner, the shell tie-break and the shared win."""
import pytest

from maori_pos import (GAME, Pos, MOVE, TAKE, FROM_STORE, PASS, SINGLE, WATER, VOLCANO,
                       finish, d)

PLAYABLE = [(0, 0), (0, 1), (0, 2)] + [(r, c) for r in (1, 2) for c in range(5)] + [(3, 2), (3, 3), (3, 4)]
LAST = (3, 4)


def _almost_full(p, seat):
    for rc in PLAYABLE:
        if rc != LAST:
            p.put(seat, *rc, WATER())


def _trigger_position(players, trigger_seat):
    """`trigger_seat` to move, one empty cell left, a takable tile next to the ship."""
    p = Pos(players, current=trigger_seat, ship=15)
    _almost_full(p, trigger_seat)
    for r in range(4):
        for c in range(4):
            p.disp(r, c, SINGLE(1))
    for _ in range(8):
        p.pile_push(SINGLE(1))
    return p


def _turn(s, discover=PASS):
    s.apply(MOVE(1))
    s.apply(discover)


@pytest.mark.parametrize("players,trigger", [(4, 1), (4, 3), (4, 0), (2, 0), (2, 1), (5, 2), (3, 2)])
def test_T11_every_other_player_plays_once_more_then_the_game_ends(players, trigger):
    s = _trigger_position(players, trigger).build()
    _turn(s, TAKE(1, *LAST))
    x = d(s)
    assert x["end_trigger"] == trigger and not s.is_terminal()
    seen = []
    while not s.is_terminal():
        seen.append(s.current_player)
        _turn(s)
    expected = [(trigger + i) % players for i in range(1, players)]
    assert seen == expected                                # the trigger does not play again
    assert d(s)["end_reason"] == "board_full" and s.end_reason == "board_full"


def test_the_trigger_is_the_end_of_the_turn_with_no_empty_cell():
    # the board fills from storage as well (action C)
    p = Pos(2, current=0, ship=15)
    _almost_full(p, 0)
    p.store(0, SINGLE(2))
    s = p.build()
    s.apply(MOVE(1))
    assert d(s)["end_trigger"] is None
    s.apply(FROM_STORE(*LAST))
    assert d(s)["end_trigger"] == 0 and s.current_player == 1
    _turn(s)
    assert s.is_terminal()


def test_further_full_boards_change_nothing():
    p = _trigger_position(4, 1)
    _almost_full(p, 2)                                   # seat 2 will fill in the final round
    s = p.build()
    _turn(s, TAKE(1, *LAST))
    assert s.current_player == 2
    _turn(s, TAKE(1, *LAST))
    x = d(s)
    assert x["end_trigger"] == 1 and not s.is_terminal()
    assert s.current_player == 3                         # seats 3 and 0 still play
    _turn(s)
    assert s.current_player == 0 and not s.is_terminal()
    _turn(s)
    assert s.is_terminal()


def test_a_board_not_full_does_not_end_the_game():
    p = _trigger_position(2, 0)
    s = p.build()
    _turn(s)                                             # pass: the last cell stays empty
    assert d(s)["end_trigger"] is None and not s.is_terminal()


def test_end_trigger_scores_after_the_final_round():
    p = _trigger_position(2, 0)
    s = p.build()
    _turn(s, TAKE(1, *LAST))
    _turn(s)
    assert s.is_terminal() and s.legal_actions() == []
    with pytest.raises(ValueError):
        s.apply(PASS)
    assert s.scores() == [b["total"] for b in s.score_breakdown()]


# ---------------------------------------------------------------- stall and turn limit
def _dead_display(players, rules=None, storage_seat=None):
    p = Pos(players, rules, ship=0)
    for r in range(4):
        for c in range(4):
            if (r + c) % 3 == 0:
                p.disp(r, c, VOLCANO())
    if storage_seat is not None:
        p.store(storage_seat, SINGLE(1))
    return p


@pytest.mark.parametrize("players,rounds", [(2, 2), (3, 2), (2, 1), (3, 3)])
def test_stall_ends_the_game_after_stall_rounds_full_rounds(players, rounds):
    s = _dead_display(players, {"stall_rounds": rounds}).build()
    for _ in range(players * rounds - 1):
        _turn(s)
        assert not s.is_terminal()
    _turn(s)
    assert s.is_terminal() and d(s)["end_reason"] == "stall"


def test_no_stall_while_a_storage_holds_a_tile():
    s = _dead_display(2, {"stall_rounds": 1}, storage_seat=1).build()
    for _ in range(6):
        _turn(s)
    assert not s.is_terminal()


def test_no_stall_while_the_display_has_a_takable_tile():
    p = _dead_display(2, {"stall_rounds": 1})
    p.disp(2, 2, SINGLE(1))
    s = p.build()
    for _ in range(6):
        _turn(s)
    assert not s.is_terminal()


def test_turn_limit_safety():
    s = GAME.new(3, rules={"max_turns": 10, "ship_start": "random"}, seed=4)
    turns = 0
    while not s.is_terminal():
        acts = s.legal_actions()
        phase = d(s)["phase"]
        s.apply(PASS if PASS in acts else acts[0])
        turns += phase == "discover"
    assert turns == 10 and d(s)["end_reason"] == "turn_limit"


# ---------------------------------------------------------------- winner and tie-breaks
def _scores_position(shells, a_huts=(1, 1), b_huts=(1, 1)):
    """Seats 0 and 1 build equal islands; seat 2 has most shells but a poor board."""
    p = Pos(3, shells=shells)
    for seat, huts in ((0, a_huts), (1, b_huts)):
        p.put(seat, 1, 1, SINGLE(3, hut=huts[0]))
        p.put(seat, 2, 2, SINGLE(3, hut=huts[1]))
        p.put(seat, 0, 0, WATER(boats=1))
    return p


def test_highest_total_wins():
    s = finish(_scores_position([2, 2, 9], b_huts=(1, 0)).build())
    sc = s.scores()
    assert sc[0] > sc[1] > sc[2]
    assert s.winners() == [0] and s.win_shares() == [1.0, 0.0, 0.0]


@pytest.mark.parametrize("shells,winner", [([2, 1, 9], 0), ([1, 2, 9], 1)])
def test_tie_on_points_goes_to_more_shells(shells, winner):
    s = finish(_scores_position(shells).build())
    sc = s.scores()
    assert sc[0] == sc[1] > sc[2]
    assert s.winners() == [winner] and s.win_shares()[winner] == 1.0


def test_tie_on_points_and_shells_is_a_shared_win():
    s = finish(_scores_position([2, 2, 9]).build())
    sc = s.scores()
    assert sc[0] == sc[1] > sc[2]
    assert s.winners() == [0, 1] and s.win_shares() == [0.5, 0.5, 0.0]


def test_shared_win_between_three():
    s = finish(Pos(3, shells=[3, 3, 3]).build())
    assert s.winners() == [0, 1, 2]
    assert s.win_shares() == pytest.approx([1 / 3] * 3)


def test_stall_counts_tiles_no_ship_position_can_reach_as_not_takable():
    # the only island tile is walled in by volcanoes on all four sides: no line reaches it
    p = Pos(2, {"stall_rounds": 2}, ship=0)
    p.disp(1, 1, SINGLE(1))
    for rc in ((0, 1), (2, 1), (1, 0), (1, 2)):
        p.disp(*rc, VOLCANO())
    s = p.build()
    for _ in range(3):
        _turn(s)
        assert not s.is_terminal()
    _turn(s)
    assert s.is_terminal() and s.end_reason == "stall"


def test_a_tile_reachable_from_one_side_prevents_the_stall():
    p = Pos(2, {"stall_rounds": 1}, ship=0)
    p.disp(1, 1, SINGLE(1))
    for rc in ((0, 1), (2, 1), (1, 0)):                # open towards the right side
        p.disp(*rc, VOLCANO())
    s = p.build()
    for _ in range(6):
        _turn(s)
    assert not s.is_terminal()
