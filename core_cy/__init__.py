"""meeplelab game engines: the catalogue and the uniform Python face of every game.

    >>> import core_cy
    >>> core_cy.game_names()
    ['forbidden_desert', 'golden_island', 'maori', 'mondo', 'reef_encounter']
    >>> game = core_cy.load("maori")
    >>> state = game.new(3, rules={"mode": "pro"}, seed=7)
"""
from core_cy.catalogue import CATALOGUE, game_names, load

__all__ = ["CATALOGUE", "game_names", "load"]
