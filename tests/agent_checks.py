"""Checks shared by the agent tests of several games."""
from core_cy import agents


def play_checking(state, agent):
    """Plays `agent` in every seat to the end of the game, checking that every choice is a
    legal action and that the same seed gives the same choice; returns the final state."""
    while not state.is_terminal():
        action = agents.choose(state, agent, seed=state.num_moves)
        assert action in state.legal_actions()
        assert action == agents.choose(state, agent, seed=state.num_moves), "same seed"
        state.apply(action)
    return state
