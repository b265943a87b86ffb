"""Sample-size planning as background jobs: POST /api/plans, GET /api/plans/{pid}
(a plan is a job of the service's one queue, services.worker: its pilot plays in a niced
process of its own; no request waits for one); POST /api/plans/{pid}/cancel."""
from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Path, Request, Security
from fastapi.security import HTTPAuthorizationCredentials
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from services.api.deps import bearer_scheme, get_registry, get_settings, json_object, \
    require_token
from services.api.errors import ErrorBody, error_items, responses
from services.api.jobs import cancel_job, check_cpu_budget, job_of, queue_job
from services.plan import PlanJob, PlanRequest
from services.registry import Registry
from services.settings import Settings
from services.spec import stored_spec

PlanId = Annotated[str, Path(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9._-]+$",
                             description="a plan id (from POST /api/plans)")]

router = APIRouter(prefix="/api/plans", tags=["plans"])  # writes: a token when set
reads = APIRouter(prefix="/api/plans", tags=["plans"])  # reads: as the service's other reads

_BUSY = {"model": ErrorBody, "description": "this token's places for plans (or the queue) "
         "are full; retry after Retry-After seconds", "headers": {"Retry-After": {
             "description": "seconds to wait before trying again", "schema": {"type": "integer"}}}}
_NO_PLAN = {"model": ErrorBody, "description": "no plan with this id"}
_FOLLOW = {"links": {"get_plan": {"operationId": "get_plan",
                                  "parameters": {"pid": "$response.body#/id"}}}}


def _validated(raw: dict, limits: dict) -> PlanRequest:
    return PlanRequest.model_validate(raw, context=limits)


@router.post("", status_code=202, response_model=PlanJob,
             responses={**responses(401, 413, 415, 422, 503), 429: _BUSY, 202: _FOLLOW},
             openapi_extra={"requestBody": {"required": True, "content": {"application/json": {
                 "schema": {"$ref": "#/components/schemas/PlanRequest"}}}}})
async def submit_plan(request: Request, owner: str = Depends(require_token),
                      settings: Settings = Depends(get_settings)):
    """Queue a plan: a short pilot of the spec (played in the background, within a time
    budget, not stored) estimates the games per cell and the wall time for every 95%
    interval on win shares to be narrower than +-half_width, and to detect a difference
    `delta` from the baseline with 80% power.  Follow it at GET /api/plans/{id}: status
    queued, running, then done (`result`), failed (`error`) or cancelled."""
    raw = await json_object(request, "a plan request")
    try:  # in a thread, the service's size limits first (as for a submitted spec)
        plan = await run_in_threadpool(_validated, raw, settings.spec_limits())
    except ValidationError as exc:
        raise HTTPException(422, error_items(exc.errors(), source="body")) from None
    check_cpu_budget(plan.spec.cpu_seconds, settings.experiment_cpu_seconds,
                     "MEEPLELAB_EXPERIMENT_CPU_SECONDS", loc=("spec", "cpu_seconds"))
    stored = {**raw, "spec": stored_spec(raw["spec"], plan.spec)}
    record = await queue_job(request, "plan", stored, plan.spec.name, plan.spec.game, owner)
    return PlanJob.of(record)


@reads.get("/{pid}", response_model=PlanJob, responses={**responses(401), 404: _NO_PLAN})
async def get_plan(pid: PlanId, registry: Registry = Depends(get_registry)):
    """A plan's status (queued, running, done, failed, cancelled) and, once done, its
    result."""
    return PlanJob.of(job_of(registry, "plan", pid))


@router.post("/{pid}/cancel", response_model=PlanJob,
             responses={**responses(401, 403, 409), 404: _NO_PLAN})
def cancel_plan(pid: PlanId, request: Request, owner: str = Depends(require_token),
                credentials: HTTPAuthorizationCredentials | None = Security(bearer_scheme)):
    """Cancel a queued or running plan now: a running pilot's process is ended at once (a
    game in the middle or not) and its place goes to the next plan.  Only the token that
    asked for it or an admin token may (403); 409 once it has finished."""
    return PlanJob.of(cancel_job(request, "plan", pid, owner, credentials))
