"""Each game's agent presets live in its folder (core_cy/games/<game>/presets.json), read
through core_cy.catalogue.presets; what a game costs under given agents comes from them
(core_cy.catalogue.game_cost: measured for a preset at its player count, else an estimate)."""
import math

from hypothesis import given, settings
from hypothesis import strategies as st

import core_cy
from core_cy.agents import canonical_agent
from core_cy.catalogue import (PRESET_NAMES, agent_cost, game_cost, preset_agent, presets,
                               presets_path)

GAMES = core_cy.game_names()


def test_every_game_folder_holds_its_presets_with_their_measured_cost():
    for name in GAMES:
        assert presets_path(name).parent.name == name and presets_path(name).is_file()
        entry, game = presets(name), core_cy.load(name)
        assert game.min_players <= entry["players"] <= game.max_players
        assert tuple(entry["presets"]) == PRESET_NAMES and entry["preset"] in entry["presets"]
        rates = []
        for preset in entry["presets"].values():
            canonical_agent(game, preset["agent"])  # a real agent with valid parameters
            assert preset["games_per_cpu_second"] > 0, (name, preset)
            rates.append(preset["games_per_cpu_second"])
        assert rates == sorted(rates, reverse=True), f"{name}: fast is not the cheapest"


def test_no_preset_name_is_an_agent_name():
    """A preset's name in a spec stands for its agent: no game may have an agent so named."""
    for name in GAMES:
        assert not set(PRESET_NAMES) & set(core_cy.load(name).agents), name


def test_a_presets_agent_costs_what_was_measured_and_scales_with_the_players():
    for name in GAMES:
        entry = presets(name)
        for preset, about in entry["presets"].items():
            cost = game_cost(name, about["agent"], entry["players"])
            assert cost.measured and preset in cost.basis
            assert math.isclose(cost.seconds, 1 / about["games_per_cpu_second"])
            game = core_cy.load(name)
            other = next((n for n in range(game.min_players, game.max_players + 1)
                          if n != entry["players"]), None)
            if other is not None:
                scaled = game_cost(name, about["agent"], other)
                assert not scaled.measured and "estimate" in scaled.basis
                assert math.isclose(scaled.seconds, cost.seconds * other / entry["players"])


def test_a_search_is_estimated_per_simulation_from_the_plain_search_preset():
    """mcts(iterations=N) costs N times the plain preset's cost per simulation."""
    for name in GAMES:
        entry = presets(name)
        if entry["presets"]["strongest"]["agent"] != "mcts(iterations=1000)":
            continue
        rate = entry["presets"]["strongest"]["games_per_cpu_second"]
        cost = agent_cost(name, "mcts(iterations=100000)", entry["players"])
        assert not cost.measured and cost.basis.startswith("estimate")
        assert math.isclose(cost.seconds, 100 / rate)


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(GAMES), data=st.data())
def test_a_games_cost_is_positive_and_the_mean_of_its_seats(name, data):
    game = core_cy.load(name)
    players = data.draw(st.integers(game.min_players, game.max_players))
    pool = ["random", "greedy", "mcts", "mcts(iterations=50)"] + \
        [p["agent"] for p in presets(name)["presets"].values()]
    agents = data.draw(st.lists(st.sampled_from(pool), min_size=players, max_size=players))
    cost = game_cost(name, agents, players)
    seats = [agent_cost(name, a, players).seconds for a in agents]
    assert 0 < cost.seconds < math.inf and math.isclose(cost.seconds, sum(seats) / players)
    assert cost.measured == all(agent_cost(name, a, players).measured for a in agents)


@settings(max_examples=100, deadline=None)
@given(name=st.sampled_from(GAMES), text=st.text(max_size=20))
def test_only_a_presets_exact_name_is_a_preset(name, text):
    agent = preset_agent(name, text)
    if text.strip() in PRESET_NAMES:
        assert agent == presets(name)["presets"][text.strip()]["agent"]
    else:
        assert agent is None
