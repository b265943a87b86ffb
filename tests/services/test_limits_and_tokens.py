"""Safe to expose: size limits (422 naming the limit, fast, nothing stored), 413 for large
bodies, bearer tokens on writes (and on reads when asked), every mistake of a spec in one
answer, a cancel that takes effect within two seconds, and the issue's must-show against a
real served process."""
import os
import signal
import time

import httpx
import pytest
from fastapi.testclient import TestClient
from service_support import GAME, INFO, enum_option, small_spec, wait_for
from test_registry import _free_port, _serve, _wait

from services import cli
from services.app import create_app
from services.settings import Settings

TOKEN = "t0ken-for-the-tests"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def _client(tmp_path, run_worker=False, **settings) -> TestClient:
    config = Settings(db=str(tmp_path / "r.db"), results=str(tmp_path / "res"), **settings)
    return TestClient(create_app(config, run_worker=run_worker))


@pytest.fixture
def guarded(tmp_path):
    with _client(tmp_path, token=TOKEN) as client:
        yield client


def test_a_trillion_games_is_422_naming_the_limit_within_two_seconds(guarded):
    began = time.monotonic()
    response = guarded.post("/api/experiments", headers=AUTH,
                            json=small_spec(games_per_arm=10**12))
    assert time.monotonic() - began < 2
    assert response.status_code == 422
    [item] = response.json()["detail"]
    assert item["field"] == "games_per_arm" and item["type"] == "limit"
    assert "MEEPLELAB_MAX_GAMES" in item["msg"] and "1,000,000,000 games" in item["msg"]
    assert guarded.get("/api/experiments").json() == []  # nothing stored


def test_the_limits_come_from_the_settings(tmp_path):
    with _client(tmp_path, max_games=1000, max_cells=2) as client:
        spec = small_spec(games_per_arm=300)  # 2 arms x (1 or 2) player counts
        cells = 2 * (len(spec["players"]) if isinstance(spec["players"], list) else 1)
        response = client.post("/api/experiments", json=spec)
        assert response.status_code == 422
        fields = {e["field"]: e["msg"] for e in response.json()["detail"]}
        if cells > 2:
            assert "MEEPLELAB_MAX_CELLS" in fields["arms"]
        else:
            assert "MEEPLELAB_MAX_GAMES" in fields["games_per_arm"]
        one = small_spec(players=INFO["min_players"], games_per_arm=400,
                         arms={"a": {}}, baseline="a")
        assert client.post("/api/experiments", json=one).status_code == 201


def test_a_huge_sweep_is_refused_before_its_grid_is_built(guarded):
    name, values = enum_option()
    sweep = {name: values * 2000}  # repeated values: the grid is counted, never listed
    spec = small_spec(sweep=sweep, arms={f"a{i}": {} for i in range(2000)}, baseline=None)
    began = time.monotonic()
    response = guarded.post("/api/experiments", headers=AUTH, json=spec)
    assert time.monotonic() - began < 2 and response.status_code == 422
    assert any("MEEPLELAB_MAX_CELLS" in e["msg"] for e in response.json()["detail"])


def test_bodies_over_one_mib_are_413(guarded):
    big = small_spec(name="x" * (1 << 20))
    response = guarded.post("/api/experiments", headers=AUTH, json=big)
    assert response.status_code == 413 and "1,048,576 bytes" in response.json()["detail"]

    def chunks():  # no Content-Length: the limit applies while the body streams
        yield b'{"name": "'
        for _ in range(20):
            yield b"y" * 65536
        yield b'"}'

    response = guarded.post("/api/experiments", headers={**AUTH, "Content-Type":
                                                          "application/json"}, content=chunks())
    assert response.status_code == 413


def test_writes_need_the_token(guarded):
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {TOKEN}"}):
        response = guarded.post("/api/experiments", headers=headers, json=small_spec())
        assert response.status_code == 401, headers
        assert response.headers["WWW-Authenticate"].startswith("Bearer")
        assert "token" in response.json()["detail"]
    response = guarded.post("/api/experiments", headers=AUTH, json=small_spec())
    assert response.status_code == 201
    eid = response.json()["id"]
    assert guarded.post(f"/api/experiments/{eid}/cancel").status_code == 401
    assert guarded.get(f"/api/experiments/{eid}").json()["status"] == "queued"  # reads open
    assert guarded.post(f"/api/experiments/{eid}/cancel", headers=AUTH).status_code == 200


def test_a_file_of_tokens_accepts_each(tmp_path):
    path = tmp_path / "tokens"
    path.write_text("alpha-token-of-tests\nbeta-token-of-the-tests\n")
    with _client(tmp_path, token=str(path)) as client:
        for token in ("alpha-token-of-tests", "beta-token-of-the-tests"):
            response = client.post("/api/experiments", json=small_spec(),
                                   headers={"Authorization": f"Bearer {token}"})
            assert response.status_code == 201
        assert client.post("/api/experiments", json=small_spec(),
                           headers={"Authorization": f"Bearer {path}"}).status_code == 401


def test_reads_can_be_protected_too(tmp_path):
    with _client(tmp_path, token=TOKEN, protect_reads=True) as client:
        for url in ("/api/games", "/api/experiments", "/api/experiments/x/summary"):
            assert client.get(url).status_code == 401, url
        assert client.get("/api/games", headers=AUTH).status_code == 200
        assert client.get("/").status_code == 200  # the pages load, then ask for the token


def test_the_schema_documents_tokens_only_when_there_are_some(tmp_path, guarded):
    schema = guarded.get("/openapi.json").json()
    submit = schema["paths"]["/api/experiments"]["post"]
    assert "401" in submit["responses"] and submit["security"] == [{"HTTPBearer": []}]
    assert "401" not in schema["paths"]["/api/experiments"]["get"]["responses"]
    (tmp_path / "open").mkdir()
    with _client(tmp_path / "open") as client:
        schema = client.get("/openapi.json").json()
        submit = schema["paths"]["/api/experiments"]["post"]
        assert "401" not in submit["responses"] and "security" not in submit
        assert "securitySchemes" not in schema.get("components", {})


def test_every_mistake_of_a_spec_in_one_answer(guarded, tmp_path, capsys):
    name, _values = enum_option()
    spec = small_spec(players=99, agents="telepath", arms={"a": {name: "zzz"}}, colour="red",
                      games_per_arm=0, baseline="zzz")
    response = guarded.post("/api/experiments", headers=AUTH, json=spec)
    assert response.status_code == 422
    fields = {e["field"] for e in response.json()["detail"]}
    assert {"colour", "games_per_arm", "players", f"arms.a.{name}", "agents",
            "baseline"} <= fields, fields
    path = tmp_path / "bad.json"
    path.write_text(__import__("json").dumps(spec))
    assert cli.main(["run", str(path)]) == 2
    err = capsys.readouterr().err
    for field in ("colour:", "games_per_arm:", "players:", f"arms.a.{name}:", "agents:",
                  "baseline:"):
        assert f"  {field}" in err, (field, err)


def test_cancel_takes_effect_within_two_seconds_while_running(tmp_path):
    """A long experiment, cancelled while its shards run: cancelled within 2 s."""
    spec = small_spec(players=INFO["min_players"], arms={"a": {}}, baseline="a",
                      games_per_arm=10**8, shard_size=20000)
    with _client(tmp_path, run_worker=True, token=TOKEN) as client:
        eid = client.post("/api/experiments", headers=AUTH, json=spec).json()["id"]
        wait_for(client, eid, ("running",), timeout=120,
                 condition=lambda e: e["progress"]["done"] > 0)
        began = time.monotonic()
        assert client.post(f"/api/experiments/{eid}/cancel", headers=AUTH).status_code == 200
        exp = wait_for(client, eid, ("cancelled",), timeout=10)
        assert time.monotonic() - began < 2, exp
        assert exp["progress"]["done"] < 10**8


def test_cancel_of_a_queued_experiment_is_immediate(guarded):
    eid = guarded.post("/api/experiments", headers=AUTH, json=small_spec()).json()["id"]
    response = guarded.post(f"/api/experiments/{eid}/cancel", headers=AUTH)
    assert response.json()["status"] == "cancelled"
    assert GAME == response.json()["game"]


def test_the_schema_names_games_agents_and_every_status(guarded):
    schema = guarded.get("/openapi.json").json()
    components = schema["components"]["schemas"]
    variants = components["ExperimentSpec"]["oneOf"]
    games = {}
    for ref in variants:
        variant = components[ref["$ref"].rsplit("/", 1)[1]]
        (game,) = variant["properties"]["game"]["enum"]
        games[game] = variant
    import core_cy

    assert sorted(games) == core_cy.game_names()
    for game, variant in games.items():
        agent_enum = variant["properties"]["agents"]["anyOf"][0]["enum"]
        assert agent_enum == sorted(core_cy.load(game).agents)
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            codes = set(operation["responses"])
            if "{eid}" in path:
                assert {"404", "422"} <= codes, (method, path)
            if method == "post":
                assert {"401", "422"} <= codes, (method, path)
    assert {"413", "429"} <= set(schema["paths"]["/api/experiments"]["post"]["responses"])


def test_a_wrong_method_answers_405_with_every_allowed_method(guarded):
    response = guarded.request("PUT", "/api/experiments")
    assert response.status_code == 405 and response.headers["Allow"] == "GET, HEAD, POST"


def _rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:")) / 1024


def test_must_show_on_a_served_process_with_a_token(tmp_path):
    """`meeplelab serve` with MEEPLELAB_TOKEN: a submit without the token is 401; with it,
    10^12 games is 422 within 2 s; the largest experiment allowed (10^9 games) runs with the
    server's memory under 1 GiB (shards are produced lazily), and cancels."""
    port = _free_port()
    server = _serve(str(tmp_path / "r.db"), tmp_path / "res", port, MEEPLELAB_TOKEN=TOKEN)
    base = f"http://127.0.0.1:{port}/api/experiments"
    try:
        _wait(f"http://127.0.0.1:{port}/readyz", lambda r: r.status_code == 200, timeout=120)
        assert httpx.post(base, json=small_spec()).status_code == 401
        began = time.monotonic()
        huge = httpx.post(base, headers=AUTH, json=small_spec(games_per_arm=10**12))
        assert time.monotonic() - began < 2 and huge.status_code == 422
        largest = small_spec(players=INFO["min_players"], games_per_arm=10**9 // 2,
                             shard_size=20000)  # two arms
        created = httpx.post(base, headers=AUTH, json=largest)
        assert created.status_code == 201, created.text
        eid = created.json()["id"]
        _wait(f"{base}/{eid}", lambda r: r.json()["progress"]["done"] > 0, timeout=120)
        assert _rss_mib(server.pid) < 1024
        httpx.post(f"{base}/{eid}/cancel", headers=AUTH)
        _wait(f"{base}/{eid}", lambda r: r.json()["status"] == "cancelled", timeout=10)
        assert _rss_mib(server.pid) < 1024
    finally:
        os.kill(server.pid, signal.SIGTERM)  # a clean stop: the service's Ray with it
        try:
            server.wait(60)
        finally:
            try:
                os.killpg(server.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
