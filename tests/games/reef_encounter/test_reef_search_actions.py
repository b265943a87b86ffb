"""Reef Encounter's search actions (the contract's search_actions, what `mcts(turns=true)`
searches over): a subset of the legal actions that leaves out only the moves of a shrimp that
moved since the turn's last other action, through which every legal turn stays reachable;
the state dict carries those shrimps, so the codec still rebuilds every state exactly."""
import random

from hypothesis import HealthCheck, given, settings, strategies as st

from core_cy import agents
from test_reef_properties import GAME

MOVE = GAME.actions.kind_of


def is_move(action):
    return MOVE(action) == "move"


def play(players, seed, steps, on_state):
    """A game that moves shrimps often (half the decisions where a move is legal), calling
    on_state(before, action, after) at every step."""
    rng = random.Random(seed)
    state = GAME.new(players, seed=seed)
    for _ in range(steps):
        if state.is_terminal():
            return
        legal = state.legal_actions()
        moves = [a for a in legal if is_move(a)]
        if moves and rng.random() < 0.5:
            action = rng.choice(moves)
        else:
            action = agents.choose(state, "quick" if rng.random() < 0.7 else "random",
                                   seed=rng.randrange(2**32))
        before = state.clone()
        state.apply(action)
        on_state(before, action, state)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(2, 4), st.integers(0, 2**32))
def test_the_search_actions_are_legal_and_all_of_them_after_any_other_action(players, seed):
    seen = {"pruned": 0}

    def check(before, action, state):
        legal, search = state.legal_actions(), state.search_actions()
        assert set(search) <= set(legal) and search == sorted(search)
        assert bool(search) == bool(legal)
        if not is_move(action):
            assert search == legal, "only a run of shrimp moves is pruned"
            assert "moved_shrimps" not in state.to_dict()["turn"]
        assert all(is_move(a) for a in set(legal) - set(search))
        seen["pruned"] += len(set(legal) - set(search))
        assert GAME.from_dict(state.to_dict()) == state, "the codec rebuilds it exactly"

    play(players, seed, 250, check)


def _same_turn(state):
    """What a turn's end depends on: the state dict less the move and step counters."""
    d = state.to_dict()
    for key in ("acted", "shrimp_moves", "moved_shrimps"):
        d["turn"].pop(key, None)
    d.pop("moves", None)
    return repr(d)


def test_a_shrimp_moved_again_reaches_only_what_one_move_or_none_reaches():
    """After one move of a shrimp (the first of its run), each of its moves the search leaves
    out leads where one move from its first cell leads, or back to where it stood (an
    `acted` turn can only eat less, a larger move count only move less)."""
    checked = []

    def check(before, action, state):
        if (not is_move(action) or "moved_shrimps" in before.to_dict()["turn"]
                or state.is_terminal() or len(checked) >= 12):
            return
        pruned = sorted(set(state.legal_actions()) - set(state.search_actions()))
        if not pruned:
            return
        direct = {_same_turn(before)}
        for a in before.legal_actions():
            if is_move(a):
                direct.add(_same_turn(before.clone().apply(a)))
        for a in pruned:
            assert _same_turn(state.clone().apply(a)) in direct, GAME.describe(state, a)
        checked.append(len(pruned))

    for seed in range(40):
        play(3, seed, 200, check)
        if len(checked) >= 12:
            break
    assert len(checked) >= 12 and sum(checked) > 100, checked


def test_a_search_over_turns_plays_legal_games_to_a_rule_end():
    state = GAME.new(3, seed=3)
    while not state.is_terminal():
        state.apply(agents.choose(state, "mcts(iterations=20, turns=true)",
                                  seed=state.num_moves))
    assert state.to_dict()["end_reason"] in ("all_tiles_covered", "fourth_shrimp", "reef_full",
                                             "supply_exhausted")
