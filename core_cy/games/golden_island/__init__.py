"""The Golden Island (Az Aranysziget): the engine (engine.pyx), its rule options (options.toml) and data (data/)."""
from core_cy.games.golden_island.engine import GAME

__all__ = ["GAME"]
