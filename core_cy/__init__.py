"""meeplelab game engines: the catalogue and the uniform Python face of every game.

    >>> import core_cy
    >>> core_cy.games()
    ['forbidden_desert', 'golden_island', 'maori', 'mondo', 'reef_encounter']
    >>> game = core_cy.load("maori")
    >>> state = game.new(3, rules={"mode": "pro"}, seed=7)
"""
from __future__ import annotations

import importlib

# Game name -> module inside core_cy.  Adding a game is adding a line here.
CATALOGUE = {
    "forbidden_desert": "core_cy.forbidden_desert",
    "golden_island": "core_cy.golden_island",
    "maori": "core_cy.maori",
    "mondo": "core_cy.mondo",
    "reef_encounter": "core_cy.reef_encounter",
}


def games() -> list[str]:
    """The names of the games in the catalogue."""
    return sorted(CATALOGUE)


def load(name: str):
    """The game object for `name` (ValueError for an unknown game)."""
    if name not in CATALOGUE:
        raise ValueError(f"unknown game {name!r}; choose one of {games()}")
    return importlib.import_module(CATALOGUE[name]).GAME
