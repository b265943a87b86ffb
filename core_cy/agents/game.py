"""A game's face with its agents: the engine layer's Game (core_cy/engine/game.py), which names
no agent, plus the agents that play it.  Every game's class derives from AgentGame, so that
the engine contract sits below the agents and the agents below the games."""
from __future__ import annotations

import math
from importlib import resources
from typing import Any

from core_cy.agents.agent import GENERIC_AGENTS, NO_POLICY_PARAMS, agent_catalogue
from core_cy.engine import codec
from core_cy.engine.game import Game

# The search's move prior (mcts(prior=fitted)), a file of the game's folder written by
# benchmarks/prior_fit.py.
MOVE_PRIOR = "data/move_prior.json"
MAX_KINDS = 16     # agent.pxd's MAX_KINDS: the weight pairs an agent holds
PRIOR_FIELDS = ("value", "offset")


def move_prior_weights(data: Any, kinds: tuple, where: str = MOVE_PRIOR) -> dict:
    """{kind: (value, offset)} from `data`, {"kinds": {one per action kind of the game:
    {"value": weight of the one-ply value, "offset": the kind's own weight}}}; ValueError
    names the missing or unknown kind, the field, or a weight that is not a finite number."""
    given = data.get("kinds") if isinstance(data, dict) else None
    if not isinstance(given, dict) or set(given) != set(kinds):
        got = sorted(given) if isinstance(given, dict) else given
        raise ValueError(f"{where}: kinds must name exactly the game's action kinds "
                         f"{list(kinds)}, got {got}")
    if len(kinds) > MAX_KINDS:
        raise ValueError(f"{where}: {len(kinds)} action kinds; an agent holds at most {MAX_KINDS}")
    out = {}
    for kind in kinds:
        row = given[kind]
        if not isinstance(row, dict) or set(row) != set(PRIOR_FIELDS):
            raise ValueError(f"{where}: kind {kind!r} must give exactly {list(PRIOR_FIELDS)}, "
                             f"got {row!r}")
        for field in PRIOR_FIELDS:
            v = row[field]
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise ValueError(f"{where}: {field} of kind {kind!r} must be a finite number, "
                                 f"got {v!r}")
        out[kind] = (float(row["value"]), float(row["offset"]))
    return out


_PRIORS: dict = {}


class AgentGame(Game):
    """Game plus its agents: the generic ones and the engine's own policies."""

    # The parameters of the engine's policies (a PolicyParams, read from the game's folder by
    # policy_params_from_data): agent parameters, never rule options, so they stay out of the
    # rules fingerprint and travel in the agent string.
    policy_params: Any = NO_POLICY_PARAMS

    @property
    def move_prior(self) -> dict | None:
        """The fitted move prior of the game's folder ({kind: (value, offset)},
        move_prior_weights), read and validated once; None for a game without one."""
        if self.name not in _PRIORS:
            package = f"core_cy.games.{self.name}"
            if resources.files(package).joinpath(MOVE_PRIOR).is_file():
                _PRIORS[self.name] = move_prior_weights(
                    codec.load_data(package, MOVE_PRIOR),
                    tuple(k.name for k in self.actions.kinds), f"{self.name}/{MOVE_PRIOR}")
            else:
                _PRIORS[self.name] = None
        return _PRIORS[self.name]

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
