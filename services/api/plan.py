"""Sample-size planning as background jobs: POST /api/plans, GET /api/plans/{pid}
(services.plan.PlanJobs plays the pilots; no request waits for one);
POST /api/plans/{pid}/cancel."""
from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Path, Request, Security
from fastapi.security import HTTPAuthorizationCredentials
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from services.api.deps import (bearer_scheme, get_settings, json_object, may_change,
                               require_token)
from services.api.errors import ErrorBody, error_items, responses
from services.plan import PlanFinished, PlanJob, PlanJobs, PlanQueueFull, PlanRequest
from services.settings import Settings

PlanId = Annotated[str, Path(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9._-]+$",
                             description="a plan id (from POST /api/plans)")]
RETRY_SECONDS = 10

router = APIRouter(prefix="/api/plans", tags=["plans"])  # writes: a token when set
reads = APIRouter(prefix="/api/plans", tags=["plans"])  # reads: as the service's other reads


def get_plans(request: Request) -> PlanJobs:
    return request.app.state.plans


_BUSY = {"model": ErrorBody, "description": "too many plans queued or running; retry after "
         "Retry-After seconds", "headers": {"Retry-After": {
             "description": "seconds to wait before trying again", "schema": {"type": "integer"}}}}
_NO_PLAN = {"model": ErrorBody, "description": "no plan with this id (plans live in memory: "
            "a restart forgets them)"}
_FOLLOW = {"links": {"get_plan": {"operationId": "get_plan",
                                  "parameters": {"pid": "$response.body#/id"}}}}


def _validated(raw: dict, limits: dict) -> PlanRequest:
    return PlanRequest.model_validate(raw, context=limits)


@router.post("", status_code=202, response_model=PlanJob,
             responses={**responses(401, 413, 415, 422), 429: _BUSY, 202: _FOLLOW},
             openapi_extra={"requestBody": {"required": True, "content": {"application/json": {
                 "schema": {"$ref": "#/components/schemas/PlanRequest"}}}}})
async def submit_plan(request: Request, owner: str = Depends(require_token),
                      settings: Settings = Depends(get_settings),
                      plans: PlanJobs = Depends(get_plans)):
    """Queue a plan: a short pilot of the spec (played in the background, within a time
    budget, not stored) estimates the games per cell and the wall time for every 95%
    interval on win shares to be narrower than +-half_width, and to detect a difference
    `delta` from the baseline with 80% power.  Follow it at GET /api/plans/{id}: status
    queued, running, then done (`result`) or failed (`error`)."""
    raw = await json_object(request, "a plan request")
    try:  # in a thread, the service's size limits first (as for a submitted spec)
        plan = await run_in_threadpool(_validated, raw, settings.spec_limits())
    except ValidationError as exc:
        raise HTTPException(422, error_items(exc.errors(), source="body")) from None
    try:
        return plans.submit(plan, owner)
    except PlanQueueFull as exc:
        raise HTTPException(429, str(exc), headers={"Retry-After": str(RETRY_SECONDS)}) \
            from None


@reads.get("/{pid}", response_model=PlanJob, responses={**responses(401), 404: _NO_PLAN})
def get_plan(pid: PlanId, plans: PlanJobs = Depends(get_plans)):
    """A plan's status (queued, running, done, failed) and, once done, its result."""
    job = plans.get(pid)
    if job is None:
        raise HTTPException(404, f"no plan with id {pid!r}")
    return job


@router.post("/{pid}/cancel", response_model=PlanJob,
             responses={**responses(401, 403, 409), 404: _NO_PLAN})
async def cancel_plan(pid: PlanId, owner: str = Depends(require_token),
                      settings: Settings = Depends(get_settings),
                      credentials: HTTPAuthorizationCredentials | None = Security(bearer_scheme),
                      plans: PlanJobs = Depends(get_plans)):
    """Cancel a queued plan now, or a running one: its pilot stops after the piece of games
    it is playing (well within a second or two for the agents plans are made with).  Only
    the token that asked for it or an admin token may (403); 409 once it has finished."""
    submitted_by = plans.owner(pid)
    if submitted_by is None:
        raise HTTPException(404, f"no plan with id {pid!r}")
    if not may_change(submitted_by, owner, settings, credentials):
        raise HTTPException(403, f"plan {pid!r} was asked for with another token: only that "
                            "token or an admin token may cancel it")
    try:
        return plans.cancel(pid)
    except PlanFinished as exc:
        raise HTTPException(409, str(exc)) from None
    except KeyError:
        raise HTTPException(404, f"no plan with id {pid!r}") from None
