"""Experiments: submit, list, show, cancel."""
from __future__ import annotations

import math

from fastapi import APIRouter, Depends, HTTPException, Request, Response
from pydantic import TypeAdapter, ValidationError
from starlette.concurrency import run_in_threadpool

from services.api.deps import experiment, get_registry, get_settings, get_worker, require_token
from services.api.errors import error_items, responses
from services.api.models import ExperimentView, Submitted
from services.registry import FINISHED, Registry
from services.settings import Settings
from services.spec import ExperimentSpec
from services.storage import experiment_path, remove_experiment

router = APIRouter(prefix="/api/experiments", tags=["experiments"])
_LIST = TypeAdapter(list[ExperimentView])


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


def _check_quota(owner: str, registry: Registry, settings: Settings) -> None:
    """429 when the token already has MEEPLELAB_MAX_RUNNING_PER_TOKEN unfinished experiments;
    Retry-After is the soonest expected end among them (30 s when none has an estimate)."""
    if not owner:
        return
    mine = registry.unfinished_of(owner)
    if len(mine) < settings.max_running_per_token:
        return
    etas = [r["eta_seconds"] for r in mine if r["eta_seconds"] is not None]
    retry = min(max(1, math.ceil(min(etas))), 3600) if etas else 30
    raise HTTPException(429, f"this token already has {len(mine)} unfinished experiments "
                        f"(limit MEEPLELAB_MAX_RUNNING_PER_TOKEN = "
                        f"{settings.max_running_per_token}); retry when one has finished",
                        headers={"Retry-After": str(retry)})


@router.post("", status_code=201, response_model=Submitted,
             responses=responses(401, 413, 422, 429),
             openapi_extra={"requestBody": {"required": True, "content": {"application/json": {
                 "schema": {"$ref": "#/components/schemas/ExperimentSpec"}}}}})
async def submit(request: Request, owner: str = Depends(require_token),
                 settings: Settings = Depends(get_settings),
                 registry: Registry = Depends(get_registry), worker=Depends(get_worker)):
    """Validate and queue an experiment (the CLI spec-file format, as JSON)."""
    raw, spec = await _spec_body(request, settings)
    _check_quota(owner, registry, settings)
    # a write waits for the disk (8-20 ms of fsync): in a thread, so that polls go on
    eid = await run_in_threadpool(registry.create, raw, spec.name, spec.game,
                                  games_total=spec.total_games(), owner=owner)
    worker.submit(eid)
    return Submitted(id=eid, status="queued", url=f"/api/experiments/{eid}")


@router.get("", response_model=list[ExperimentView], responses=responses(401))
async def list_experiments(request: Request, registry: Registry = Depends(get_registry)):
    """Every experiment, newest first, with status and progress."""
    # Dashboards poll the list every second and it grows with every experiment: it is
    # encoded once per change of the registry (the version is read first, so a write that
    # lands in between only makes the next poll encode it again).
    version = registry.version()
    kept = getattr(request.app.state, "listing", None)
    if kept is None or kept[0] != version:
        body = _LIST.dump_json([ExperimentView.of(r) for r in registry.list()])
        kept = request.app.state.listing = (version, body)
    return Response(kept[1], media_type="application/json")


@router.get("/{eid}", response_model=ExperimentView, responses=responses(401, 404))
async def get_experiment(record: dict = Depends(experiment)):
    """Spec, status (queued/running/done/failed/cancelled) and progress."""
    return ExperimentView.of(record)


@router.delete("/{eid}", status_code=204, response_class=Response,
               responses=responses(401, 404, 409, 422), dependencies=[Depends(require_token)])
def delete(record: dict = Depends(experiment), registry: Registry = Depends(get_registry),
           settings: Settings = Depends(get_settings)):
    """Delete a finished experiment: its registry row and every result file (409 while it is
    queued or running: cancel it first)."""
    eid = record["id"]
    if record["status"] not in FINISHED:
        raise HTTPException(409, f"experiment {eid!r} is {record['status']}: cancel it first")
    remove_experiment(experiment_path(settings.results, eid))
    registry.delete(eid)
    return Response(status_code=204)


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
