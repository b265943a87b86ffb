"""Golden Forbidden Desert playthroughs (see tests/golden.py): seeded games, every decision
described with a state summary."""
from core_cy import agents
from core_cy.games.forbidden_desert.engine import GAME
from golden import check_golden

GAMES = [  # (players, rules, seed, agent)
    (2, {"difficulty": "novice"}, 11, "random"),
    (4, {"difficulty": "novice"}, 3, "planner"),
    (3, {"difficulty": "elite", "include_storm_tracker": True,
         "storm_discard_timing": "per_card"}, 7, "planner"),
    (5, {"difficulty": "normal"}, 21, "greedy"),
]


def summary(state):
    d = state.to_dict()
    storm = d["storm"]
    water = " ".join(f"{p['adventurer'][:4]}={p['water']}" for p in d["pawns"])
    parts = "".join({"hidden": "-", "on_tile": "o", "in_storm": "s", "held": "H"}[p["state"]]
                    for p in d["parts"])
    dug = sum(1 for row in d["board"] for e in row if e and e["excavated"])
    return (f"storm=({storm[0]},{storm[1]}) meter={d['storm_meter_index']} "
            f"supply={d['sand_supply']} dug={dug} parts={parts} {water}")


def transcript():
    lines = []
    for players, rules, seed, agent in GAMES:
        state = GAME.new(players, rules=rules, seed=seed)
        lines.append(f"== {players} players, rules {sorted(rules.items())}, seed {seed}, {agent}")
        lines.append(f"   start: seat {state.current_player} first; {summary(state)}")
        k = 0
        while not state.is_terminal():
            seat = state.current_player
            a = agents.choose(state, agent, seed=seed * 1000 + k)
            text = state.describe(a)
            state.apply(a)
            k += 1
            lines.append(f"{k:4d} s{seat} {text} | {summary(state)}")
        g, _ = state.outcomes()
        lines.append(f"   end: {state.end_reason} after {int(g['turns'])} turns, "
                     f"{int(g['parts_collected'])} parts held")
    return "\n".join(lines) + "\n"


def test_forbidden_desert_golden_playthroughs():
    check_golden("forbidden_desert", transcript())
