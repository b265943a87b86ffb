"""Downloads of an experiment's results: the summary as CSV, the rows as Parquet or a zip."""
from __future__ import annotations

import os
import tempfile

from fastapi import APIRouter, Depends
from fastapi.responses import FileResponse, Response, StreamingResponse
from starlette.background import BackgroundTask

import pipelines
from services import datasets
from services.api.deps import dataset
from services.api.errors import responses

router = APIRouter(prefix="/api/experiments/{eid}/download", tags=["downloads"],
                   responses=responses(401, 404, 409, 422))


def _attachment(name: str) -> dict:
    return {"Content-Disposition": f'attachment; filename="{name}"'}


@router.get("/summary.csv", response_class=Response,
            responses={200: {"content": {"text/csv": {"schema": {"type": "string"}}},
                             "description": "the summary table as CSV"}})
def summary_csv(eid: str, root: str = Depends(dataset)):
    """The summary table as CSV."""
    text = datasets.csv_text(pipelines.summary(root))
    return Response(text, media_type="text/csv", headers=_attachment(f"{eid}-summary.csv"))


@router.get("/results.parquet", response_class=FileResponse,
            responses={200: {"content": {"application/vnd.apache.parquet": {
                "schema": {"type": "string", "format": "binary"}}},
                "description": "every raw row as one Parquet file"}})
def results_parquet(eid: str, root: str = Depends(dataset)):
    """Every raw row as one Parquet file."""
    fd, path = tempfile.mkstemp(suffix=".parquet", prefix="meeplelab-")
    os.close(fd)
    try:
        datasets.write_concatenated(root, path)
    except BaseException:
        os.unlink(path)
        raise
    return FileResponse(path, media_type="application/vnd.apache.parquet",
                        filename=f"{eid}.parquet", background=BackgroundTask(os.unlink, path))


@router.get("/results.zip", response_class=StreamingResponse,
            responses={200: {"content": {"application/zip": {
                "schema": {"type": "string", "format": "binary"}}},
                "description": "the raw shard files as a zip"}})
def results_zip(eid: str, root: str = Depends(dataset)):
    """The raw shard files as a zip (hive layout: arm=<arm>/players=<n>/shard-*.parquet)."""
    return StreamingResponse(datasets.zip_bytes(root), media_type="application/zip",
                             headers=_attachment(f"{eid}.zip"))
