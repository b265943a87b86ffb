"""Mondo: the engine (engine.pyx), its rule options (options.toml) and data (data/)."""
from core_cy.games.mondo.engine import GAME

__all__ = ["GAME"]
