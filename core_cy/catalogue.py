"""The catalogue: every game's name and the module of its engine."""
from __future__ import annotations

import importlib

# Game name -> its engine module (core_cy/games/<game>/engine.pyx); adding a game is adding
# a line here.
CATALOGUE = {
    "forbidden_desert": "core_cy.games.forbidden_desert.engine",
    "golden_island": "core_cy.games.golden_island.engine",
    "maori": "core_cy.games.maori.engine",
    "mondo": "core_cy.games.mondo.engine",
    "reef_encounter": "core_cy.games.reef_encounter.engine",
}


def game_names() -> list[str]:
    """The names of the games in the catalogue."""
    return sorted(CATALOGUE)


def load(name: str):
    """The game object for `name` (ValueError for an unknown game)."""
    if name not in CATALOGUE:
        raise ValueError(f"unknown game {name!r}; choose one of {game_names()}")
    return importlib.import_module(CATALOGUE[name]).GAME
