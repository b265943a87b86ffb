"""Maori Python face: bad input raises ValueError naming the problem (issue 2, item 4), and
the action encoding used by the rule tests agrees with describe()."""
import copy

import pytest

import core_cy
from maori_pos import (GAME, Pos, MOVE, TAKE, STORE, FROM_STORE, REMOVE, PASS, SMALL_SHIP, SINGLE,
                       END, VOLCANO, d)


def test_catalogue_and_info():
    assert "maori" in core_cy.game_names()
    info = GAME.info()
    assert (info["min_players"], info["max_players"]) == (2, 5)
    props = info["rules"]["properties"]
    for name, default in (("mode", "basic"), ("board_side", "standard"),
                          ("rotate_palmless", True), ("lei_model", "edge_halves"),
                          ("skip_cost", "per_tile"), ("shell_shortfall", "partial"),
                          ("stall_rounds", 2)):
        assert props[name]["default"] == default
    # every ASSUMPTION of the spec is an option marked as such
    for name in ("rotate_palmless", "lei_model", "skip_cost", "shell_shortfall",
                 "reef_boat_counts_while_uncovered", "stall_rounds", "tiles", "boards"):
        assert props[name].get("x-assumption") is True, name
    with pytest.raises(ValueError, match="unknown game"):
        core_cy.load("mauri")


@pytest.mark.parametrize("rules,word", [
    ({"colour": "red"}, "colour"),
    ({"mode": "expert"}, "mode"),
    ({"board_side": "atoll"}, "board_side"),
    ({"rotate_palmless": "yes"}, "rotate_palmless"),
    ({"lei_model": "halves"}, "lei_model"),
    ({"skip_cost": 1}, "skip_cost"),
    ({"shell_shortfall": "all"}, "shell_shortfall"),
    ({"stall_rounds": 0}, "stall_rounds"),
    ({"max_turns": "many"}, "max_turns"),
    ({"start_shells": -1}, "start_shells"),
    ({"total_shells": 5}, "total_shells"),
    ({"tiles": []}, "tiles"),
    ({"tiles": [{"shape": "CURVE"}]}, "tiles"),
    ({"tiles": [{"shape": "END", "open": "NS"}]}, "tiles"),
    ({"tiles": [{"shape": "MIDDLE", "open": "NE"}]}, "tiles"),
    ({"tiles": [{"shape": "WATER", "palms": 1}]}, "tiles"),
    ({"tiles": [{"shape": "SINGLE", "palms": 1}] * 15}, "tiles"),
    ({"boards": {"standard": {"cells": ["..X"]}}}, "boards"),
    ("basic", "rules"),
])
def test_bad_rule_options(rules, word):
    with pytest.raises(ValueError, match=word):
        GAME.new(3, rules=rules)


@pytest.mark.parametrize("players", [0, 1, 6, "3", 2.5, True, None])
def test_bad_player_count(players):
    with pytest.raises(ValueError, match="players"):
        GAME.new(players)


def test_coral_reef_with_five_players_names_the_side():
    with pytest.raises(ValueError, match="coral_reef"):
        GAME.new(5, rules={"board_side": "coral_reef"})


@pytest.mark.parametrize("action", [-1, 999, 10**9, 16, "x", 1.5, None])
def test_illegal_or_malformed_action(action):
    s = GAME.new(2, seed=1)
    s.apply(0)                       # phase move: a ship placement (16 = move 1 is legal)
    if action == 16:
        action = 0                   # a ship placement is illegal now
    with pytest.raises(ValueError):
        s.apply(action)
    assert d(s)["phase"] == "move"   # nothing changed


def test_illegal_action_in_a_rule_position_is_refused():
    p = Pos(2, phase="discover", ship=0, shells=[0, 5])
    p.line([(0, 0), (1, 0), (2, 0), (3, 0)], [SINGLE(1), SINGLE(1), SINGLE(1), SINGLE(1)])
    s = p.build()
    for a in (TAKE(2, 1, 1), TAKE(1, 0, 3), STORE(2), FROM_STORE(1, 1), REMOVE(1, 1), SMALL_SHIP(1, 1)):
        with pytest.raises(ValueError, match="illegal"):
            s.apply(a)


def _good():
    p = Pos(2, phase="discover", ship=0)
    p.disp(0, 0, SINGLE(1))
    p.put(0, 1, 1, END("E", 2))
    return p.build_dict()


def _set(path, value):
    def f(x):
        obj = x
        for k in path[:-1]:
            obj = obj[k]
        if value is KeyError:
            del obj[path[-1]]
        else:
            obj[path[-1]] = value
        return x
    return f


@pytest.mark.parametrize("change,word", [
    (lambda x: [], "dict"),
    (_set(["game"], "mondo"), "game"),
    (_set(["players"], 7), "players"),
    (_set(["phase"], "bidding"), "phase"),
    (_set(["phase"], KeyError), "phase"),
    (_set(["current_player"], 2), "current_player"),
    (_set(["ship_position"], 16), "ship_position"),
    (_set(["ship_position"], None), "ship_position"),
    (_set(["display"], [[None] * 4] * 3), "display"),
    (_set(["display", 3, 3], 999), "display"),
    (_set(["bank"], 3), "bank"),
    (_set(["seats"], []), "seats"),
    (_set(["seats", 0, "shells"], -1), "shells"),
    (_set(["seats", 0, "board"], [[None] * 5] * 3), "board"),
    (_set(["seats", 0, "board", 0, 3], {"tile": 5, "rotation": 0}), "printed"),
    (_set(["seats", 0, "board", 1, 1, "rotation"], 1), "upright"),
    (_set(["seats", 0, "board", 1, 1, "rotation"], 7), "rotation"),
    (_set(["seats", 0, "storage"], 0), "storage"),           # tile 0 is in the display too
    (_set(["seats", 0, "small_ship"], [1, 1]), "small_ship"),  # basic game has none
    (_set(["box"], []), "tiles"),                             # fillers missing
    (_set(["end_trigger"], 9), "end_trigger"),
    (_set(["end_reason"], "bored"), "end_reason"),
    (_set(["rules", "mode"], "expert"), "mode"),
    (_set(["rng"], "x"), "rng"),
])
def test_malformed_state_dict(change, word):
    data = change(copy.deepcopy(_good()))
    with pytest.raises(ValueError, match=word):
        GAME.from_dict(data)


def test_volcano_on_a_board_is_refused():
    p = Pos(2)
    p.put(0, 1, 1, VOLCANO())
    with pytest.raises(ValueError, match="volcano"):
        p.build()


def test_small_ship_on_an_empty_cell_is_refused():
    p = Pos(2, {"mode": "advanced"})
    p.put(0, 1, 1, SINGLE(1))
    p.small_ship[0] = (2, 2)
    with pytest.raises(ValueError, match="small_ship"):
        p.build()


def test_round_trip_of_a_built_position():
    s = GAME.from_dict(_good())
    assert GAME.from_dict(s.to_dict()) == s


def test_action_encoding_agrees_with_describe():
    p = Pos(2, {"mode": "advanced"}, phase="discover", ship=0)
    p.disp(0, 0, SINGLE(1))
    s = p.build()
    assert s.describe(MOVE(3)).startswith("move the explorer ship 3 steps")
    assert "tile 2 of the line" in s.describe(TAKE(2, 1, 3)) and "(1,3)" in s.describe(TAKE(2, 1, 3))
    assert "90 degrees" in s.describe(TAKE(1, 2, 2, 1))
    assert s.describe(STORE(4)) == "take tile 4 of the line into storage"
    assert "(2,4)" in s.describe(FROM_STORE(2, 4))
    assert s.describe(REMOVE(3, 2)).endswith("(3,2) from the board")
    assert s.describe(PASS) == "do nothing"
    assert s.describe(SMALL_SHIP(1, 4)) == "move the small ship to (1,4)"
    with pytest.raises(ValueError, match="action"):
        s.describe(-1)


@pytest.mark.parametrize("change,word", [
    (_set(["seats", 0, "shells"], 10**6), "shells"),
    (_set(["seats", 0, "score"], "high"), "score"),
    (_set(["seats", 0, "score"], 10**9), "score"),
    (_set(["seats", 0, "removed_at_end"], -3), "removed_at_end"),
    (_set(["seats", 0, "win_share"], "half"), "win_share"),
    (_set(["moves"], 2**40), "moves"),
    (_set(["turns"], 2**40), "turns"),
    (_set(["end_trigger"], True), "end_trigger"),
    (_set(["bank"], 10**12), "bank"),
    (_set(["seats", 0, "small_ship"], "1,1"), "small_ship"),
])
def test_malformed_numbers_in_a_state_dict(change, word):
    data = change(copy.deepcopy(_good()))
    with pytest.raises(ValueError, match=word):
        GAME.from_dict(data)
