"""Issue 51: an experiment's estimated CPU cost is said at submission (API and CLI) and,
above MEEPLELAB_CONFIRM_CPU_SECONDS, needs a confirmation; a preset's name as an agent is
the preset's agent string, stored so; Ctrl-C ends `meeplelab run` and `plan` without a
traceback."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st
from product import PRODUCT, product_env
from ray_support import wait_until
from service_support import session_processes

import core_cy
from core_cy.catalogue import PRESET_NAMES, game_cost, presets
from services import cli
from services.app import create_app
from services.settings import Settings
from services.spec import ExperimentSpec

GAMES = core_cy.game_names()
EXPENSIVE = {"game": "mondo", "players": 4, "agents": "strong", "games_per_arm": 100_000_000}


def _client(tmp_path, **extra) -> TestClient:
    """An app with the default limit (the suite's own takes any cost: tests/conftest.py)."""
    extra.setdefault("confirm_cpu_seconds", Settings.model_fields["confirm_cpu_seconds"].default)
    config = Settings(db=str(tmp_path / "r.db"), results=str(tmp_path / "res"), **extra)
    return TestClient(create_app(config, run_worker=False))


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(GAMES), data=st.data())
def test_a_preset_name_is_the_presets_agent_string_in_agents_lists_and_ladders(name, data):
    game = core_cy.load(name)
    players = data.draw(st.integers(game.min_players, game.max_players))
    table = presets(name)["presets"]
    chosen = data.draw(st.sampled_from(PRESET_NAMES))
    assert ExperimentSpec.model_validate(
        {"game": name, "players": players, "agents": chosen}).agents == table[chosen]["agent"]
    seats = data.draw(st.lists(st.sampled_from([*PRESET_NAMES, "random"]), min_size=players,
                               max_size=players))
    spec = ExperimentSpec.model_validate({"game": name, "players": players, "agents": seats})
    assert spec.agents == [table[s]["agent"] if s in table else s for s in seats]
    ladder = ExperimentSpec.model_validate({"game": name, "players": players,
                                            "ladder": list(PRESET_NAMES)})
    assert ladder.ladder == [table[p]["agent"] for p in PRESET_NAMES]


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(GAMES), games=st.integers(1, 10**6), data=st.data())
def test_the_estimate_is_the_cells_games_at_the_catalogues_cost(name, games, data):
    game = core_cy.load(name)
    counts = data.draw(st.lists(st.integers(game.min_players, game.max_players), min_size=1,
                                max_size=2, unique=True))
    agent = data.draw(st.sampled_from(["random", "greedy", "mcts(iterations=300)",
                                       *PRESET_NAMES]))
    spec = ExperimentSpec.model_validate({"game": name, "players": counts, "agents": agent,
                                          "games_per_arm": games})
    seconds, basis = spec.estimated_cpu_seconds()
    want = sum(games * game_cost(name, spec.agents, n).seconds for n in counts)
    assert seconds == pytest.approx(want) and seconds > 0
    assert basis.startswith("measured: " if all(
        game_cost(name, spec.agents, n).measured for n in counts) else "an estimate: ")


def test_the_api_states_the_cost_and_stores_the_presets_agent(tmp_path):
    with _client(tmp_path) as c:
        posted = c.post("/api/experiments", json={"game": "maori", "players": 3,
                                                  "agents": "strong", "games_per_arm": 300})
        assert posted.status_code == 201, posted.text
        body = posted.json()
        assert body["estimated_cpu_seconds"] == pytest.approx(
            300 / presets("maori")["presets"]["strong"]["games_per_cpu_second"])
        assert "measured" in body["cost"] and "CPU" in body["cost"]
        stored = c.get(body["url"]).json()["spec"]
        assert stored["agents"] == presets("maori")["presets"]["strong"]["agent"]


def test_the_api_refuses_an_expensive_experiment_unless_confirmed(tmp_path):
    """The issue's case: 100,000,000 strong Mondo games were accepted with 201 and no word."""
    with _client(tmp_path) as c:
        refused = c.post("/api/experiments", json=EXPENSIVE)
        assert refused.status_code == 422, refused.text
        [item] = refused.json()["detail"]
        assert item["field"] == "confirm_cost" and "MEEPLELAB_CONFIRM_CPU_SECONDS" in item["msg"]
        assert "CPU-days" in item["msg"] and "estimate" in item["msg"]
        assert "budget" in item["msg"]  # its budget would stop it long before the end
        assert c.get("/api/experiments").json() == []  # nothing queued
        confirmed = c.post("/api/experiments?confirm_cost=true", json=EXPENSIVE)
        assert confirmed.status_code == 201, confirmed.text
        assert confirmed.json()["estimated_cpu_seconds"] > 86_400
    (tmp_path / "other").mkdir()
    with _client(tmp_path / "other", confirm_cpu_seconds=10**9) as c:
        assert c.post("/api/experiments", json=EXPENSIVE).status_code == 201


def test_the_cli_states_the_cost_and_refuses_above_the_limit_without_yes(tmp_path, capsys,
                                                                         monkeypatch):
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(EXPENSIVE))
    monkeypatch.delenv("MEEPLELAB_CONFIRM_CPU_SECONDS")  # the default limit
    played = []
    monkeypatch.setattr(cli, "run_spec", lambda spec, *rest: played.append(spec) or 0)
    assert cli.main(["run", str(path)]) == 2 and not played  # stdin is no terminal here
    err = capsys.readouterr().err
    assert "Estimated CPU cost" in err and "--yes" in err and "Traceback" not in err
    assert cli.main(["run", str(path), "--yes"]) == 0 and len(played) == 1
    assert played[0].agents == presets("mondo")["presets"]["strong"]["agent"]


def test_the_cli_asks_on_a_terminal(monkeypatch, capsys):
    spec = ExperimentSpec.model_validate(EXPENSIVE)
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True, raising=False)
    asked = []
    assert cli.cost_confirmed(spec, 3600, False, lambda q: asked.append(q) or "y")
    assert not cli.cost_confirmed(spec, 3600, False, lambda q: "")
    assert asked and "[y/N]" in asked[0]
    assert cli.cost_confirmed(spec, 10**12, False, lambda q: pytest.fail("asked"))


@pytest.mark.parametrize("command", ["run", "plan"])
def test_ctrl_c_ends_run_and_plan_without_a_traceback(tmp_path, command):
    """SIGINT to the command's process group, as a terminal's Ctrl-C sends it, while it plays
    (a run's shards, a plan's pilot): it ends with 130 and one line, no traceback."""
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"game": "maori", "players": 3, "agents": "strongest",
                                "games_per_arm": 5000, "shard_size": 100}))
    args = [sys.executable, "-m", "services.cli", command, str(spec), "--workers", "1"]
    if command == "run":
        args += ["--out", str(tmp_path / "results")]
    proc = subprocess.Popen(args, cwd=PRODUCT, env=product_env(), start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # Ray is up and games are playing: a shard task runs in the command's session
        wait_until(lambda: proc.poll() is not None or any(
            c.startswith("ray::play_shards") for c in session_processes(proc.pid)),
            "a shard task of the command playing", timeout=120, every=0.2)
        time.sleep(1)  # into its games
        assert proc.poll() is None, proc.communicate()
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert "interrupted (Ctrl-C)" in err
