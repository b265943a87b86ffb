"""What an experiment concluded: the headline blocks (JSON) and the shareable HTML report."""
from __future__ import annotations

from fastapi import APIRouter, Depends
from fastapi.responses import HTMLResponse, Response
from starlette.concurrency import run_in_threadpool

import pipelines
from services import report
from services.api.deps import dataset, experiment
from services.api.errors import responses
from services.api.results import _kept, look, spec_of

router = APIRouter(prefix="/api/experiments/{eid}", tags=["results"],
                   responses=responses(401, 404, 409, 422))


@router.get("/headline", response_model=dict)
async def headline(figures: pipelines.Look = Depends(look), record: dict = Depends(experiment),
                   root: str = Depends(dataset)):
    """The question and the blocks that answer it: seat balance per cell (a cooperative game:
    the team win rate), each arm against the baseline, the strength ladder's stability; each
    item names the arm, players and agent, says `decided` (with `status`: "decided", "not
    decided yet (about N more games)" or "estimate") and the level used; `verdict` is the
    line the experiment list shows."""
    spec = spec_of(record)

    def answer() -> dict:
        head = report.headline(spec, root, figures)
        return {**head, "verdict": report.headline_verdict(head["blocks"])}

    return await _kept(record, root, ("headline", figures), answer)


# response_class Response (no media type of its own), so that the errors stay documented as
# the JSON they are and only the 200 answer is HTML.
@router.get("/report.html", response_class=Response,
            responses={200: {"content": {"text/html": {"schema": {"type": "string"}}},
                             "description": "the report, as an HTML download"}})
async def report_html(figures: pipelines.Look = Depends(look),
                      record: dict = Depends(experiment), root: str = Depends(dataset)):
    """One self-contained HTML file (styles and SVG charts inline, nothing fetched): the
    question, the verdicts in words, the figures with intervals, the provenance of the rows
    and the command that reproduces them.  Sent as a download."""
    spec = spec_of(record)
    text = await run_in_threadpool(report.render, spec, root, figures, record["name"])
    return HTMLResponse(text, headers={
        "Content-Disposition": f'attachment; filename="{record["id"]}-report.html"'})
