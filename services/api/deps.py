"""Dependencies shared by the routers: the app's settings, registry and worker, the experiment
named in the path (404), its results (409), and the bearer-token check (401)."""
from __future__ import annotations

import hmac

from fastapi import Depends, HTTPException, Request, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from services.registry import Registry
from services.settings import Settings, owner_of
from services.storage import experiment_path, has_results

bearer_scheme = HTTPBearer(auto_error=False, description="a token of MEEPLELAB_TOKEN")


def get_settings(request: Request) -> Settings:
    return request.app.state.settings


def get_registry(request: Request) -> Registry:
    return request.app.state.registry


def get_worker(request: Request):
    return request.app.state.worker


def _known(token: str, tokens: tuple[str, ...]) -> bool:
    """Constant-time comparison with every configured token (no early exit on a match)."""
    given = token.encode()
    found = False
    for accepted in tokens:
        found |= hmac.compare_digest(given, accepted.encode())
    return found


def require_token(settings: Settings = Depends(get_settings),
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


def experiment(eid: str, registry: Registry = Depends(get_registry)) -> dict:
    """The registry record of the experiment in the path (404 if there is none)."""
    record = registry.get(eid)
    if record is None:
        raise HTTPException(404, f"no experiment with id {eid!r}")
    return record


def dataset(record: dict = Depends(experiment),
            settings: Settings = Depends(get_settings)) -> str:
    """The result dataset root of the experiment in the path (409 while it has no rows)."""
    root = experiment_path(settings.results, record["id"])
    if not has_results(root):
        raise HTTPException(409, f"experiment {record['id']!r} has no results yet")
    return root
