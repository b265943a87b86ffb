"""What to change, as jobs of the service's one queue (services.worker: each search plays in
a niced process of its own under a CPU budget): POST /api/balance (a spec with a `balance`
section), GET /api/balance/{bid} (status and progress, then the result: services/balance.py),
POST /api/balance/{bid}/cancel, GET /api/balance/{bid}/chart.svg (the sensitivity chart of
one player count), GET /api/balance/{bid}/view (the answers as the page shows them) and GET
/api/balance/{bid}/report.html (the shareable report); GET /api/balance lists the searches,
GET /api/balance/compare.svg draws answers side by side.  No request waits for a search."""
from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, HTTPException, Path, Query, Request, Security
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, Response, StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials
from pydantic import BaseModel, Field, StringConstraints

from dashboards.balance_chart import chart_svg, compare_svg
from services import datasets, report
from services.api.deps import bearer_scheme, get_registry, get_settings, require_token, \
    spec_body
from services.api.errors import ErrorBody, error_items, responses
from services.api.jobs import cancel_job, check_cpu_budget, job_of, queue_job
from services.api.models import ProgressView, Status
from services.balance import budget_games
from services.registry import FINISHED, Registry
from services.settings import Settings
from services.spec import stored_spec
from pipelines.folder import experiment_path, has_results

BalanceId = Annotated[str, Path(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9._-]+$",
                                description="a balance job id (from POST /api/balance)")]

router = APIRouter(prefix="/api/balance", tags=["balance"])  # writes: a token when set
reads = APIRouter(prefix="/api/balance", tags=["balance"])  # reads: as the service's others


class BalanceJob(BaseModel):
    """A balance search: queued, running (with its progress), then done (its result),
    failed (the reason) or cancelled."""

    id: str
    status: Status
    url: str
    name: str
    game: str
    spec: dict[str, Any] = Field(description="the spec as submitted")
    games_played: int
    progress: ProgressView = Field(description="games played; total and ETA: about what the "
                                   "search still needs (null until that is known)")
    detail: str | None = Field(default=None, description="where a running search stands")
    created_at: float
    started_at: float | None
    finished_at: float | None
    cancel_requested: bool
    result: dict[str, Any] | None = None
    error: str | None = None
    finished: bool = Field(default=False, description="whether its status is a final one: "
                           "it changes no more")

    @classmethod
    def of(cls, record: dict) -> "BalanceJob":
        return cls(id=record["id"], status=record["status"],
                   url=f"/api/balance/{record['id']}", name=record["name"],
                   game=record["game"], spec=record["spec"],
                   games_played=record["games_done"],
                   progress=ProgressView.of(record),
                   detail=record["detail"], created_at=record["created_at"],
                   started_at=record["started_at"], finished_at=record["finished_at"],
                   cancel_requested=record["cancel_requested"],
                   result=record["result"] if record["status"] == "done" else None,
                   error=record["error"], finished=record["status"] in FINISHED)


_NONE = {"model": ErrorBody, "description": "no balance job with this id"}


@router.post("", status_code=202, response_model=BalanceJob,
             responses=responses(400, 401, 413, 415, 422, 429, 503),
             openapi_extra={"requestBody": {"required": True, "content": {"application/json": {
                 "schema": {"$ref": "#/components/schemas/BalanceSpec"}}}}})
async def submit_balance(request: Request, owner: str = Depends(require_token),
                         settings: Settings = Depends(get_settings)):
    """Queue a spec's balance question: the fair value of a rule option (with its interval
    and the confirmation on fresh deals) or the value of an action kind.  At most
    MEEPLELAB_MAX_BALANCE_GAMES games (search and confirmation, every player count: 422
    naming balance.max_games beyond) and MEEPLELAB_MAX_RUNNING_PER_TOKEN unfinished searches
    per token (429).  Follow it at GET /api/balance/{id}."""
    raw, spec = await spec_body(request, settings)  # validated off the event loop, limits first
    if spec.balance is None:
        raise HTTPException(422, error_items([{"loc": ("balance",), "type": "missing", "msg":
                                               "a balance question needs a balance section"}],
                                             source="body"))
    check_cpu_budget(spec.cpu_seconds, settings.job_cpu_seconds, "MEEPLELAB_JOB_CPU_SECONDS")
    games = budget_games(spec)
    if games > settings.max_balance_games:
        field = "max_games" if spec.balance.option is not None else "confirm_games"
        raise HTTPException(422, error_items([{
            "loc": ("balance", field), "type": "limit", "msg":
            f"the search may play up to {games:,} games (max_games plus two confirmations of "
            f"confirm_games, per player count), more than this service's "
            f"MEEPLELAB_MAX_BALANCE_GAMES = {settings.max_balance_games:,}: lower "
            "balance.max_games or balance.confirm_games"}], source="body"))
    return BalanceJob.of(await queue_job(request, "balance", stored_spec(raw, spec), spec.name,
                                         spec.game, owner))


class BalanceAnswer(BaseModel):
    """One answer of a search (a player count; a rung when the search asks several)."""

    cell: int = Field(description="its index in the result's cells (for the comparison)")
    players: int
    seat: int | None = Field(description="the seat asked about, counted from 1")
    agent: str | None
    short: str = Field(description="the answer's short form, e.g. 'seat_bonus_gold = 2.31 "
                       "[1.90, 2.75]'")
    recommendation: str | None = Field(default=None, description="what to do, in one "
                                       "sentence (a fair-value search)")


class BalanceListed(BaseModel):
    """A balance search in the list: who asked, what, where it stands, its answers in short
    and what it cost."""

    id: str
    url: str
    name: str
    game: str
    owner: str = Field(description="the token's name that asked for it ('' without tokens)")
    status: Status
    question: str = Field(description="the option searched, or the action kinds valued")
    kind: Literal["fair_value", "all_seats", "forbid_value"]
    players: list[int]
    answers: list[BalanceAnswer] = Field(description="one per cell, once done")
    games_played: int
    cpu_seconds: float | None = Field(description="CPU-seconds the search used")
    created_at: float
    finished_at: float | None

    @classmethod
    def of(cls, record: dict) -> "BalanceListed":
        b = record["spec"].get("balance") or {}
        result = record["result"] if record["status"] == "done" else None
        players = record["spec"].get("players")
        return cls(id=record["id"], url=f"/api/balance/{record['id']}", name=record["name"],
                   game=record["game"], owner=record["owner"] or "", status=record["status"],
                   question=b.get("option") or b.get("forbid") or "",
                   kind=("all_seats" if b.get("seat") == "all" else "fair_value")
                   if b.get("option") else "forbid_value",
                   players=players if isinstance(players, list) else [players],
                   answers=[_answer(k, c, result) for k, c in
                            enumerate((result or {}).get("cells", []))],
                   games_played=record["games_done"],
                   cpu_seconds=record["cpu_seconds"] if record["cpu_seconds"] is not None
                   else _cpu_seconds(result),
                   created_at=record["created_at"], finished_at=record["finished_at"])


def _cpu_seconds(result: dict | None) -> float | None:
    """What a finished search's cells say they used (the registry's figure when it has one)."""
    spent = [c["cpu_seconds"] for c in (result or {}).get("cells", []) if "cpu_seconds" in c]
    return sum(spent) if spent else None


_STATUS_WORDS = {"edge": "at the range's edge", "outside_range": "outside the range",
                 "no_dependence": "does not depend on the option",
                 "unresolved": "not resolved"}


def _answer(k: int, cell: dict, result: dict) -> BalanceAnswer:
    """A cell's answer in short: the fair value with its interval, or what it is worth."""
    if result.get("kind") == "all_seats":
        ans = cell.get("answer") or {}
        short = (f"{result['option']} = {ans['vector']}" if ans.get("vector")
                 else f"{result['option']}: not decided")
    elif result.get("kind") == "fair_value":
        ans = cell.get("answer") or {}
        if ans.get("status") == "found" and ans.get("estimate") is not None:
            bounds = [f"{v:.2f}" if v is not None else "open" for v in (ans.get("low"),
                                                                       ans.get("high"))]
            short = f"{result['option']} = {ans['estimate']:.2f} [{bounds[0]}, {bounds[1]}]"
        else:
            short = f"{result['option']}: " + _STATUS_WORDS.get(ans.get("status"),
                                                                 str(ans.get("status")))
    else:
        seat = cell.get("seat", 0)
        mine = next((r["win_share"] for r in cell.get("seats", []) if r["seat"] == seat),
                    None) or (cell.get("seats") or [{}])[0].get("win_share")
        short = (f"{result.get('forbid')} worth {100 * mine['mean']:+.1f} points "
                 f"[{100 * mine['low']:+.1f}, {100 * mine['high']:+.1f}]" if mine else "–")
    seat = cell.get("seat")
    return BalanceAnswer(cell=k, players=cell["players"],
                         seat=None if seat is None else seat + 1, agent=cell.get("agent"),
                         short=short,
                         recommendation=(cell.get("recommendation") or {}).get("sentence"))


MAX_PAGE = 500


@reads.get("", response_model=list[BalanceListed], responses=responses(401, 422))
async def list_balance(registry: Registry = Depends(get_registry),
                       limit: int = Query(100, ge=1, le=MAX_PAGE, description="most searches "
                                          "to list (a page)"),
                       offset: int = Query(0, ge=0, le=10**9, description="searches to skip, "
                                           "newest first (the next page: offset + limit)")):
    """Balance searches, newest first: who asked, the question, the status, each answer in
    short and the cost (games, CPU-seconds); one page of at most `limit`."""
    return [BalanceListed.of(r) for r in registry.list(limit, offset, kind="balance")]


AnswerRef = Annotated[list[Annotated[str, StringConstraints(
    pattern=r"^[A-Za-z0-9._-]{1,100}:[0-9]{1,4}$")]], Query(min_length=2, max_length=6, description="answers to "
                                       "draw, each '<search id>:<cell>' (a cell index of the "
                                       "search's answers), e.g. ?answer=a1:0&answer=b2:0")]


@reads.get("/compare.svg", response_class=Response,
           responses={**responses(401, 422), 404: _NONE, 409: {
               "model": ErrorBody, "description": "an answer is not a finished fair-value "
               "search, or the answers are not of the same option and figure"},
               200: {"content": {"image/svg+xml": {}}, "description": "an SVG chart"}})
async def compare_balance(answer: AnswerRef, registry: Registry = Depends(get_registry)):
    """Two (or more) fair-value answers of the same option side by side: their curves, with
    their 95% bands and fair values, on one chart (the same question per rung, under two
    agents, or before and after a rule change)."""
    cells = [_cell(registry, ref) for ref in answer]
    options = {result["option"] for result, _, _ in cells}
    figures = {cell["chart"]["figure"] for _, cell, _ in cells}
    if len(options) > 1 or len(figures) > 1:
        raise HTTPException(409, f"the answers must be of one option and one figure to share "
                            f"a chart; got options {sorted(options)} and figures "
                            f"{sorted(figures)}")
    return Response(compare_svg(cells), media_type="image/svg+xml")


def _cell(registry: Registry, ref: str) -> tuple[dict, dict, str]:
    bid, _, index = ref.rpartition(":")  # the pattern of AnswerRef holds
    job = job_of(registry, "balance", bid)
    result = job["result"]
    if job["status"] != "done" or not result or result.get("kind") != "fair_value":
        raise HTTPException(409, f"balance search {bid!r} is not a finished fair-value search")
    if int(index) >= len(result["cells"]):
        raise HTTPException(404, f"balance search {bid!r} has {len(result['cells'])} answers; "
                            f"no answer {index}")
    return result, result["cells"][int(index)], job["name"]


@reads.get("/{bid}", response_model=BalanceJob, responses={**responses(401, 422), 404: _NONE})
async def get_balance(bid: BalanceId, registry: Registry = Depends(get_registry)):
    """A balance job's status and progress and, once done, its result (sentences, answer,
    chart data)."""
    return BalanceJob.of(job_of(registry, "balance", bid))


@router.post("/{bid}/cancel", response_model=BalanceJob,
             responses={**responses(401, 403, 409, 422), 404: _NONE})
def cancel_balance(bid: BalanceId, request: Request, owner: str = Depends(require_token),
                   credentials: HTTPAuthorizationCredentials | None = Security(bearer_scheme)):
    """Cancel a queued or running balance search now: its shard tasks are force-cancelled
    (a game in the middle or not) and its place goes to the next search.  Only the token that
    asked for it or an admin token may (403); 409 once it has finished."""
    return BalanceJob.of(cancel_job(request, "balance", bid, owner, credentials))


@reads.get("/{bid}/chart.svg", response_class=Response,
           responses={**responses(401, 422), 404: _NONE, 409: {
               "model": ErrorBody, "description": "the job has no chart (yet)"},
               200: {"content": {"image/svg+xml": {}}, "description": "an SVG chart"}})
async def get_balance_chart(bid: BalanceId,
                            players: Annotated[int | None, Query(ge=1, le=8)] = None,
                            registry: Registry = Depends(get_registry)):
    """The sensitivity chart of a finished fair-value search (one player count: the first
    unless `players` names one)."""
    job = job_of(registry, "balance", bid)
    result = job["result"]
    if job["status"] != "done" or not result or result.get("kind") != "fair_value":
        raise HTTPException(409, "the job has no chart: it is not a finished fair-value search")
    cells = [c for c in result["cells"] if players is None or c["players"] == players]
    if not cells:
        raise HTTPException(404, f"the job has no {players}-player cell")
    return Response(chart_svg(cells[0], result["option"]), media_type="image/svg+xml")


class BalanceView(BaseModel):
    """A finished search's answers as the page shows them."""

    html: str = Field(description="the answers' HTML fragment (services.report."
                      "balance_answers): per answer its recommendation, sentence, "
                      "confirmations, chart and waves; asked per strength, per player count "
                      "whether the fair value moves with strength")


@reads.get("/{bid}/view", response_model=BalanceView,
           responses={**responses(401, 422), 404: _NONE, 409: {
               "model": ErrorBody, "description": "the search has not finished (done)"}})
async def get_balance_view(bid: BalanceId, registry: Registry = Depends(get_registry)):
    """The answers of a finished search as the page shows them (rendered here, as the
    report renders them)."""
    job = job_of(registry, "balance", bid)
    if job["status"] != "done" or not job["result"]:
        raise HTTPException(409, f"balance search {bid!r} is {job['status']}: its answers "
                            "come once it is done")
    return BalanceView(html=await run_in_threadpool(report.balance_answers, job["result"]))


@reads.get("/{bid}/report.html", response_class=Response,
           responses={**responses(401, 422), 404: _NONE, 409: {
               "model": ErrorBody, "description": "the search has not finished (done)"},
               200: {"content": {"text/html": {"schema": {"type": "string"}}},
                     "description": "the report, as an HTML download"}})
async def get_balance_report(bid: BalanceId, registry: Registry = Depends(get_registry)):
    """One self-contained HTML file of a finished search (styles and charts inline, nothing
    fetched): the answer in words per player count, its confirmations, the sensitivity
    chart, the waves played and the spec that reproduces it.  Sent as a download."""
    job = job_of(registry, "balance", bid)
    if job["status"] != "done" or not job["result"]:
        raise HTTPException(409, f"balance search {bid!r} is {job['status']}: the report "
                            "comes once it is done")
    return HTMLResponse(report.render_balance(job), headers={
        "Content-Disposition": f'attachment; filename="{bid}-balance-report.html"'})


@reads.get("/{bid}/results.zip", response_class=StreamingResponse,
           responses={**responses(401, 422), 404: _NONE, 409: {
               "model": ErrorBody, "description": "the search has written no games yet"},
               200: {"content": {"application/zip": {"schema": {"type": "string",
                                                                "format": "binary"}}},
                     "description": "the search's shard files as a zip"}})
async def get_balance_games(bid: BalanceId, registry: Registry = Depends(get_registry),
                            settings: Settings = Depends(get_settings)):
    """Every game a balance search has played (its waves, confirmations or restricted play),
    as an experiment's: its shard files in a zip (arm=<option>=<value>[,confirmation]/
    players=<n>/shard-*.parquet, the manifest once it has ended), those that verify against
    its manifest."""
    job = job_of(registry, "balance", bid)
    root = experiment_path(settings.results, job["id"])
    if not await run_in_threadpool(has_results, root):
        raise HTTPException(409, f"balance search {bid!r} has written no games yet")
    return StreamingResponse(datasets.zip_bytes(root), media_type="application/zip",
                             headers={"Content-Disposition":
                                      f'attachment; filename="{bid}-games.zip"'})
