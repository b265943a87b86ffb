"""Restricted play: any generic agent can be kept from an action kind (agent(forbid=kind));
when every legal action is forbidden it plays one anyway, and the seat_forced column counts
those decisions."""
import pytest

import core_cy
from core_cy import agents
from core_cy.play.batch import play_columns

MCTS = "mcts(iterations=30)"


def test_forbid_parses_and_spells():
    game = core_cy.load("golden_island")
    assert agents.canonical_agent(game, "random") == "random"
    assert agents.canonical_agent(game, "greedy(forbid=steal)") == "greedy(forbid=steal)"
    spelled = agents.canonical_agent(game, "mcts(forbid=pass+steal)")
    assert spelled.endswith(", forbid=pass+steal)")       # in the game's kind order
    assert agents.canonical_agent(game, "mcts(forbid=steal+pass)") == spelled
    assert "forbid" not in agents.canonical_agent(game, MCTS)
    spec = agents.agent_spec(game, "greedy(forbid=steal)")
    kind = game.actions["steal"]
    assert spec["n_forbid"] == 1
    assert (spec["forbid_lo"][0], spec["forbid_hi"][0]) == (kind.base, kind.base + kind.size)


@pytest.mark.parametrize("text", ["greedy(forbid=fly)", "random(forbid=steal+steal)",
                                  "mcts(forbid=)", "greedy(forbid=" + "+".join(
                                      k.name for k in core_cy.load("golden_island").actions.kinds)
                                  + ")"])
def test_bad_forbid_names_the_parameter(text):
    with pytest.raises(ValueError, match="forbid"):
        agents.parse_agent(core_cy.load("golden_island"), text)


def test_engine_policies_take_no_forbid():
    game = core_cy.load("forbidden_desert")
    policy = next(iter(game.policies))
    with pytest.raises(ValueError, match="forbid"):
        agents.parse_agent(game, f"{policy}(forbid=dig)")


@pytest.mark.parametrize("agent", ["random", "greedy", MCTS])
def test_a_forbidden_kind_is_played_only_when_nothing_else_is_legal(agent):
    game = core_cy.load("golden_island")
    restricted = f"{agent[:-1]}, forbid=steal+pass)" if "(" in agent else \
        f"{agent}(forbid=steal+pass)"
    forced = played = 0
    for seed in range(2):
        state = game.new(3, seed=seed)
        while not state.is_terminal():
            seat = state.current_player
            name = restricted if seat == 0 else agent
            action = agents.choose(state, name, seed=seed * 7919 + state.num_moves)
            if seat == 0:
                legal = state.legal_actions()
                kinds = {game.actions.kind_of(a) for a in legal}
                if game.actions.kind_of(action) in ("steal", "pass"):
                    assert kinds <= {"steal", "pass"}, "forbidden while another was legal"
                    forced += 1
                played += 1
            state.apply(action)
    assert played > 0 and forced < played


def test_forbidding_every_kind_plays_the_unrestricted_games_and_counts_each_decision():
    game = core_cy.load("maori")
    everything = "+".join(k.name for k in game.actions.kinds)
    for agent in ("random", "greedy", MCTS):
        restricted = (f"{agent[:-1]}, forbid={everything})" if "(" in agent
                      else f"{agent}(forbid={everything})")
        free = play_columns(game, 3, None, agent, seed=3, count=3)
        kept = play_columns(game, 3, None, restricted, seed=3, count=3)
        assert "seat_forced" not in free
        for column in ("seat_score", "seat_win_share", "length"):
            assert (free[column] == kept[column]).all(), (agent, column)
        assert (kept["seat_forced"].sum(axis=1) == kept["length"]).all()


def test_seat_forced_counts_only_the_restricted_seat():
    game = core_cy.load("golden_island")
    out = play_columns(game, 3, None, ["greedy(forbid=pass)", "greedy", "greedy"], seed=1,
                       count=6, rotate=True)
    assert out["seat_forced"].shape == (6, 3)
    restricted = out["seat_agent"] == "greedy(forbid=pass)"
    assert (out["seat_forced"][~restricted] == 0).all()
