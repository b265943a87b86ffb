"""Experiments: submit, list, show, cancel."""
from __future__ import annotations

import math
import sqlite3

from fastapi import APIRouter, Depends, HTTPException, Query, Request, Response
from pydantic import TypeAdapter
from starlette.concurrency import run_in_threadpool

from services.api.deps import (experiment, get_registry, get_settings, get_worker,
                               owned_experiment, require_token, spec_body)
from services.api.errors import responses
from services.api.models import ExperimentView, Submitted
from services.registry import FINISHED, QuotaFull, Registry
from services.settings import Settings
from services.storage import experiment_path, remove_experiment

router = APIRouter(prefix="/api/experiments", tags=["experiments"])
_LIST = TypeAdapter(list[ExperimentView])
MAX_PAGE = 500


def _quota_full(full: QuotaFull, settings: Settings) -> HTTPException:
    """429 when the token already has MEEPLELAB_MAX_RUNNING_PER_TOKEN unfinished experiments;
    Retry-After is the soonest expected end among them (30 s when none has an estimate)."""
    mine = full.unfinished
    etas = [r["eta_seconds"] for r in mine if r["eta_seconds"] is not None]
    retry = min(max(1, math.ceil(min(etas))), 3600) if etas else 30
    return HTTPException(429, f"this token already has {len(mine)} unfinished experiments "
                         f"(limit MEEPLELAB_MAX_RUNNING_PER_TOKEN = "
                         f"{settings.max_running_per_token}); retry when one has finished",
                         headers={"Retry-After": str(retry)})


@router.post("", status_code=201, response_model=Submitted,
             responses=responses(401, 413, 415, 422, 429, 503),
             openapi_extra={"requestBody": {"required": True, "content": {"application/json": {
                 "schema": {"$ref": "#/components/schemas/ExperimentSpec"}}}}})
async def submit(request: Request, owner: str = Depends(require_token),
                 settings: Settings = Depends(get_settings),
                 registry: Registry = Depends(get_registry), worker=Depends(get_worker)):
    """Validate and queue an experiment (the CLI spec-file format, as JSON)."""
    raw, spec = await spec_body(request, settings)
    # the quota is counted and the row written in one transaction; a write waits for the
    # disk (8-20 ms of fsync): in a thread, so that polls go on
    try:
        eid = await run_in_threadpool(
            registry.create, raw, spec.name, spec.game, games_total=spec.total_games(),
            owner=owner, quota=settings.max_running_per_token if owner else None)
    except QuotaFull as full:
        raise _quota_full(full, settings) from None
    except sqlite3.Error as exc:
        raise HTTPException(503, f"the experiment was not stored: the registry cannot be "
                            f"written now ({exc})", headers={"Retry-After": "10"}) from None
    worker.submit(eid)
    return Submitted(id=eid, status="queued", url=f"/api/experiments/{eid}")


@router.get("", response_model=list[ExperimentView], responses=responses(401, 422))
async def list_experiments(request: Request, registry: Registry = Depends(get_registry),
                           limit: int = Query(100, ge=1, le=MAX_PAGE, description="most "
                                              "experiments to list (a page)"),
                           offset: int = Query(0, ge=0, le=10**9, description="experiments "
                                               "to skip, newest first (the next page: "
                                               "offset + limit)")):
    """Experiments, newest first, with status and progress: one page of at most `limit`
    (the header X-Total-Count gives how many there are)."""
    # Dashboards poll the list every second and it grows with every experiment: each page
    # is encoded once per change of the registry (the version is read first, so a write
    # that lands in between only makes the next poll encode it again).
    version = registry.version()
    kept = getattr(request.app.state, "listing", None)
    if kept is None or kept[0] != version:
        kept = request.app.state.listing = (version, {}, registry.count())
    pages = kept[1]
    if (limit, offset) not in pages:
        if len(pages) >= 16:  # a few pages per version: every page asked for is not kept
            pages.clear()
        pages[(limit, offset)] = _LIST.dump_json(
            [ExperimentView.of(r) for r in registry.list(limit, offset)])
    return Response(pages[(limit, offset)], media_type="application/json",
                    headers={"X-Total-Count": str(kept[2])})


@router.get("/{eid}", response_model=ExperimentView, responses=responses(401, 404))
async def get_experiment(record: dict = Depends(experiment)):
    """Spec, status (queued/running/done/failed/cancelled) and progress."""
    return ExperimentView.of(record)


@router.delete("/{eid}", status_code=204, response_class=Response,
               responses=responses(401, 403, 404, 409, 422))
def delete(record: dict = Depends(owned_experiment), registry: Registry = Depends(get_registry),
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
             responses=responses(401, 403, 404, 409))
def cancel(record: dict = Depends(owned_experiment), registry: Registry = Depends(get_registry),
           worker=Depends(get_worker)):
    """Cancel a queued experiment now or a running one within two seconds (409 if it has
    already finished)."""
    eid = record["id"]
    if not worker.cancel(eid):
        raise HTTPException(409, f"experiment {eid!r} is already {record['status']}")
    return ExperimentView.of(registry.get(eid))
