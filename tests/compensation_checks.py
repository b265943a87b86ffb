"""Checks shared by the seat-compensation tests of every competitive game: a per-seat
analysis option (off by default) that changes exactly what it says at setup, leaves the rules
as written (same games, same fingerprint) at its default, and names itself when it is bad."""
import hashlib
import json

import pytest

from core_cy.play.batch import play_columns


def option(game, name):
    (opt,) = [o for o in game.options if o.name == name]
    assert opt.kind == "seats" and opt.analysis and opt.default == []
    assert "not a rule of the book" in opt.description
    assert game.rules_schema()["properties"][name]["x-analysis"] is True
    return opt


def fingerprint_as_written(game, players, rules=None):
    """The fingerprint as it was built before the analysis option existed."""
    resolved = game.resolve_rules(rules, players)
    resolved = {k: v for k, v in resolved.items()
                if not next(o for o in game.options if o.name == k).analysis}
    blob = json.dumps([game.name, game.engine_version, resolved], sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def check_default_unchanged(game, name, players):
    """[] and all zeros play the rules as written: same fingerprint as before the option, the
    same games (every column but none) as the default rules."""
    zeros = [0] * players
    for n in range(game.min_players, game.max_players + 1):
        assert game.rules_fingerprint(None, n) == fingerprint_as_written(game, n)
        assert game.rules_fingerprint({name: [0] * n}, n) == game.rules_fingerprint(None, n)
    bonus = zeros[:-1] + [1]
    assert game.rules_fingerprint({name: bonus}, players) != game.rules_fingerprint(None, players)
    base = play_columns(game, players, None, "random", seed=5, count=6)
    same = play_columns(game, players, {name: zeros}, "random", seed=5, count=6)
    for column in ("seat_score", "seat_win_share", "length"):
        assert (base[column] == same[column]).all()


def check_validation(game, name, players, too_low, too_high):
    """Bad values raise a ValueError naming the option."""
    bad = [[0] * (players - 1), [0] * (players + 1), [too_low] + [0] * (players - 1),
           [too_high] + [0] * (players - 1), [0.5] * players, "2", [True] * players, 3]
    for value in bad:
        with pytest.raises(ValueError, match=name):
            game.resolve_rules({name: value}, players)


def without(d: dict, *paths) -> dict:
    """A deep copy of a state dict without the given (key, ...) paths."""
    d = json.loads(json.dumps(d))
    for path in paths:
        node = d
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]
    return d


def check_any_value(game, name, players):
    """Any value crossing the boundary: a valid one resolves to itself and sets up a game the
    engine can play; any other raises a ValueError naming the option (hypothesis)."""
    from hypothesis import given, settings, strategies as hs

    opt = next(o for o in game.options if o.name == name)

    @settings(max_examples=60, deadline=None)
    @given(hs.one_of(hs.lists(hs.integers(-100, 100), max_size=9), hs.integers(),
                     hs.text(max_size=3), hs.lists(hs.floats(allow_nan=True), max_size=4)))
    def check(value):
        valid = (isinstance(value, list) and len(value) in (0, players)   # 2.0 is 2 (JSON)
                 and all((isinstance(v, int) or (isinstance(v, float) and v.is_integer()))
                         and opt.minimum <= v <= opt.maximum for v in value))
        try:
            rules = game.resolve_rules({name: value}, players)
        except ValueError as exc:
            assert name in str(exc)
            return
        if not valid:   # only a cross-option check of the game may refuse a valid value
            raise AssertionError(f"{value!r} was accepted")
        assert rules[name] == value
        state = game.new(players, {name: value}, seed=1)
        assert state.legal_actions()

    check()
