"""The product as a user installs it: the release wheel (what `pip install .` and the
Dockerfile build) in a fresh virtualenv outside the checkout, used from an empty folder.

The wheel is scripts/test.sh's build/wheel/ (MEEPLELAB_WHEEL); run alone, the test builds
one.  The virtualenv takes its dependencies from the package index (pip's cache makes a
second run quick).  Every command runs with the checkout out of reach: another working
directory and an environment without PYTHONPATH."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.deploy

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("core_cy", "services", "pipelines", "dashboards")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    given = os.environ.get("MEEPLELAB_WHEEL")
    if given:
        return Path(given)
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                    "--wheel-dir", str(out), str(ROOT)], check=True, timeout=1200,
                   env=_clean_env())
    return next(out.glob("meeplelab-*.whl"))


def _clean_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTHON", "MEEPLELAB_", "RAY_", "VIRTUAL_ENV"))}
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> Path:
    """A fresh virtualenv with the wheel and its dependencies (no system site-packages)."""
    home = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", str(home)], check=True, timeout=300)
    subprocess.run([str(home / "bin" / "python"), "-m", "pip", "install", "--quiet",
                    str(wheel)], check=True, timeout=1800, env=_clean_env(), cwd=home)
    return home


@pytest.fixture()
def user(venv, tmp_path):
    """Runs `meeplelab ...` from an empty folder, as a user of the installed package."""
    empty = tmp_path / "elsewhere"
    empty.mkdir()
    env = _clean_env(MEEPLELAB_DB=str(tmp_path / "registry.db"),
                     MEEPLELAB_RESULTS=str(tmp_path / "results"),
                     PATH=f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}")

    def run(*args, timeout=600, **kw):
        return subprocess.run([str(venv / "bin" / "meeplelab"), *args], cwd=empty, env=env,
                              capture_output=True, text=True, timeout=timeout, **kw)

    run.cwd, run.env, run.bin = empty, env, venv / "bin" / "meeplelab"
    return run


def test_the_wheel_holds_every_package_and_its_data(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    sources = {str(p.relative_to(ROOT).with_suffix("")) for package in PACKAGES
               for p in (ROOT / package).rglob("__init__.py")}
    installed = {n[:-len(".py")] for n in names if n.endswith("__init__.py")}
    assert sources <= installed, f"the wheel leaves out {sorted(sources - installed)}"
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*"):
            if path.suffix in (".json", ".toml", ".html", ".js", ".css", ".h", ".pxd"):
                assert str(path.relative_to(ROOT)) in names, f"the wheel lacks {path}"
    engines = [n for n in names if n.endswith(".so") or n.endswith(".pyd")]
    assert len(engines) == len(list((ROOT / "core_cy").rglob("*.pyx")))


def test_games_lists_the_catalogue_and_the_release_build(user):
    out = user("games")
    assert out.returncode == 0, out.stderr
    assert "release build" in out.stdout
    for name in ("maori", "golden_island", "reef_encounter", "forbidden_desert", "mondo"):
        assert f"\n{name}: " in out.stdout


def test_a_tiny_run_writes_results(user):
    spec = user.cwd / "tiny.json"
    spec.write_text(json.dumps({"name": "tiny", "game": "maori", "players": 2,
                                "agents": ["random", "random"], "games_per_arm": 200,
                                "shard_size": 100, "seed": 3}))
    out = user("run", spec.name, "--out", "res", "--workers", "1")
    assert out.returncode == 0, out.stdout + out.stderr
    assert list((user.cwd / "res").rglob("*.parquet"))
    assert "200 games" in out.stdout


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> tuple[int, str]:
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.status, r.read().decode()


def _serving(user, *args, port: int):
    return subprocess.Popen([str(user.bin), *args, "--port", str(port)], cwd=user.cwd,
                            env=user.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)


def _wait_until(check, timeout: float, proc):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stdout.read()
        try:
            result = check()
            if result:
                return result
        except OSError:
            pass
        time.sleep(0.5)
    raise AssertionError("timed out")


def _stop(proc):
    proc.terminate()
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def test_serve_answers_the_api_the_dashboard_and_the_docs(user):
    port = _free_port()
    proc = _serving(user, "serve", port=port)
    base = f"http://127.0.0.1:{port}"
    try:
        status, body = _wait_until(lambda: _get(f"{base}/api/games"), 180, proc)
        assert status == 200
        games = json.loads(body)
        assert {g["name"] for g in games} >= {"maori", "mondo"}
        assert {g["build"] for g in games} == {"release"}
        status, page = _get(f"{base}/")
        assert status == 200 and "<html" in page.lower()
        status, docs = _get(f"{base}/docs")
        assert status == 200 and "swagger" in docs.lower()
    finally:
        _stop(proc)


def test_demo_starts_and_makes_progress(user):
    port = _free_port()
    proc = _serving(user, "demo", port=port)
    base = f"http://127.0.0.1:{port}"

    def progressed():
        status, body = _get(f"{base}/api/experiments")
        listed = json.loads(body)
        items = listed["items"] if isinstance(listed, dict) else listed
        return [e for e in items if (e.get("progress") or {}).get("done", 0) > 0]

    try:
        assert _wait_until(progressed, 420, proc)
    finally:
        _stop(proc)
