"""A game's face with its agents: the engine layer's Game (core_cy/engine/game.py), which names
no agent, plus the agents that play it.  Every game's class derives from AgentGame, so that
the engine contract sits below the agents and the agents below the games."""
from __future__ import annotations

from typing import Any

from core_cy.agents.agent import GENERIC_AGENTS, NO_POLICY_PARAMS, agent_catalogue
from core_cy.engine.game import Game


class AgentGame(Game):
    """Game plus its agents: the generic ones and the engine's own policies."""

    # The parameters of the engine's policies (a PolicyParams, read from the game's folder by
    # policy_params_from_data): agent parameters, never rule options, so they stay out of the
    # rules fingerprint and travel in the agent string.
    policy_params: Any = NO_POLICY_PARAMS

    @property
    def agents(self) -> dict:
        """Every agent of this game by name: {name: description}."""
        return {**GENERIC_AGENTS, **self.policies}

    def info(self) -> dict:
        """Game.info() with the agent listing after the rules: name -> description and
        parameter schema."""
        info = {}
        for key, value in super().info().items():
            info[key] = value
            if key == "rules":
                info["agents"] = agent_catalogue(self)
        return info
