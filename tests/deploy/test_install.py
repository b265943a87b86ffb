"""The product as a user installs it: the release wheel (what `pip install .` and the
Dockerfile build) in a fresh virtualenv, used as the README says: from inside a clean clone
of this repository (the README's literal path: `pip install . && meeplelab demo`, then
`meeplelab run examples/...`), and from an empty folder.

The wheel is scripts/test.sh's build/wheel/ (MEEPLELAB_WHEEL); run alone, the test builds
one.  The virtualenv takes its dependencies from the package index (pip's cache makes a
second run quick).  Every command runs with an environment without PYTHONPATH; inside the
clone the uncompiled sources sit in the working directory, where neither the command nor
its Ray workers may import them."""
from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
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
    """A fresh virtualenv with the wheel and its dependencies (no system site-packages).
    --no-compile: pip would byte-compile every module of every dependency (Ray's thousands:
    half of the install's CPU time); the commands compile what they import, as Python does
    for any module without a cached .pyc."""
    home = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", str(home)], check=True, timeout=300)
    subprocess.run([str(home / "bin" / "python"), "-m", "pip", "install", "--quiet",
                    "--no-compile", str(wheel)], check=True, timeout=1800, env=_clean_env(),
                   cwd=home)
    return home


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """A clean clone of this repository (its committed tree, nothing built in it)."""
    where = tmp_path_factory.mktemp("clone") / "meeplelab"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(where)], check=True,
                   timeout=300, env=_clean_env())
    assert (where / "services" / "runner.py").exists() and not list(where.rglob("*.so"))
    return where


def _user(venv: Path, tmp_path: Path, cwd: Path):
    """Runs `meeplelab ...` in `cwd`, as a user of the installed package."""
    env = _clean_env(MEEPLELAB_DB=str(tmp_path / "registry.db"),
                     MEEPLELAB_RESULTS=str(tmp_path / "results"),
                     PATH=f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}")

    def run(*args, timeout=600, **kw):
        return subprocess.run([str(venv / "bin" / "meeplelab"), *args], cwd=cwd, env=env,
                              capture_output=True, text=True, timeout=timeout, **kw)

    run.cwd, run.env, run.bin = cwd, env, venv / "bin" / "meeplelab"
    return run


@pytest.fixture()
def user(venv, tmp_path):
    """Runs `meeplelab ...` from an empty folder."""
    empty = tmp_path / "elsewhere"
    empty.mkdir()
    return _user(venv, tmp_path, empty)


@pytest.fixture(params=["inside a clone", "from an empty folder"])
def anywhere(request, venv, clone, tmp_path):
    """Runs `meeplelab ...` inside a clean clone (the README's path), or from an empty folder
    holding a copy of the examples."""
    if request.param == "inside a clone":
        return _user(venv, tmp_path, clone)
    empty = tmp_path / "elsewhere"
    (empty / "examples").mkdir(parents=True)
    for example in (ROOT / "examples").glob("*.toml"):
        (empty / "examples" / example.name).write_text(example.read_text())
    return _user(venv, tmp_path, empty)


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


class _Lines(threading.Thread):
    """The lines a process prints, as they come (with the seconds since it started)."""

    def __init__(self, proc):
        super().__init__(daemon=True)
        self.proc, self.lines, self.start_time = proc, [], time.monotonic()
        self.start()

    def run(self):
        for line in self.proc.stdout:
            self.lines.append((time.monotonic() - self.start_time, line.rstrip("\n")))

    def first(self, pattern: str) -> tuple[float, str] | None:
        return next(((t, line) for t, line in self.lines if re.search(pattern, line)), None)

    def text(self) -> str:
        return "\n".join(line for _, line in self.lines)


def test_demo_answers_its_first_question(anywhere):
    """`meeplelab demo`: the first experiment is played, decided and answered in words, the
    same answer the API gives."""
    port = _free_port()
    proc = _serving(anywhere, "demo", port=port)
    out = _Lines(proc)
    base = f"http://127.0.0.1:{port}"
    try:
        def answered():
            assert proc.poll() is None, out.text()
            found = out.first(r"^\[1/2\] done after [\d,]+ games\. The answer:")
            return found and len([t for t, line in out.lines if line.startswith("[1/2] ")
                                  and t >= found[0]]) >= 2
        _wait_until(answered, 900, proc)
        assert "Traceback" not in out.text() and "failed" not in out.text(), out.text()
        lines = [(t, line) for t, line in out.lines if line.startswith("[1/2] ")]
        at, said = lines[lines.index(out.first(r"The answer:")) + 1]
        answer = said[len("[1/2] "):]
        print(f"\n{anywhere.cwd}: the first answer at {at:.0f} s: {answer}")
        status, body = _get(f"{base}/api/experiments")
        listed = json.loads(body)
        items = listed["items"] if isinstance(listed, dict) else listed
        first = next(e for e in items if e["name"] == "demo-desert-difficulty")
        assert first["status"] == "done"
        status, body = _get(f"{base}/api/experiments/{first['id']}/headline")
        head = json.loads(body)
        assert head["decided"] is True
        (item,) = [i for b in head["blocks"] if b["kind"] == "arms" for i in b["items"]]
        assert item["decided"] and answer == item["answer"]  # one answer from every door
        assert re.search(r"[Nn]ormal .* novice for a team of 4 under deep_search: the team "
                         r"wins [\d.]+% \[[\d.]+%, [\d.]+%\] against [\d.]+% ", answer), answer
        assert head["verdict"] == f"{item['title']}: {item['short']}"
    finally:
        _stop(proc)


def test_run_an_example_prints_its_answer(anywhere):
    """`meeplelab run examples/golden_island_notes.toml`: the tables, then the answer per
    question, each naming its arm, players and agent with an interval; the figures agree
    with the library's (pipelines.summary in the same virtualenv)."""
    out = anywhere("run", "examples/golden_island_notes.toml", timeout=900)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "ModuleNotFoundError" not in out.stderr
    block = out.stdout.split("\nthe answer:\n", 1)[1].split("\n\n", 1)[0]
    answer = [" ".join(a.split()) for a in re.split(r"\n(?=  \S)", block)]  # lines unwrapped
    assert len(answer) == 3 * 2 + 3  # seat balance per arm and player count, then the arms
    for players in (2, 3, 4):
        assert sum(f"{players} players, greedy" in line for line in answer) == 3
    assert all(re.search(r"\[[+-]?[\d.]+%?, [+-]?[\d.]+%?\]", line) for line in answer)
    folder = re.search(r"-> (\S+)", out.stderr).group(1)
    python = anywhere.bin.parent / "python"
    shares = subprocess.run(  # -P: the clone's sources are not the library either
        [str(python), "-P", "-c", "import sys, json, pipelines; t = pipelines.summary("
         "sys.argv[1]); print(json.dumps([f'{100 * w:.1f}%' for w in t['win_share']]))",
         folder], cwd=anywhere.cwd, env=anywhere.env, capture_output=True, text=True,
        timeout=300)
    assert shares.returncode == 0, shares.stderr
    library = set(json.loads(shares.stdout))
    rows = re.findall(r"^  \S+ +(\d+) +[\d,]+ +([\d.]+%) \[", out.stdout, flags=re.M)
    assert len(rows) == 2 * (2 + 3 + 4)  # every seat of both arms at every player count
    assert {share for _, share in rows} <= library  # the terminal's figures are the library's
    assert all(1 <= int(seat) <= 4 for seat, _ in rows)  # seats count from 1
    assert "agents: greedy in every seat" in out.stdout  # named once, above the tables
