"""Seat compensation in Mondo (seat_bonus_points, an analysis option): points added to a seat's
final total; the round scores stay as scored."""
import core_cy
from compensation_checks import (check_any_value, check_default_unchanged, check_validation,
                                 option)
from core_cy.play.batch import play_columns

NAME = "seat_bonus_points"


def test_bonus_points_add_to_the_final_total_only():
    game = core_cy.load("mondo")
    option(game, NAME)
    base_scores = game.new(3, seed=1).scores()
    assert game.new(3, {NAME: [0, 0, 9]}, seed=1).scores() == [*base_scores[:2],
                                                                base_scores[2] + 9]
    base = play_columns(game, 3, None, "random", seed=8, count=5)
    comp = play_columns(game, 3, {NAME: [0, 0, 9]}, "random", seed=8, count=5)
    rounds = [c for c in base if c.startswith("seat_round") and c.endswith("_score")]
    for c in rounds:
        assert (comp[c] == base[c]).all()
    assert (comp["seat_score"][:, 2] == base["seat_score"][:, 2] + 9).all()
    assert (comp["seat_score"][:, :2] == base["seat_score"][:, :2]).all()
    # the winner is judged on the totals with the bonus
    top = comp["seat_score"].max(axis=1)
    assert ((comp["seat_win_share"][:, 2] > 0) == (comp["seat_score"][:, 2] == top)).all()


def test_default_plays_the_rules_as_written():
    check_default_unchanged(core_cy.load("mondo"), NAME, 4)


def test_bad_bonus_names_the_option():
    check_validation(core_cy.load("mondo"), NAME, 3, -1, 101)


def test_any_value_is_either_played_or_refused_by_name():
    check_any_value(core_cy.load("mondo"), NAME, 3)
