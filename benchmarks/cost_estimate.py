"""The catalogue's cost of a game (core_cy.catalogue.game_cost, what the service states at
submission) against the CPU time of games played here: per case, CPU ms a game measured in
this process (time.process_time) and estimated, and their ratio (above 1: the estimate is
high).

    nice -n 19 python -m benchmarks.cost_estimate      # about a minute of CPU
"""
from __future__ import annotations

import os
import time

import core_cy
from core_cy.catalogue import game_cost, preset_agent
from core_cy.play import batch

# (game, players, agent or preset name, games): search agents the estimate scales per
# simulation, presets at other player counts, agents no preset measures.
CASES = [("maori", 3, "mcts(iterations=300)", 20), ("maori", 4, "greedy", 400),
         ("maori", 3, "random", 400), ("golden_island", 3, "mcts(iterations=300)", 10),
         ("reef_encounter", 3, "mcts(iterations=300)", 10), ("mondo", 4, "strong", 6),
         ("mondo", 3, "greedy", 100), ("forbidden_desert", 4, "mcts(iterations=100)", 10)]


def main() -> None:
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print("| game | players | agent | games | CPU ms a game | estimated | estimate / measured "
          "| basis |\n|---|---|---|---|---|---|---|---|")
    for name, players, agent, games in CASES:
        played = preset_agent(name, agent) or agent
        estimate = game_cost(name, played, players)
        began = time.process_time()
        batch.play_columns(core_cy.load(name), players, None, played, seed=7, start=0,
                           count=games)
        measured = (time.process_time() - began) / games
        print(f"| {name} | {players} | `{agent}` | {games} | {measured * 1000:,.1f} | "
              f"{estimate.seconds * 1000:,.1f} | {estimate.seconds / measured:.2f} | "
              f"{estimate.basis} |", flush=True)


if __name__ == "__main__":
    main()
