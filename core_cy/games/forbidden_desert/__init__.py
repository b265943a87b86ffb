"""Forbidden Desert: the engine (engine.pyx), its rule options (options.toml) and data (data/)."""
from core_cy.games.forbidden_desert.engine import GAME

__all__ = ["GAME"]
