"""Statistics of an experiment's results (pipelines' tables as JSON)."""
from __future__ import annotations

import asyncio
import json
from enum import Enum
from functools import lru_cache
from typing import Any, Callable

import polars as pl
from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

import core_cy
import pipelines
from services import datasets
from pipelines import dataset as pipelines_dataset
from pipelines.dataset import verify as dataset_integrity
from services.api.deps import dataset, experiment, get_settings, owned_experiment
from services.api.errors import responses, unprocessable
from services.api.jobs import requeue_job
from services.api.models import ExperimentView, Row
from services.registry import ACTIVE
from services.settings import Settings
from pipelines.folder import experiment_path
from services.spec import ExperimentSpec
from pipelines import ladder as ladder_stats

router = APIRouter(prefix="/api/experiments/{eid}", tags=["results"],
                   responses=responses(401, 404, 409, 422))
# The figures the dashboard polls, kept per set of finished shards (benchmarks/api_load.py).
CACHE = datasets.ShardCache()
# A poll that finds new shards waits this long for their figures (asynchronously) before it
# is given the last ones: the page then shows the shards written before its previous look.
FRESH_WAIT_S = 1.0
# What reading a shard changed in place raises (pyarrow's errors are OSError and ValueError).
READ_ERRORS = (OSError, ValueError, pl.exceptions.ComputeError)


@lru_cache(maxsize=256)
def _validated(spec_json: str) -> ExperimentSpec:
    return ExperimentSpec.model_validate(json.loads(spec_json))


def spec_of(record: dict) -> ExperimentSpec:
    """The experiment's spec, validated once per distinct spec: a stored spec never changes,
    and validating it (every rule through its game, about 2 ms) on every poll would cost
    more than the kept answer."""
    return _validated(json.dumps(record["spec"]))  # key order kept: the arms' order is the spec's


async def _kept(record: dict, root: str, question: tuple,
                answer: Callable[[], Any], rows: bool = True,
                media_type: str = "application/json") -> Response:
    """The answer as JSON, encoded once per set of finished shards (a repeat is bytes, served
    from the event loop); a computation runs in a thread, in the background when there is a
    last answer to give meanwhile (after up to FRESH_WAIT_S for the new one, asynchronously).  The set is named by the registry's status and the games
    written (deps.experiment), so a poll of a running experiment lists no files; a finished
    one's adds its shards checked against the manifest (integrity: a listing, each file
    hashed once), so a shard damaged or replayed since changes the answer.  The last answer
    is only given meanwhile while the run goes on: once it has ended (done, cancelled,
    failed) a dashboard stops polling, so the figures it gets then must be those of every
    shard it wrote.  `rows`: the answer reads the shards' rows (False: their statistics
    tables only; integrity checks what is read); `media_type` other than JSON: the answer
    is a document's text (the report), sent as it is."""
    bad = await integrity(record, root, rows)
    version = (record["status"], record["games_written"], json.dumps(bad))
    if record["status"] != "running":
        question = (*question, "settled", version)  # never answered by an older version

    def encoded() -> bytes:
        try:
            found, text = bad, answer()
        except READ_ERRORS:  # a shard changed in place: find it, name it, answer without it
            if record["status"] in ACTIVE:
                raise
            pipelines_dataset.suspect(root)
            found = _with_notice(record, datasets.integrity(root, rows))
            if found is None:
                raise
            text = answer()
        if media_type != "application/json":  # a document (the report): its text
            return text.encode()
        return JSONResponse(jsonable_encoder(named(text, found))).body

    body = CACHE.fresh(root, question, version)
    if body is None:
        found, body = CACHE.kept(root, question, version, encoded)
        if not found:
            body = await run_in_threadpool(CACHE.get, root, question, version, encoded)
        else:  # the recompute runs: its answer if it comes soon, else the last one
            body = await _fresh_soon(root, question, version) or body
    return Response(body, media_type=media_type)


async def _fresh_soon(root: str, question: tuple, version) -> bytes | None:
    """The answer of this version if it is computed within FRESH_WAIT_S (looked at every
    50 ms, without holding a thread), else None."""
    for _ in range(int(FRESH_WAIT_S / 0.05)):
        await asyncio.sleep(0.05)
        body = CACHE.fresh(root, question, version)
        if body is not None:
            return body
    return None


async def integrity(record: dict, root: str, rows: bool = True) -> dict | None:
    """A finished experiment's shards against its manifest (datasets.integrity, in a thread:
    a listing, and a hash of each file not verified before at its size and mtime), with the
    sentence the page shows (`notice`); None when every shard verifies or the run has not
    finished (no manifest yet).  `rows=False`: the figure reads the statistics tables only
    (pipelines.dataset.verify: a shard as its writer recorded it is not read)."""
    if record["status"] in ACTIVE:
        return None
    return _with_notice(record, await run_in_threadpool(datasets.integrity, root, rows))


def _with_notice(record: dict, found: dict | None) -> dict | None:
    """The integrity of an experiment with the sentence the page shows (`notice`)."""
    if found is not None:
        found["notice"] = datasets.damage_notice(
            found, f"POST /api/experiments/{record['id']}/replay")
    return found


def named(answer: Any, found: dict | None) -> Any:
    """A figure's answer with the bad shards named (`integrity`, when there are any): in
    each row of a table, at the top of an object."""
    if found is None:
        return answer
    if isinstance(answer, list):
        return [{**row, "integrity": found} for row in answer]
    return {**answer, "integrity": found}


async def look(delta: float | None = Query(None, gt=0, lt=1, description="the difference in win "
                                    "share that matters, as a fraction (default: the spec's "
                                    "stop_when.delta, else 0.01)"),
         record: dict = Depends(experiment)) -> pipelines.Look:
    """How the figures are computed: interim (always-valid confidence sequences, no
    p-values) unless the run is done, at the margin `delta`."""
    return spec_of(record).look(interim=record["status"] != "done", delta=delta)


TRUNCATED = Query(False, description="count games cut short by a simulator safety (e.g. "
                  "turn_limit); left out by default")


@router.get("/summary", response_model=list[Row])
async def summary(include_truncated: bool = TRUNCATED, figures: pipelines.Look = Depends(look),
                  record: dict = Depends(experiment), root: str = Depends(dataset)):
    """Per (arm, players, seat) of a competitive game, or per (arm, players) of a
    cooperative one: win share (team win rate) with its 95% interval, a one-sentence
    `verdict` per cell, the seat-balance test (adjusted over the cells), truncated games and
    the engine version (pipelines.summary).  `interim` while the run is not done."""
    return await _kept(record, root, ("summary", include_truncated, figures),
                       lambda: datasets.records(pipelines.summary(root, include_truncated,
                                                                  figures)),
                       rows=False)  # its figures read the statistics tables only


@router.get("/compare", response_model=list[Row])
async def compare(baseline: str | None = Query(
                None, description="the arm to compare against (default: the spec's baseline)"),
            include_truncated: bool = TRUNCATED, figures: pipelines.Look = Depends(look),
            record: dict = Depends(experiment), root: str = Depends(dataset)):
    """Each arm against the baseline arm on paired games: differences with intervals,
    p-values adjusted over the experiment (Benjamini-Hochberg, intervals at the matching
    level; interim confidence sequences while running) and a `verdict` per row."""
    spec = spec_of(record)
    arms = spec.result_arms()
    baseline = spec.baseline_arm() if baseline is None else baseline
    if baseline not in arms:
        raise unprocessable("baseline", f"baseline {baseline!r} is not an arm of this "
                            f"experiment; arms: {arms}", kind="cross_field")
    return await _kept(record, root, ("compare", baseline, include_truncated, figures),
                       lambda: datasets.records(pipelines.compare(root, baseline,
                                                                  include_truncated, figures)))


def _outcome_columns() -> list[str]:
    """The columns a breakdown may group by, over every game: the end reason, the seats'
    agents, and each game's own outcome fields (`<name>` per game, `seat_<name>` per seat)."""
    names = {"end_reason", "seat_agent"}
    for name in core_cy.game_names():
        game = core_cy.load(name)
        names.update(game.game_outcome_names)
        names.update(f"seat_{n}" for n in game.seat_outcome_names)
    return sorted(names)


OutcomeColumn = Enum("OutcomeColumn", {n: n for n in _outcome_columns()}, type=str)


@router.get("/breakdown", response_model=list[Row])
async def breakdown(by: OutcomeColumn = Query(..., description="an outcome column of the "
                                        "experiment's game, e.g. seat_adventurer or "
                                        "end_reason (422 when its game has no such column)"),
              team: bool = Query(False, description="key a per-seat column by the sorted "
                                 "values of all seats (e.g. adventurer teams)"),
              include_truncated: bool = TRUNCATED, figures: pipelines.Look = Depends(look),
              record: dict = Depends(experiment), root: str = Depends(dataset)):
    """Win share (team win rate in cooperative games) per value of an outcome column, each
    game counted once per value (pipelines.breakdown)."""
    found = await integrity(record, root)
    try:
        return named(await run_in_threadpool(lambda: datasets.records(pipelines.breakdown(
            root, by.value, team, include_truncated, figures))), found)
    except ValueError as exc:
        raise unprocessable("team" if "team=True" in str(exc) else "by", str(exc),
                            kind="cross_field")  # depends on the experiment's columns


@router.get("/histograms", response_model=dict)
async def histograms(bins: int = Query(20, ge=1, le=200),
                     clip: float | None = Query(None, ge=0, lt=0.5, description="span only "
                                                "the [clip, 1 - clip] quantiles of the values "
                                                "(e.g. 0.01); each series then counts the "
                                                "values outside apart (below, above)"),
                     record: dict = Depends(experiment), root: str = Depends(dataset)):
    """Histograms from the raw rows: game length per (arm, players) and score per
    (arm, players, seat), each on edges shared by all its series."""
    return await _kept(record, root, ("histograms", bins, clip),
                       lambda: datasets.histograms(root, bins, clip))


@router.get("/ladder", response_model=dict)
async def ladder(record: dict = Depends(experiment), root: str = Depends(dataset)):
    """A strength-ladder experiment: per rung (weakest first) the seat win shares with 95%
    intervals and seat advantages, and per cell whether the seat verdict is stable between
    the two strongest rungs (pipelines.ladder)."""
    spec = spec_of(record)
    if not spec.ladder:
        raise unprocessable("ladder", "this experiment has no strength ladder (spec option "
                            "`ladder`)", kind="cross_field")
    found = await integrity(record, root)
    return named(await run_in_threadpool(lambda: {
        "rungs": spec.ladder,
        "seats": datasets.records(ladder_stats.ladder_summary(root, spec.ladder)),
        "verdicts": datasets.records(ladder_stats.ladder_verdicts(root, spec.ladder))}), found)


@router.get("/ratings", response_model=list[Row])
async def ratings(record: dict = Depends(experiment), root: str = Depends(dataset)):
    """Head-to-head Bradley-Terry ratings (Elo scale, 95% intervals) of the agents that met in
    the same games, per (arm, players) (pipelines.ladder.ratings)."""
    found = await integrity(record, root)
    return named(await run_in_threadpool(
        lambda: datasets.records(ladder_stats.ratings(root))), found)


@router.post("/replay", status_code=202, response_model=ExperimentView,
             responses=responses(403, 429, 503))
async def replay(request: Request, record: dict = Depends(owned_experiment),
                 settings: Settings = Depends(get_settings)):
    """Play again exactly the shards of an experiment that has ended (done, cancelled or
    failed) that are missing or do not verify against its manifest (the same games: same
    seed, first game and count, so the same rows and bytes), as a job of the queue: 202,
    then `queued`, `running` and its end again (done, or the cancelled or failed it ended
    with; `failed` naming any replayed shard whose bytes differ from the manifest's).  It
    counts against its owner's places and the queue's cap as a new job does (429).  By the
    token that submitted it or an admin token (403 otherwise); 409 while it is queued or
    running, when it has no manifest (it has not ended since manifests were kept), or when
    every shard verifies."""
    eid = record["id"]
    if record["status"] in ACTIVE:
        raise HTTPException(409, f"experiment {eid!r} is {record['status']}")
    root = experiment_path(settings.results, eid)
    found = await run_in_threadpool(dataset_integrity, root)
    if found.sound is None:
        raise HTTPException(409, f"experiment {eid!r} has no manifest: only a run that "
                            "has ended (and wrote one) can be replayed")
    if not found.damaged:
        raise HTTPException(409, f"every shard of experiment {eid!r} verifies against its "
                            "manifest: nothing to replay")
    return ExperimentView.of(await requeue_job(request, record))
