"""Docs that cannot drift: every command the README and docs/ show in a code block is run
(with small budgets: a few dozen games, a short pilot, a cheap search) and must end without
an error and print something; the API calls must answer and list something.  A command this
test does not run is named with the reason (installing, deploying, the suite itself), so a
new kind of command in the docs fails here until it is run or named."""
from __future__ import annotations

import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from product import PRODUCT, product_env
from ray_support import ray_local  # noqa: F401  (session fixture)

from services.spec import ExperimentSpec

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
         *sorted((ROOT / "docs" / "games").glob("*.md"))]  # docs/lab: measurements, dated
# Commands shown but not run here, and why.
NOT_RUN = {
    "pip": "installs the package: scripts/test.sh installs the wheel the suite tests",
    "bash": "scripts/test.sh is the suite itself",
    "docker": "builds and pushes the image: tests/deploy builds it",
    "kubectl": "needs a Kubernetes cluster: tests/deploy checks the manifests",
    "ray": "starts a multi-host Ray cluster: tests/services/test_cluster.py runs these",
    "export": "the environment of a multi-host cluster (docs/deployment.md)",
}
DEPLOYMENT = "docs/deployment.md"  # its commands need a cluster (NOT_RUN's reasons)
RUN = {"meeplelab", "curl"}
# A placeholder for a file: the folder of the files it stands for.
PLACEHOLDERS = {"examples/<file>": ROOT / "examples", "SPEC.json": ROOT / "examples" / "balance"}
TIMEOUT = 240


def code_blocks(page: Path) -> list[tuple[int, str, str]]:
    """(line, language, text) of the page's fenced and indented code blocks (an indented
    block: language '')."""
    text = page.read_text()
    blocks = [(text[:m.start()].count("\n") + 2, m.group(1), m.group(2))
              for m in re.finditer(r"^ *```(\w*)\n(.*?)^ *```", text, re.S | re.M)]
    fenced = [m.span() for m in re.finditer(r"^ *```.*?^ *```", text, re.S | re.M)]
    for m in re.finditer(r"(?:^(?:    ).*\n)+", text, re.M):
        if not any(a <= m.start() < b for a, b in fenced) and \
                not text[max(0, m.start() - 2):m.start()].strip():
            blocks.append((text[:m.start()].count("\n") + 1, "", m.group(0)))
    return blocks


SHELL = {"", "bash", "sh", "shell", "console"}


def commands() -> list[tuple[str, int, list[str]]]:
    """(page, line, argv) of every command line of every code block ('a && b': two): a line
    whose program is one this test runs or names; in a shell-fenced block, every line (an
    unknown program among them, to be named)."""
    found = []
    for page in PAGES:
        name = str(page.relative_to(ROOT))
        for line, language, block in code_blocks(page):
            if language not in SHELL:
                continue
            lines = re.sub(r"\\\n\s*", " ", block).splitlines()
            k = 0
            while k < len(lines):
                text, start = lines[k].strip(), k
                while True:  # a quoted argument may span lines (a JSON body)
                    try:
                        words = shlex.split(text, comments=True)
                        break
                    except ValueError:
                        k += 1
                        if k >= len(lines):
                            words = []
                            break
                        text += "\n" + lines[k]
                k += 1
                while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
                    words = words[1:]  # an environment assignment before the program
                if not words or words[0].startswith("#"):
                    continue
                if words[0] not in RUN and words[0] not in NOT_RUN:
                    if language:  # a shell block's line: a command this test must know
                        found.append((name, line + start, words))
                    continue
                part = []
                for w in words + ["&&"]:
                    if w == "&&":
                        if part:
                            found.append((name, line + start, part))
                        part = []
                    else:
                        part.append(w)
    return found


def test_every_command_of_the_docs_is_run_or_named_why_not():
    seen = commands()
    programs = {argv[0] for _, _, argv in seen}
    assert {"meeplelab", "curl"} <= programs
    unknown = [(p, n, argv) for p, n, argv in seen if argv[0] not in RUN | set(NOT_RUN)]
    assert not unknown, f"commands in the docs this test neither runs nor names: {unknown}"
    kinds = {argv[1] for _, _, argv in seen if argv[0] == "meeplelab" and len(argv) > 1}
    assert {"games", "plan", "run", "serve", "demo", "balance", "report"} <= kinds


# ---- small budgets -------------------------------------------------------------------------
def _cheap_agent(agent: str) -> str:
    if not agent.startswith("mcts"):
        return agent
    if "iterations=" in agent:
        return re.sub(r"iterations=\d+", "iterations=8", agent)
    return "mcts(iterations=8)" if agent == "mcts" else agent.replace("mcts(", "mcts(iterations=8, ", 1)


def small(spec: dict) -> dict:
    """The spec with a few dozen games a cell, cheap searches and a small balance budget."""
    spec = dict(spec, shard_size=100)
    spec["games_per_arm"] = min(spec.get("games_per_arm", 1000), 40)
    if "stop_when" in spec:
        spec["stop_when"] = {**spec["stop_when"], "max_games": 80,
                             "min_games": min(spec["stop_when"].get("min_games", 0), 80)}
    for key in ("agents", "ladder"):
        if isinstance(spec.get(key), str):
            spec[key] = _cheap_agent(spec[key])
        elif isinstance(spec.get(key), list):
            spec[key] = [_cheap_agent(a) for a in spec[key]]
    if "balance" in spec:
        spec["balance"] = {**spec["balance"], "wave_games": 10, "max_games": 60,
                           "confirm_games": min(spec["balance"].get("confirm_games", 20), 20)}
    return spec


def _written(spec: dict, path: Path) -> Path:
    path.write_text(json.dumps(small(spec)))
    return path


def _read(path: Path) -> dict:
    text = path.read_text()
    return tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)


def _named_files(folder: Path) -> dict[str, Path]:
    """The files the docs write out in a code block ('# seats.toml' on its first line)."""
    out = {}
    for page in PAGES:
        for _, _, block in code_blocks(page):
            first = block.splitlines()[0].strip() if block.strip() else ""
            m = re.fullmatch(r"# ([\w.-]+\.(toml|json))", first)
            if m:
                data = tomllib.loads(block) if m.group(2) == "toml" else json.loads(block)
                out[m.group(1)] = _written(data, folder / (Path(m.group(1)).stem + ".json"))
    return out


def _cli_here(args: list[str], capsys) -> str:
    """`meeplelab ARGS` in this process (services.cli.main, what the `meeplelab` script
    calls), on the suite's one local Ray: the same checks as _cli without a Python and a Ray
    started for each command (`meeplelab games` runs as a process of its own)."""
    from services import cli

    capsys.readouterr()
    code = cli.main(args)
    out, err = capsys.readouterr()
    assert code == 0, f"meeplelab {' '.join(args)}: {code}\n{out[-2000:]}\n{err[-3000:]}"
    assert out.strip(), f"meeplelab {' '.join(args)} printed nothing"
    assert "Traceback" not in err
    return out


def _cli(args: list[str], cwd=PRODUCT, timeout=TIMEOUT) -> str:
    done = subprocess.run([sys.executable, "-m", "services.cli", *args], cwd=cwd,
                          env=product_env(MEEPLELAB_DB=os.environ.get("MEEPLELAB_DB", "")),
                          capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"meeplelab {' '.join(args)}: {done.returncode}\n" \
        f"{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    assert done.stdout.strip(), f"meeplelab {' '.join(args)} printed nothing"
    assert "Traceback" not in done.stderr
    return done.stdout


def _expand(argv: list[str], files: dict, tmp: Path) -> list[list[str]]:
    """The command with its placeholders filled in (one command a file for <file>), its
    files the small ones, its results and reports written under tmp."""
    out = []
    args = argv[1:]
    if args[0] in ("run", "plan", "balance"):
        target = args[1]
        if target in files:
            paths = [files[target]]
        elif target in PLACEHOLDERS:  # one file played; every one of them read (valid)
            every = sorted(p for p in PLACEHOLDERS[target].glob("*.*") if p.is_file())
            for p in every:
                ExperimentSpec.model_validate(_read(p))
            paths = [_written(_read(every[0]), tmp / f"{every[0].stem}.json")]
        else:
            raise AssertionError(f"no file for {target!r} (meeplelab {' '.join(args)})")
        extra = {"run": ["--out", str(tmp / "results"), "--workers", "1",
                         "--interim-every", "60"],
                 "plan": ["--pilot-games", "20", "--workers", "1"], "balance": []}[args[0]]
        out = [[args[0], str(p), *args[2:], *extra] for p in paths]
    elif args[0] == "report":
        folders = sorted((tmp / "results").iterdir())
        assert folders, "no results folder to report on (a run comes first)"
        out = [["report", str(folders[0]), "-o", str(tmp / "report.html")]]
    else:
        out = [args]
    return out


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Served:
    """`meeplelab serve` or `meeplelab demo` in a process of its own, on a free port, with
    its own registry and results; ended by Ctrl-C (SIGINT), as a user ends it."""

    def __init__(self, args: list[str], tmp: Path):
        self.port = _port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = open(tmp / f"{args[0]}.log", "w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "services.cli", *args, "--port", str(self.port)],
            cwd=PRODUCT, stdout=self.log, stderr=subprocess.STDOUT,
            env=product_env(MEEPLELAB_DB=str(tmp / f"{args[0]}.db"),
                            MEEPLELAB_RESULTS=str(tmp / f"{args[0]}-results"),
                            MEEPLELAB_WORKERS="1"))
        deadline = time.monotonic() + 90
        while True:
            assert self.proc.poll() is None, f"{args} ended: {(tmp / f'{args[0]}.log').read_text()}"
            try:
                urllib.request.urlopen(self.url + "/api/games", timeout=2)
                return
            except OSError:
                assert time.monotonic() < deadline, f"{args} did not answer"
                time.sleep(0.3)

    def get(self, path: str):
        return json.loads(urllib.request.urlopen(self.url + path, timeout=30).read())

    def stop(self):
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        self.log.close()


def _curl(argv: list[str], served: _Served, tmp: Path, ids: dict) -> str:
    """A curl line of the docs against the served process: its address, the id of the
    experiment the docs' POST made, a small body; --fail, so an HTTP error fails it."""
    args = []
    for k, w in enumerate(argv[1:]):
        w = w.replace("http://127.0.0.1:8000", served.url).replace("/ID", f"/{ids.get('ID', 'ID')}")
        if argv[k] == "-d":
            w = json.dumps(small(json.loads(w)))
        args.append(w)
    done = subprocess.run(["curl", "--fail", "--max-time", "60", *args], cwd=tmp,
                          capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, f"curl {' '.join(args)}: {done.returncode} {done.stderr}"
    if "-O" in args:
        name = tmp / args[-1].rsplit("/", 1)[-1]
        assert name.stat().st_size > 0, f"{name} is empty"
        return ""
    body = json.loads(done.stdout)
    assert body, f"curl {' '.join(args)}: an empty answer"
    return body


@pytest.mark.ray
def test_every_command_of_the_docs_runs(tmp_path, ray_local, capsys, monkeypatch):  # noqa: F811
    monkeypatch.setenv("MEEPLELAB_DB", os.environ.get("MEEPLELAB_DB", ""))
    seen = commands()
    files = _named_files(tmp_path)
    shown = [(p, n, argv) for p, n, argv in seen if argv[0] in RUN and p != DEPLOYMENT]
    local = [(p, n, a) for p, n, a in shown if a[0] == "meeplelab" and a[1] not in ("serve", "demo")]
    ran = []
    for kind in ("games", "plan", "run", "balance", "report"):  # a run before its report
        for page, line, argv in local:
            if argv[1] != kind:
                continue
            for args in _expand(argv, files, tmp_path):
                out = _cli(args) if kind == "games" else _cli_here(args, capsys)
                if kind == "games":
                    import core_cy

                    assert all(f"{g}: " in out for g in core_cy.game_names()), out[:500]
                ran.append((page, line, args[0]))
    assert (tmp_path / "report.html").stat().st_size > 10_000

    # the service as the docs start it, and the API calls they show against it
    served = _Served(["serve"], tmp_path)
    try:
        ids: dict = {}
        for page, line, argv in [s for s in shown if s[2][0] == "curl"]:
            body = _curl(argv, served, tmp_path, ids)
            if "-X" in argv and "POST" in argv:
                ids["ID"] = body["id"]
                deadline = time.monotonic() + TIMEOUT
                while served.get(f"/api/experiments/{ids['ID']}")["status"] != "done":
                    assert time.monotonic() < deadline, "the docs' experiment did not finish"
                    time.sleep(0.5)
            ran.append((page, line, "curl"))
        assert any(s[2][1] == "serve" for s in shown)
    finally:
        served.stop()
    assert served.proc.returncode in (0, -signal.SIGINT), served.proc.returncode

    # the demo: it serves and queues its experiments (its budget is its own: it is ended
    # once they are listed and playing)
    demo = _Served(["demo"], tmp_path)
    try:
        deadline = time.monotonic() + 60
        while len(demo.get("/api/experiments")) < 2:
            assert time.monotonic() < deadline, "the demo listed no experiments"
            time.sleep(0.5)
        listed = demo.get("/api/experiments")
        assert all(e["status"] in ("queued", "running", "done") for e in listed), listed
    finally:
        demo.stop()
    assert any(s[2][1] == "demo" for s in shown)
    assert {k for _, _, k in ran} >= {"games", "plan", "run", "balance", "report", "curl"}
