"""Downloads of an experiment's results: the summary as CSV, the rows as Parquet or a zip."""
from __future__ import annotations

import os
import tempfile

from fastapi import APIRouter, Depends
from fastapi.responses import FileResponse, Response, StreamingResponse
from starlette.background import BackgroundTask

import pipelines
from pipelines import dataset as pipelines_dataset
from services import datasets
from services.api.deps import ExperimentId, dataset
from services.api.errors import responses
from services.api.results import READ_ERRORS, look

router = APIRouter(prefix="/api/experiments/{eid}/download", tags=["downloads"],
                   responses=responses(401, 404, 409, 422))


def _damaged(root: str, headers: dict | None = None) -> dict:
    """`headers` with X-Damaged-Shards naming the shards that do not verify against the
    manifest (left out of the download), when there are any."""
    found = datasets.integrity(root)
    return {**(headers or {}), **({} if found is None else {"X-Damaged-Shards": "; ".join(
        f"{d['path']} ({d['problem']})" for d in found["damaged"])})}


def _attachment(name: str) -> dict:
    return {"Content-Disposition": f'attachment; filename="{name}"'}


@router.get("/summary.csv", response_class=Response,
            responses={200: {"content": {"text/csv": {"schema": {"type": "string"}}},
                             "description": "the summary table as CSV"}})
def summary_csv(eid: ExperimentId, figures: pipelines.Look = Depends(look),
                root: str = Depends(dataset)):
    """The summary table as CSV (the figures of GET .../summary)."""
    text = datasets.csv_text(pipelines.summary(root, look=figures))
    return Response(text, media_type="text/csv",
                    headers=_damaged(root, _attachment(f"{eid}-summary.csv")))


@router.get("/results.parquet", response_class=FileResponse,
            responses={200: {"content": {"application/vnd.apache.parquet": {
                "schema": {"type": "string", "format": "binary"}}},
                "description": "every raw row as one Parquet file"}})
def results_parquet(eid: ExperimentId, root: str = Depends(dataset)):
    """Every raw row as one Parquet file (of the shards that verify against the manifest;
    the header X-Damaged-Shards names those that do not)."""
    fd, path = tempfile.mkstemp(suffix=".parquet", prefix="meeplelab-")
    os.close(fd)
    try:
        try:
            datasets.write_concatenated(root, path)
        except READ_ERRORS:  # a shard changed in place: find it, and write the others
            pipelines_dataset.suspect(root)
            if datasets.integrity(root) is None:
                raise
            datasets.write_concatenated(root, path)
    except BaseException:
        os.unlink(path)
        raise
    return FileResponse(path, media_type="application/vnd.apache.parquet",
                        filename=f"{eid}.parquet", headers=_damaged(root),
                        background=BackgroundTask(os.unlink, path))


@router.get("/results.zip", response_class=StreamingResponse,
            responses={200: {"content": {"application/zip": {
                "schema": {"type": "string", "format": "binary"}}},
                "description": "the raw shard files as a zip"}})
def results_zip(eid: ExperimentId, root: str = Depends(dataset)):
    """The raw shard files as a zip (hive layout: arm=<arm>/players=<n>/shard-*.parquet)."""
    return StreamingResponse(datasets.zip_bytes(root), media_type="application/zip",
                             headers=_damaged(root, _attachment(f"{eid}.zip")))
