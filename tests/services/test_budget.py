"""Issue 38, what round 3 left: every experiment has a CPU budget (its shard tasks report
their CPU-seconds; once spent the run issues no more shards, cancels those in flight and ends
failed naming the budget, its shards written kept, listed and counted), a run that ends early
(cancelled, failed, out of budget) keeps a manifest of its shards like a done one, and a
replay counts against its owner's places and the queue's cap like a new job."""
import json
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError
from ray_support import ray_local  # noqa: F401  (session fixture)
from service_support import small_spec, wait_for, write_finished

import pipelines
from pipelines import folder
from services.app import create_app
from services.runner import Budget, run_experiment
from services.settings import Settings, owner_of
from services.spec import ExperimentSpec

A, B = "budget-test-token-aaaa", "budget-test-token-bbbb"
AS = {t: {"Authorization": f"Bearer {t}"} for t in (A, B)}
LONG = {"games_per_arm": 10**6, "shard_size": 100}  # far more than any test plays
SEARCH = {"name": "gi", "game": "golden_island", "players": 2, "agents": "greedy", "seed": 3,
          "balance": {"option": "seat_bonus_gold", "seat": 1, "range": [0, 20],
                      "wave_games": 40, "max_games": 600, "confirm_games": 60}}


def _app(tmp_path, run_worker=True, **settings):
    (tmp_path / "tokens").write_text(f"{A}\n{B}\n")
    return create_app(Settings(db=str(tmp_path / "r.db"), results=str(tmp_path / "res"),
                               token=str(tmp_path / "tokens"), **settings),
                      run_worker=run_worker)


def _manifest(root: Path) -> dict:
    return json.loads((root / "manifest.json").read_text())


def _summary_games(root: str) -> int:
    """Games the figures count (the manifest's sound shards): seat 0's rows per cell."""
    table = pipelines.summary(root, False, ExperimentSpec.model_validate(
        small_spec()).look(interim=True))
    return int(table.filter(table["seat"] == 0)["games"].sum())


def test_a_run_stops_at_its_cpu_budget_keeping_and_listing_its_shards(ray_local, tmp_path):
    spec = ExperimentSpec.model_validate(small_spec(**LONG))
    seen = []
    status = run_experiment(spec, str(tmp_path), "exp", max_in_flight=4,
                            progress=seen.append, budget=Budget(1.0, 0.25, "a test's"))
    last = seen[-1]
    assert status == "failed" and last.status == "failed"
    assert "stopped at its CPU budget" in last.error and "(a test's)" in last.error
    assert last.cpu_seconds >= 1.0  # the 0.25 spent before counts
    root = tmp_path / "exp"
    manifest = _manifest(root)
    assert manifest["status"] == "failed" and manifest["error"] == last.error
    assert 0 < manifest["games"] == last.done == last.written < spec.total_games()
    files = {str(p.relative_to(root)) for p in root.rglob("shard-*.parquet")}
    listed = {e["path"] for e in manifest["shards"]}
    assert listed <= files and len(files - listed) <= 4  # at most the shards cut short
    assert _summary_games(str(root)) == manifest["games"]  # counted, and only those
    # the service never extends a run that has ended: a replay, with its end kept
    assert run_experiment(spec, str(tmp_path), "exp", play_on=False) == "failed"
    assert _manifest(root) == manifest
    # the CLI runs it again to finish it: played on, its manifest now the done run's
    small = ExperimentSpec.model_validate(small_spec())
    seen.clear()
    assert run_experiment(small, str(tmp_path), "s", budget=Budget(0.01)) == "failed"
    listed = []  # while it plays on, it is in progress again: no manifest

    def follow(p):
        seen.append(p)
        if p.status == "running":
            listed.append((tmp_path / "s" / "manifest.json").exists())

    assert run_experiment(small, str(tmp_path), "s", progress=follow) == "done"
    assert listed and not any(listed)
    assert _manifest(tmp_path / "s")["status"] == "done"
    assert _manifest(tmp_path / "s")["games"] == seen[-1].done == small.total_games()


def test_the_budget_is_a_setting_and_a_request_may_ask_for_less_only(ray_local, tmp_path):
    with pytest.raises(ValidationError):
        Settings(experiment_cpu_seconds=0)  # validated at start (serve refuses to start)
    with TestClient(_app(tmp_path, experiment_cpu_seconds=2)) as c:
        more = c.post("/api/experiments", json=small_spec(cpu_seconds=3), headers=AS[A])
        assert more.status_code == 422, more.text
        error = more.json()["detail"][0]
        assert error["field"] == "cpu_seconds"
        assert "MEEPLELAB_EXPERIMENT_CPU_SECONDS = 2" in error["msg"]
        plan = c.post("/api/plans", json={"spec": small_spec(cpu_seconds=3)}, headers=AS[A])
        assert plan.status_code == 422 and plan.json()["detail"][0]["field"] == \
            "spec.cpu_seconds"
        search = c.post("/api/balance", headers=AS[A], json={**SEARCH, "cpu_seconds": 3601})
        assert search.status_code == 422
        assert [e["field"] for e in search.json()["detail"]] == ["cpu_seconds"], search.text
        for body, named in ((small_spec(**LONG), "MEEPLELAB_EXPERIMENT_CPU_SECONDS"),
                            (small_spec(**LONG, cpu_seconds=0.5), "the request's cpu_seconds")):
            eid = c.post("/api/experiments", json=body, headers=AS[A]).json()["id"]
            job = wait_for(c, eid, timeout=120)
            assert job["status"] == "failed" and "stopped at its CPU budget" in job["error"]
            assert f"({named})" in job["error"], job["error"]
            assert job["cpu_seconds"] >= (2 if named.startswith("MEEPLE") else 0.5)
            summary = c.get(f"/api/experiments/{eid}/summary").json()
            assert summary[0]["interim"] is True  # as for a run stopped early
            counted = sum(r["games"] for r in summary if r["seat"] == 0)
            assert counted == job["progress"]["done"] > 0


def test_a_cancelled_run_keeps_a_manifest_and_its_replay_ends_cancelled(ray_local, tmp_path):
    """Its figures verify their data as a done run's do: a damaged shard is named, and the
    replay (queued again although its cancel was requested) restores identical bytes and
    ends as the run had ended."""
    with TestClient(_app(tmp_path)) as c:
        eid = c.post("/api/experiments", json=small_spec(**LONG), headers=AS[A]).json()["id"]
        wait_for(c, eid, ("running",), condition=lambda e: e["progress"]["done"] >= 400)
        assert c.post(f"/api/experiments/{eid}/cancel", headers=AS[A]).status_code == 200
        job = wait_for(c, eid, ("cancelled",), timeout=30)
        root = Path(folder.experiment_path(str(tmp_path / "res"), eid))
        manifest = _manifest(root)
        assert manifest["status"] == "cancelled" and manifest["games"] == \
            c.get(f"/api/experiments/{eid}").json()["progress"]["done"] > 0
        before = {e["path"]: (root / e["path"]).read_bytes() for e in manifest["shards"]}
        summary = c.get(f"/api/experiments/{eid}/summary").json()
        bad = manifest["shards"][0]
        (root / bad["path"]).write_bytes(before[bad["path"]][:200])
        named = c.get(f"/api/experiments/{eid}/summary").json()[0]["integrity"]
        assert named["damaged"][0]["path"] == bad["path"] and \
            named["damaged"][0]["problem"] == "truncated"
        assert c.post(f"/api/experiments/{eid}/replay", headers=AS[A]).status_code == 202
        again = wait_for(c, eid, ("cancelled", "failed", "done"), timeout=60,
                         condition=lambda e: e["finished_at"] > job["finished_at"])
        assert again["status"] == "cancelled", again
        assert {p: (root / p).read_bytes() for p in before} == before
        assert c.get(f"/api/experiments/{eid}/summary").json() == summary


def test_a_stop_writes_no_manifest_and_the_next_start_plays_on(ray_local, tmp_path):
    """A stop of the service is no end of the run: no manifest, and the run resumes."""
    body = small_spec(games_per_arm=3000, shard_size=100)
    with TestClient(_app(tmp_path)) as c:
        eid = c.post("/api/experiments", json=body, headers=AS[A]).json()["id"]
        wait_for(c, eid, ("running",), condition=lambda e: e["progress"]["done"] >= 200)
    root = Path(folder.experiment_path(str(tmp_path / "res"), eid))
    assert not (root / "manifest.json").exists()
    with TestClient(_app(tmp_path)) as c:
        done = wait_for(c, eid, timeout=240)
    assert done["status"] == "done" and _manifest(root)["status"] == "done"
    assert _manifest(root)["games"] == ExperimentSpec.model_validate(body).total_games()


def test_a_replay_counts_against_its_owners_places_and_the_cap(tmp_path):
    app = _app(tmp_path, run_worker=False, max_running_per_token=1, max_queued=2)
    with TestClient(app) as c:
        eid, root, manifest = write_finished(app.state.registry, tmp_path / "res",
                                             small_spec(), owner_of(A))
        (root / manifest["shards"][0]["path"]).write_bytes(b"")
        other = c.post("/api/experiments", json=small_spec(), headers=AS[A]).json()["id"]
        full = c.post(f"/api/experiments/{eid}/replay", headers=AS[A])
        assert full.status_code == 429 and "MEEPLELAB_MAX_RUNNING_PER_TOKEN" in \
            full.json()["detail"] and int(full.headers["Retry-After"]) >= 1
        assert c.get(f"/api/experiments/{eid}").json()["status"] == "done"  # untouched
        assert c.post(f"/api/experiments/{other}/cancel", headers=AS[A]).status_code == 200
        c.post("/api/experiments", json=small_spec(), headers=AS[B])
        c.post("/api/plans", json={"spec": small_spec(), "pilot_games": 20}, headers=AS[B])
        capped = c.post(f"/api/experiments/{eid}/replay", headers=AS[A])
        assert capped.status_code == 429 and "MEEPLELAB_MAX_QUEUED" in capped.json()["detail"]
        c.post(f"/api/experiments/{c.get('/api/experiments').json()[0]['id']}/cancel",
               headers=AS[B])
        queued = c.post(f"/api/experiments/{eid}/replay", headers=AS[A])
        assert queued.status_code == 202 and queued.json()["status"] == "queued"


def _long_search(**more) -> dict:
    """A balance search of greedy games that would play far longer than its budget."""
    return {**SEARCH, **more, "balance": {**SEARCH["balance"], "wave_games": 2000,
                                          "max_games": 100_000, "precision": 0.05}}


def test_a_balance_request_may_lower_its_budget(tmp_path, ray_local):  # noqa: F811
    """Its shard tasks' CPU-seconds count against the request's cpu_seconds (below the
    service's): spent, the search fails naming that budget, its games written kept."""
    with TestClient(_app(tmp_path)) as c:
        jid = c.post("/api/balance", json=_long_search(cpu_seconds=1.5),
                     headers=AS[A]).json()["id"]
        deadline = time.monotonic() + 90
        while (job := c.get(f"/api/balance/{jid}").json())["status"] in ("queued", "running"):
            assert time.monotonic() < deadline, job
            time.sleep(0.1)
        assert job["status"] == "failed", job
        assert "of 1.5 CPU-seconds (the request's cpu_seconds) used" in job["error"]


def test_the_command_lines_balance_search_keeps_its_budget(tmp_path, capsys,
                                                         ray_local):  # noqa: F811
    from services.cli import main

    path = tmp_path / "spec.json"
    path.write_text(json.dumps(_long_search(cpu_seconds=1.5)))
    assert main(["balance", str(path), "--out", str(tmp_path / "res")]) == 1
    err = capsys.readouterr().err
    assert "the balance search failed: stopped at its CPU budget" in err
    assert "of 1.5 CPU-seconds (cpu_seconds) used" in err
    manifest = json.loads(next((tmp_path / "res").glob("*/manifest.json")).read_text())
    assert manifest["status"] == "failed" and manifest["games"] > 0
