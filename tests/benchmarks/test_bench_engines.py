"""benchmarks/engines.py --same: whether builds play the same games (the speeds themselves are
measured by the script, never asserted here)."""
import os
import subprocess
import sys

import pytest

import core_cy
from product import PRODUCT, TESTS, benchmark, product_path


@pytest.fixture
def engines(monkeypatch):
    return benchmark("engines", monkeypatch)


def run_same(*args):
    """--same in its own process: loading a build replaces the game's module, which the rest
    of this test session must not see."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([product_path(), str(TESTS.parent)])}
    done = subprocess.run([sys.executable, "-m", "benchmarks.engines", *args], cwd=PRODUCT,
                          env=env, capture_output=True, text=True, timeout=300)
    return done


def test_column_hash_follows_the_games(engines):
    game = core_cy.load("maori")
    first = engines.column_hash(game, 2, None, "random", 3, seed=5)
    assert engines.column_hash(game, 2, None, "random", 3, seed=5) == first
    assert engines.column_hash(game, 2, None, "random", 3, seed=6) != first
    assert engines.column_hash(game, 2, None, "greedy", 3, seed=5) != first
    assert engines.column_hash(game, 3, None, "random", 3, seed=5) != first


def test_same_build_twice_gives_one_hash_over_every_allowed_player_count():
    done = run_same("--game", "mondo", "--same", str(PRODUCT), str(PRODUCT), "--agents",
                    "random; greedy", "--games", "2", "--rules",
                    '[null, {"level": "advanced"}]')
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert len(lines) == 2
    digests = [line.split()[1] for line in lines]
    assert digests[0] == digests[1] and len(digests[0]) == 64
    # Mondo plays 1-4 players; the advanced level refuses the solo game: 4 + 3 rule-set and
    # player-count pairs, two agents each.
    assert lines[0].endswith("(14 batches of 2 games)")


@pytest.mark.parametrize("args, message", [
    (["--same", "x"], "--same needs --game"),
    (["--game", "maori", "--same", "x", "--rules", "{}"], "argument --rules"),
    (["--game", "maori", "--same", "x", "--rules", "[1]"], "argument --rules"),
    (["--game", "maori", "--same", "x", "--games", "0"], "--games: at least 1"),
])
def test_bad_same_options_are_usage_errors_naming_the_option(engines, capsys, args, message):
    with pytest.raises(SystemExit) as stop:
        engines.main(args)
    assert stop.value.code == 2
    assert message in capsys.readouterr().err
