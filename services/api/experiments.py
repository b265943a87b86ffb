"""Experiments: submit, list, show, cancel."""
from __future__ import annotations

from fastapi import APIRouter, Depends, HTTPException, Query, Request, Response
from fastapi.concurrency import run_in_threadpool
from pydantic import TypeAdapter

from services.api.deps import (experiment, get_registry, get_settings, get_worker,
                               owned_experiment, require_token, spec_body)
from services.api.errors import responses, unprocessable
from services.api.jobs import check_cpu_budget, queue_job
from services.api.models import ExperimentView, Submitted
from services.registry import FINISHED, Registry
from services.settings import Settings
from services.spec import cost_statement, stored_spec
from pipelines.folder import experiment_path, remove_experiment

router = APIRouter(prefix="/api/experiments", tags=["experiments"])
_LIST = TypeAdapter(list[ExperimentView])
MAX_PAGE = 500


@router.post("", status_code=201, response_model=Submitted,
             responses=responses(401, 413, 415, 422, 429, 503),
             openapi_extra={"requestBody": {"required": True, "content": {"application/json": {
                 "schema": {"$ref": "#/components/schemas/ExperimentSpec"}}}}})
async def submit(request: Request, owner: str = Depends(require_token),
                 settings: Settings = Depends(get_settings),
                 confirm_cost: bool = Query(False, description="queue it even when its "
                                            "estimated CPU cost is above "
                                            "MEEPLELAB_CONFIRM_CPU_SECONDS")):
    """Validate and queue an experiment (the CLI spec-file format, as JSON; a preset name
    as an agent is stored as the preset's agent string).  Its CPU budget is the spec's
    cpu_seconds, at most MEEPLELAB_EXPERIMENT_CPU_SECONDS (422 naming cpu_seconds beyond),
    that setting when unset.  The answer states its estimated CPU cost; above
    MEEPLELAB_CONFIRM_CPU_SECONDS it is refused (422 naming confirm_cost, stating the
    estimate) unless confirm_cost=true.  `warnings`: a stop_when.spread no plan handed out
    for this experiment (accepted: its run guards it)."""
    raw, spec = await spec_body(request, settings)
    check_cpu_budget(spec.cpu_seconds, settings.experiment_cpu_seconds,
                     "MEEPLELAB_EXPERIMENT_CPU_SECONDS")
    seconds, cost = await run_in_threadpool(
        cost_statement, spec, spec.cpu_seconds or settings.experiment_cpu_seconds)
    if seconds > settings.confirm_cpu_seconds and not confirm_cost:
        raise unprocessable("confirm_cost", f"the experiment's {cost}: above this service's "
                            f"{settings.confirm_cpu_seconds:,} CPU-seconds "
                            "(MEEPLELAB_CONFIRM_CPU_SECONDS) it needs confirm_cost=true "
                            "(or fewer games, cheaper agents)")
    record = await queue_job(request, "experiment", stored_spec(raw, spec), spec.name,
                             spec.game, owner, games_total=spec.total_games())
    eid = record["id"]
    warning = await run_in_threadpool(spec.spread_warning)
    return Submitted(id=eid, status="queued", url=f"/api/experiments/{eid}",
                     estimated_cpu_seconds=seconds, cost=cost,
                     warnings=[warning] if warning else [])


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
