"""The meeplelab web service: JSON API, dashboard pages and offline API docs in one FastAPI app.

    meeplelab serve [--host 127.0.0.1] [--port 8000]

Experiments are validated with `services.spec.ExperimentSpec`, stored in the SQLite registry
and played one at a time by a background worker thread (services.worker) with
`services.runner.run_experiment`.  Nothing here names a game: the catalogue, the rule-option
schemas and the result columns all come from core_cy and the data.
"""
from __future__ import annotations

import os
import tempfile
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI, HTTPException, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, JSONResponse, Response, StreamingResponse
from fastapi.staticfiles import StaticFiles
from starlette.background import BackgroundTask

import core_cy
import pipelines
from services import datasets
from services.registry import Registry, db_path, results_dir
from services.runner import experiment_path
from services.plan import PlanRequest
from services.spec import ExperimentSpec
from services.worker import Worker

DASHBOARD = Path(__file__).resolve().parent.parent / "dashboards"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000


def _field(loc) -> str:
    """A pydantic location as a dotted field name, without FastAPI's leading 'body'."""
    parts = [str(p) for p in loc]
    if parts and parts[0] == "body":
        parts = parts[1:]
    return ".".join(parts) or "body"


def _validation_errors(errors) -> list[dict]:
    """Short, JSON-safe error items: the field, the message and the error type."""
    return [{"field": _field(e.get("loc", ())), "loc": list(e.get("loc", ())),
             "msg": e.get("msg", ""), "type": e.get("type", "")} for e in errors]


def _unprocessable(field: str, message: str) -> HTTPException:
    return HTTPException(422, [{"field": field, "loc": ["query", field], "msg": message,
                                "type": "value_error"}])


def _experiment_view(record: dict) -> dict:
    """A registry record as the API shows it."""
    return {
        "id": record["id"],
        "name": record["name"],
        "game": record["game"],
        "status": record["status"],
        "spec": record["spec"],
        "progress": {
            "done": record["games_done"],
            "total": record["games_total"],
            "games_per_second": record["games_per_second"],
            "eta_seconds": record["eta_seconds"],
        },
        "created_at": record["created_at"],
        "started_at": record["started_at"],
        "finished_at": record["finished_at"],
        "error": record["error"],
        "cancel_requested": record["cancel_requested"],
    }


def create_app(db: str | None = None, results: str | None = None,
               run_worker: bool = True) -> FastAPI:
    """The app over the registry at `db` and results under `results` (defaults: settings)."""
    registry = Registry(db or db_path())
    results = results or results_dir()
    worker = Worker(registry, results)

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        if run_worker:
            worker.start()
        try:
            yield
        finally:
            if run_worker:
                worker.stop()
            registry.close()

    app = FastAPI(title="meeplelab", version="0.1.0", lifespan=lifespan, docs_url=None,
                  redoc_url=None,
                  description="Monte Carlo balance experiments for tabletop games.")
    app.state.registry, app.state.worker, app.state.results = registry, worker, results

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError):
        return JSONResponse(status_code=422, content={"detail": _validation_errors(exc.errors())})

    def record_or_404(eid: str) -> dict:
        record = registry.get(eid)
        if record is None:
            raise HTTPException(404, f"no experiment with id {eid!r}")
        return record

    def dataset_or_409(eid: str) -> str:
        record_or_404(eid)
        root = experiment_path(results, eid)
        if not datasets.has_results(root):
            raise HTTPException(409, f"experiment {eid!r} has no results yet")
        return root

    # ---- catalogue ----------------------------------------------------------------------
    @app.get("/api/games", tags=["games"])
    def list_games() -> list[dict]:
        """Every game of the catalogue with its info(): rule-option JSON schemas, player
        range, agents, end reasons and outcome fields."""
        return [core_cy.load(name).info() for name in core_cy.games()]

    # ---- experiments --------------------------------------------------------------------
    @app.post("/api/experiments", status_code=201, tags=["experiments"])
    async def submit(spec: ExperimentSpec, request: Request) -> dict:
        """Validate and queue an experiment (the CLI spec-file format, as JSON)."""
        raw = await request.json()  # stored as sent, so a restart re-validates the same spec
        eid = registry.create(raw, spec.name, spec.game, games_total=spec.total_games())
        worker.submit(eid)
        return {"id": eid, "status": "queued", "url": f"/api/experiments/{eid}"}

    @app.get("/api/experiments", tags=["experiments"])
    def list_experiments() -> list[dict]:
        """Every experiment, newest first, with status and progress."""
        return [_experiment_view(r) for r in registry.list()]

    @app.get("/api/experiments/{eid}", tags=["experiments"])
    def get_experiment(eid: str) -> dict:
        """Spec, status (queued/running/done/failed/cancelled) and progress."""
        return _experiment_view(record_or_404(eid))

    @app.post("/api/experiments/{eid}/cancel", tags=["experiments"])
    def cancel(eid: str) -> dict:
        """Cancel a queued experiment now or a running one between shards (409 if finished)."""
        record = record_or_404(eid)
        if not worker.cancel(eid):
            raise HTTPException(409, f"experiment {eid!r} is already {record['status']}")
        return _experiment_view(registry.get(eid))

    # ---- statistics ---------------------------------------------------------------------
    def look_of(record: dict, delta: float | None) -> pipelines.Look:
        """Interim (always-valid) figures unless the run is done; the margin that matters is
        the query's delta, else the spec's stop_when.delta, else pipelines.DELTA."""
        spec = ExperimentSpec.model_validate(record["spec"])
        if delta is None:
            delta = spec.stop_when.delta if spec.stop_when and spec.stop_when.delta else \
                pipelines.DELTA
        return pipelines.Look(interim=record["status"] != "done",
                              planned_games=spec.max_games_per_cell(), delta=delta)

    DeltaQuery = Query(None, gt=0, lt=1, description="the difference in win share that "
                       "matters, as a fraction (default: the spec's stop_when.delta or 0.01)")
    TruncatedQuery = Query(False, description="count games cut short by a simulator safety "
                           "(left out by default)")

    @app.get("/api/experiments/{eid}/summary", tags=["results"])
    def summary(eid: str, delta: float | None = DeltaQuery,
                include_truncated: bool = TruncatedQuery) -> list[dict]:
        """Per (arm, players, seat) of a competitive game, or per (arm, players) of a
        cooperative one: win share (team win rate) with its 95% interval, a one-sentence
        verdict per cell, the seat-balance test, truncated games, the engine version
        (pipelines.summary).  While the run is not done the figures are interim
        (`interim`: always-valid confidence sequences, no p-values)."""
        record = record_or_404(eid)
        return datasets.records(pipelines.summary(
            dataset_or_409(eid), include_truncated, look_of(record, delta)))

    @app.get("/api/experiments/{eid}/compare", tags=["results"])
    def compare(eid: str, baseline: str | None = Query(
            None, description="the arm to compare against (default: the spec's baseline)"),
            delta: float | None = DeltaQuery, include_truncated: bool = TruncatedQuery
            ) -> list[dict]:
        """Each arm against the baseline arm on paired games: differences with intervals,
        p-values adjusted over the experiment (Benjamini-Hochberg, intervals at the matching
        level; interim while running) and a one-sentence verdict per row."""
        record = record_or_404(eid)
        spec = ExperimentSpec.model_validate(record["spec"])
        arms = list(spec.arm_rules())
        baseline = spec.baseline_arm() if baseline is None else baseline
        if baseline not in arms:
            raise _unprocessable("baseline", f"baseline {baseline!r} is not an arm of this "
                                 f"experiment; arms: {arms}")
        return datasets.records(pipelines.compare(dataset_or_409(eid), baseline,
                                                  include_truncated, look_of(record, delta)))

    @app.get("/api/experiments/{eid}/breakdown", tags=["results"])
    def breakdown(eid: str, by: str = Query(..., description="an outcome column, e.g. "
                                            "seat_adventurer or end_reason"),
                  team: bool = Query(False, description="key a per-seat column by the "
                                     "sorted values of all seats (e.g. adventurer teams)"),
                  include_truncated: bool = TruncatedQuery) -> list[dict]:
        """Win share (team win rate in cooperative games) per value of an outcome column,
        each game counted once per value (pipelines.breakdown)."""
        record = record_or_404(eid)
        path = dataset_or_409(eid)
        try:
            return datasets.records(pipelines.breakdown(path, by, team, include_truncated,
                                                        look_of(record, None)))
        except ValueError as exc:
            raise _unprocessable("team" if "team=True" in str(exc) else "by", str(exc))

    @app.post("/api/plan", tags=["experiments"])
    def plan(request: PlanRequest) -> dict:
        """Games and wall time an experiment needs, estimated from a short pilot run of its
        spec: for a target 95% half-width on every win share, and to detect a difference
        `delta` from the baseline with 80% power (services.plan)."""
        from services.plan import plan_experiment

        return plan_experiment(request.spec, half_width=request.half_width,
                               delta=request.delta, pilot_games=request.pilot_games)

    @app.get("/api/experiments/{eid}/histograms", tags=["results"])
    def histograms(eid: str, bins: int = Query(20, ge=1, le=200)) -> dict:
        """Histograms from the raw rows: game length per (arm, players) and score per
        (arm, players, seat), each on edges shared by all its series."""
        return datasets.histograms(dataset_or_409(eid), bins)

    # ---- downloads ----------------------------------------------------------------------
    @app.get("/api/experiments/{eid}/download/summary.csv", tags=["downloads"],
             response_class=Response)
    def summary_csv(eid: str):
        """The summary table as CSV."""
        record = record_or_404(eid)
        text = datasets.csv_text(pipelines.summary(dataset_or_409(eid),
                                                   look=look_of(record, None)))
        return Response(text, media_type="text/csv", headers={
            "Content-Disposition": f'attachment; filename="{eid}-summary.csv"'})

    @app.get("/api/experiments/{eid}/download/results.parquet", tags=["downloads"],
             response_class=FileResponse)
    def results_parquet(eid: str):
        """Every raw row as one Parquet file."""
        root = dataset_or_409(eid)
        fd, path = tempfile.mkstemp(suffix=".parquet", prefix="meeplelab-")
        os.close(fd)
        try:
            datasets.write_concatenated(root, path)
        except BaseException:
            os.unlink(path)
            raise
        return FileResponse(path, media_type="application/vnd.apache.parquet",
                            filename=f"{eid}.parquet", background=BackgroundTask(os.unlink, path))

    @app.get("/api/experiments/{eid}/download/results.zip", tags=["downloads"],
             response_class=StreamingResponse)
    def results_zip(eid: str):
        """The raw shard files as a zip (hive layout: arm=<arm>/players=<n>/shard-*.parquet)."""
        root = dataset_or_409(eid)
        return StreamingResponse(datasets.zip_bytes(root), media_type="application/zip",
                                 headers={"Content-Disposition":
                                          f'attachment; filename="{eid}.zip"'})

    _mount_pages(app)
    return app


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

    @app.get("/experiments/{eid}", include_in_schema=False)
    def experiment_page(eid: str):
        return page("experiment.html")


def serve(host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, demo: bool = False) -> None:
    """Run the service with uvicorn (loopback by default: pass --host 0.0.0.0 to expose it).
    With demo, the demo experiment is queued first and its page is printed."""
    import uvicorn

    page = ""
    if demo:
        from services.demo import ensure_demo

        registry = Registry(db_path())
        page = f"experiments/{ensure_demo(registry)}"
        registry.close()
    print(f"meeplelab dashboard: http://{host}:{port}/{page}  (API docs: /docs)", flush=True)
    uvicorn.run(create_app(), host=host, port=port, log_level="info")
