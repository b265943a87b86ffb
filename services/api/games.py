"""The game catalogue."""
from __future__ import annotations

from fastapi import APIRouter

import core_cy
from services.api.models import GameInfo

router = APIRouter(prefix="/api/games", tags=["games"])


@router.get("", response_model=list[GameInfo])
def list_games() -> list[dict]:
    """Every game of the catalogue with its info(): rule-option JSON schemas, player range,
    agents, end reasons and outcome fields."""
    return [core_cy.load(name).info() for name in core_cy.game_names()]
