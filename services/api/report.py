"""What an experiment concluded: the results view as the page shows it (an HTML fragment,
services.view rendered by dashboards/report.py), the headline blocks (JSON), the figures
(SVG, drawn once for the page, the report and the command line) and the shareable HTML
report (the same view in one file)."""
from __future__ import annotations

import json
from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Path
from fastapi.responses import Response

import pipelines
from dashboards import report as report_page
from services import report, view
from services.api.deps import dataset, experiment
from services.api.errors import ErrorBody, responses
from services.api.models import Figure
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


def _state(record: dict) -> dict:
    """How the registry says the run stands: the view says when it ended early."""
    return {"status": record["status"], "games": record["games_written"],
            "error": record.get("error")}


@router.get("/view", response_model=dict)
async def results_view(figures: pipelines.Look = Depends(look),
                       record: dict = Depends(experiment), root: str = Depends(dataset)):
    """The results as the page shows them (services.view): `html`, the fragment of the
    answer, the sections per player count (sentences, warnings, figures, tables) and how
    the run ended; `interim` and `ended` (null, or the status, games and sentence of a run
    that was cancelled, failed or stopped by its budget); `integrity` names the shards that
    do not verify against the manifest, when there are any."""
    spec = spec_of(record)

    def answer() -> dict:
        model = view.build(spec, root, figures, provenance=False, **_state(record))
        return {"html": report_page.results(model), "interim": model["interim"],
                "ended": model["ended"]}

    return await _kept(record, root, ("view", figures), answer)


@router.get("/figures", response_model=list[Figure])
async def figures_list(figures: pipelines.Look = Depends(look),
                       record: dict = Depends(experiment), root: str = Depends(dataset)):
    """Every figure of the experiment in reading order, each a standalone SVG with its title,
    round ticks, labelled axes, a legend and every interval (interim confidence sequences
    while the run goes): the page shows these, the report inlines them."""
    spec = spec_of(record)
    return await _kept(record, root, ("figures", figures),
                       lambda: report.experiment_figure_list(spec, root, figures))


FigureKey = Annotated[str, Path(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9_.-]+$",
                                description="a figure's key (from GET .../figures)")]


@router.get("/figures/{key}.svg", response_class=Response,
            responses={404: {"model": ErrorBody, "description": "no experiment with this id, "
                             "or no figure with this key"},
                       200: {"content": {"image/svg+xml": {}}, "description": "an SVG"}})
async def figure_svg(key: FigureKey, figures: pipelines.Look = Depends(look),
                     record: dict = Depends(experiment), root: str = Depends(dataset)):
    """One figure of GET .../figures as an SVG file."""
    listed = json.loads((await figures_list(figures, record, root)).body)
    found = next((f for f in listed if f["key"] == key), None)
    if found is None:
        raise HTTPException(404, f"experiment {record['id']!r} has no figure {key!r}; its "
                            f"figures: {[f['key'] for f in listed]}")
    return Response(found["svg"], media_type="image/svg+xml")


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
    answer = await _kept(record, root, ("report", figures), lambda: report.render(
        spec, root, figures, record["name"], replay=f"POST /api/experiments/{record['id']}/replay",
        **_state(record)), media_type="text/html")
    answer.headers["Content-Disposition"] = f'attachment; filename="{record["id"]}-report.html"'
    return answer
