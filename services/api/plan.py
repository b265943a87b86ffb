"""Sample-size planning: POST /api/plan (services.plan)."""
from __future__ import annotations

from fastapi import APIRouter, Depends, HTTPException
from pydantic import ValidationError

from services.api.deps import get_settings, require_token
from services.api.errors import error_items, responses
from services.plan import PlanRequest, plan_experiment
from services.spec import ExperimentSpec
from services.settings import Settings

router = APIRouter(prefix="/api/plan", tags=["experiments"])


@router.post("", response_model=dict, responses=responses(400, 401, 422))
def plan(request: PlanRequest, owner: str = Depends(require_token),
         settings: Settings = Depends(get_settings)):
    """Games per cell and wall time an experiment needs, estimated from a short pilot run of
    its spec (played here, not stored): for every 95% interval on win shares to be narrower
    than +-half_width, and to detect a difference `delta` from the baseline with 80% power."""
    try:  # the service's size limits, as for a submitted spec
        ExperimentSpec.model_validate(request.spec.model_dump(mode="json"),
                                      context=settings.spec_limits())
    except ValidationError as exc:
        errors = [{**e, "loc": ("spec", *e["loc"])} for e in exc.errors()]
        raise HTTPException(422, error_items(errors, source="body")) from None
    cells = len(request.spec.cells())
    if cells > settings.max_cells:
        raise HTTPException(422, [{"field": "spec.arms", "loc": ["body", "spec", "arms"],
                                   "type": "limit", "msg": f"the experiment has {cells:,} cells; "
                                   f"this service plans at most {settings.max_cells:,} "
                                   "(limit MEEPLELAB_MAX_CELLS)"}])
    return plan_experiment(request.spec, half_width=request.half_width, delta=request.delta,
                           pilot_games=request.pilot_games)
