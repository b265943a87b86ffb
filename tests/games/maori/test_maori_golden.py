"""Golden Maori playthroughs (see tests/golden.py): every action of a few seeded games."""
import core_cy
from golden import check_golden, playthrough

GAMES = [
    (3, {"mode": "basic"}, 1, ["greedy", "random", "greedy"]),
    (2, {"mode": "advanced", "board_side": "coral_reef"}, 2, ["greedy", "greedy"]),
    (4, {"mode": "pro"}, 3, ["greedy", "random", "greedy", "random"]),
    (5, {"mode": "basic", "lei_model": "whole_on_tile", "skip_cost": "per_position"}, 4,
     ["greedy"] * 5),
]


def test_maori_golden_playthroughs():
    game = core_cy.load("maori")
    text = "".join(playthrough(game, *g) for g in GAMES)
    check_golden("maori", text)
