"""Operations: liveness, readiness and Prometheus metrics."""
from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import Response
from pydantic import BaseModel

from services.api.deps import get_registry, get_worker
from services.api.errors import ErrorBody
from services.metrics import CONTENT_TYPE
from services.registry import Registry

router = APIRouter(tags=["operations"])
READY = ("local", "cluster", "not started (no worker)")


class Health(BaseModel):
    status: Literal["ok"]


class Readiness(BaseModel):
    status: Literal["ready"]
    ray: str  # "local", "cluster" or "not started (no worker)"


@router.get("/healthz", response_model=Health)
async def healthz():
    """The process answers (liveness)."""
    return Health(status="ok")


@router.get("/readyz", response_model=Readiness,
            responses={503: {"model": ErrorBody, "description": "not ready: the registry does "
                             "not answer or cannot be written, Ray has not started, or a "
                             "worker thread has died or is stuck"}})
def readyz(registry: Registry = Depends(get_registry), worker=Depends(get_worker)):
    """Ready to take experiments: the registry answers and takes writes, the worker's Ray
    has started and every worker thread is alive and answering."""
    try:
        registry.status_counts()
    except Exception as exc:  # any failure of the database means not ready
        raise HTTPException(503, f"the registry does not answer: {exc}") from None
    state = worker.ray_state()
    if state not in READY:
        raise HTTPException(503, f"Ray is {state}")
    problem = worker.problem()
    if problem:
        raise HTTPException(503, problem)
    return Readiness(status="ready", ray=state)


@router.get("/metrics", response_class=Response,
            responses={200: {"content": {CONTENT_TYPE: {"schema": {"type": "string"}}},
                             "description": "Prometheus text exposition"}})
def metrics(request: Request):
    """Experiments by status, queue length, games played and shard latency."""
    return Response(request.app.state.metrics.exposition(), media_type=CONTENT_TYPE)
