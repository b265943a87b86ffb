"""Safe to expose, round 2 (issue 27): one request must not break, freeze or fool the service.
Text validated as text, bodies as JSON, the Host and Origin of token-less writes, the quota
reserved atomically, validation off the event loop and linear, the worker supervised, and a
token file that must exist.  (The same probes against a real served process:
benchmarks/hostile.py.)"""
import asyncio
import json
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient
from product import PRODUCT, product_path
from ray_support import ray_local  # noqa: F401  (session fixture)
from service_support import GAME, assert_session_ends, enum_option, kill_session, small_spec

from core_cy import agents
import core_cy
from services import worker as worker_module
from services.app import create_app
from services.registry import Registry
from services.settings import Settings
from services.spec import MAX_NAME, ExperimentSpec, text_problem

TOKEN = "t0ken-for-hostile-tests"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
JSON = {"Content-Type": "application/json"}
SLOW_AGENT = "mcts(iterations=100)"  # about 0.2 CPU seconds a game of GAME


def _app(tmp_path, run_worker=False, **settings):
    config = Settings(db=str(tmp_path / "r.db"), results=str(tmp_path / "res"), **settings)
    return create_app(config, run_worker=run_worker)


def _post(client, path: str, data) -> httpx.Response:
    """POST `data` as JSON with ASCII escapes (how a lone surrogate travels: \\udfff)."""
    return client.post(path, content=json.dumps(data).encode(),
                       headers={"Content-Type": "application/json"})


@pytest.fixture
def client(tmp_path):
    with TestClient(_app(tmp_path)) as c:
        yield c


# ---- 1. text is text, bodies are JSON ------------------------------------------------------
@pytest.mark.parametrize("name", ["\udfff", "a\x00b", "tab\there", "line\nbreak",
                                  "rtl\u202eoverride", "x" * (MAX_NAME + 1), ""])
def test_an_arm_name_that_is_not_text_is_422_and_the_list_still_answers(client, name):
    spec = small_spec(arms={name: {}, "b": {}}, baseline="b")
    response = _post(client, "/api/experiments", spec)
    assert response.status_code == 422, response.text
    assert any(item["field"].startswith("arms") for item in response.json()["detail"])
    assert client.get("/api/experiments").status_code == 200
    assert client.get("/api/experiments").json() == []


@pytest.mark.parametrize("field,value", [("name", "\ud800"), ("name", "bell\x07"),
                                         ("name", "n" * 900_000), ("baseline", "\udfff"),
                                         ("agents", "random\x00")])
def test_names_and_agent_strings_are_bounded_text(client, field, value):
    response = _post(client, "/api/experiments", small_spec(**{field: value}))
    assert response.status_code == 422, response.text
    assert response.json()["detail"][0]["field"].startswith(field)
    assert len(response.text) < 5_000  # the error does not echo a huge value


def test_a_lone_surrogate_anywhere_in_a_spec_is_refused_naming_its_place():
    option = next(iter(core_cy.load(GAME).info()["rules"]["properties"]))
    with pytest.raises(ValueError) as caught:
        ExperimentSpec.model_validate(small_spec(arms={"a": {option: "\udc80"}, "b": {}},
                                                 baseline="b"))
    assert caught.value.errors()[0]["loc"] == ("arms", "a", option)


def test_text_problem_accepts_ordinary_names_of_any_script():
    for name in ("pro variant", "Zweispieler-Vari\u00e4nte", "\u4e09\u4eba", "\U0001f3b2 dice"):
        assert text_problem(name) is None


def test_a_row_stored_before_text_was_checked_does_not_break_the_list(tmp_path):
    registry = Registry(str(tmp_path / "r.db"))
    registry._db.execute("INSERT INTO experiments (id, name, game, spec, status, created_at,"
                         " seq) VALUES ('old', 'old', ?, ?, 'failed', 0, 1)",
                         (GAME, '{"arms": {"\\udfff": {}}}'))
    registry.close()
    with TestClient(_app(tmp_path)) as c:
        listed = c.get("/api/experiments")
        assert listed.status_code == 200 and listed.json()[0]["spec"]["arms"] == {"\ufffd": {}}


@pytest.mark.parametrize("headers", [{"Content-Type": "text/plain"}, {},
                                     {"Content-Type": "application/x-www-form-urlencoded"}])
def test_a_body_that_is_not_declared_json_is_415_and_nothing_is_stored(client, headers):
    body = json.dumps(small_spec()).encode()
    for path in ("/api/experiments", "/api/plans"):
        response = client.post(path, content=body, headers=headers)
        assert response.status_code == 415, (path, response.text)
    assert client.get("/api/experiments").json() == []
    assert client.post("/api/experiments", json=small_spec()).status_code == 201


def test_a_cross_site_write_without_tokens_is_403(client):
    response = client.post("/api/experiments", json=small_spec(),
                           headers={"Origin": "http://evil.example"})
    assert response.status_code == 403
    own = client.post("/api/experiments", json=small_spec(),
                      headers={"Origin": "http://testserver"})
    assert own.status_code == 201
    eid = own.json()["id"]
    assert client.post(f"/api/experiments/{eid}/cancel",
                       headers={"Origin": "null"}).status_code == 403


def test_the_token_less_loopback_default_answers_only_loopback_host_names(tmp_path):
    config = Settings(db=str(tmp_path / "r.db"), results=str(tmp_path / "res"))
    for host, status in (("evil.example", 421), ("evil.example:8000", 421),
                         ("127.0.0.1:8000", 200), ("localhost:8000", 200), ("[::1]:8000", 200)):
        app = create_app(config, run_worker=False, loopback_hosts=True)
        with TestClient(app, base_url=f"http://{host}") as c:
            assert c.get("/api/experiments").status_code == status, host


def test_json_nested_a_thousand_deep_is_4xx(client):
    deep = "[" * 1000 + "]" * 1000
    for path in ("/api/experiments", "/api/plans"):
        body = '{"name": "x", "game": "%s", "players": 2, "arms": {"a": {"o": %s}}}' % (
            GAME, deep)
        if path == "/api/plans":
            body = '{"spec": %s}' % body
        response = client.post(path, content=body, headers={"Content-Type": "application/json"})
        assert 400 <= response.status_code < 500, (path, response.status_code)
    assert client.post("/api/experiments", content="[" * 100_000,
                       headers={"Content-Type": "application/json"}).status_code == 422


# ---- 3. validation is linear and off the event loop -----------------------------------------
def test_the_agent_parser_is_linear():
    game = core_cy.load(GAME)
    began = time.perf_counter()
    with pytest.raises(ValueError):
        agents.parse_agent(game, "random" + " " * 60_000 + "x")
    with pytest.raises(ValueError):
        agents.parse_agent(game, "random(" + " " * 60_000 + "x")
    assert time.perf_counter() - began < 0.05
    assert agents.parse_agent(game, "  random  ")[0] == "random"
    assert agents.parse_agent(game, " random ( ) ") == agents.parse_agent(game, "random")


async def _while_polling(app, request) -> tuple:
    """(the answer to `request`, its seconds, the longest /healthz wait meanwhile)."""
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
        done = asyncio.Event()
        longest = 0.0

        async def poll():
            nonlocal longest
            while not done.is_set():
                began = time.perf_counter()
                assert (await c.get("/healthz")).status_code == 200
                longest = max(longest, time.perf_counter() - began)
                await asyncio.sleep(0.005)

        await request(c)  # warm: the first request of a process loads the game modules
        await c.get("/healthz")
        poller = asyncio.create_task(poll())
        await asyncio.sleep(0.02)
        began = time.perf_counter()
        response = await request(c)
        seconds = time.perf_counter() - began
        done.set()
        await poller
        return response, seconds, longest


def test_a_long_agent_string_is_422_within_100_ms_while_healthz_answers(tmp_path):
    app = _app(tmp_path)
    body = json.dumps(small_spec(agents="random" + " " * 60_000 + "x"))
    response, seconds, longest = asyncio.run(_while_polling(
        app, lambda c: c.post("/api/experiments", content=body, headers=JSON)))
    assert response.status_code == 422 and seconds < 0.1, seconds
    assert longest < 0.1


def test_a_100000_cell_plan_is_422_fast_while_healthz_answers(tmp_path):
    app = _app(tmp_path)
    name, values = enum_option()
    spec = small_spec(arms=None, baseline=None, players=core_cy.load(GAME).min_players,
                      sweep={name: (values * 100_000)[:100_000]})
    body = json.dumps({"spec": spec}, separators=(",", ":"))  # here, not on the measured loop
    response, seconds, longest = asyncio.run(_while_polling(
        app, lambda c: c.post("/api/plans", content=body, headers=JSON)))
    assert response.status_code == 422, response.text
    assert any(item["type"] == "limit" for item in response.json()["detail"])
    assert seconds < 2 and longest < 0.2, (seconds, longest)


# ---- 2. the quota is reserved atomically ---------------------------------------------------
def test_sixty_concurrent_submits_under_a_quota_of_four_accept_four(tmp_path):
    app = _app(tmp_path, token=TOKEN, max_running_per_token=4)

    async def storm():
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
            return await asyncio.gather(*(c.post("/api/experiments", json=small_spec(),
                                                 headers=AUTH) for _ in range(60)))

    statuses = [r.status_code for r in asyncio.run(storm())]
    assert statuses.count(201) == 4 and statuses.count(429) == 56, statuses
    assert len(app.state.registry.unfinished()) == 4


# ---- 4. the worker is supervised -----------------------------------------------------------
@pytest.fixture
def no_ray(monkeypatch):
    """The worker without Ray: start_ray reports a local Ray, runs are `runs[...]`."""
    def started(address=None):
        worker_module._ray_state = "local"

    monkeypatch.setattr(worker_module, "start_ray", started)
    import services.runner

    runs = {}

    def run_experiment(spec, results, eid, **options):
        return runs.get(spec.name, lambda: "done")()

    monkeypatch.setattr(services.runner, "run_experiment", run_experiment)
    return runs


def _status(c, eid, statuses, timeout=10, kind="experiments"):
    """The record of /api/<kind>/<eid> once its status is one of `statuses`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        record = c.get(f"/api/{kind}/{eid}").json()
        if record["status"] in statuses:
            return record
        time.sleep(0.02)
    raise AssertionError(f"{eid}: {record['status']}, not {statuses}")


def test_an_error_in_a_run_fails_that_run_and_the_worker_goes_on(tmp_path, no_ray):
    def boom():
        raise RuntimeError("a bug in the runner")

    no_ray["broken"] = boom
    with TestClient(_app(tmp_path, run_worker=True)) as c:
        bad = c.post("/api/experiments", json=small_spec(name="broken")).json()["id"]
        good = c.post("/api/experiments", json=small_spec(name="fine")).json()["id"]
        assert "a bug in the runner" in _status(c, bad, ("failed",))["error"]
        assert _status(c, good, ("done",))
        assert c.get("/readyz").status_code == 200


class _FullDisk:
    """The registry's write connection on a full disk: every write fails."""

    def __init__(self, db):
        self._db = db

    def execute(self, sql, args=()):
        if sql.lstrip().upper().startswith(("UPDATE", "INSERT", "DELETE", "BEGIN")):
            raise sqlite3.OperationalError("database or disk is full")
        return self._db.execute(sql, args)

    def __getattr__(self, name):
        return getattr(self._db, name)


def test_a_full_registry_disk_for_a_while_is_survived_and_readyz_shows_it(tmp_path, no_ray):
    """The run ends while the disk is full: its end is written once the disk has room, the
    next experiment runs, and /readyz answers 503 only while the writes fail."""
    release = threading.Event()
    no_ray["slow"] = lambda: (release.wait(10), "done")[1]
    app = _app(tmp_path, run_worker=True)
    registry = app.state.registry
    with TestClient(app) as c:
        eid = c.post("/api/experiments", json=small_spec(name="slow")).json()["id"]
        _status(c, eid, ("running",))
        healthy = registry._db
        registry._db = _FullDisk(healthy)
        release.set()
        deadline = time.monotonic() + 3
        while c.get("/readyz").status_code == 200:
            assert time.monotonic() < deadline, "readyz never showed the full disk"
            time.sleep(0.05)
        assert "full" in c.get("/readyz").json()["detail"]
        assert c.post("/api/experiments", json=small_spec()).status_code == 503
        time.sleep(1.5)
        assert c.get(f"/api/experiments/{eid}").json()["status"] == "running"
        registry._db = healthy
        assert _status(c, eid, ("done",))
        assert c.get("/readyz").status_code == 200
        after = c.post("/api/experiments", json=small_spec(name="fine")).json()["id"]
        assert _status(c, after, ("done",))


def test_a_dead_or_stuck_worker_thread_makes_readyz_fail(tmp_path, no_ray, monkeypatch):
    app = _app(tmp_path, run_worker=True)
    worker = app.state.worker
    with TestClient(app) as c:
        assert c.get("/readyz").status_code == 200
        thread = worker._threads[0]
        worker._beats[thread.name] -= worker_module.STUCK_SECONDS + 60
        monkeypatch.setattr(worker, "_beat", lambda: None)
        assert c.get("/readyz").status_code == 503
        assert "not answered" in c.get("/readyz").json()["detail"]
        dead = threading.Thread(target=lambda: None)
        dead.start()
        dead.join()
        monkeypatch.setattr(worker, "_threads", [dead])
        assert "died" in c.get("/readyz").json()["detail"]


# ---- 5. a token file that is missing refuses to start --------------------------------------
@pytest.mark.parametrize("value", ["/no/such/file", "./missing-tokens", "~/no-such-tokens"])
def test_a_token_setting_naming_a_missing_file_is_an_error(value):
    with pytest.raises(ValueError, match="cannot be read"):
        Settings(token=value)


def test_a_token_file_without_tokens_is_an_error(tmp_path):
    path = tmp_path / "tokens"
    path.write_text("# no token yet\n\n")
    with pytest.raises(ValueError, match="holds no token"):
        Settings(token=str(path))


@pytest.mark.parametrize("host", ["127.0.0.1", "0.0.0.0"])
def test_serve_with_a_missing_token_file_refuses_to_start(tmp_path, host):
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": product_path(),  # the build under test
           "MEEPLELAB_TOKEN": "/no/such/file", "MEEPLELAB_DB": str(tmp_path / "r.db")}
    began = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "services.cli", "serve", "--host", host,
                           "--port", "1"], cwd=PRODUCT, env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2 and "/no/such/file" in done.stderr, done.stderr
    assert "refusing to start" in done.stderr and time.monotonic() - began < 30


# ---- 7. ownership, pages, caps, shards that are read back whole ----------------------------
OTHER = "another-t0ken-for-tests"
ADMIN = "an-admin-t0ken-for-tests"


def test_only_the_owner_or_an_admin_may_cancel_or_delete(tmp_path):
    tokens = tmp_path / "tokens"
    tokens.write_text(f"{TOKEN}\n{OTHER}\n")
    app = _app(tmp_path, token=str(tokens), admin_token=ADMIN)
    other = {"Authorization": f"Bearer {OTHER}"}
    admin = {"Authorization": f"Bearer {ADMIN}"}
    with TestClient(app) as c:
        eid = c.post("/api/experiments", json=small_spec(), headers=AUTH).json()["id"]
        assert c.post(f"/api/experiments/{eid}/cancel", headers=other).status_code == 403
        assert c.post(f"/api/experiments/{eid}/cancel", headers=AUTH).status_code == 200
        assert c.delete(f"/api/experiments/{eid}", headers=other).status_code == 403
        assert c.delete(f"/api/experiments/{eid}", headers=admin).status_code == 204
        mine = c.post("/api/experiments", json=small_spec(), headers=other).json()["id"]
        assert c.post(f"/api/experiments/{mine}/cancel", headers=admin).status_code == 200
        assert c.get(f"/api/experiments/{mine}").json()["status"] == "cancelled"


def test_the_list_comes_in_pages(client):
    ids = [client.post("/api/experiments", json=small_spec(name=f"e{k}")).json()["id"]
           for k in range(5)]
    page = client.get("/api/experiments", params={"limit": 2})
    assert [e["id"] for e in page.json()] == ids[::-1][:2]
    assert page.headers["X-Total-Count"] == "5"
    rest = client.get("/api/experiments", params={"limit": 2, "offset": 4}).json()
    assert [e["id"] for e in rest] == [ids[0]]
    assert len(client.get("/api/experiments").json()) == 5
    assert client.get("/api/experiments", params={"limit": 10**6}).status_code == 422


def test_plans_are_capped_per_token(tmp_path):
    tokens = tmp_path / "tokens"
    tokens.write_text(f"{TOKEN}\n{OTHER}\n")
    app = _app(tmp_path, token=str(tokens), max_running_per_token=2)  # nothing plays
    with TestClient(app) as c:
        statuses = [c.post("/api/plans", json={"spec": small_spec()}, headers=AUTH).status_code
                    for _ in range(3)]
        assert statuses == [202] * 2 + [429]
        other = {"Authorization": f"Bearer {OTHER}"}
        assert c.post("/api/plans", json={"spec": small_spec()}, headers=other).status_code == 202


def test_the_api_counts_games_of_a_shard_still_playing(tmp_path, no_ray, monkeypatch):
    """Progress is the games played, those of shards still playing included (their tasks
    report them: services.shard, test_runner); the figures wait for a shard written."""
    import services.runner
    from services.runner import Progress

    reported, release = threading.Event(), threading.Event()

    def run_experiment(spec, results, eid, progress=None, **options):
        progress(Progress(37, 400, 9.0, 40.0, written=0))  # one shard, 37 games in
        reported.set()
        release.wait(10)
        return "done"

    monkeypatch.setattr(services.runner, "run_experiment", run_experiment)
    with TestClient(_app(tmp_path, run_worker=True)) as c:
        eid = c.post("/api/experiments", json=small_spec()).json()["id"]
        assert reported.wait(10)
        assert _status(c, eid, ("running",))["progress"]["done"] == 37
        assert c.get(f"/api/experiments/{eid}/summary").status_code == 409  # none written
        release.set()
        _status(c, eid, ("done",))


def test_shard_size_is_capped():
    from services.spec import MAX_SHARD

    with pytest.raises(ValueError, match="shard_size"):
        ExperimentSpec.model_validate(small_spec(shard_size=MAX_SHARD + 1))


def test_error_texts_name_no_absolute_server_path(tmp_path, no_ray):
    results = tmp_path / "res"

    def unwritable():
        raise NotADirectoryError(20, "Not a directory", str(results / "x" / "arm=a"))

    no_ray["broken"] = unwritable
    with TestClient(_app(tmp_path, run_worker=True)) as c:
        eid = c.post("/api/experiments", json=small_spec(name="broken")).json()["id"]
        error = _status(c, eid, ("failed",))["error"]
        assert str(tmp_path) not in error and "<results>/x/arm=a" in error
        listed = c.get("/api/experiments")  # the open list: what anyone may read
        assert listed.json()[0]["error"] == error and str(tmp_path) not in listed.text


def test_the_figure_cache_is_bounded_in_bytes_and_computes_on_a_fixed_pool(tmp_path):
    from services import datasets

    cache = datasets.ShardCache(size=100, max_bytes=1000, workers=2)
    running, most, lock = [0], [0], threading.Lock()

    def compute():
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.05)
        with lock:
            running[0] -= 1
        return b"x" * 400

    threads = [threading.Thread(target=cache.get, args=(str(tmp_path), (k,), 1, compute))
               for k in range(12)]
    before = threading.active_count()
    for t in threads:
        t.start()
    time.sleep(0.02)
    assert threading.active_count() <= before + len(threads)  # no thread per computation
    for t in threads:
        t.join()
    assert most[0] <= 2
    assert len(cache._answers) == 2 and cache._bytes == 800


def test_a_damaged_or_empty_shard_is_played_again_on_resume(ray_local, tmp_path):  # noqa: F811
    import pyarrow.parquet as pq

    from services.runner import run_experiment
    from pipelines.folder import experiment_path

    spec = ExperimentSpec.model_validate(small_spec(games_per_arm=300))
    assert run_experiment(spec, str(tmp_path), "exp") == "done"
    shards = sorted(Path(experiment_path(str(tmp_path), "exp")).rglob("shard-*.parquet"))
    before = {p: pq.read_table(p).to_pylist() for p in shards}
    damaged, empty = shards[0], shards[-1]
    data = bytearray(damaged.read_bytes())
    data[len(data) // 3:len(data) // 3 + 64] = bytes(64)
    damaged.write_bytes(bytes(data))
    empty.write_bytes(b"")
    assert run_experiment(spec, str(tmp_path), "exp") == "done"
    assert {p: pq.read_table(p).to_pylist() for p in shards} == before


def test_a_new_registry_beside_old_results_is_said_in_the_log(tmp_path, caplog):
    (tmp_path / "res" / "20260101-000000-0123abcd").mkdir(parents=True)
    with caplog.at_level("WARNING", logger="meeplelab.app"):
        _app(tmp_path)
    assert "the results folder holds 1 experiments" in caplog.text


# ---- 6. SIGTERM: a clean stop within the grace period, during a plan pilot too --------------
def test_sigterm_during_a_plan_pilot_stops_cleanly_with_no_ray_process_left(tmp_path):
    """Kubernetes stops a pod with SIGTERM.  Ray's own handler (armed when Ray starts) used
    to abort the process 3 s later, with the pilot still playing and Ray's processes left
    behind; now the service stops, its Ray with it, well within the pod's grace period
    (45 s, k8s/api.yaml)."""
    import os
    import signal

    from test_registry import _free_port, _serve, _wait

    port = _free_port()
    server = _serve(str(tmp_path / "r.db"), tmp_path / "res", port)
    try:
        base = f"http://127.0.0.1:{port}"
        _wait(f"{base}/readyz", lambda r: r.status_code == 200, timeout=120)
        slow = small_spec(agents="mcts(iterations=3000)")
        job = httpx.post(f"{base}/api/plans", json={"spec": slow, "pilot_games": 20000})
        assert job.status_code == 202, job.text
        _wait(f"{base}/api/plans/{job.json()['id']}",
              lambda r: r.json()["status"] == "running", timeout=60)
        began = time.monotonic()
        os.kill(server.pid, signal.SIGTERM)
        assert server.wait(40) in (0, -signal.SIGTERM)  # uvicorn re-raises it after its stop
        # a game of this agent takes seconds: the stop ends the pilot's process at once
        assert time.monotonic() - began < 15
        assert_session_ends(server)
    finally:
        kill_session(server)


def _plan_status(c, pid, statuses):
    return _status(c, pid, statuses, timeout=30, kind="plans")


def test_a_running_pilot_stops_within_a_second_of_its_cancel(tmp_path, ray_local):  # noqa: F811
    """The pilot plays as shard tasks: a cancel by its token (not another's) force-cancels
    them at once, and the next plan starts within a second; a cancelled plan stays
    cancelled; the service's stop ends a running pilot at once and leaves it queued for the
    next start (tests/services/test_jobs.py: the same for every job kind)."""
    tokens = tmp_path / "tokens"
    tokens.write_text(f"{TOKEN}\n{OTHER}\n")
    app = _app(tmp_path, run_worker=True, token=str(tokens), admin_token=ADMIN,
               plan_seconds=600.0)  # the budget is not what ends it
    other = {"Authorization": f"Bearer {OTHER}"}
    with TestClient(app) as c:
        slow = {"spec": small_spec(agents=SLOW_AGENT), "pilot_games": 20_000}
        pid = c.post("/api/plans", json=slow, headers=AUTH).json()["id"]
        _plan_status(c, pid, ("running",))
        time.sleep(1.0)  # well into its pilot
        assert c.post(f"/api/plans/{pid}/cancel", headers=other).status_code == 403
        nxt = c.post("/api/plans", json={"spec": small_spec(), "pilot_games": 20},
                     headers=other).json()["id"]
        began = time.monotonic()
        assert c.post(f"/api/plans/{pid}/cancel", headers=AUTH).status_code == 200
        _plan_status(c, nxt, ("running", "done"))
        assert time.monotonic() - began < 1.0
        assert _status(c, nxt, ("done",), timeout=120, kind="plans")["result"][
            "games_per_cell"] > 0
        assert c.get(f"/api/plans/{pid}").json()["status"] == "cancelled"
        assert c.post(f"/api/plans/{pid}/cancel", headers=AUTH).status_code == 409
        assert c.post("/api/plans/nope/cancel", headers=AUTH).status_code == 404
        queued = [c.post("/api/plans", json=slow, headers=AUTH).json()["id"] for _ in range(2)]
        _plan_status(c, queued[0], ("running",))
        admin = {"Authorization": f"Bearer {ADMIN}"}
        assert c.post(f"/api/plans/{queued[1]}/cancel", headers=admin).status_code == 200
        time.sleep(1.0)  # well into its pilot
        began = time.monotonic()
        app.state.worker.stop()  # what the service's stop does: the pilot's tasks end
        assert time.monotonic() - began < 2.0
        assert c.get(f"/api/plans/{queued[1]}").json()["status"] == "cancelled"
        assert c.get(f"/api/plans/{queued[0]}").json()["status"] == "queued"  # runs next start


def test_jobs_take_the_tokens_in_turn(tmp_path):
    """A token's queued jobs do not delay another token's: after the job playing now, the
    other token's job comes first (each kind's places choose so: services.worker)."""
    registry = Registry(str(tmp_path / "r.db"))
    worker = worker_module.Worker(registry, str(tmp_path / "res"))
    made = {}
    for name, owner in (("a1", "A"), ("a2", "A"), ("b1", "B")):
        made[name] = registry.create({}, name, GAME, owner=owner, kind="plan")
    worker.submit(made["a1"])
    assert worker._next("plan") == made["a1"]  # A's first plan plays
    worker.submit(made["a2"])
    worker.submit(made["b1"])
    assert worker._next("plan") is None  # the kind's one place is taken
    worker._release(made["a1"])  # A's first plan has ended
    first = worker._next("plan")
    worker._release(first)
    assert [first, worker._next("plan")] == [made["b1"], made["a2"]]
    assert worker._next("experiment") is None  # the kinds' places are apart
