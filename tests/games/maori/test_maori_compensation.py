"""Seat compensation in Maori (seat_bonus_shells, an analysis option): extra starting shells,
taken from the bank."""
import pytest

import core_cy
from compensation_checks import (check_any_value, check_default_unchanged, check_validation,
                                 option, without)

NAME = "seat_bonus_shells"


def test_bonus_shells_come_from_the_bank():
    game = core_cy.load("maori")
    option(game, NAME)
    base = game.new(3, seed=4).to_dict()
    comp = game.new(3, {NAME: [0, 0, 3]}, seed=4).to_dict()
    assert [s["shells"] for s in comp["seats"]] == [5, 5, 8]
    assert comp["bank"] == base["bank"] - 3
    paths = [("rules", NAME), ("bank",)] + [("seats", i, "shells") for i in range(3)]
    assert without(comp, *paths) == without(base, *paths)
    assert game.to_dict(game.from_dict(comp)) == comp


def test_the_bank_must_hold_the_bonus():
    game = core_cy.load("maori")
    game.resolve_rules({NAME: [0, 0, 15]}, 3)          # 30 - 3 x 5 = 15 in the bank
    with pytest.raises(ValueError, match=NAME):
        game.resolve_rules({NAME: [0, 1, 15]}, 3)


def test_default_plays_the_rules_as_written():
    check_default_unchanged(core_cy.load("maori"), NAME, 3)


def test_bad_bonus_names_the_option():
    check_validation(core_cy.load("maori"), NAME, 3, -1, 61)


def test_any_value_is_either_played_or_refused_by_name():
    check_any_value(core_cy.load("maori"), NAME, 3)
