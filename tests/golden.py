"""Golden playthroughs, one helper for every game: a few seeded games written out action by
action, so that any rule change shows up as a reviewable diff of a text file under
tests/games/<name>/golden.txt.

    check_golden("maori", text)     # text: playthrough(...) or a game's own transcript

A missing or different file fails with the command that (re)writes it; MEEPLELAB_REGOLD=1
rewrites the files after a deliberate rule change (then review the diff).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from core_cy import agents

GAMES_DIR = Path(__file__).parent / "games"


def playthrough(game, players: int, rules: dict, seed: int, seat_agents: list[str]) -> str:
    """One game as text: every action described, with the scores after it."""
    state = game.new(players, rules=rules, seed=seed)
    lines = [f"== {game.name} players={players} seed={seed} agents={seat_agents} "
             f"rules={json.dumps(rules, sort_keys=True)}"]
    while not state.is_terminal():
        seat = state.current_player
        action = agents.choose(state, seat_agents[seat], seed=seed * 1000 + state.num_moves)
        text = state.describe(action)
        state.apply(action)
        scores = " ".join(f"{s:g}" for s in state.scores())
        lines.append(f"{state.num_moves:4d} seat {seat}: {text} | scores {scores}")
    lines.append(f"end: {state.end_reason}; scores {state.scores()}; winners {state.winners()}")
    for seat in state.score_breakdown():
        lines.append("  " + json.dumps(seat, sort_keys=True))
    return "\n".join(lines) + "\n"


def regold_command() -> str:
    """The command that rewrites the golden file of the running test."""
    test = os.environ.get("PYTEST_CURRENT_TEST", "tests").split("::")[0].split(" ")[0]
    return f"MEEPLELAB_REGOLD=1 PYTHONPATH=$PWD python -m pytest -q -p no:cacheprovider {test}"


def check_golden(name: str, text: str) -> None:
    """Compares text with tests/games/<name>/golden.txt (or writes it under MEEPLELAB_REGOLD=1)."""
    path = GAMES_DIR / name / "golden.txt"
    if os.environ.get("MEEPLELAB_REGOLD") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
    if not path.exists():
        pytest.fail(f"golden file {path} is missing: write it with `{regold_command()}` "
                    f"and review it before committing")
    expected = path.read_text()
    assert text == expected, (
        f"{path.name} differs from this engine's playthrough: if the rule change is "
        f"deliberate, rewrite it with `{regold_command()}` and review the diff")
