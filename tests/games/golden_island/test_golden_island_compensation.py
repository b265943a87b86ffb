"""Seat compensation in The Golden Island (seat_bonus_gold, an analysis option): gold coins a
seat starts with, beside the bank, counted in its final gold."""
import random

import pytest

import core_cy
from compensation_checks import (check_any_value, check_default_unchanged, check_validation,
                                 option, without)

NAME = "seat_bonus_gold"


def test_bonus_gold_is_exactly_the_starting_coins():
    game = core_cy.load("golden_island")
    option(game, NAME)
    base = game.new(4, seed=3).to_dict()
    comp = game.new(4, {NAME: [0, 1, 0, 7]}, seed=3).to_dict()
    assert [s["gold"]["coins"] for s in base["seats"]] == [0, 0, 0, 0]
    assert [s["gold"]["coins"] for s in comp["seats"]] == [0, 1, 0, 7]
    assert comp["rules"][NAME] == [0, 1, 0, 7]
    paths = [("rules", NAME)] + [("seats", i, "gold", "coins") for i in range(4)]
    assert without(comp, *paths) == without(base, *paths)   # nothing else moves (bank too)


def test_bonus_gold_counts_in_the_final_gold():
    game = core_cy.load("golden_island")
    from core_cy.play.batch import play_columns
    base = play_columns(game, 3, None, "random", seed=2, count=6)
    comp = play_columns(game, 3, {NAME: [0, 0, 5]}, "random", seed=2, count=6)
    # random play does not look at gold, so the same games are played; seat 2 ends 5 richer
    assert (comp["length"] == base["length"]).all()
    assert (comp["seat_gold_total"][:, 2] == base["seat_gold_total"][:, 2] + 5).all()
    assert (comp["seat_gold_total"][:, :2] == base["seat_gold_total"][:, :2]).all()


def test_default_plays_the_rules_as_written():
    check_default_unchanged(core_cy.load("golden_island"), NAME, 4)


def test_bad_bonus_names_the_option():
    check_validation(core_cy.load("golden_island"), NAME, 3, -1, 51)


def test_any_value_is_either_played_or_refused_by_name():
    check_any_value(core_cy.load("golden_island"), NAME, 4)


def test_a_compensated_state_round_trips_running_and_finished():
    """from_dict takes back what to_dict wrote: a running state holds its starting coins
    (the bonus), a finished one its payouts on top of them, never doubled or refused."""
    game = core_cy.load("golden_island")
    state = game.new(3, {NAME: [0, 2, 9]}, seed=5)
    assert game.from_dict(state.to_dict()).to_dict() == state.to_dict()
    rng = random.Random(1)
    while not state.is_terminal():
        state.apply(rng.choice(state.legal_actions()))
        if not state.is_terminal():
            assert state.to_dict()["seats"][2]["gold"]["coins"] == 9  # paid only at the end
            if state.num_moves % 25 == 0:
                assert game.from_dict(state.to_dict()).to_dict() == state.to_dict()
    again = game.from_dict(state.to_dict())
    assert again.to_dict() == state.to_dict() and again.scores() == state.scores()
    forged = state.to_dict()
    forged["seats"][2]["gold"]["coins"] += 1
    with pytest.raises(ValueError, match="seats"):
        game.from_dict(forged)
