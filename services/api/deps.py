"""Dependencies shared by the routers: the app's settings, registry and worker, the experiment
named in the path (404), its results (409), and the bearer-token check (401).

They are coroutines on purpose: FastAPI runs a plain `def` dependency in its thread pool, a
hand-over to a thread and back per dependency and request, which under load costs more than
the work (a registry read on its own connection takes microseconds).  Anything that may wait
(a listing of the results) goes to a thread explicitly."""
from __future__ import annotations

import hmac

from typing import Annotated

from fastapi import Depends, HTTPException, Path, Request, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.concurrency import run_in_threadpool

from services.registry import Registry
from services.settings import Settings, owner_of
from services.storage import experiment_path, has_results

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


async def experiment(eid: ExperimentId, registry: Registry = Depends(get_registry)) -> dict:
    """The registry record of the experiment in the path (404 if there is none)."""
    record = registry.get(eid)
    if record is None:
        raise HTTPException(404, f"no experiment with id {eid!r}")
    return record


async def dataset(record: dict = Depends(experiment),
            settings: Settings = Depends(get_settings)) -> str:
    """The result dataset root of the experiment in the path (409 while it has no rows).
    Games done (the runner counts a shard once it is written) answer without a listing."""
    root = experiment_path(settings.results, record["id"])
    if record["games_done"] <= 0 and not await run_in_threadpool(has_results, root):
        raise HTTPException(409, f"experiment {record['id']!r} has no results yet")
    return root
