"""The service's one Settings object, its version from the package metadata, and the promise
that the API process does not import Ray until work is submitted."""
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from product import PRODUCT, product_path
from fastapi.testclient import TestClient

from services.app import create_app
from services.settings import VERSION, Settings, is_loopback

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
