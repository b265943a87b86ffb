"""The smaller holes of issue 38's probe, closed: every response forbids framing and type
guessing, CSV cells a spreadsheet would run as formulas come back as text, a token setting
is a file or a token of 16 characters (anything else refuses to start), and `meeplelab
report` refuses a spec.json that does not describe the folder's rows in one line."""
import io
import json
import subprocess
import sys

import polars as pl
import pytest
from fastapi.testclient import TestClient
from product import PRODUCT, product_path
from ray_support import ray_local  # noqa: F401  (session fixture)
from service_support import PLAYERS, enum_option, small_spec, wait_for

from services.app import create_app
from services.datasets import csv_cell, csv_text
from services.settings import Settings

FRAMING = {"x-frame-options": "DENY", "x-content-type-options": "nosniff"}
FORMULAS = ["=1+1", "@SUM(A1)", "+1+2", "-1+2"]


# ---- security headers on every response ----------------------------------------------------
def _secured(response) -> bool:
    headers = {k.lower(): v for k, v in response.headers.items()}
    return all(headers.get(k) == v for k, v in FRAMING.items()) and \
        "frame-ancestors 'none'" in headers.get("content-security-policy", "")


def test_every_response_forbids_framing_and_type_guessing(tmp_path):
    """Pages, assets, API answers, errors of the routes and refusals of the middlewares (415,
    413, 405) all carry X-Frame-Options DENY, CSP frame-ancestors 'none' and nosniff."""
    app = create_app(Settings(db=str(tmp_path / "r.db"), results=str(tmp_path / "res"),
                              max_body_bytes=2048), run_worker=False)
    with TestClient(app) as client:
        answers = [client.get("/"), client.get("/api/games"), client.get("/docs"),
                   client.get("/openapi.json"), client.get("/healthz"),
                   client.get("/api/experiments/no-such-experiment"),
                   client.post("/api/experiments", json={"game": "no-such-game"}),
                   client.post("/api/experiments", content=b"x",
                               headers={"content-type": "text/plain"}),
                   client.post("/api/experiments", content=b"[" * 5000,
                               headers={"content-type": "application/json"}),
                   client.delete("/api/games")]
        assert {a.status_code for a in answers} >= {200, 404, 405, 413, 415, 422}
        for answer in answers:
            assert _secured(answer), (answer.request.url, answer.headers)


def test_an_unanswered_error_or_a_panic_is_a_json_500(tmp_path):
    """A route's bug or a library's panic (Polars' PanicException is no Exception) answers
    JSON 500 naming its kind, with the security headers, never a plain-text page."""
    app = create_app(db=str(tmp_path / "r.db"), results=str(tmp_path / "res"),
                     run_worker=False)

    @app.get("/test-bug")
    def bug():
        raise RuntimeError("a bug")

    @app.get("/test-panic")
    def panic():
        raise pl.exceptions.PanicException("index out of bounds")

    with TestClient(app, raise_server_exceptions=False) as client:
        for path, kind in (("/test-bug", "RuntimeError"), ("/test-panic", "PanicException")):
            answer = client.get(path)
            assert answer.status_code == 500 and _secured(answer)
            assert answer.headers["content-type"] == "application/json"
            assert kind in answer.json()["detail"]
        assert client.get("/healthz").status_code == 200  # the service goes on


# ---- CSV cells that a spreadsheet would run --------------------------------------------------
@pytest.mark.parametrize("text", FORMULAS + ["\tx", "\rx"])
def test_a_formula_cell_is_escaped(text):
    assert csv_cell(text) == "'" + text
    table = pl.read_csv(io.StringIO(csv_text(pl.DataFrame({text: [text], "n": [-1.5]}))))
    assert table.columns == ["'" + text, "n"]
    assert table["'" + text].to_list() == ["'" + text] and table["n"].to_list() == [-1.5]


def test_plain_cells_and_numbers_are_unchanged():
    frame = pl.DataFrame({"arm": ["a", "b 1", "x=1"], "delta": [-0.25, 0.5, -3.0],
                          "seat": [0, 1, 2]})
    assert pl.read_csv(io.StringIO(csv_text(frame))).equals(frame)


def test_the_summary_csv_of_formula_arms_holds_text(tmp_path):
    """Arms named as formulas (=1+1, @SUM(A1), +1+2, -1+2) come back from the summary CSV
    download as text cells (a leading apostrophe), every other cell as it was."""
    name, values = enum_option()
    spec = small_spec(arms={FORMULAS[0]: {name: values[0]},
                            **{arm: {name: values[1]} for arm in FORMULAS[1:]}},
                      baseline=FORMULAS[0], games_per_arm=100, players=PLAYERS)
    app = create_app(db=str(tmp_path / "r.db"), results=str(tmp_path / "res"))
    with TestClient(app) as client:
        eid = client.post("/api/experiments", json=spec).json()["id"]
        assert wait_for(client, eid)["status"] == "done"
        text = client.get(f"/api/experiments/{eid}/download/summary.csv").text
    table = pl.read_csv(io.StringIO(text))
    assert sorted(set(table["arm"].to_list())) == sorted("'" + arm for arm in FORMULAS)
    for line in text.splitlines():
        assert not any(cell.startswith(("=", "+", "-", "@")) and not _number(cell)
                       for cell in line.split(",")), line


def _number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


# ---- token settings ----------------------------------------------------------------------
@pytest.mark.parametrize("value, words", [
    ("Q", "of 1 character:"),
    ("short-token", "of 11 characters"),
    ("etc/meeplelab/tokens", "with '/'"),
    ("http://example.org/tokens", "with '/'"),
    ("a token with spaces in it", "with a space"),
])
def test_a_token_setting_that_is_neither_a_file_nor_a_long_token_refuses(value, words):
    with pytest.raises(ValueError, match="refusing to start") as refused:
        Settings(token=value)
    (error,) = refused.value.errors()
    assert words in error["msg"] and value not in error["msg"]  # a token is never echoed
    with pytest.raises(ValueError, match="refusing to start"):
        Settings(admin_token=value)


def test_file_forms_name_a_file_of_tokens(tmp_path):
    path = tmp_path / "tokens"
    path.write_text("a-first-token-of-tests\n# a comment\na-second-token-of-tests\n")
    expected = ("a-first-token-of-tests", "a-second-token-of-tests")
    for value in (f"file:{path}", f"file://{path}", f"file://localhost{path}", str(path)):
        assert Settings(token=value).tokens == expected, value
    with pytest.raises(ValueError, match="cannot be read"):
        Settings(token="file:///no/such/tokens")
    with pytest.raises(ValueError, match="another host"):
        Settings(token=f"file://elsewhere{path}")
    path.write_text("a-first-token-of-tests\nshort\n")
    with pytest.raises(ValueError, match="line 2 of") as refused:
        Settings(token=str(path))
    assert "short" not in refused.value.errors()[0]["msg"]


def test_a_token_of_sixteen_characters_is_accepted():
    assert Settings(token="0123456789abcdef").tokens == ("0123456789abcdef",)


def test_serve_with_a_short_token_refuses_to_start_in_one_message(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": product_path(),
           "MEEPLELAB_TOKEN": "etc/meeplelab/tokens", "MEEPLELAB_DB": str(tmp_path / "r.db")}
    done = subprocess.run([sys.executable, "-m", "services.cli", "serve", "--port", "1"],
                          cwd=PRODUCT, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "refusing to start" in done.stderr
    assert "Traceback" not in done.stderr and "etc/meeplelab/tokens" not in done.stderr


# ---- meeplelab report checks spec.json against the rows ---------------------------------
@pytest.fixture(scope="module")
def results_folder(tmp_path_factory, ray_local):  # noqa: F811
    """A finished `meeplelab run` folder (its spec.json beside the rows): the command run in
    this process, on the suite's local Ray (the reports below are processes of their own)."""
    from services import cli

    root = tmp_path_factory.mktemp("report")
    spec = small_spec(games_per_arm=100)
    (root / "spec.json").write_text(json.dumps(spec))
    assert cli.main(["run", str(root / "spec.json"), "--out", str(root / "out"),
                     "--workers", "1"]) == 0
    (folder,) = [p for p in (root / "out").iterdir() if p.is_dir()]
    return folder, spec


def _cli(args, cwd):
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": product_path(), "HOME": str(cwd)}
    return subprocess.run([sys.executable, "-m", "services.cli", *args], cwd=PRODUCT, env=env,
                          capture_output=True, text=True, timeout=600)


def _report_with(folder, spec_text: str, tmp_path):
    path = tmp_path / "spec.json"
    path.write_text(spec_text)
    return _cli(["report", str(folder), "--spec", str(path), "-o", str(tmp_path / "r.html")],
                tmp_path)


def test_report_writes_for_the_spec_of_its_rows(results_folder, tmp_path):
    folder, spec = results_folder
    done = _report_with(folder, json.dumps(spec), tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "r.html").stat().st_size > 0


def test_report_refuses_another_games_spec_in_one_line(results_folder, tmp_path):
    import core_cy

    folder, spec = results_folder
    other = next(g for g in core_cy.game_names() if g != spec["game"])
    players = core_cy.load(other).info()["min_players"]
    done = _report_with(folder, json.dumps({"name": "other", "game": other, "players": players,
                                            "games_per_arm": 10}), tmp_path)
    assert done.returncode == 2 and not (tmp_path / "r.html").exists()
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert spec["game"] in done.stderr and other in done.stderr


def test_report_refuses_a_spec_without_the_rows_arms(results_folder, tmp_path):
    folder, spec = results_folder
    name, values = enum_option()
    renamed = dict(spec, arms={"a": {name: values[0]}, "c": {name: values[1]}})
    done = _report_with(folder, json.dumps(renamed), tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "'b'" in done.stderr and "Traceback" not in done.stderr


def test_report_refuses_a_deeply_nested_spec_in_one_line(results_folder, tmp_path):
    folder, _ = results_folder
    done = _report_with(folder, "[" * 200_000 + "]" * 200_000, tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "nested too deeply" in done.stderr and "Traceback" not in done.stderr


# ---- a local Ray: loopback only, a private token file ---------------------------------------
LISTENING = r'''
import json, os, ray
import psutil  # Ray's own copy (ray puts its third-party folder on the path)
from services.runner import init_ray
init_ray(num_cpus=1)
@ray.remote
def pid():
    return os.getpid()
ray.get(pid.remote())
found = set()
for process in [psutil.Process()] + psutil.Process().children(recursive=True):
    try:
        found |= {(c.laddr.ip, process.name()) for c in process.net_connections("inet")
                  if c.status == psutil.CONN_LISTEN}
    except psutil.Error:
        pass
token = os.path.expanduser("~/.ray/auth_token")
print(json.dumps({"listening": sorted(found), "token_mode": oct(os.stat(token).st_mode & 0o777)}))
ray.shutdown()
'''


def _loopback(address: str) -> bool:
    import ipaddress

    ip = ipaddress.ip_address(address)
    return ip.is_loopback or bool(getattr(ip, "ipv4_mapped", None) and ip.ipv4_mapped.is_loopback)


def test_a_local_ray_listens_on_loopback_only_and_its_token_file_is_private(tmp_path):
    """GCS, raylet, workers and the dashboard and runtime-env agents of the local Ray that
    `meeplelab run` and `serve` start listen on loopback addresses only, and the token file
    Ray's token auth reads (~/.ray/auth_token) is the user's alone."""
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": product_path(), "HOME": str(tmp_path),
           "RAY_raylet_start_wait_time_s": "120"}
    done = subprocess.run([sys.executable, "-c", LISTENING], cwd=PRODUCT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    names = {name for _, name in seen["listening"]}
    assert {"gcs_server", "raylet"} <= names, seen
    assert [s for s in seen["listening"] if not _loopback(s[0])] == [], seen
    assert seen["token_mode"] == "0o600"


def test_an_existing_ray_token_file_is_made_private(tmp_path, monkeypatch):
    from services.runner import local_ray_private

    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH",
                 "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"):
        monkeypatch.delenv(name, raising=False)
    token = tmp_path / ".ray" / "auth_token"
    token.parent.mkdir()
    token.write_text("an-existing-token-of-the-user")
    token.chmod(0o644)
    from ray._private import ray_constants

    monkeypatch.setattr(ray_constants, "ENABLE_RAY_CLUSTER", ray_constants.ENABLE_RAY_CLUSTER)
    local_ray_private()
    assert token.stat().st_mode & 0o777 == 0o600
    assert token.read_text() == "an-existing-token-of-the-user"
