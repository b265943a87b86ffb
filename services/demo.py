"""The demo experiment: Maori seat balance, basic vs pro, with greedy agents.

Embedded as package data (services/maori_demo.json) so that `meeplelab demo` works from any
folder after `pip install .`.
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
