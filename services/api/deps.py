"""Dependencies shared by the routers: the app's settings, registry and worker, the experiment
named in the path (404), its results (409), and the bearer-token check (401).

They are coroutines on purpose: FastAPI runs a plain `def` dependency in its thread pool, a
hand-over to a thread and back per dependency and request, which under load costs more than
the work (a registry read on its own connection takes microseconds).  Anything that may wait
(a listing of the results) goes to a thread explicitly."""
from __future__ import annotations

import hmac
import json
from typing import Annotated, Any

from fastapi import Depends, HTTPException, Path, Request, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from services.api.errors import error_items
from services.registry import Registry
from services.settings import Settings, owner_of
from services.spec import ExperimentSpec
from pipelines.folder import experiment_path, has_results

ExperimentId = Annotated[str, Path(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9._-]+$",
                                   description="an experiment id (from POST /api/experiments)")]

bearer_scheme = HTTPBearer(auto_error=False, description="a token of MEEPLELAB_TOKEN")


async def get_settings(request: Request) -> Settings:
    return request.app.state.settings


async def get_registry(request: Request) -> Registry:
    return request.app.state.registry


async def get_worker(request: Request):
    return request.app.state.worker


def _known(token: str, tokens: tuple[str, ...]) -> bool:
    """Constant-time comparison with every configured token (no early exit on a match)."""
    given = token.encode()
    found = False
    for accepted in tokens:
        found |= hmac.compare_digest(given, accepted.encode())
    return found


async def require_token(settings: Settings = Depends(get_settings),
                  credentials: HTTPAuthorizationCredentials | None = Security(bearer_scheme)
                  ) -> str:
    """The caller's owner name (a hash of its token; "" when the service has no tokens);
    401 when tokens are set and the request has none or an unknown one."""
    if not settings.auth_enabled:
        return ""
    if credentials is None or credentials.scheme.lower() != "bearer":
        raise HTTPException(401, "this service needs a token: send the header "
                            "'Authorization: Bearer <token>'",
                            headers={"WWW-Authenticate": "Bearer"})
    if not _known(credentials.credentials, settings.tokens):
        raise HTTPException(401, "the bearer token is not one this service accepts",
                            headers={"WWW-Authenticate": 'Bearer error="invalid_token"'})
    return owner_of(credentials.credentials)


async def experiment(eid: ExperimentId, request: Request,
                     registry: Registry = Depends(get_registry)) -> dict:
    """The registry record of the experiment in the path (404 if there is none), with
    `games_written`: the games of its shards written (games done also count the games of
    shards still playing; this service's worker knows both while it runs one)."""
    record = registry.get_job(eid, "experiment")
    if record is None:
        raise HTTPException(404, f"no experiment with id {eid!r}")
    worker = getattr(request.app.state, "worker", None)
    record["games_written"] = record["games_done"] if worker is None else \
        worker.written(eid, record["games_done"])
    return record


async def dataset(record: dict = Depends(experiment),
            settings: Settings = Depends(get_settings)) -> str:
    """The result dataset root of the experiment in the path (409 while it has no rows).
    Games written (the runner counts a shard once it is written) answer without a listing."""
    root = experiment_path(settings.results, record["id"])
    if record["games_written"] <= 0 and not await run_in_threadpool(has_results, root):
        raise HTTPException(409, f"experiment {record['id']!r} has no results yet")
    return root


def _parse(body: bytes) -> Any:
    try:
        return json.loads(body)
    except RecursionError:
        raise ValueError("the body is nested too deeply") from None


async def json_object(request: Request, what: str) -> dict:
    """The request body as a JSON object, parsed in a thread (a large body never holds the
    event loop); 422 when it is not JSON or not an object.  (The content type was checked
    by services.app's RequestGuard: 415 unless JSON.)"""
    try:
        raw = await run_in_threadpool(_parse, await request.body())
    except ValueError as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise HTTPException(422, [{"field": "body", "loc": ["body"], "type": "json_invalid",
                                   "msg": f"the body is not valid JSON: {exc}"}]) from None
    if not isinstance(raw, dict):
        raise HTTPException(422, [{"field": "body", "loc": ["body"], "type": "model_type",
                                   "msg": f"the body must be a JSON object ({what})"}])
    return raw


async def spec_body(request: Request, settings: Settings) -> tuple[dict, ExperimentSpec]:
    """The request body as sent and as a validated spec (every mistake at once, limits
    included, as a 422 naming each field).  Validation runs in a thread: the size limits
    come first and every check is linear in the body (at most MEEPLELAB_MAX_BODY_BYTES), so
    it is bounded in time, and the event loop goes on meanwhile."""
    raw = await json_object(request, "an experiment spec")
    try:
        spec = await run_in_threadpool(ExperimentSpec.model_validate, raw,
                                       context=settings.spec_limits())
    except ValidationError as exc:
        raise HTTPException(422, error_items(exc.errors(), source="body")) from None
    return raw, spec


def may_change(owned_by: str, owner: str, settings: Settings,
               credentials: HTTPAuthorizationCredentials | None) -> bool:
    """Whether the caller (`owner`, its credentials) may change what `owned_by` submitted:
    always without tokens; else the same token, or an admin token."""
    return not settings.auth_enabled or owned_by == owner or (
        credentials is not None and _known(credentials.credentials, settings.admin_tokens))


async def owned_experiment(owner: str = Depends(require_token),
                           settings: Settings = Depends(get_settings),
                           credentials: HTTPAuthorizationCredentials | None =
                           Security(bearer_scheme),
                           record: dict = Depends(experiment)) -> dict:
    """The experiment in the path, for a change by its owner: 403 when tokens are set and
    the caller's token is neither the one that submitted it nor an admin token."""
    if not may_change(record["owner"], owner, settings, credentials):
        raise HTTPException(403, f"experiment {record['id']!r} was submitted with another "
                            "token: only that token or an admin token may change it")
    return record

