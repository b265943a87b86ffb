"""The FastAPI service through a test client: every endpoint, its 404s and 422s (naming the
field), the download formats, and the offline docs and dashboard assets."""
import io
import re
import time
import zipfile
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq

import pytest
from fastapi.testclient import TestClient
from ray_support import ray_local  # noqa: F401  (session fixture)
from service_support import GAME, INFO, enum_option, small_spec, wait_for

import core_cy
import pipelines
from services.app import DASHBOARD, create_app
from services.runner import experiment_path
from services.settings import Settings

ENDPOINTS = ["", "/summary", "/compare", "/histograms", "/figures", "/figures/x.svg",
             "/download/summary.csv",
             "/download/results.parquet", "/download/results.zip"]


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    """A running app with one finished small experiment (played once for the module)."""
    root = tmp_path_factory.mktemp("service")
    app = create_app(db=str(root / "registry.db"), results=str(root / "results"))
    with TestClient(app) as client:
        response = client.post("/api/experiments", json=small_spec())
        assert response.status_code == 201, response.text
        eid = response.json()["id"]
        exp = wait_for(client, eid)
        assert exp["status"] == "done", exp
        yield client, eid, experiment_path(str(root / "results"), eid)


@pytest.fixture
def idle(tmp_path):
    """An app whose worker does not run: experiments stay queued."""
    app = create_app(db=str(tmp_path / "r.db"), results=str(tmp_path / "res"), run_worker=False)
    with TestClient(app) as client:
        yield client


def test_games_lists_the_catalogue_with_schemas_and_agents(idle):
    games = idle.get("/api/games").json()
    assert [g["name"] for g in games] == core_cy.game_names()
    for g in games:
        info = core_cy.load(g["name"]).info()
        assert g["rules"] == info["rules"] and g["agents"] == info["agents"]
        assert g["min_players"] == info["min_players"] and g["max_players"] == info["max_players"]


def test_submit_returns_201_and_the_experiment_is_listed_and_shown(idle):
    spec = small_spec(name="listed")
    response = idle.post("/api/experiments", json=spec)
    assert response.status_code == 201
    eid = response.json()["id"]
    listed = idle.get("/api/experiments").json()
    assert [e["id"] for e in listed] == [eid]
    exp = idle.get(f"/api/experiments/{eid}").json()
    assert exp["spec"] == spec and exp["name"] == "listed" and exp["game"] == GAME
    assert exp["status"] == "queued"
    cells = 2 * (len(spec["players"]) if isinstance(spec["players"], list) else 1)
    assert exp["progress"]["total"] == cells * spec["games_per_arm"]
    assert exp["progress"]["done"] == 0


def test_a_spread_no_plan_handed_out_is_accepted_with_a_warning(idle):
    """Issue 52: a stop_when.spread typed by hand (no spread_check) is queued (201) with a
    warning that names it and says how to get one a plan hands out; the spread and check a
    plan hands out for this spec, and a spec without a stored spread, with none."""
    from services.spec import ExperimentSpec

    rule = {"delta": 0.03, "max_games": 400, "spread": 0.4}
    typed = idle.post("/api/experiments", json=small_spec(stop_when=rule))
    assert typed.status_code == 201, typed.text
    [warning] = typed.json()["warnings"]
    assert warning.startswith("stop_when.spread 0.4 was not handed out by a plan for this "
                              "experiment") and "meeplelab plan SPEC" in warning, warning
    check = ExperimentSpec.model_validate(small_spec(stop_when=rule)).spread_check_for(0.4)
    planned = idle.post("/api/experiments", json=small_spec(
        stop_when={**rule, "spread_check": check}))
    assert planned.status_code == 201 and planned.json()["warnings"] == []
    assert idle.post("/api/experiments", json=small_spec()).json()["warnings"] == []
    assert idle.get(f"/api/experiments/{typed.json()['id']}").json()["spec"]["stop_when"] \
        == rule  # stored as sent


def test_newest_experiment_is_listed_first(idle):
    ids = [idle.post("/api/experiments", json=small_spec(seed=s)).json()["id"] for s in (1, 2)]
    assert [e["id"] for e in idle.get("/api/experiments").json()] == ids[::-1]


@pytest.mark.parametrize("change, field", [
    ({"game": "no-such-game"}, "game"),
    ({"colour": "red"}, "colour"),
    ({"players": 99}, "players"),
    ({"games_per_arm": 0}, "games_per_arm"),
    ({"agents": "telepath"}, "agents"),
    ({"baseline": "zzz"}, "baseline"),
    ({"arms": {"a": {"no_such_option": 1}}}, "arms.a.no_such_option"),
    ({"stop_when": {"delta": 0.03, "max_games": 400, "spread": 0}}, "stop_when.spread"),
    ({"stop_when": {"delta": 0.03, "max_games": 400, "spread": 1.5}}, "stop_when.spread"),
    ({"stop_when": {"delta": 0.03, "max_games": 400, "spread": "wide"}}, "stop_when.spread"),
    ({"stop_when": {"half_width": 0.03, "max_games": 400, "spread": 0.4}}, "stop_when.spread"),
    ({"stop_when": {"delta": 0.03, "max_games": 400, "spread": 0.4, "spread_check": "plan"}},
     "stop_when.spread_check"),
    ({"stop_when": {"delta": 0.03, "max_games": 400, "spread_check": "0123abcd"}},
     "stop_when.spread_check"),
])
def test_bad_specs_are_422_naming_the_field(idle, change, field):
    response = idle.post("/api/experiments", json=small_spec(**change))
    assert response.status_code == 422, response.text
    detail = response.json()["detail"]
    assert field in [d["field"] for d in detail], detail
    assert all(d["msg"] for d in detail)
    assert idle.get("/api/experiments").json() == []  # nothing stored


def test_bad_rule_value_names_the_option_and_allowed_values(idle):
    name, values = enum_option()
    response = idle.post("/api/experiments", json=small_spec(arms={"x": {name: "nonsense"}},
                                                             baseline=None))
    assert response.status_code == 422
    (item,) = response.json()["detail"]
    assert item["field"] == f"arms.x.{name}" and str(values[0]) in item["msg"]


def test_missing_game_and_malformed_json_are_422(idle):
    response = idle.post("/api/experiments", json={"players": 3})
    assert response.status_code == 422
    assert "game" in [d["field"] for d in response.json()["detail"]]
    response = idle.post("/api/experiments", content=b"{not json",
                         headers={"Content-Type": "application/json"})
    assert response.status_code == 422 and "Traceback" not in response.text


@pytest.mark.parametrize("suffix", ENDPOINTS)
def test_unknown_experiment_is_404(idle, suffix):
    response = idle.get(f"/api/experiments/nope{suffix}")
    assert response.status_code == 404 and "nope" in response.json()["detail"]


def test_cancel_unknown_is_404(idle):
    assert idle.post("/api/experiments/nope/cancel").status_code == 404


def test_queued_experiment_has_no_results_yet(idle):
    eid = idle.post("/api/experiments", json=small_spec()).json()["id"]
    for suffix in ENDPOINTS[1:]:
        response = idle.get(f"/api/experiments/{eid}{suffix}")
        assert response.status_code == 409, (suffix, response.text)


def test_cancel_queued_then_cancel_again_is_409(idle):
    eid = idle.post("/api/experiments", json=small_spec()).json()["id"]
    response = idle.post(f"/api/experiments/{eid}/cancel")
    assert response.status_code == 200 and response.json()["status"] == "cancelled"
    assert idle.get(f"/api/experiments/{eid}").json()["status"] == "cancelled"
    assert idle.post(f"/api/experiments/{eid}/cancel").status_code == 409


def test_finished_experiment_has_full_progress(service):
    client, eid, _ = service
    exp = client.get(f"/api/experiments/{eid}").json()
    assert exp["progress"]["done"] == exp["progress"]["total"] > 0
    assert exp["started_at"] <= exp["finished_at"] and exp["error"] is None
    assert client.post(f"/api/experiments/{eid}/cancel").status_code == 409


def test_summary_is_the_pipelines_summary(service):
    client, eid, root = service
    got = client.get(f"/api/experiments/{eid}/summary").json()
    expected = pipelines.summary(root)
    assert len(got) == expected.height > 0
    assert [r["win_share"] for r in got] == pytest.approx(expected["win_share"].to_list())
    assert {(r["arm"], r["players"], r["seat"]) for r in got} == set(
        expected.select("arm", "players", "seat").iter_rows())


def test_finished_run_has_fixed_n_verdicts_and_the_margin_is_a_query(service):
    client, eid, root = service
    rows = client.get(f"/api/experiments/{eid}/summary").json()
    assert all(r["verdict"] and not r["interim"] and r["engine_version"] for r in rows)
    assert all(r["seat_p_adjusted"] is not None for r in rows)
    compared = client.get(f"/api/experiments/{eid}/compare", params={"delta": 0.5}).json()
    assert all("±50 points" in r["verdict"] and r["decided"] for r in compared)
    bad = client.get(f"/api/experiments/{eid}/compare", params={"delta": 2})
    assert bad.status_code == 422 and bad.json()["detail"][0]["field"].endswith("delta")


def test_figures_are_interim_until_the_run_is_done(service):
    client, eid, root = service
    registry = client.app.state.registry
    registry.set_status(eid, "running")
    try:
        rows = client.get(f"/api/experiments/{eid}/summary").json()
        compared = client.get(f"/api/experiments/{eid}/compare").json()
    finally:
        registry.set_status(eid, "done")
    assert all(r["interim"] and r["verdict"].startswith("Interim:") for r in rows)
    assert all(r["seat_p_value"] is None for r in rows)  # no p-values mid-run
    assert all(r["interim"] and r["win_p"] is None for r in compared)
    final = client.get(f"/api/experiments/{eid}/compare").json()
    for early, late in zip(compared, final):  # confidence sequences are wider
        assert early["win_diff_hi"] - early["win_diff_lo"] > late["win_diff_hi"] - late["win_diff_lo"]


def _plan_result(client, pid: str, timeout: float = 120) -> dict:
    """Poll GET /api/plans/{pid} until the plan is done or failed."""
    deadline = time.monotonic() + timeout
    while True:
        job = client.get(f"/api/plans/{pid}")
        assert job.status_code == 200, job.text
        if job.json()["status"] in ("done", "failed") or time.monotonic() > deadline:
            return job.json()
        time.sleep(0.1)


@pytest.fixture
def planner(tmp_path, ray_local):  # noqa: F811
    """An app whose worker runs plans (their pilots: shard tasks on the test's local Ray)."""
    app = create_app(Settings(db=str(tmp_path / "r.db"), results=str(tmp_path / "res"),
                              plan_seconds=60), run_worker=True)
    with TestClient(app) as client:
        yield client


def test_plan_is_a_background_job_that_estimates_games_and_time(planner):
    idle = planner
    spec = small_spec()
    response = idle.post("/api/plans", json={"spec": spec, "half_width": 0.05, "delta": 0.1,
                                             "pilot_games": 100})
    assert response.status_code == 202, response.text
    job = response.json()
    assert job["status"] in ("queued", "running") and job["url"] == f"/api/plans/{job['id']}"
    done = _plan_result(idle, job["id"])
    assert done["status"] == "done" and done["error"] is None, done
    plan = done["result"]
    cells = 2 * (len(spec["players"]) if isinstance(spec["players"], list) else 1)
    assert len(plan["cells"]) == cells and plan["total_games"] == cells * plan["games_per_cell"]
    # a fair seat's share has sd at most 0.5: +-5 points needs at most (1.96 * 0.5 / 0.05)^2
    assert all(0 < c["games_for_half_width"] <= 385 for c in plan["cells"])
    assert any(c["games_for_delta"] for c in plan["cells"]) and plan["wall_seconds"] > 0
    assert plan["rule"] == "fixed" and plan["undecided_share"] is None  # no stop_when
    assert plan["expected_games_per_cell"] == plan["p90_games_per_cell"] == plan["games_per_cell"]
    assert plan["verdict"].startswith("About ")
    assert done["started_at"] >= done["created_at"] and done["finished_at"] >= done["started_at"]
    bad = idle.post("/api/plans", json={"spec": spec, "half_width": 0.7})
    assert bad.status_code == 422 and bad.json()["detail"][0]["field"] == "half_width"
    bad = idle.post("/api/plans", json={"spec": {**spec, "game": "nope"}})
    assert bad.status_code == 422 and bad.json()["detail"][0]["field"] == "spec.game"
    assert idle.get("/api/plans/no-such-plan").status_code == 404


def test_plan_jobs_report_a_too_slow_pilot_and_a_full_queue(tmp_path, ray_local):  # noqa: F811
    settings = Settings(db=str(tmp_path / "r.db"), results=str(tmp_path / "res"),
                        plan_seconds=0.001)  # the pilot's tasks are cut at once
    with TestClient(create_app(settings, run_worker=True)) as client:
        job = client.post("/api/plans", json={"spec": small_spec(), "pilot_games": 100}).json()
        failed = _plan_result(client, job["id"])
        assert failed["status"] == "failed" and failed["result"] is None
        assert re.search(r"the pilot played only \d+ games of arm '\w+' with \d players", 
                         failed["error"]) and "the plan's time limit is 0.001 s" in failed["error"]
        assert "MEEPLELAB_PLAN_SECONDS" in failed["error"]
    full = Settings(db=str(tmp_path / "full.db"), results=str(tmp_path / "res"), max_queued=1)
    with TestClient(create_app(full, run_worker=False)) as client:
        assert client.post("/api/plans", json={"spec": small_spec()}).status_code == 202
        busy = client.post("/api/plans", json={"spec": small_spec()})
        assert busy.status_code == 429 and int(busy.headers["Retry-After"]) > 0


def test_a_plan_whose_pilot_games_never_finish_fails_with_a_clear_message(planner):
    idle = planner
    """Games cut off by a simulator safety are no results, so a pilot of nothing but them
    gives no spread to plan from: the job fails saying why, with no NaN arithmetic."""
    spec = {"name": "cut", "game": "forbidden_desert", "players": 2, "games_per_arm": 100,
            "arms": {"cut": {"max_turns": 1}}, "seed": 5}
    job = idle.post("/api/plans", json={"spec": spec, "pilot_games": 20}).json()
    failed = _plan_result(idle, job["id"])
    assert failed["status"] == "failed" and failed["result"] is None
    assert failed["error"].startswith("PilotUnfinished: only 0 of the pilot's 20 games of arm "
                                      "'cut' with 2 players finished by the rules"), failed


def test_compare_defaults_to_the_baseline_and_rejects_unknown_arms(service):
    client, eid, root = service
    got = client.get(f"/api/experiments/{eid}/compare").json()
    assert got and {r["baseline"] for r in got} == {"a"} and {r["arm"] for r in got} == {"b"}
    other = client.get(f"/api/experiments/{eid}/compare", params={"baseline": "b"}).json()
    assert {r["arm"] for r in other} == {"a"}
    assert [r["win_share_diff"] for r in other] == pytest.approx(
        pipelines.compare(root, "b")["win_share_diff"].to_list())
    response = client.get(f"/api/experiments/{eid}/compare", params={"baseline": "zzz"})
    assert response.status_code == 422
    (item,) = response.json()["detail"]
    assert item["field"] == "baseline" and "'a'" in item["msg"] and "'b'" in item["msg"]


def test_figures_are_svg_documents_served_one_by_one_too(service):
    """The page's figures (GET .../figures) and each as a file (GET .../figures/{key}.svg):
    the same SVG; an unknown key is a 404 naming the keys there are."""
    client, eid, _ = service
    listed = client.get(f"/api/experiments/{eid}/figures").json()
    assert listed and all(f["svg"].startswith("<svg xmlns=") for f in listed)
    assert len({f["key"] for f in listed}) == len(listed)
    for figure in listed:
        answer = client.get(f"/api/experiments/{eid}/figures/{figure['key']}.svg")
        assert answer.status_code == 200 and answer.text == figure["svg"]
        assert answer.headers["content-type"].startswith("image/svg+xml")
    missing = client.get(f"/api/experiments/{eid}/figures/no-such-figure.svg")
    assert missing.status_code == 404 and listed[0]["key"] in missing.json()["detail"]
    assert client.get(f"/api/experiments/{eid}/figures/bad key!.svg").status_code == 422


def test_histograms_count_every_game_and_seat(service):
    client, eid, root = service
    hist = client.get(f"/api/experiments/{eid}/histograms", params={"bins": 15}).json()
    rows = pipelines.scan(root).collect()
    games = rows.group_by("arm", "players").len()
    expected = {(a, p): n for a, p, n in games.iter_rows()}
    length = hist["length"]
    assert len(length["edges"]) - 1 == len(length["series"][0]["counts"]) <= 15
    assert {(s["arm"], s["players"]): sum(s["counts"]) for s in length["series"]} == expected
    # the longest game falls in the last bin, the shortest in the first
    assert length["edges"][0] <= rows["length"].min() and length["edges"][-1] >= rows["length"].max()
    for s in hist["score"]["series"]:
        assert sum(s["counts"]) == expected[(s["arm"], s["players"])]
        assert 0 <= s["seat"] < s["players"]
    seats = sum(p for _, p in expected)
    assert len(hist["score"]["series"]) == seats
    assert client.get(f"/api/experiments/{eid}/histograms",
                      params={"bins": 0}).json()["detail"][0]["field"] == "query.bins"


def test_summary_csv_download(service):
    client, eid, root = service
    response = client.get(f"/api/experiments/{eid}/download/summary.csv")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/csv")
    assert "attachment" in response.headers["content-disposition"]
    table = pl.read_csv(io.BytesIO(response.content))
    expected = pipelines.summary(root)
    assert table.columns == expected.columns and table.height == expected.height
    assert table["win_share"].to_list() == pytest.approx(expected["win_share"].to_list())


def test_parquet_download_holds_every_row(service, tmp_path):
    client, eid, root = service
    response = client.get(f"/api/experiments/{eid}/download/results.parquet")
    assert response.status_code == 200
    path = tmp_path / "all.parquet"
    path.write_bytes(response.content)
    table = pl.from_arrow(pq.read_table(path))
    exp = client.get(f"/api/experiments/{eid}").json()
    assert table.height == exp["progress"]["total"]
    assert table.select("arm", "players", "game_index").unique().height == table.height
    assert table.sort("arm", "players", "game_index").equals(
        pipelines.scan(root).collect().select(table.columns).sort("arm", "players", "game_index"))


def test_zip_download_holds_the_shard_files(service):
    client, eid, root = service
    response = client.get(f"/api/experiments/{eid}/download/results.zip")
    assert response.status_code == 200 and response.headers["content-type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(response.content))
    names = sorted(archive.namelist())
    on_disk = sorted(str(p.relative_to(root)) for p in Path(root).rglob("shard-*.parquet"))
    assert names == on_disk and names
    assert all(re.fullmatch(r"arm=[^/]+/players=\d+/shard-\d{12}\.parquet", n) for n in names)
    rows = sum(pq.read_table(io.BytesIO(archive.read(n))).num_rows for n in names)
    assert rows == client.get(f"/api/experiments/{eid}").json()["progress"]["total"]


def test_docs_work_offline(idle):
    page = idle.get("/docs")
    assert page.status_code == 200
    assets = re.findall(r'(?:src|href)="([^"]+)"', page.text) + re.findall(r"url: '([^']+)'",
                                                                          page.text)
    assert assets and all(a.startswith("/") for a in assets), assets
    for asset in assets:
        assert idle.get(asset).status_code == 200, asset
    spec = idle.get("/openapi.json").json()
    for path in ("/api/games", "/api/experiments", "/api/experiments/{eid}",
                 "/api/experiments/{eid}/cancel", "/api/experiments/{eid}/compare"):
        assert path in spec["paths"]


def test_the_schema_says_what_the_service_checks_of_seats_balance_and_errors(idle):
    """What schemathesis found (ST202/ST105), pinned: a per-seat option is a bounded list of
    bounded integers; a balance target is a rate in (0, 1); POST /api/balance needs its
    section; an HTML route documents its errors as the JSON they are."""
    from core_cy.engine import contract

    schema = idle.get("/openapi.json").json()
    parts = schema["components"]["schemas"]
    seats = [o.json_schema() for name in core_cy.game_names()
             for o in core_cy.load(name).options if o.kind == "seats"]
    assert seats
    for option in seats:
        assert option["type"] == "array" and option["maxItems"] == contract.SEATS_LIMIT
        assert option["items"]["type"] == "integer" and "minimum" in option["items"]
    number = [b for b in parts["Balance"]["properties"]["target"]["anyOf"]
              if b.get("type") == "number"]
    assert number == [{"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1}]
    body = schema["paths"]["/api/balance"]["post"]["requestBody"]["content"]
    ref = body["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    assert "balance" in parts[ref]["allOf"][1]["required"]
    report = schema["paths"]["/api/experiments/{eid}/report.html"]["get"]["responses"]
    assert list(report["200"]["content"]) == ["text/html"]
    for code in ("404", "409", "422"):
        assert list(report[code]["content"]) == ["application/json"], code
    # what the schema allows there, the service takes; what it refuses, it refuses with 422
    missing = idle.post("/api/balance", json=small_spec())
    assert missing.status_code == 422 and missing.json()["detail"][0]["field"] == "balance"
    rate = idle.post("/api/balance", json={**small_spec(), "balance": {"option": "x",
                                                                        "target": 0}})
    assert rate.status_code == 422
    assert any(e["field"] == "balance.target" for e in rate.json()["detail"])


def test_dashboard_pages_and_assets_are_local(idle):
    for url in ("/", "/new", "/experiments/anything"):
        page = idle.get(url)
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        for asset in re.findall(r'(?:src|href)="(/static/[^"]+)"', page.text):
            assert idle.get(asset).status_code == 200, asset
    # no page or script loads anything from another host
    for path in (DASHBOARD / "templates").glob("*.html"):
        assert not re.search(r'(src|href)="(https?:)?//', path.read_text()), path
    for path in (DASHBOARD / "static").glob("*"):
        assert not re.search(r"https?://(?!www\.w3\.org/2000/svg)", path.read_text()), path


def test_games_of_the_catalogue_only_come_from_core_cy():
    """The service names no game: every game appears through core_cy's catalogue."""
    services = Path(__file__).resolve().parents[2] / "services"
    sources = [services / name for name in ("app.py", "worker.py", "datasets.py", "registry.py")]
    sources += [*(DASHBOARD / "static").glob("*.js"), *(DASHBOARD / "templates").glob("*.html")]
    for game in core_cy.game_names():
        for path in sources:
            assert game not in path.read_text().lower(), (game, path)
    assert INFO["rules"]["properties"]


def test_serve_subcommand_defaults_to_loopback(monkeypatch):
    import services.app
    from services import cli

    calls = []
    monkeypatch.setattr(services.app, "serve", lambda host, port, demo, insecure:
                        calls.append((host, port, demo, insecure)))
    assert cli.main(["serve"]) == 0
    assert cli.main(["serve", "--host", "0.0.0.0", "--port", "9001", "--insecure"]) == 0
    assert cli.main(["demo"]) == 0
    assert calls == [(None, None, False, False), ("0.0.0.0", 9001, False, True),
                     (None, None, True, False)]


def test_serve_refuses_a_public_address_without_a_token(monkeypatch, tmp_path, capsys):
    """Loopback needs no token; any other address needs MEEPLELAB_TOKEN or --insecure."""
    from services import cli

    import socket

    served = []
    with socket.socket() as free:  # a port nobody listens on (8000 may be a user's service)
        free.bind(("127.0.0.1", 0))
        monkeypatch.setenv("MEEPLELAB_PORT", str(free.getsockname()[1]))
    monkeypatch.setenv("MEEPLELAB_DB", str(tmp_path / "db.sqlite"))
    monkeypatch.delenv("MEEPLELAB_TOKEN", raising=False)
    monkeypatch.setattr("uvicorn.run", lambda application, **kw: served.append(kw["host"]))
    assert cli.main(["serve", "--host", "0.0.0.0"]) == 2
    assert "MEEPLELAB_TOKEN" in capsys.readouterr().err and served == []
    assert cli.main(["serve", "--host", "0.0.0.0", "--insecure"]) == 0
    assert cli.main(["serve"]) == 0
    monkeypatch.setenv("MEEPLELAB_TOKEN", "s3cret-s3cret-s3cret")
    assert cli.main(["serve", "--host", "0.0.0.0"]) == 0
    assert served == ["0.0.0.0", "127.0.0.1", "0.0.0.0"]


def test_breakdown_by_an_outcome_column_and_its_errors(service):
    client, eid, root = service
    got = client.get(f"/api/experiments/{eid}/breakdown", params={"by": "end_reason"}).json()
    expected = pipelines.breakdown(root, "end_reason")
    assert [r["value"] for r in got] == expected["value"].to_list()
    assert sum(r["games"] for r in got) == pipelines.results(root).collect().height
    bad = client.get(f"/api/experiments/{eid}/breakdown", params={"by": "no_such_column"})
    assert bad.status_code == 422 and bad.json()["detail"][0]["loc"] == ["query", "by"]
    schema = client.get("/openapi.json").json()
    route = schema["paths"]["/api/experiments/{eid}/breakdown"]["get"]
    (by,) = [p["schema"]["$ref"] for p in route["parameters"] if p["name"] == "by"]
    columns = schema["components"]["schemas"][by.rsplit("/", 1)[1]]["enum"]
    assert {"end_reason", "seat_agent"} <= set(columns)  # an enum of outcome columns
    other = {name for g in core_cy.game_names() for name in core_cy.load(g).seat_outcome_names}
    other -= set(core_cy.load(client.get(f"/api/experiments/{eid}").json()["game"])
                 .seat_outcome_names)
    bad = client.get(f"/api/experiments/{eid}/breakdown",
                     params={"by": f"seat_{sorted(other)[0]}"})  # another game's column
    assert bad.status_code == 422 and bad.json()["detail"][0]["field"] == "by"
    bad = client.get(f"/api/experiments/{eid}/breakdown", params={"by": "end_reason",
                                                                  "team": "true"})
    assert bad.status_code == 422 and bad.json()["detail"][0]["field"] == "team"
    assert client.get("/api/experiments/nope/breakdown", params={"by": "x"}).status_code == 404
