"""States from outside (issue 27 item 8), every game: a valid to_dict() output with one field
changed is either refused by from_dict with a ValueError, or it is a state the engine can
play: every legal action applies, and random play from it ends.  Run on the checked build
(bounds checks on, see setup.py) a read outside an array fails the run instead of passing
unseen.  The other half of the contract, that every reachable state is accepted and rebuilt
exactly, is each game's own property test (tests/games/<game>/).

The valid states are a few random games per player count (the start, positions along the
way, the end); a mutation picks one leaf of the dict (a number, a flag, a name, a null) or
one list or object and changes it: a number by +-1 or to an edge value, a flag flipped, a
name swapped for another name of the same dict, a list shortened, lengthened or emptied,
an object missing a key, a key renamed or one added.  A mutated state that is accepted
reads back exactly as given (to_dict(from_dict(d)) == d, issue 38)."""
from __future__ import annotations

import copy
import random
from functools import lru_cache

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import core_cy

GAMES = core_cy.game_names()
MOVE_LIMIT = 30_000            # random play from a mutated state must end within this
OPENING = ("game", "players", "rng")   # read by the shared opening (Game.from_dict)


def random_play(state, rng: random.Random, moves: int) -> None:
    for _ in range(moves):
        if state.is_terminal():
            return
        state.apply(rng.choice(state.legal_actions()))


@lru_cache(maxsize=None)
def valid_states(name: str) -> tuple:
    """to_dict() outputs of two random games per player count: the start, three positions
    along the way and the end."""
    game = core_cy.load(name)
    out = []
    for players in range(game.min_players, game.max_players + 1):
        for seed in (1, 2):
            rng = random.Random(seed)
            state = game.new(players, seed=seed)
            out.append(state.to_dict())
            for steps in (5, 40, 200):
                random_play(state, rng, steps)
                out.append(state.to_dict())
            random_play(state, rng, MOVE_LIMIT)
            assert state.is_terminal()
            out.append(state.to_dict())
    return tuple(out)


def places(d, path=()):
    """(path, value) of every list, object and leaf under d: the game's own fields, and of
    the rules only the options' own values (their component data is the rules' validation,
    tested with each game's rules)."""
    if isinstance(d, dict):
        for k, v in d.items():
            if not path and k in OPENING:
                continue
            if path == ("rules",) and isinstance(v, (dict, list)):
                continue
            yield path + (k,), v
            yield from places(v, path + (k,))
    elif isinstance(d, list):
        for i, v in enumerate(d):
            yield path + (i,), v
            yield from places(v, path + (i,))


def names_in(d) -> list:
    return sorted({v for _, v in places(d) if isinstance(v, str)})


def mutations(value, names: list, pick: int) -> object:
    """One changed value of the same field (pick chooses which)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return [value + 1, value - 1, 0, -1, 2**31 - 1, value + 7][pick % 6]
    if isinstance(value, float):
        return [value + 0.5, 1.0 - value, -1.0, 0.0][pick % 4]
    if isinstance(value, str):
        return names[pick % len(names)] if names else value + "x"
    if value is None:
        return [0, 1, "", names[pick % len(names)] if names else 0][pick % 4]
    if isinstance(value, list):
        if not value:
            return [0]
        return [value[:-1], value + value[-1:], [], value[::-1], value[:1] * len(value)][pick % 5]
    if isinstance(value, dict):
        if not value:
            return {"x": 0}
        keys = sorted(value)
        drop = keys[pick % len(keys)]
        if pick % 3 == 1:      # a field renamed: its value under another name
            return {(k + "_renamed" if k == drop else k): v for k, v in value.items()}
        if pick % 3 == 2:      # a field added that no state holds
            return {**value, "note": value[drop]}
        return {k: v for k, v in value.items() if k != drop}
    return None


def mutate(d: dict, where: int, pick: int) -> tuple[dict, tuple]:
    d = copy.deepcopy(d)
    spots = list(places(d))
    path, value = spots[where % len(spots)]
    parent = d
    for k in path[:-1]:
        parent = parent[k]
    parent[path[-1]] = mutations(value, names_in(d), pick)
    return d, path


def check_playable(game, state, seed: int) -> None:
    """Every legal action applies; random play ends."""
    for a in state.legal_actions():
        state.clone().apply(a)
    rng = random.Random(seed)
    random_play(state, rng, MOVE_LIMIT)
    assert state.is_terminal(), f"{game.name}: random play did not end in {MOVE_LIMIT} moves"


@pytest.mark.parametrize("name", GAMES)
@settings(max_examples=120, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(which=st.integers(0, 10**6), where=st.integers(0, 10**6), pick=st.integers(0, 59),
       seed=st.integers(0, 2**16))
def test_a_mutated_state_is_refused_or_playable(name, which, where, pick, seed):
    """...and an accepted one is read exactly: to_dict(from_dict(d)) == d (nothing ignored,
    defaulted or normalised)."""
    game = core_cy.load(name)
    states = valid_states(name)
    d, path = mutate(states[which % len(states)], where, pick)
    try:
        state = game.from_dict(d)
    except ValueError:
        return
    assert state.to_dict() == d, f"{name}: {path} changed and was read back otherwise"
    check_playable(game, state, seed)


@pytest.mark.parametrize("name", GAMES)
def test_the_valid_states_are_accepted_and_playable(name):
    game = core_cy.load(name)
    for k, d in enumerate(valid_states(name)):
        state = game.from_dict(d)
        assert state.to_dict() == d
        check_playable(game, state, k)
