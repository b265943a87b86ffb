"""Safe to expose: size limits (422 naming the limit, fast, nothing stored), 413 for large
bodies, bearer tokens on writes (and on reads when asked), every mistake of a spec in one
answer, and a cancel that takes effect within two seconds."""
import time

import pytest
from fastapi.testclient import TestClient
from service_support import GAME, INFO, enum_option, small_spec, wait_for

from services import cli
from services.app import create_app
from services.settings import Settings

TOKEN = "t0ken-for-tests"
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
    path.write_text("alpha\nbeta\n")
    with _client(tmp_path, token=str(path)) as client:
        for token in ("alpha", "beta"):
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
