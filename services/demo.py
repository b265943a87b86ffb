"""The demo experiment: Maori seat balance, basic vs pro, with the search agent in every seat.

Embedded as package data (services/maori_demo.json) so that `meeplelab demo` works from any
folder after `pip install .`.  The agent is `mcts(iterations=400, rollout=greedy, cutoff=12, epsilon=0.5)`:
one-ply greedy agents stall in pro mode (every placement lowers their value, so all of them
wait; 12.5% of greedy pro games ended at the turn limit and would be left out), and so does
a search whose rollouts are purely greedy; random moves in half of the rollout moves make the
rollouts play on, so the search stops waiting (benchmarks/agents.py truncation).  1,000 games
per arm take about a quarter of an hour on two cores; the dashboard shows interim figures
from the first shards on.
"""
from __future__ import annotations

import json
from importlib import resources

from services.spec import ExperimentSpec

DEMO_FILE = "maori_demo.json"


def demo_spec() -> dict:
    return json.loads(resources.files("services").joinpath(DEMO_FILE).read_text())


def ensure_demo(registry) -> str:
    """The id of the demo experiment in the registry, queued now unless it is already there
    (finished or not: a restart resumes it instead of starting it again)."""
    raw = demo_spec()
    spec = ExperimentSpec.model_validate(raw)
    for record in registry.list():
        if record["spec"] == raw and record["status"] not in ("failed", "cancelled"):
            return record["id"]
    return registry.create(raw, spec.name, spec.game, games_total=spec.total_games())
