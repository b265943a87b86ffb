"""Reef Encounter: the engine (engine.pyx), its rule options (options.toml) and data (data/)."""
from core_cy.games.reef_encounter.engine import GAME

__all__ = ["GAME"]
