"""The game catalogue."""
from __future__ import annotations

from fastapi import APIRouter

import core_cy
from core_cy.catalogue import presets
from services.api.models import GameInfo

router = APIRouter(prefix="/api/games", tags=["games"])


@router.get("", response_model=list[GameInfo])
def list_games() -> list[dict]:
    """Every game of the catalogue with its info(): rule-option JSON schemas, player range,
    agents, end reasons and outcome fields; and its agent presets (the form's)."""
    return [{**core_cy.load(name).info(), "presets": presets(name)}
            for name in core_cy.game_names()]
