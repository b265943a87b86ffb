"""Golden Golden Island playthroughs (see tests/golden.py): every action of a few seeded
games, so that any rule change shows up as a reviewable diff."""
import core_cy
from golden import check_golden, playthrough

GAMES = [
    (2, {}, 1, ["greedy", "random"]),
    (3, {"recall_error_per_mille": 200, "volcano_landing_cards": "pirate"}, 2, ["greedy"] * 3),
    (4, {"exact_move_required": True, "max_rounds": 12}, 3, ["random", "greedy", "random", "greedy"]),
]


def test_golden_island_golden_playthroughs():
    game = core_cy.load("golden_island")
    text = "".join(playthrough(game, *g) for g in GAMES)
    check_golden("golden_island", text)
