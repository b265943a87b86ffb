"""from_dict takes a state dict exactly as to_dict writes it (issue 38): a field it would
ignore, default or normalise is refused with a ValueError naming the field, and every dict it
accepts reads back unchanged (the property over mutated states of every game:
test_from_dict_props.py).  These are the cases of the issue's probe, each refused by name."""
from __future__ import annotations

import copy
import random
import re

import pytest

import core_cy

GAMES = core_cy.game_names()


def start(name: str, players: int | None = None, rules: dict | None = None) -> dict:
    game = core_cy.load(name)
    return game.new(players or max(game.min_players, 2), rules, seed=4).to_dict()


def refused(name: str, d: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        core_cy.load(name).from_dict(d)


@pytest.mark.parametrize("name", GAMES)
def test_an_unknown_field_is_refused_by_its_path(name):
    d = start(name)
    d["note"] = "kept?"
    refused(name, d, r"^state\.note: unknown field")
    d = start(name)
    seat_key = "pawns" if name == "forbidden_desert" else "seats"
    d[seat_key][0]["colour"] = "red"
    refused(name, d, rf"^state\.{seat_key}\[0\]\.colour: unknown field")


@pytest.mark.parametrize("name", GAMES)
def test_every_field_is_required_even_where_a_default_was_taken(name):
    for key in ("moves", "rng", "terminal"):
        d = start(name)
        del d[key]
        refused(name, d, rf"^state: missing field '{key}'")


@pytest.mark.parametrize("name", GAMES)
def test_rules_are_read_whole_never_filled_in(name):
    d = start(name)
    first = next(iter(d["rules"]))
    del d["rules"][first]
    refused(name, d, rf"^state\.rules: missing field '{first}'")


def test_desert_storm_elsewhere_than_the_boards_storm_is_refused():
    d = start("forbidden_desert")
    r, c = d["storm"]
    d["storm"] = [(r + 1) % 5, c]
    refused("forbidden_desert", d, r"^state\.storm: \[.*disagrees with the rest of the state, "
                                   rf"which gives \[{r}, {c}\]")


def test_desert_renamed_part_is_refused_not_read_as_the_old_one():
    d = start("forbidden_desert")
    names = [p["part"] for p in d["parts"]]
    d["parts"][0]["part"] = names[1]
    refused("forbidden_desert", d, rf"^state\.parts\[0\]\.part: '{names[1]}' disagrees .* "
                                   rf"which gives '{names[0]}'")


def test_golden_island_written_notes_as_given_round_trip_and_differ():
    """Off with no forgetting plays as on, yet it is another rule set: each reads back as
    given, so a state never passes for the other (nor takes its fingerprint)."""
    game = core_cy.load("golden_island")
    for notes in (False, True):
        rules = {"written_notes": notes, "recall_error_per_mille": 0}
        d = game.new(3, rules, seed=2).to_dict()
        assert (d["rules"]["written_notes"], d["rules"]["recall_error_per_mille"]) == (notes, 0)
        assert game.from_dict(d).to_dict() == d
    d = game.new(3, {"written_notes": True, "recall_error_per_mille": 250}, seed=2).to_dict()
    assert d["rules"]["recall_error_per_mille"] == 250 and game.from_dict(d).to_dict() == d
    assert game.new(3, seed=2).to_dict()["rules"] == game.resolve_rules({}, 3)


def test_mondo_cell_without_rotation_is_refused():
    game = core_cy.load("mondo")
    state, rng = game.new(2, seed=3), random.Random(3)
    while not any(c for row in state.to_dict()["seats"][0]["board"] for c in row):
        legal = state.legal_actions()
        places = game.actions.select(legal, "place")
        state.apply(places[0] if places else rng.choice(legal))
    d = state.to_dict()
    r, c = next((r, c) for r, row in enumerate(d["seats"][0]["board"])
                for c, cell in enumerate(row) if cell)
    del d["seats"][0]["board"][r][c]["rotation"]
    refused("mondo", d, rf"^state\.seats\[0\]\.board\[{r}\]\[{c}\]: missing field 'rotation'")


def test_mondo_position_between_decisions_is_refused_and_run_clock_plays_it_on():
    game = core_cy.load("mondo")
    d = game.new(2, {"rounds": 2}, seed=3).to_dict()
    for seat in d["seats"]:
        seat["finished"] = True
    refused("mondo", copy.deepcopy(d), r"^state\.round: 0, but at this position the clock runs "
                                       r"on to round 1")
    moved = game.run_clock(d).to_dict()
    assert moved["round"] == 1 and game.from_dict(moved).to_dict() == moved


def test_a_set_in_another_order_is_refused_whole():
    """A list the state keeps as a set (Golden Island's permits in the pool) reads back in
    to_dict's order; another order is not the state's and is named with both lists."""
    d = start("golden_island")
    pool = d["seats"][0]["permits_pool"]
    d["seats"][0]["permits_pool"] = pool[::-1]
    given, back = re.escape(str(pool[::-1])), re.escape(str(pool))
    refused("golden_island", d, rf"^state\.seats\[0\]\.permits_pool: {given} disagrees .* "
                                rf"which gives {back}")
