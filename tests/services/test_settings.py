"""The service's one Settings object, its version from the package metadata, and the promise
that the API process does not import Ray until work is submitted."""
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from product import PRODUCT, product_path
from fastapi.testclient import TestClient
from pydantic import ValidationError
from ray_support import ray_local  # noqa: F401  (session fixture)

from services import cli
from services.app import create_app
from services.settings import MIN_TOKEN_CHARS, PATH_PREFIXES, VERSION, Settings, is_loopback

ROOT = Path(__file__).resolve().parents[2]
ENV = ("MEEPLELAB_DB", "MEEPLELAB_RESULTS", "RAY_ADDRESS", "MEEPLELAB_MAX_GAMES",
       "MEEPLELAB_TOKEN", "MEEPLELAB_PROTECT_READS", "MEEPLELAB_HOST", "MEEPLELAB_PORT")


@pytest.fixture
def clean_env(monkeypatch):
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_defaults_and_environment(clean_env):
    s = Settings()
    assert (s.db, s.results, s.ray_address, s.host, s.port) == (
        "meeplelab.db", "results", None, "127.0.0.1", 8000)
    assert s.max_games == 10**9 and s.max_body_bytes == 1 << 20 and not s.auth_enabled
    clean_env.setenv("MEEPLELAB_DB", "/data/x.db")
    clean_env.setenv("MEEPLELAB_RESULTS", "s3://bucket/prefix")
    clean_env.setenv("RAY_ADDRESS", "ray://head:10001")
    clean_env.setenv("MEEPLELAB_MAX_GAMES", "5000")
    s = Settings()
    assert (s.db, s.results, s.ray_address, s.max_games) == (
        "/data/x.db", "s3://bucket/prefix", "ray://head:10001", 5000)


def test_a_bad_setting_names_itself(clean_env):
    clean_env.setenv("MEEPLELAB_MAX_GAMES", "lots")
    with pytest.raises(ValueError, match="max_games"):
        Settings()


def test_token_is_one_value_or_a_file_of_tokens(clean_env, tmp_path):
    assert Settings(token="s3cret-s3cret-s3cret").tokens == ("s3cret-s3cret-s3cret",)
    path = tmp_path / "tokens"
    path.write_text("# team tokens\nalpha-token-of-tests\n\n  beta-token-of-the-tests  \n")
    clean_env.setenv("MEEPLELAB_TOKEN", str(path))
    assert Settings().tokens == ("alpha-token-of-tests", "beta-token-of-the-tests")
    # never printed in logs
    assert "s3cret-s3cret-s3cret" not in repr(Settings(token="s3cret-s3cret-s3cret"))


def test_loopback_addresses():
    assert all(map(is_loopback, ["127.0.0.1", "127.3.2.1", "::1", "localhost"]))
    assert not any(map(is_loopback, ["0.0.0.0", "::", "10.0.0.5", "example.org"]))


def test_version_is_the_package_metadata(tmp_path):
    assert VERSION == metadata.version("meeplelab")
    app = create_app(Settings(db=str(tmp_path / "r.db"), results=str(tmp_path)),
                     run_worker=False)
    with TestClient(app) as client:
        assert client.get("/openapi.json").json()["info"]["version"] == VERSION
    written = [p for p in ("services/app.py", "core_cy/engine/game.py", "core_cy/play/batch.py")
               if f'"{VERSION}"' in (ROOT / p).read_text()]
    assert written == [], f"a version string is written in {written}"


def test_importing_the_api_does_not_import_ray():
    code = "import services.app, sys; assert 'ray' not in sys.modules, 'ray was imported'"
    subprocess.run([sys.executable, "-c", code], cwd=PRODUCT, check=True,
                   env={"PYTHONPATH": product_path(), "PATH": "/usr/bin:/bin"})


# ---- a token is never printed -------------------------------------------------------------
MARK = "Zq9Xk"  # in every generated value, in no message: found only where a value leaks
# what a token setting may hold that is not a file: any characters (space, '/', control
# characters, non-ASCII), any length; a value starting as a path is a file name, not a token
TOKEN_VALUES = st.builds(lambda a, b: a + MARK + b, st.text(max_size=20), st.text(max_size=30)) \
    .filter(lambda v: not v.strip().startswith(PATH_PREFIXES) and "\x00" not in v)


@settings(max_examples=200, deadline=None)
@given(value=TOKEN_VALUES, name=st.sampled_from(["token", "admin_token"]))
def test_a_token_setting_is_accepted_or_refused_without_being_echoed(value, name):
    try:
        accepted = Settings(**{name: value})
    except ValidationError as refused:
        token = value.strip()
        assert len(token) < MIN_TOKEN_CHARS or "/" in token or \
            any(c.isspace() for c in token)
        # what a command prints of it: the error, its repr, each message (never the input)
        shown = [str(refused), repr(refused),
                 json.dumps(refused.errors(include_input=False), default=str)]
        assert not any(MARK in text for text in shown), shown
        assert "refusing to start" in str(refused)
    else:
        assert accepted.tokens == (value.strip(),)
        assert MARK not in repr(accepted) and MARK not in str(accepted.model_dump())


MALFORMED = ["Zq9Xk-short", "Zq9Xk token with spaces", "etc/Zq9Xk/token"]


@pytest.mark.parametrize("value", MALFORMED)
def test_report_with_a_malformed_token_setting_never_prints_it(tmp_path, value):
    """`meeplelab report ID` reads the registry, no token: the setting is not its business,
    and whatever it says, it says without the token (once a traceback showed it)."""
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": product_path(), "MEEPLELAB_TOKEN": value,
           "MEEPLELAB_ADMIN_TOKEN": value, "MEEPLELAB_DB": str(tmp_path / "r.db")}
    done = subprocess.run([sys.executable, "-m", "services.cli", "report", "no-such-id"],
                          cwd=PRODUCT, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "no-such-id is neither a results folder nor an experiment" in done.stderr
    assert MARK not in done.stdout + done.stderr and "Traceback" not in done.stderr


def test_run_uses_no_token_so_a_malformed_one_does_not_refuse_a_spec(ray_local, tmp_path,  # noqa: F811
                                                                      monkeypatch, capsys):
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"name": "tokenless", "game": "maori", "players": 3,
                                "agents": "random", "games_per_arm": 40, "seed": 5}))
    for value in MALFORMED:
        monkeypatch.setenv("MEEPLELAB_TOKEN", value)
        assert cli.main(["run", str(spec), "--out", str(tmp_path / "out")]) == 0
        captured = capsys.readouterr()
        assert MARK not in captured.out + captured.err
        assert "40 games per arm" in captured.err
