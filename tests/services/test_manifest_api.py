"""Figures of a finished experiment verify their data (issue 38, Deliver 2): a missing,
empty, truncated or damaged shard is named in every figure's JSON with the games not
counted, none is read as other values, every error is JSON, and the replay route (owner
only, through the job queue) plays exactly those shards again, into the same bytes."""
import json
import random
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from ray_support import ray_local  # noqa: F401  (session fixture)
from service_support import small_spec, wait_for, write_finished

from pipelines import folder
from services.app import create_app
from services.settings import Settings

TOKEN, OTHER = "manifest-test-token-0001", "manifest-test-token-0002"
AUTH, OTHER_AUTH = ({"Authorization": f"Bearer {t}"} for t in (TOKEN, OTHER))
FIGURES = ("summary", "compare", "histograms", "breakdown?by=end_reason")  # tables with rows


def _finished(client, results: Path) -> tuple[str, Path, dict]:
    from services.settings import owner_of

    return write_finished(client.app.state.registry, results, small_spec(), owner_of(TOKEN))


@pytest.fixture
def idle(tmp_path):
    """An app with tokens whose worker does not run: a replay stays queued."""
    (tmp_path / "tokens").write_text(f"{TOKEN}\n{OTHER}\n")
    app = create_app(Settings(db=str(tmp_path / "r.db"), results=str(tmp_path / "res"),
                              token=str(tmp_path / "tokens")), run_worker=False)
    with TestClient(app) as client:
        yield client, tmp_path / "res"


def _games(rows: list[dict]) -> int:
    return sum(r["games"] for r in rows if r["seat"] == 0)


@pytest.mark.parametrize("how", ["missing", "empty", "truncated", "damaged"])
def test_a_bad_shard_is_named_in_every_figure_and_its_games_not_counted(idle, how):
    client, results = idle
    eid, root, manifest = _finished(client, results)
    whole = client.get(f"/api/experiments/{eid}/summary").json()
    assert "integrity" not in whole[0]
    entry = manifest["shards"][1]
    path = root / entry["path"]
    data = path.read_bytes()
    if how == "missing":
        path.unlink()
    else:
        changed = bytearray(b"" if how == "empty" else data[:len(data) // 2]
                            if how == "truncated" else data)
        if how == "damaged":
            changed[len(data) // 2] ^= 0x01
        path.write_bytes(bytes(changed))
    for figure in FIGURES:
        answer = client.get(f"/api/experiments/{eid}/{figure}")
        assert answer.status_code == 200, (figure, answer.text)
        body = answer.json()
        found = body[0]["integrity"] if isinstance(body, list) else body["integrity"]
        assert found["damaged"] == [{"path": entry["path"], "problem": how, "games": 100,
                                     "arm": entry["arm"], "players": entry["players"]}]
        assert found["notice"].startswith(
            f"1 of {len(manifest['shards'])} shards is damaged ({entry['path']} ({how})): "
            f"100 of {manifest['games']:,} games are not counted; replay it with "
            f"POST /api/experiments/{eid}/replay")
    summary = client.get(f"/api/experiments/{eid}/summary").json()
    assert _games(summary) == _games(whole) - 100
    download = client.get(f"/api/experiments/{eid}/download/results.parquet")
    assert download.status_code == 200


def test_no_shard_left_is_a_json_409_naming_them(idle):
    client, results = idle
    eid, root, manifest = _finished(client, results)
    for entry in manifest["shards"]:
        (root / entry["path"]).write_bytes(b"")
    for figure in FIGURES:
        answer = client.get(f"/api/experiments/{eid}/{figure}")
        assert answer.status_code == 409, (figure, answer.text)
        assert answer.headers["content-type"] == "application/json"
        assert answer.json()["detail"].startswith(f"{len(manifest['shards'])} of "
                                                  f"{len(manifest['shards'])} shards are damaged")


def test_the_replay_route_is_the_owners_and_queues_only_what_is_bad(idle):
    client, results = idle
    eid, root, manifest = _finished(client, results)
    assert client.post(f"/api/experiments/{eid}/replay", headers=AUTH).status_code == 409
    (root / manifest["shards"][0]["path"]).write_bytes(b"")
    assert client.post(f"/api/experiments/{eid}/replay").status_code == 401
    assert client.post(f"/api/experiments/{eid}/replay", headers=OTHER_AUTH).status_code == 403
    queued = client.post(f"/api/experiments/{eid}/replay", headers=AUTH)
    assert queued.status_code == 202 and queued.json()["status"] == "queued", queued.text
    again = client.post(f"/api/experiments/{eid}/replay", headers=AUTH)
    assert again.status_code == 409 and "queued" in again.json()["detail"]
    (root / "manifest.json").unlink()
    client.app.state.registry.set_status(eid, "done")
    unfinished = client.post(f"/api/experiments/{eid}/replay", headers=AUTH)
    assert unfinished.status_code == 409 and "no manifest" in unfinished.json()["detail"]


def test_seeded_single_page_damages_are_each_named_on_the_figures(idle):
    """A fast seeded version of benchmarks/shard_damage.py: one byte changed at a random
    place of a random shard, one damage at a time: each is named and its games are not
    counted (never a figure silently computed from other values)."""
    client, results = idle
    eid, root, manifest = _finished(client, results)
    whole = _games(client.get(f"/api/experiments/{eid}/summary").json())
    rng = random.Random(38)
    for _ in range(12):
        entry = rng.choice(manifest["shards"])
        path = root / entry["path"]
        data, mtime = path.read_bytes(), path.stat().st_mtime_ns
        changed = bytearray(data)
        changed[rng.randrange(len(data))] ^= rng.randrange(1, 256)
        path.write_bytes(bytes(changed))
        rows = client.get(f"/api/experiments/{eid}/summary").json()
        assert [d["path"] for d in rows[0]["integrity"]["damaged"]] == [entry["path"]]
        assert _games(rows) == whole - entry["games"]
        path.write_bytes(data)
        import os
        os.utime(path, ns=(mtime, mtime))  # put back as written (cp -p)
    assert "integrity" not in client.get(f"/api/experiments/{eid}/summary").json()[0]


def test_a_replay_through_the_queue_restores_identical_shards(ray_local, tmp_path):  # noqa: F811
    (tmp_path / "tokens").write_text(f"{TOKEN}\n")
    app = create_app(Settings(db=str(tmp_path / "r.db"), results=str(tmp_path / "res"),
                              token=str(tmp_path / "tokens")))
    with TestClient(app) as client:
        eid = client.post("/api/experiments", json=small_spec(), headers=AUTH).json()["id"]
        assert wait_for(client, eid)["status"] == "done"
        root = Path(folder.experiment_path(str(tmp_path / "res"), eid))
        manifest = json.loads((root / "manifest.json").read_text())
        before = {e["path"]: (root / e["path"]).read_bytes() for e in manifest["shards"]}
        summary = client.get(f"/api/experiments/{eid}/summary").json()
        bad = manifest["shards"][:3]
        (root / bad[0]["path"]).write_bytes(b"")
        (root / bad[1]["path"]).write_bytes(before[bad[1]["path"]][:300])
        flipped = bytearray(before[bad[2]["path"]])
        flipped[len(flipped) // 2] ^= 0x10
        (root / bad[2]["path"]).write_bytes(bytes(flipped))
        named = client.get(f"/api/experiments/{eid}/summary").json()[0]["integrity"]
        assert sorted(d["problem"] for d in named["damaged"]) == ["damaged", "empty",
                                                                  "truncated"]
        assert client.post(f"/api/experiments/{eid}/replay", headers=AUTH).status_code == 202
        time.sleep(0.2)
        assert wait_for(client, eid)["status"] == "done"
        assert {p: (root / p).read_bytes() for p in before} == before
        assert client.get(f"/api/experiments/{eid}/summary").json() == summary
