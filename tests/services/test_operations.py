"""Operability: liveness and readiness probes, Prometheus metrics, fair sharing (experiments
run N at a time in submission order, per-token quotas with 429 + Retry-After), DELETE, polled
figures computed once per set of shards, and a clean stop on SIGTERM that leaves no process
of the service (Ray included) behind."""
import asyncio
import json
import os
import posixpath
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from fastapi.testclient import TestClient
from service_support import INFO, assert_session_ends, kill_session, small_spec, wait_for
from test_registry import _free_port, _serve, _wait

import core_cy
import pipelines
from core_cy.play import batch
from services import datasets
from services.api import deps, experiments, results
from services.app import create_app
from services.registry import Registry
from services.settings import Settings
from services.spec import ExperimentSpec
from pipelines.folder import (cell_dir, experiment_path, filesystem, shard_name, storage_table,
                              write_atomically)

TOKEN = "ops-token-for-tests"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def _app(tmp_path, run_worker=False, **settings):
    config = Settings(db=str(tmp_path / "r.db"), results=str(tmp_path / "res"), **settings)
    return create_app(config, run_worker=run_worker)


def test_probes_and_metrics(tmp_path):
    with TestClient(_app(tmp_path, token=TOKEN, protect_reads=True)) as client:
        assert client.get("/healthz").json() == {"status": "ok"}  # no token needed
        ready = client.get("/readyz")
        assert ready.status_code == 200 and ready.json()["status"] == "ready"
        client.post("/api/experiments", headers=AUTH, json=small_spec())
        text = client.get("/metrics").text
        assert 'meeplelab_experiments{status="queued"} 1.0' in text
        assert "meeplelab_queue_length 1.0" in text
        assert "meeplelab_games_played_total 0.0" in text
        assert "meeplelab_shard_seconds_bucket" in text


def test_per_token_quota_is_429_with_retry_after(tmp_path):
    path = tmp_path / "tokens"
    path.write_text(f"{TOKEN}\nother-token-for-tests\n")
    with TestClient(_app(tmp_path, token=str(path), max_running_per_token=2)) as client:
        ids = [client.post("/api/experiments", headers=AUTH, json=small_spec()).json()["id"]
               for _ in range(2)]
        response = client.post("/api/experiments", headers=AUTH, json=small_spec())
        assert response.status_code == 429
        assert int(response.headers["Retry-After"]) >= 1
        assert "MEEPLELAB_MAX_RUNNING_PER_TOKEN" in response.json()["detail"]
        other = {"Authorization": "Bearer other-token-for-tests"}
        assert client.post("/api/experiments", headers=other, json=small_spec()).status_code == 201
        client.post(f"/api/experiments/{ids[0]}/cancel", headers=AUTH)  # a slot frees up
        assert client.post("/api/experiments", headers=AUTH, json=small_spec()).status_code == 201


def test_experiments_run_n_at_a_time_in_submission_order(tmp_path):
    one_cell = dict(players=INFO["min_players"], arms={"a": {}}, baseline="a")
    with TestClient(_app(tmp_path, run_worker=True, max_running=2)) as client:
        ids = [client.post("/api/experiments", json=small_spec(
            **one_cell, games_per_arm=10**7, shard_size=20000)).json()["id"] for _ in range(3)]
        wait_for(client, ids[1], ("running",), timeout=120)
        states = [client.get(f"/api/experiments/{e}").json()["status"] for e in ids]
        assert states == ["running", "running", "queued"]
        client.post(f"/api/experiments/{ids[0]}/cancel")
        wait_for(client, ids[2], ("running",), timeout=30)
        for eid in ids[1:]:
            client.post(f"/api/experiments/{eid}/cancel")
            wait_for(client, eid, ("cancelled",), timeout=30)


def test_delete_removes_the_row_and_the_files(tmp_path):
    with TestClient(_app(tmp_path, run_worker=True, token=TOKEN)) as client:
        eid = client.post("/api/experiments", headers=AUTH, json=small_spec()).json()["id"]
        assert client.delete(f"/api/experiments/{eid}", headers=AUTH).status_code in (409, 204)
        wait_for(client, eid, ("done",))
        root = experiment_path(str(tmp_path / "res"), eid)
        assert os.listdir(root)
        assert client.delete(f"/api/experiments/{eid}").status_code == 401
        assert client.delete(f"/api/experiments/{eid}", headers=AUTH).status_code == 204
        assert not os.path.exists(root)
        assert client.get(f"/api/experiments/{eid}").status_code == 404
        assert client.delete(f"/api/experiments/{eid}", headers=AUTH).status_code == 404


def test_delete_of_a_running_experiment_is_409(tmp_path):
    with TestClient(_app(tmp_path, token=TOKEN)) as client:
        eid = client.post("/api/experiments", headers=AUTH, json=small_spec()).json()["id"]
        response = client.delete(f"/api/experiments/{eid}", headers=AUTH)
        assert response.status_code == 409 and "cancel it first" in response.json()["detail"]


def _write_shard(root: str, spec: ExperimentSpec, eid: str, start: int) -> None:
    """One shard of the first cell, as a worker writes it (no Ray needed)."""
    cell = spec.cells()[0]
    game = core_cy.load(spec.game)
    rows = batch.play(game, cell.players, cell.rules, spec.agent_list(cell.players, cell),
                      seed=spec.seed, start=start, count=spec.shard_size, experiment=eid,
                      arm=cell.arm)
    fs, base = filesystem(root)
    path = posixpath.join(cell_dir(base, cell.arm, cell.players), shard_name(start))
    write_atomically(storage_table(rows), fs, path)


def test_polled_figures_are_computed_once_per_set_of_shards(tmp_path, monkeypatch):
    """Dashboards poll the same summary many times a second: it is computed once per set of
    finished shards, named by the registry's status and the games written (the runner
    reports a shard after writing it), so a poll lists no files; the first poll after the
    next report gets new figures (it waits for them up to FRESH_WAIT_S: made long here, so
    that a slow machine does not hand it the last ones); games of shards still playing move
    the progress, not the figures."""
    monkeypatch.setattr(results, "FRESH_WAIT_S", 60.0)
    calls, listings = [], []
    real = pipelines.summary
    monkeypatch.setattr(pipelines, "summary", lambda *a, **k: calls.append(a) or real(*a, **k))
    real_listing = deps.has_results
    monkeypatch.setattr(deps, "has_results", lambda root: listings.append(root) or
                        real_listing(root))
    spec_data = small_spec(games_per_arm=200, shard_size=100)
    spec = ExperimentSpec.model_validate(spec_data)
    app = _app(tmp_path)
    with TestClient(app) as client:
        registry = app.state.registry
        eid = registry.create(spec_data, spec.name, spec.game)
        registry.set_status(eid, "running")
        root = experiment_path(str(tmp_path / "res"), eid)
        assert client.get(f"/api/experiments/{eid}/summary").status_code == 409  # nothing yet
        _write_shard(root, spec, eid, 0)
        registry.set_progress(eid, 100, 800, 50.0, 14.0)
        listings.clear()
        first = [client.get(f"/api/experiments/{eid}/summary") for _ in range(5)]
        assert {r.status_code for r in first} == {200} and len(calls) == 1
        assert first[0].json()[0]["games"] == 100 and first[0].json()[0]["interim"] is True
        assert all(r.json() == first[0].json() for r in first)
        assert listings == []  # games done says there are rows
        _write_shard(root, spec, eid, 100)  # written, not yet reported: the kept figures
        assert client.get(f"/api/experiments/{eid}/summary").json()[0]["games"] == 100
        registry.set_progress(eid, 200, 800, 50.0, 12.0)
        # the first poll after the report starts the recompute and gets its figures
        assert client.get(f"/api/experiments/{eid}/summary").json()[0]["games"] == 200
        assert len(calls) == 2
        app.state.worker._written[eid] = 200  # as the worker knows it while it runs one
        registry.set_progress(eid, 260, 800, 50.0, 11.0)  # 60 games of a shard playing
        assert client.get(f"/api/experiments/{eid}").json()["progress"]["done"] == 260
        assert client.get(f"/api/experiments/{eid}/summary").json()[0]["games"] == 200
        assert len(calls) == 2 and listings == []
        app.state.worker._written.pop(eid)
        registry.set_status(eid, "done")  # the fixed-n figures replace the interim ones
        assert client.get(f"/api/experiments/{eid}/summary").json()[0]["interim"] is False
        assert len(calls) == 3


def test_the_list_is_encoded_once_per_change_of_the_registry(tmp_path, monkeypatch):
    """Dashboards poll the list every second: it is built once per change of the registry,
    and any write (this service's worker, or another process) shows at the next poll."""
    built = []
    real = experiments.ExperimentView.of
    monkeypatch.setattr(experiments.ExperimentView, "of",
                        lambda record: built.append(record["id"]) or real(record))
    app = _app(tmp_path)
    with TestClient(app) as client:
        registry = app.state.registry
        first, second = (registry.create(small_spec(), "small", INFO["name"]) for _ in range(2))
        polls = [client.get("/api/experiments").json() for _ in range(3)]
        assert all(p == polls[0] for p in polls) and [e["id"] for e in polls[0]] == [second, first]
        assert sorted(built) == sorted([first, second])  # built once for three polls
        registry.set_progress(first, 50, 800, 10.0, 75.0)
        assert client.get("/api/experiments").json()[1]["progress"]["done"] == 50
        other_process = Registry(str(tmp_path / "r.db"))
        other_process.set_status(second, "cancelled")
        other_process.close()
        assert client.get("/api/experiments").json()[0]["status"] == "cancelled"
        assert len(built) == 6


def _until(condition, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "still not so"
        time.sleep(0.02)


def test_one_computation_per_key_however_many_callers_wait(tmp_path):
    cache, calls, gate = datasets.ShardCache(size=2), [], threading.Event()

    def compute():
        calls.append(1)
        gate.wait(5)
        return len(calls)

    root = str(tmp_path)
    with ThreadPoolExecutor(8) as pool:
        answers = [pool.submit(cache.get, root, ("q",), 1, compute) for _ in range(8)]
        time.sleep(0.2)
        gate.set()
        assert [a.result() for a in answers] == [1] * 8
    assert cache.kept(root, ("q",), 1, compute) == (True, 1) and calls == [1]
    assert cache.get(root, ("other",), 1, lambda: "b") == "b"
    assert cache.get(root, ("third",), 1, lambda: "c") == "c"  # ("q",) leaves: size 2
    assert cache.kept(root, ("q",), 1, compute) == (False, None)
    assert cache.get(root, ("q",), 1, compute) == 2


def test_while_new_shards_are_computed_pollers_get_the_last_answer_at_once(tmp_path):
    """A recompute for a new set of shards (minutes for 10^8 games) runs in the background,
    once, while pollers of the same question get the last answer at once; with no answer yet
    they wait.  A recompute that fails keeps the last answer and is not retried before the
    next version."""
    root = str(tmp_path)
    cache, started, gate, extra = datasets.ShardCache(), threading.Event(), threading.Event(), []
    assert cache.kept(root, ("q",), "one shard", lambda: "never") == (False, None)
    assert cache.get(root, ("q",), "one shard", lambda: "one shard") == "one shard"

    def slow():
        started.set()
        gate.wait(5)
        return "two shards"

    assert cache.kept(root, ("q",), "two shards", slow) == (True, "one shard")  # at once
    assert started.wait(5)
    assert cache.kept(root, ("q",), "two shards", extra.append) == (True, "one shard")
    assert cache.get(root, ("q",), "two shards", extra.append) == "one shard"
    gate.set()
    _until(lambda: cache.kept(root, ("q",), "two shards", extra.append)[1] == "two shards")
    assert extra == []  # one recompute for all the pollers

    def broken():
        raise OSError("a shard cannot be read")

    assert cache.kept(root, ("q",), "three", broken) == (True, "two shards")
    _until(lambda: ("q",) not in {k[1] for k in cache._computing})
    assert cache.kept(root, ("q",), "three", extra.append) == (True, "two shards")
    assert extra == []  # the failed version is not recomputed at every poll
    assert cache.kept(root, ("q",), "four", lambda: "four")[1] == "two shards"
    _until(lambda: cache.kept(root, ("q",), "four", extra.append) == (True, "four"))


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "Ctrl-C"])
def test_a_stop_leaves_no_process_and_the_run_resumable(tmp_path, stop):
    db, results = str(tmp_path / "r.db"), tmp_path / "res"
    port = _free_port()
    server = _serve(db, results, port)
    try:
        base = f"http://127.0.0.1:{port}"
        _wait(f"{base}/readyz", lambda r: r.status_code == 200, timeout=120)
        spec = small_spec(games_per_arm=10**6, shard_size=5000)
        eid = httpx.post(f"{base}/api/experiments", json=spec).json()["id"]
        _wait(f"{base}/api/experiments/{eid}", lambda r: r.json()["progress"]["done"] > 0)
        os.kill(server.pid, stop)
        assert server.wait(60) in (0, -stop)  # uvicorn re-raises the signal after its stop
        assert_session_ends(server)
    finally:
        kill_session(server)
    record = Registry(db).get(eid)
    assert record["status"] == "queued" and not record["cancel_requested"]


def test_figures_of_an_ended_run_are_those_of_all_its_shards(tmp_path):
    """While a run goes on a poll may get the last figures (recomputed in the background);
    once it has ended the dashboard stops polling, so the answer it gets must be fresh."""
    from services.api import results

    root, answers = str(tmp_path), iter(["first shard", "every shard"])

    def ask(status, games_written):
        record = {"status": status, "games_written": games_written}  # as deps.experiment
        response = asyncio.run(results._kept(record, root, ("q",), lambda: next(answers)))
        return json.loads(response.body)

    assert ask("running", 100) == "first shard"
    assert ask("done", 200) == "every shard"  # not "first shard" while it recomputes
    assert ask("done", 200) == "every shard"  # and kept
