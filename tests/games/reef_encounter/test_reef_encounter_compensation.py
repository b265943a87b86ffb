"""Seat compensation in Reef Encounter (seat_bonus_polyps, an analysis option): polyps added to
or taken from each turn-order seat's starting hand (6/7/8/9 by the book)."""
import pytest

import core_cy
from compensation_checks import (check_any_value, check_default_unchanged, check_validation,
                                 option)

NAME = "seat_bonus_polyps"
HANDS = {2: [6, 9], 3: [6, 7, 9], 4: [6, 7, 8, 9]}


def _hands(state):
    d = state.to_dict()
    return [sum(s["screen"].values()) for s in d["seats"]], sum(d["bag"].values())


@pytest.mark.parametrize("players", [2, 3, 4])
def test_bonus_polyps_change_the_hands_drawn(players):
    game = core_cy.load("reef_encounter")
    option(game, NAME)
    bonus = [0] * (players - 1) + [-2]
    bonus[0] = 1
    hands, bag = _hands(game.new(players, seed=6))
    assert hands == HANDS[players]
    comp_hands, comp_bag = _hands(game.new(players, {NAME: bonus}, seed=6))
    assert comp_hands == [h + b for h, b in zip(HANDS[players], bonus)]
    assert comp_bag == bag - sum(bonus)


def test_bonus_follows_turn_order_from_a_random_start():
    game = core_cy.load("reef_encounter")
    state = game.new(3, {NAME: [2, 0, 0], "start_player": "random"}, seed=11)
    d = state.to_dict()
    hands = [sum(s["screen"].values()) for s in d["seats"]]
    assert hands[d["start_player"]] == 6 + 2


def test_every_hand_keeps_a_polyp():
    game = core_cy.load("reef_encounter")
    game.resolve_rules({NAME: [-5, 0]}, 2)
    with pytest.raises(ValueError, match=NAME):
        game.resolve_rules({NAME: [-6, 0]}, 2)


def test_default_plays_the_rules_as_written():
    check_default_unchanged(core_cy.load("reef_encounter"), NAME, 4)


def test_bad_bonus_names_the_option():
    check_validation(core_cy.load("reef_encounter"), NAME, 3, -9, 21)


def test_any_value_is_either_played_or_refused_by_name():
    check_any_value(core_cy.load("reef_encounter"), NAME, 3)
