"""Experiments: submit, list, show, cancel."""
from __future__ import annotations

from fastapi import APIRouter, Depends, HTTPException, Request
from pydantic import ValidationError

from services.api.deps import experiment, get_registry, get_settings, get_worker, require_token
from services.api.errors import error_items, responses
from services.api.models import ExperimentView, Submitted
from services.registry import Registry
from services.settings import Settings
from services.spec import ExperimentSpec

router = APIRouter(prefix="/api/experiments", tags=["experiments"])


async def _spec_body(request: Request, settings: Settings) -> tuple[dict, ExperimentSpec]:
    """The request body as sent and as a validated spec (every mistake at once, limits
    included, as a 422 naming each field)."""
    try:
        raw = await request.json()
    except ValueError as exc:
        raise HTTPException(422, [{"field": "body", "loc": ["body"], "type": "json_invalid",
                                   "msg": f"the body is not valid JSON: {exc}"}]) from None
    if not isinstance(raw, dict):
        raise HTTPException(422, [{"field": "body", "loc": ["body"], "type": "model_type",
                                   "msg": "the body must be a JSON object (an experiment "
                                   "spec)"}])
    try:
        spec = ExperimentSpec.model_validate(raw, context=settings.spec_limits())
    except ValidationError as exc:
        raise HTTPException(422, error_items(exc.errors(), source="body")) from None
    return raw, spec


@router.post("", status_code=201, response_model=Submitted,
             responses=responses(401, 413, 422, 429),
             openapi_extra={"requestBody": {"required": True, "content": {"application/json": {
                 "schema": {"$ref": "#/components/schemas/ExperimentSpec"}}}}})
async def submit(request: Request, owner: str = Depends(require_token),
                 settings: Settings = Depends(get_settings),
                 registry: Registry = Depends(get_registry), worker=Depends(get_worker)):
    """Validate and queue an experiment (the CLI spec-file format, as JSON)."""
    raw, spec = await _spec_body(request, settings)
    eid = registry.create(raw, spec.name, spec.game, games_total=spec.total_games())
    worker.submit(eid)
    return Submitted(id=eid, status="queued", url=f"/api/experiments/{eid}")


@router.get("", response_model=list[ExperimentView], responses=responses(401))
def list_experiments(registry: Registry = Depends(get_registry)):
    """Every experiment, newest first, with status and progress."""
    return [ExperimentView.of(r) for r in registry.list()]


@router.get("/{eid}", response_model=ExperimentView, responses=responses(401, 404))
def get_experiment(record: dict = Depends(experiment)):
    """Spec, status (queued/running/done/failed/cancelled) and progress."""
    return ExperimentView.of(record)


@router.post("/{eid}/cancel", response_model=ExperimentView,
             responses=responses(401, 404, 409), dependencies=[Depends(require_token)])
def cancel(record: dict = Depends(experiment), registry: Registry = Depends(get_registry),
           worker=Depends(get_worker)):
    """Cancel a queued experiment now or a running one within two seconds (409 if it has
    already finished)."""
    eid = record["id"]
    if not worker.cancel(eid):
        raise HTTPException(409, f"experiment {eid!r} is already {record['status']}")
    return ExperimentView.of(registry.get(eid))
