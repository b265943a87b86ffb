"""Experiments: submit, list, show, cancel."""
from __future__ import annotations

from fastapi import APIRouter, Depends, HTTPException, Request

from services.api.deps import experiment, get_registry, get_settings, get_worker, require_token
from services.api.errors import responses
from services.api.models import ExperimentView, Submitted
from services.registry import Registry
from services.settings import Settings
from services.spec import ExperimentSpec

router = APIRouter(prefix="/api/experiments", tags=["experiments"])


def _limit_errors(spec: ExperimentSpec, settings: Settings) -> list[dict]:
    """The service's size limits (MEEPLELAB_MAX_CELLS, MEEPLELAB_MAX_GAMES) as 422 items."""
    errors = []
    cells = len(spec.cells())
    if cells > settings.max_cells:
        errors.append({"field": "arms", "loc": ["body", "arms"], "type": "limit",
                       "msg": f"the experiment has {cells:,} cells (arms x player counts); "
                       f"this service plays at most {settings.max_cells:,} per experiment "
                       "(limit MEEPLELAB_MAX_CELLS)"})
    total = spec.total_games()
    if total > settings.max_games:
        field = "stop_when.max_games" if spec.stop_when else "games_per_arm"
        errors.append({"field": field, "loc": ["body", *field.split(".")], "type": "limit",
                       "msg": f"the experiment asks for {total:,} games ({cells:,} cells x "
                       f"{spec.max_games_per_cell():,}); this service plays at most "
                       f"{settings.max_games:,} games per experiment (limit MEEPLELAB_MAX_GAMES)"})
    return errors


@router.post("", status_code=201, response_model=Submitted,
             responses=responses(401, 413, 422, 429))
async def submit(spec: ExperimentSpec, request: Request, owner: str = Depends(require_token),
                 settings: Settings = Depends(get_settings),
                 registry: Registry = Depends(get_registry), worker=Depends(get_worker)):
    """Validate and queue an experiment (the CLI spec-file format, as JSON)."""
    errors = _limit_errors(spec, settings)
    if errors:
        raise HTTPException(422, errors)
    raw = await request.json()  # stored as sent, so a restart re-validates the same spec
    eid = registry.create(raw, spec.name, spec.game, games_total=spec.total_games())
    worker.submit(eid)
    return Submitted(id=eid, status="queued", url=f"/api/experiments/{eid}")


@router.get("", response_model=list[ExperimentView], responses=responses(401))
def list_experiments(registry: Registry = Depends(get_registry)):
    """Every experiment, newest first, with status and progress."""
    return [ExperimentView.of(r) for r in registry.list()]


@router.get("/{eid}", response_model=ExperimentView, responses=responses(401, 404))
def get_experiment(record: dict = Depends(experiment)):
    """Spec, status (queued/running/done/failed/cancelled) and progress."""
    return ExperimentView.of(record)


@router.post("/{eid}/cancel", response_model=ExperimentView,
             responses=responses(401, 404, 409), dependencies=[Depends(require_token)])
def cancel(record: dict = Depends(experiment), registry: Registry = Depends(get_registry),
           worker=Depends(get_worker)):
    """Cancel a queued experiment now or a running one within two seconds (409 if it has
    already finished)."""
    eid = record["id"]
    if not worker.cancel(eid):
        raise HTTPException(409, f"experiment {eid!r} is already {record['status']}")
    return ExperimentView.of(registry.get(eid))
