"""Golden playthroughs: a few seeded games written out action by action, so that any rule
change shows up as a reviewable diff of a text file under tests/golden/.

Set MEEPLELAB_REGOLD=1 to rewrite the files after a deliberate rule change.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from core_cy import agents

GOLDEN_DIR = Path(__file__).parent / "golden"


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


def check_golden(name: str, text: str) -> None:
    """Compares text with tests/golden/<name>.txt (or rewrites it under MEEPLELAB_REGOLD)."""
    path = GOLDEN_DIR / f"{name}.txt"
    if os.environ.get("MEEPLELAB_REGOLD"):
        path.write_text(text)
    expected = path.read_text()
    assert text == expected, (
        f"{path.name} differs from this engine's playthrough: if the rule change is deliberate, "
        f"rerun with MEEPLELAB_REGOLD=1 and review the diff")
