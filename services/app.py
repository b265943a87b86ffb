"""The meeplelab web service: JSON API, dashboard pages and offline API docs in one FastAPI app.

    meeplelab serve [--host 127.0.0.1] [--port 8000] [--insecure]

One router per resource (services.api.*), shared checks as dependencies, one error model,
one Settings object (services.settings).  Experiments are validated with
`services.spec.ExperimentSpec`, stored in the SQLite registry and played by a background
worker (services.worker) with `services.runner.run_experiment`.  Importing this module does
not import Ray: Ray starts when the worker starts.  Nothing here names a game.
"""
from __future__ import annotations

import asyncio
import logging
import signal
import threading
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, JSONResponse
from fastapi.routing import APIRoute
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import compile_path

from pipelines.dataset import UnsoundData
from services import datasets
from services.api import balance, downloads, experiments, games, ops, plan, report
from services.api import results as statistics
from services.api.deps import require_token
from services.api.errors import error_items
from services.api.spec_schema import plan_request_schema, spec_components
from services.registry import Registry
from services.settings import VERSION, Settings, is_loopback
from services.metrics import Metrics
from services.worker import Worker, stop_ray

DASHBOARD = Path(__file__).resolve().parent.parent / "dashboards"


class BodyLimit:
    """ASGI middleware: a request body over `limit` bytes gets 413 before it is read whole
    (by its Content-Length, or while it streams when there is none)."""

    def __init__(self, app, limit: int):
        self.app, self.limit = app, limit

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        length = dict(scope["headers"]).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.limit:
            return await self._too_large(send)
        seen = 0

        async def limited():
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise _TooLarge()
            return message

        try:
            await self.app(scope, limited, send)
        except _TooLarge:
            await self._too_large(send)

    async def _too_large(self, send):
        response = JSONResponse(status_code=413, content={
            "detail": f"the request body is larger than {self.limit:,} bytes "
                      "(limit MEEPLELAB_MAX_BODY_BYTES)"})
        await response({"type": "http"}, None, send)


class _TooLarge(Exception):
    pass


UNSAFE = (b"POST", b"PUT", b"PATCH", b"DELETE")
# on every response: no other site may frame a page (a click on a framed cancel or delete),
# and no browser guesses a type other than the one sent (a download run as a script)
SECURITY_HEADERS = ((b"x-frame-options", b"DENY"),
                    (b"content-security-policy", b"frame-ancestors 'none'"),
                    (b"x-content-type-options", b"nosniff"))


class JsonErrors:
    """ASGI middleware: an error no route answered (a bug, a library's panic such as a
    Polars PanicException, which is no Exception) is a JSON 500 naming its kind, logged with
    its traceback, never Starlette's plain-text page or a dropped connection."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started = False

        async def watched(message):
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, watched)
        except (KeyboardInterrupt, SystemExit, GeneratorExit, asyncio.CancelledError):
            raise
        except BaseException as exc:  # noqa: BLE001  (a panic derives from BaseException)
            log.error("unanswered error on %s %s", scope.get("method"), scope.get("path"),
                      exc_info=exc)
            if started:
                raise
            response = JSONResponse(status_code=500, content={
                "detail": f"internal error ({type(exc).__name__}): the request was not "
                          "completed; the server's log has the details"})
            await response(scope, receive, send)


class SecurityHeaders:
    """ASGI middleware, the outermost: SECURITY_HEADERS on every HTTP response (pages, API,
    errors, the other middlewares' refusals); a response's own Content-Security-Policy is
    kept and gets frame-ancestors 'none' added."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def send_secured(message):
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", [])]
                names = {k.lower() for k, _ in headers}
                for name, value in SECURITY_HEADERS:
                    if name == b"content-security-policy" and name in names:
                        headers = [(k, v + b"; " + value if k.lower() == name and
                                    b"frame-ancestors" not in v else v) for k, v in headers]
                    elif name not in names:
                        headers.append((name, value))
                message = {**message, "headers": headers}
            await send(message)

        return await self.app(scope, receive, send_secured)


class RequestGuard:
    """ASGI middleware, before any route reads a request:
    - a body sent with POST, PUT or PATCH must be JSON (`Content-Type: application/json` or
      `...+json`): 415 otherwise.  A web page's cross-site request without a CORS preflight
      can only send text/plain, form or no content type, so none of them reaches a route;
    - without tokens (`same_origin`), a write whose Origin is not the Host it was sent to
      (or is "null") is 403: another site's page may not drive the service;
    - with `hosts` (the token-less loopback default of `meeplelab serve`), the Host header
      must name a loopback address or localhost: 421 otherwise, so a name an attacker points
      at 127.0.0.1 (DNS rebinding) reaches nothing."""

    def __init__(self, app, same_origin: bool, hosts: bool):
        self.app, self.same_origin, self.hosts = app, same_origin, hosts

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            problem = self._problem(scope)
            if problem is not None:
                status, detail = problem
                response = JSONResponse(status_code=status, content={"detail": detail})
                return await response(scope, receive, send)
        return await self.app(scope, receive, send)

    def _problem(self, scope) -> tuple[int, str] | None:
        headers = {k.lower(): v for k, v in scope["headers"]}
        host = headers.get(b"host", b"").decode("latin-1")
        if self.hosts and not is_loopback(_host_name(host)):
            return 421, (f"this service answers only on a loopback address or localhost, not "
                         f"{host[:100]!r} (set MEEPLELAB_TOKEN to serve other names)")
        method = scope["method"].encode()
        if method not in UNSAFE:
            return None
        if self.same_origin:
            origin = headers.get(b"origin")
            if origin is not None and origin.decode("latin-1").partition("://")[2] != host:
                return 403, "a cross-site write: this service without tokens takes writes " \
                            "only from its own pages"
        has_body = headers.get(b"content-length", b"0") not in (b"0", b"") or \
            b"transfer-encoding" in headers
        if method != b"DELETE" and has_body:
            kind = headers.get(b"content-type", b"").decode("latin-1").split(";")[0]
            kind = kind.strip().lower()
            if kind != "application/json" and not kind.endswith("+json"):
                return 415, (f"the body must be JSON (Content-Type: application/json), got "
                             f"{kind[:100] or 'no content type'!r}")
        return None


def _host_name(host: str) -> str:
    """The name of a Host header without its port ('[::1]:8000' -> '::1')."""
    if host.startswith("["):
        return host[1:].partition("]")[0]
    return host.rpartition(":")[0] if host.count(":") == 1 else host


def _allowed_methods(app: FastAPI, path: str) -> list[str]:
    """The methods of the API path that `path` matches (HEAD with GET), from the schema."""
    methods: set[str] = set()
    for template, operations in app.openapi()["paths"].items():
        if compile_path(template)[0].match(path):
            methods |= {m.upper() for m in operations}
    if "GET" in methods:
        methods.add("HEAD")
    return sorted(methods)


STOP_SECONDS = 10.0  # the most a stop waits for the running experiments to let go
log = logging.getLogger("meeplelab.app")


def _open_registry(settings: Settings) -> Registry:
    """The registry; a new (empty) one next to a results folder that holds experiments is
    said in the log: the registry was deleted or moved, and their history is not listed."""
    new = settings.db != ":memory:" and not Path(settings.db).exists()
    registry = Registry(settings.db)
    results = Path(settings.results)
    if new and "://" not in settings.results and results.is_dir():
        orphans = sum(1 for p in results.iterdir() if p.is_dir())
        if orphans:
            log.warning("the registry %s is new, but the results folder holds %d experiments:"
                        " was the registry deleted or moved? They are not listed", settings.db,
                        orphans)
    return registry


async def _reclaim_signals(worker) -> None:
    """Once the worker's Ray has started, installs uvicorn's SIGTERM and SIGINT handlers
    again.  Why: starting Ray replaces the process's SIGTERM handler at the C level with
    its own, which arms a 3 s alarm and then aborts (SIGABRT): no clean stop, and Ray's
    processes outlive the server.  The Python-level handler is still uvicorn's; setting it
    again (from the main thread, where this task runs) makes it the one the signal meets."""
    while worker.ray_state() in ("not started", "starting"):
        await asyncio.sleep(0.2)
    if threading.current_thread() is threading.main_thread():
        for number in (signal.SIGTERM, signal.SIGINT):
            handler = signal.getsignal(number)
            if callable(handler):
                signal.signal(number, handler)


def _operation_id(route: APIRoute) -> str:
    return route.name  # stable ids for the schema's links and for clients


def create_app(settings: Settings | None = None, *, db: str | None = None,
               results: str | None = None, run_worker: bool = True,
               own_ray: bool = False, loopback_hosts: bool = False) -> FastAPI:
    """The app over `settings` (default: the environment); `db` and `results` override them.
    With `own_ray` (a served process) the app's stop also shuts down the process's Ray; with
    `loopback_hosts` it answers only requests whose Host is a loopback name (RequestGuard)."""
    settings = settings or Settings()
    overrides = {k: v for k, v in (("db", db), ("results", results)) if v is not None}
    if overrides:
        settings = settings.model_copy(update=overrides)
    registry = _open_registry(settings)
    metrics = Metrics(registry)
    worker = Worker(registry, settings.results, ray_address=settings.ray_address,
                    shard_done=metrics.shard_done, worker_nice=settings.worker_nice,
                    lanes=settings.lanes(), job_cpu_seconds=settings.job_cpu_seconds,
                    plan_seconds=settings.plan_seconds, limits=settings.spec_limits(),
                    places_per_token=settings.places_per_token if settings.auth_enabled
                    else None, admins=settings.admin_owners(),
                    experiment_cpu_seconds=settings.experiment_cpu_seconds)

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        reclaim = None
        if run_worker:
            worker.start()
            if own_ray:
                reclaim = asyncio.create_task(_reclaim_signals(worker))
        try:
            yield
        finally:
            if reclaim is not None:
                reclaim.cancel()
            # Within the k8s grace period (k8s/api.yaml): running experiments stop within
            # a few seconds, running plans and balance searches at once (their processes
            # are ended); all stay unfinished and run again next start; then this
            # process's Ray shuts down.
            if run_worker:
                worker.stop(timeout=STOP_SECONDS)
            if own_ray:
                stop_ray()
            registry.close()

    app = FastAPI(title="meeplelab", version=VERSION, lifespan=lifespan, docs_url=None,
                  redoc_url=None, generate_unique_id_function=_operation_id,
                  description="Monte Carlo balance experiments for tabletop games.")
    app.state.settings, app.state.registry, app.state.worker = settings, registry, worker
    app.state.metrics = metrics
    app.add_middleware(BodyLimit, limit=settings.max_body_bytes)
    app.add_middleware(RequestGuard, same_origin=not settings.auth_enabled,
                       hosts=loopback_hosts)
    app.add_middleware(JsonErrors)
    app.add_middleware(SecurityHeaders)  # last added: outermost, every response

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError):
        return JSONResponse(status_code=422, content={"detail": error_items(exc.errors())})

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException):
        headers = dict(exc.headers or {})
        if exc.status_code == 405:  # every method of the path, not those of its first route
            headers["Allow"] = ", ".join(_allowed_methods(app, request.url.path)) or "GET"
        return JSONResponse(status_code=exc.status_code, content={"detail": exc.detail},
                            headers=headers)

    @app.exception_handler(UnsoundData)
    async def _unsound(request: Request, exc: UnsoundData):
        """No shard of a finished experiment verifies against its manifest: 409 naming them."""
        eid = request.path_params.get("eid", "")
        found = datasets.integrity_of(exc.integrity)
        return JSONResponse(status_code=409, content={"detail": datasets.damage_notice(
            found, f"POST /api/experiments/{eid}/replay")})

    reads = [Depends(require_token)] if settings.protect_reads else []
    app.include_router(games.router, dependencies=reads)
    app.include_router(experiments.router, dependencies=reads)
    app.include_router(statistics.router, dependencies=reads)
    app.include_router(downloads.router, dependencies=reads)
    app.include_router(report.router, dependencies=reads)
    app.include_router(plan.router)
    app.include_router(plan.reads, dependencies=reads)
    app.include_router(balance.router)  # what to change
    app.include_router(balance.reads, dependencies=reads)
    app.include_router(ops.router)  # probes and metrics need no token
    _mount_pages(app)
    _contract(app, settings)
    return app


def _contract(app: FastAPI, settings: Settings) -> None:
    """The schema as the service really behaves: the per-game ExperimentSpec variants, and
    401 only on the routes that ask for a token (none without tokens)."""
    build = app.openapi

    def openapi() -> dict:
        if app.openapi_schema is None:
            schema = build()
            schema.setdefault("components", {}).setdefault("schemas", {}).update(
                spec_components(settings.max_games))
            schema["components"]["schemas"]["PlanRequest"] = plan_request_schema()
            _link_submit_to_experiment_routes(schema)
            for path in schema.get("paths", {}).values():
                for operation in path.values():
                    if not settings.auth_enabled:
                        operation.pop("security", None)
                    if "security" not in operation:  # a route that asks for no token
                        operation.get("responses", {}).pop("401", None)
            if not settings.auth_enabled:
                schema["components"].pop("securitySchemes", None)
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi


def _link_submit_to_experiment_routes(schema: dict) -> None:
    """OpenAPI links from a submitted experiment's id to every route of one experiment (what
    clients and stateful tests follow)."""
    links = {}
    for path, operations in schema.get("paths", {}).items():
        if "{eid}" in path:
            for operation in operations.values():
                links[operation["operationId"]] = {
                    "operationId": operation["operationId"],
                    "parameters": {"eid": "$response.body#/id"}}
    submit = schema["paths"]["/api/experiments"]["post"]
    submit["responses"]["201"]["links"] = links


def _mount_pages(app: FastAPI) -> None:
    """Dashboard pages, their static files, and Swagger UI from the swagger-ui-bundle package."""
    import swagger_ui_bundle

    app.mount("/static", StaticFiles(directory=DASHBOARD / "static"), name="static")
    app.mount("/docs-assets", StaticFiles(directory=str(swagger_ui_bundle.swagger_ui_path)),
              name="docs-assets")

    @app.get("/docs", include_in_schema=False)
    def docs():
        return get_swagger_ui_html(openapi_url=app.openapi_url, title="meeplelab API",
                                   swagger_js_url="/docs-assets/swagger-ui-bundle.js",
                                   swagger_css_url="/docs-assets/swagger-ui.css",
                                   swagger_favicon_url="/docs-assets/favicon-32x32.png")

    def page(name: str):
        return FileResponse(DASHBOARD / "templates" / name, media_type="text/html")

    @app.get("/", include_in_schema=False)
    def index():
        return page("index.html")

    @app.get("/new", include_in_schema=False)
    def new_experiment():
        return page("new.html")

    @app.get("/balance", include_in_schema=False)
    def balance_page():
        return page("balance.html")

    @app.get("/balance/searches", include_in_schema=False)
    def balance_searches_page():
        return page("searches.html")

    @app.get("/experiments/{eid}", include_in_schema=False)
    def experiment_page(eid: str):
        return page("experiment.html")


class RefusedStart(SystemExit):
    """`serve` refuses to start (the message says why)."""


class InsecureBind(RefusedStart):
    """`serve` on a non-loopback address without a token (and without --insecure)."""


def _settings() -> Settings:
    """The environment's settings, or RefusedStart naming every setting that is wrong (a
    token file that cannot be read among them, on any host)."""
    from pydantic import ValidationError

    try:
        return Settings()
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'settings'}: "
                             f"{e['msg'].removeprefix('Value error, ')}" for e in exc.errors())
        raise RefusedStart(f"error: refusing to start: {problems}") from None


class PortInUse(SystemExit):
    """`serve` on a port another process listens on."""


def check_port(host: str, port: int) -> None:
    """PortInUse, one line naming --port as the fix, when the port is taken: checked before
    Ray or the app start (uvicorn would only fail after both)."""
    import errno
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise PortInUse(f"error: port {port} on {host} is already in use (another "
                                f"meeplelab or server?): choose another with --port, e.g. "
                                f"--port {port + 1}") from None


def serve(host: str | None = None, port: int | None = None, demo: bool = False,
          insecure: bool = False, settings: Settings | None = None,
          access_log: bool = False) -> None:
    """Run the service with uvicorn (loopback by default).  A non-loopback host needs a
    token (MEEPLELAB_TOKEN) unless `insecure`.  With demo, the demo experiment is queued
    first and its page is printed."""
    import uvicorn

    settings = settings or _settings()
    host = host or settings.host
    port = port or settings.port
    if not is_loopback(host) and not settings.auth_enabled and not insecure:
        raise InsecureBind(
            f"error: refusing to listen on {host} without a token: anyone who reaches the "
            "port could submit, cancel and delete experiments. Set MEEPLELAB_TOKEN (a token "
            "or a file of tokens), or pass --insecure to do it anyway.")
    check_port(host, port)
    page, base = "", f"http://{host}:{port}/"
    if demo:
        from services.demo import TerminalReport, ensure_demo

        registry = Registry(settings.db)
        ids = ensure_demo(registry)
        registry.close()
        page = f"experiments/{ids[0]}"
        TerminalReport(settings.db, settings.results, ids, base).start()
    print(f"meeplelab dashboard: {base}{page}  (API docs: /docs)", flush=True)
    app = create_app(settings, own_ray=True,
                     loopback_hosts=is_loopback(host) and not settings.auth_enabled)
    _settle_heap()
    # On SIGTERM or Ctrl-C uvicorn ends the lifespan (the worker, then this process's Ray)
    # and then re-raises the signal.
    uvicorn.run(app, host=host, port=port, log_level="info", access_log=access_log,
                timeout_graceful_shutdown=int(STOP_SECONDS))


def _settle_heap() -> None:
    """Import what the worker will import, then exempt everything alive now from garbage
    collection (gc.freeze).  Why: Ray, Polars, pyarrow and FastAPI leave about 160,000
    long-lived objects, and each full collection walked them all, 190-490 ms with every
    request of the process stopped (a served process polled by 50 dashboards met one every
    few tens of seconds); frozen, a full collection walks only what was made since."""
    import gc

    import pipelines  # noqa: F401  (the figures)
    import services.runner  # noqa: F401  (Ray: the worker's runner)

    gc.collect()
    gc.freeze()
