"""benchmarks/agents.py: its options and its speed measurement (the rates themselves are
measured by the script, never asserted here)."""
import importlib.util
from pathlib import Path

import pytest

import core_cy
from core_cy import agents

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "agents.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_agents", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("argv, option", [
    (["budget", "--game", "nope"], "--game: unknown game 'nope'"),
    (["budget", "--game", "maori,nope"], "--game: unknown game 'nope'"),
    (["budget", "--players", "9"], "--players: players must be between 2 and 5 for maori"),
    (["strength", "--game", "reef_encounter", "--players", "5"],
     "--players: players must be between 2 and 4 for reef_encounter"),
    (["budget", "--game", "mondo", "--players", "1"], "--players: budget compares seats: at least 2"),
    (["strength", "--players", "2,x"], "--players: a player count or a comma-separated list"),
    (["speed", "--repeats", "0"], "--repeats: at least 1 round"),
])
def test_bad_options_are_usage_errors_naming_the_option(bench, capsys, argv, option):
    with pytest.raises(SystemExit) as stop:
        bench.main(argv + ["--games", "1"])
    assert stop.value.code == 2
    assert option in capsys.readouterr().err


def test_budget_measures_the_given_game_and_player_counts(bench, capsys):
    bench.main(["budget", "--game", "golden_island", "--players", "2,3", "--games", "2",
                "--agent", "mcts(iterations=10)"])
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(",")[0] for line in lines] == ["golden_island 2p", "golden_island 3p"]
    # +-1 point at a share of 1/2 and of 1/3: (1.96 / 0.01)^2 p (1 - p) games.
    assert "needs 9,604 games" in lines[0] and "needs 8,537 games" in lines[1]


def test_budget_defaults_to_three_player_maori(bench, capsys):
    bench.main(["budget", "--games", "1", "--agent", "mcts(iterations=10)"])
    assert capsys.readouterr().out.startswith("maori 3p, mcts(")


def test_the_search_alone_is_timed(bench, monkeypatch):
    """search_stats(timed=True) adds the search's CPU seconds and changes nothing else; the
    speed measurement searches the positions it is given (no set-up inside it) and counts
    the moves search_stats counts."""
    game = core_cy.load("maori")
    searched = [game.new(2, seed=s) for s in range(3)]
    agent = "mcts(iterations=30)"
    visits, moves, cpu = agents.search_stats(searched[0], agent, seed=0, timed=True)
    assert (visits, moves) == agents.search_stats(searched[0], agent, seed=0)
    assert moves > 0 and cpu > 0

    def no_setup(*_):
        raise AssertionError("positions set up inside the timed measurement")

    monkeypatch.setattr(bench, "positions", no_setup)
    seen = []
    real = agents.search_stats

    def counting(*a, **k):
        out = real(*a, **k)
        seen.append(out)
        return out

    monkeypatch.setattr(agents, "search_stats", counting)
    rate = bench.search_moves_per_second(game, 2, agent, 1e9, searched)
    assert len(seen) == 3
    assert rate == pytest.approx(sum(s[1] for s in seen) / sum(s[2] for s in seen))
