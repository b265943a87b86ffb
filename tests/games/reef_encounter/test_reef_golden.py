"""Golden Reef Encounter playthroughs (see tests/golden.py): every action of a few seeded games."""
import core_cy
from golden import check_golden, playthrough

GAMES = [
    (2, {}, 1, ["greedy", "greedy"]),
    (3, {"advanced_no_extra_growth": True, "advanced_eat_return_plus_one": True}, 2,
     ["greedy", "random", "greedy"]),
]


def test_reef_encounter_golden_playthroughs():
    game = core_cy.load("reef_encounter")
    text = "".join(playthrough(game, *g) for g in GAMES)
    check_golden("reef_encounter", text)
