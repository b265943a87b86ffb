"""What to change, as background jobs: POST /api/balance (a spec with a `balance` section),
GET /api/balance/{bid} (status, then the result: services/balance.py), and
GET /api/balance/{bid}/chart.svg (the sensitivity chart of one player count).  The question is
answered in this process by one background thread; no request waits for it."""
from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, HTTPException, Path, Query, Request
from fastapi.responses import Response
from pydantic import BaseModel

from dashboards.balance_chart import chart_svg
from services.api.deps import get_settings, require_token, spec_body
from services.api.errors import ErrorBody, error_items, responses
from services.balance import BalanceJobs
from services.settings import Settings

BalanceId = Annotated[str, Path(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9._-]+$",
                                description="a balance job id (from POST /api/balance)")]
RETRY_SECONDS = 30

router = APIRouter(prefix="/api/balance", tags=["balance"])


def get_jobs(request: Request) -> BalanceJobs:
    """The app's balance jobs (made on first use); an app that runs no worker (tests, a
    contract check) keeps them queued, as it keeps its experiments."""
    state = request.app.state
    if not hasattr(state, "balance_jobs"):
        state.balance_jobs = BalanceJobs(run=bool(getattr(state.worker, "_threads", True)))
    return state.balance_jobs


class BalanceJob(BaseModel):
    id: str
    status: Literal["queued", "running", "done", "failed"]
    url: str
    games_played: int
    result: dict[str, Any] | None = None
    error: str | None = None


_BUSY = {"model": ErrorBody, "description": "too many balance questions queued or running; "
         "retry after Retry-After seconds", "headers": {"Retry-After": {
             "description": "seconds to wait", "schema": {"type": "integer"}}}}
_NONE = {"model": ErrorBody, "description": "no balance job with this id (jobs live in "
         "memory: a restart forgets them)"}


@router.post("", status_code=202, response_model=BalanceJob,
             responses={**responses(400, 401, 413, 415, 422), 429: _BUSY},
             openapi_extra={"requestBody": {"required": True, "content": {"application/json": {
                 "schema": {"$ref": "#/components/schemas/BalanceSpec"}}}}})
async def submit_balance(request: Request, owner: str = Depends(require_token),
                         settings: Settings = Depends(get_settings),
                         jobs: BalanceJobs = Depends(get_jobs)):
    """Queue a spec's balance question: the fair value of a rule option (with its interval
    and the confirmation on fresh deals) or the value of an action kind.  Follow it at
    GET /api/balance/{id}."""
    _, spec = await spec_body(request, settings)  # validated off the event loop, limits first
    if spec.balance is None:
        raise HTTPException(422, error_items([{"loc": ("balance",), "type": "missing", "msg":
                                               "a balance question needs a balance section"}],
                                             source="body"))
    try:
        return jobs.submit(spec)
    except RuntimeError as exc:
        raise HTTPException(429, str(exc), headers={"Retry-After": str(RETRY_SECONDS)}) \
            from None


def _job(bid: str, jobs: BalanceJobs) -> dict:
    job = jobs.get(bid)
    if job is None:
        raise HTTPException(404, f"no balance job with id {bid!r}")
    return job


@router.get("/{bid}", response_model=BalanceJob, responses={**responses(401, 422), 404: _NONE})
def get_balance(bid: BalanceId, jobs: BalanceJobs = Depends(get_jobs)):
    """A balance job's status and, once done, its result (sentences, answer, chart data)."""
    return _job(bid, jobs)


@router.get("/{bid}/chart.svg", response_class=Response,
            responses={**responses(401, 422), 404: _NONE, 409: {
                "model": ErrorBody, "description": "the job has no chart (yet)"},
                200: {"content": {"image/svg+xml": {}}, "description": "an SVG chart"}})
def get_balance_chart(bid: BalanceId,
                      players: Annotated[int | None, Query(ge=1, le=8)] = None,
                      jobs: BalanceJobs = Depends(get_jobs)):
    """The sensitivity chart of a finished fair-value search (one player count: the first
    unless `players` names one)."""
    job = _job(bid, jobs)
    result = job["result"]
    if job["status"] != "done" or result.get("kind") != "fair_value":
        raise HTTPException(409, "the job has no chart: it is not a finished fair-value search")
    cells = [c for c in result["cells"] if players is None or c["players"] == players]
    if not cells:
        raise HTTPException(404, f"the job has no {players}-player cell")
    return Response(chart_svg(cells[0], result["option"]), media_type="image/svg+xml")
