"""The job queue's shared route steps: queue a job of any kind (an experiment, a plan, a
balance search) with its owner's places and the queue's cap, find one of a kind (404), and
cancel one by its owner or an admin (403, 409).  services.worker runs them."""
from __future__ import annotations

import math
import sqlite3

from fastapi import HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials
from starlette.concurrency import run_in_threadpool

from services.api.deps import may_change
from services.api.errors import error_items
from services.registry import FINISHED, QuotaFull, Registry
from services.settings import Settings

WORDS = {"experiment": ("experiment", "experiments"), "plan": ("plan", "plans"),
         "balance": ("balance search", "balance searches")}


def _quota_full(full: QuotaFull, settings: Settings, kind: str) -> HTTPException:
    """429 when the token already has MEEPLELAB_MAX_RUNNING_PER_TOKEN unfinished jobs of the
    kind, or the queue MEEPLELAB_MAX_QUEUED of all; Retry-After is the soonest expected end
    among them (30 s when none has an estimate)."""
    jobs = full.unfinished
    etas = [r["eta_seconds"] for r in jobs if r["eta_seconds"] is not None]
    retry = min(max(1, math.ceil(min(etas))), 3600) if etas else 30
    one, many = WORDS[kind]
    if full.everyone:
        text = (f"the service's queue is full: {len(jobs)} jobs are queued or running (limit "
                f"MEEPLELAB_MAX_QUEUED = {settings.max_queued}); retry when one has finished")
    else:
        text = (f"this token already has {len(jobs)} unfinished "
                f"{one if len(jobs) == 1 else many} (limit MEEPLELAB_MAX_RUNNING_PER_TOKEN = "
                f"{settings.max_running_per_token}); retry when one has finished")
    return HTTPException(429, text, headers={"Retry-After": str(retry)})


async def queue_job(request: Request, kind: str, raw: dict, name: str, game: str,
                    owner: str, games_total: int | None = None) -> dict:
    """Store a validated request as a queued job of `kind` and hand it to the worker: the
    stored record.  429 beyond the token's places or the queue's cap (counted and written in
    one transaction, in a thread: a write waits for the disk), 503 when the registry cannot
    be written."""
    state = request.app.state
    registry: Registry = state.registry
    settings: Settings = state.settings
    try:
        eid = await run_in_threadpool(
            registry.create, raw, name, game, games_total=games_total, owner=owner,
            quota=settings.max_running_per_token if owner else None, kind=kind,
            cap=settings.max_queued)
    except QuotaFull as full:
        raise _quota_full(full, settings, kind) from None
    except sqlite3.Error as exc:
        raise HTTPException(503, f"the {WORDS[kind][0]} was not stored: the registry cannot "
                            f"be written now ({exc})", headers={"Retry-After": "10"}) from None
    state.worker.submit(eid)
    return registry.get(eid)


async def requeue_job(request: Request, record: dict) -> dict:
    """Queue a job that has ended again (an experiment's replay) and hand it to the worker:
    it takes a place as a new job does, so it counts against its owner's places and the
    queue's cap (429 beyond them, 503 when the registry cannot be written)."""
    state = request.app.state
    settings: Settings = state.settings
    kind = record["kind"]
    try:
        await run_in_threadpool(
            state.registry.requeue, record["id"],
            quota=settings.max_running_per_token if record["owner"] else None,
            cap=settings.max_queued)
    except QuotaFull as full:
        raise _quota_full(full, settings, kind) from None
    except sqlite3.Error as exc:
        raise HTTPException(503, f"the {WORDS[kind][0]} was not queued again: the registry "
                            f"cannot be written now ({exc})", headers={"Retry-After": "10"}) \
            from None
    state.worker.submit(record["id"])
    return state.registry.get(record["id"])


def check_cpu_budget(asked: float | None, limit: int, setting: str,
                     loc: tuple = ("cpu_seconds",)) -> None:
    """422 naming the field `loc` when a request asks for a CPU budget above the service's
    (`limit`, the setting `setting`): a job may ask for less, never more."""
    if asked is not None and asked > limit:
        raise HTTPException(422, error_items([{
            "loc": loc, "type": "limit", "msg":
            f"a CPU budget of {asked:,g} CPU-seconds is more than this service allows "
            f"({setting} = {limit:,}): ask for at most that, or leave cpu_seconds out"}],
            source="body"))


def job_of(registry: Registry, kind: str, jid: str) -> dict:
    """The job `jid` of `kind` (404 when there is none)."""
    record = registry.get_job(jid, kind)
    if record is None:
        raise HTTPException(404, f"no {WORDS[kind][0]} with id {jid!r}")
    return record


def cancel_job(request: Request, kind: str, jid: str, owner: str,
               credentials: HTTPAuthorizationCredentials | None) -> dict:
    """Cancel a job of `kind` for its owner or an admin (403 for another token, 409 once it
    has finished): its record after the cancel."""
    state = request.app.state
    record = job_of(state.registry, kind, jid)
    if not may_change(record["owner"], owner, state.settings, credentials):
        raise HTTPException(403, f"{WORDS[kind][0]} {jid!r} was submitted with another "
                            "token: only that token or an admin token may change it")
    if record["status"] in FINISHED or not state.worker.cancel(jid):
        raise HTTPException(409, f"{WORDS[kind][0]} {jid!r} is already "
                            f"{state.registry.get(jid)['status']}")
    return state.registry.get(jid)
