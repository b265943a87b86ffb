"""Invariants of Maori under random and greedy play from many seeds and variants
(hypothesis): components are conserved, every reached state is legal, the state dict round
trip is exact, the same seed replays the same game, and greedy's fast action values equal
the generic clone-apply-heuristic values."""
from collections import Counter

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

import core_cy
from core_cy import agents

GAME = core_cy.load("maori")
N_TILES = 97


@st.composite
def setups(draw):
    players = draw(st.integers(2, 5))
    side = draw(st.sampled_from(["standard", "coral_reef"] if players <= 4 else ["standard"]))
    rules = {"mode": draw(st.sampled_from(["basic", "advanced", "pro"])), "board_side": side,
             "lei_model": draw(st.sampled_from(["edge_halves", "whole_on_tile"])),
             "skip_cost": draw(st.sampled_from(["per_tile", "per_position"])),
             "ship_start": draw(st.sampled_from(["chosen", "random"]))}
    return players, rules, draw(st.integers(0, 2**32)), draw(st.floats(0, 1))


def tile_locations(d):
    """Every tile id with the places it is found in a state dict."""
    where = Counter()
    for row in d["display"]:
        where.update(t for t in row if t is not None)
    where.update(d["pile"])
    where.update(d["box"])
    for seat in d["seats"]:
        if seat["storage"] is not None:
            where[seat["storage"]] += 1
        where.update(c["tile"] for row in seat["board"] for c in row if c is not None)
    return where


def check_legal_state(state, d, rules):
    tiles = d["rules"]["tiles"]
    where = tile_locations(d)
    assert sorted(where) == list(range(N_TILES)) and set(where.values()) == {1}, "tiles conserved"
    assert d["bank"] + sum(s["shells"] for s in d["seats"]) == 30, "shells conserved"
    assert d["bank"] >= 0 and all(s["shells"] >= 0 for s in d["seats"])
    layout = d["rules"]["boards"][rules["board_side"]]["cells"]
    for seat in d["seats"]:
        for r, row in enumerate(seat["board"]):
            for c, cell in enumerate(row):
                if cell is None:
                    continue
                assert layout[r][c] != "P", "tiles lie only on playable cells"
                tile = tiles[cell["tile"]]
                assert tile["shape"] != "VOLCANO", "volcanoes are never taken"
                if tile["palms"]:
                    assert cell["rotation"] == 0, "palms stay upright"
        ship = seat["small_ship"]
        if rules["mode"] == "basic":
            assert ship is None
        elif ship is not None and not d["terminal"]:
            assert seat["board"][ship[0]][ship[1]] is not None, "the small ship stands on a tile"
    if not d["terminal"]:
        assert 0 <= state.current_player < len(d["seats"])
        assert state.legal_actions(), "a running game always has a legal action"


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(setups())
def test_random_and_greedy_play_reaches_only_legal_states(setup):
    players, rules, seed, greedy_share = setup
    state = GAME.new(players, rules=rules, seed=seed)
    rng = np.random.default_rng(seed)
    initial = state.to_dict()
    assert all(GAME.options and t is not None for row in initial["display"] for t in row)
    assert not any(initial["rules"]["tiles"][t]["shape"] == "VOLCANO"
                   for row in initial["display"] for t in row), "setup sets volcanoes aside"
    trigger_turn = None
    while not state.is_terminal():
        d = state.to_dict()
        check_legal_state(state, d, rules)
        if len(d["box"]) % 3 == 0 or d["moves"] % 9 == 0:  # (a sample: from_dict is slow)
            assert GAME.from_dict(d) == state, "state dict round trip"
        if d["end_trigger"] is not None and trigger_turn is None:
            trigger_turn = d["turns"]
        if rng.random() < greedy_share:
            assert agents.action_values(state, state.current_player) == \
                agents.action_values(state, state.current_player, generic=True)
            action = agents.choose(state, "greedy", seed=int(rng.integers(2**31)))
        else:
            action = int(rng.choice(state.legal_actions()))
        state.apply(action)
    d = state.to_dict()
    check_legal_state(state, d, rules)
    assert GAME.from_dict(d) == state
    if state.end_reason == "board_full":
        # Every other seat played exactly one more turn after the triggering turn.
        assert d["turns"] - trigger_turn == players - 1
        assert d["current_player"] == d["end_trigger"]


@settings(max_examples=10, deadline=None)
@given(setups())
def test_same_seed_replays_the_same_game(setup):
    players, rules, seed, _ = setup
    runs = []
    for _ in range(2):
        state = GAME.new(players, rules=rules, seed=seed)
        trace = []
        while not state.is_terminal():
            a = agents.choose(state, "random", seed=seed + len(trace))
            trace.append(a)
            state.apply(a)
        runs.append((trace, state.to_bytes(), state.scores()))
    assert runs[0] == runs[1]
