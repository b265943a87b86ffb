"""The catalogue: every game's name and the module of its engine; each game's agent presets
(its folder's presets.json) and what a game costs under given agents (one estimate for the
service, the plan and the runner)."""
from __future__ import annotations

import importlib
import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

# Game name -> its engine module (core_cy/games/<game>/engine.pyx); adding a game is adding
# a line here.
CATALOGUE = {
    "forbidden_desert": "core_cy.games.forbidden_desert.engine",
    "golden_island": "core_cy.games.golden_island.engine",
    "maori": "core_cy.games.maori.engine",
    "mondo": "core_cy.games.mondo.engine",
    "reef_encounter": "core_cy.games.reef_encounter.engine",
}
PRESET_NAMES = ("fast", "strong", "strongest")  # the form's presets, weakest first
PRESETS_FILE = "presets.json"  # in each game's folder


def game_names() -> list[str]:
    """The names of the games in the catalogue."""
    return sorted(CATALOGUE)


def load(name: str):
    """The game object for `name` (ValueError for an unknown game)."""
    if name not in CATALOGUE:
        raise ValueError(f"unknown game {name!r}; choose one of {game_names()}")
    return importlib.import_module(CATALOGUE[name]).GAME


def presets_path(name: str) -> Path:
    """The file of game `name`'s presets (core_cy/games/<game>/presets.json)."""
    load(name)  # ValueError for an unknown game
    package = CATALOGUE[name].rpartition(".")[0]
    return Path(str(resources.files(package).joinpath(PRESETS_FILE)))


@lru_cache(maxsize=None)
def _presets_text(name: str) -> str:
    return presets_path(name).read_text()


def presets(name: str) -> dict:
    """Game `name`'s agent presets, as its folder's presets.json holds them: {"players": the
    usual player count, "preset": the default preset, "presets": {fast | strong | strongest:
    {"agent": its agent string, "note": what it does, "games_per_cpu_second": measured by
    benchmarks/strong_play.py at "players" players (--write stores it here)}}}.  A fresh
    copy each call."""
    return json.loads(_presets_text(name))


def preset_agent(name: str, text: str) -> str | None:
    """The agent string of preset `text` (fast, strong, strongest) of game `name`, or None
    when `text` names no preset."""
    if not isinstance(text, str) or text.strip() not in PRESET_NAMES:
        return None
    return presets(name)["presets"][text.strip()]["agent"]


@dataclass(frozen=True)
class Cost:
    """What one game costs: `seconds` of CPU, `measured` (True: a preset's games were timed
    at this player count with these agents) and `basis` (where the number comes from, for
    a reader: 'measured: ...' or 'estimate: ...')."""

    seconds: float
    measured: bool
    basis: str


def game_cost(name: str, agents: list[str], players: int) -> Cost:
    """The CPU-seconds one game of `name` at `players` players costs with the seat `agents`
    (one per seat, or one for every seat): the mean of the seats' costs (agent_cost)."""
    if isinstance(agents, str):
        agents = [agents] * players
    costs = [agent_cost(name, a, players) for a in agents]
    bases = list(dict.fromkeys(c.basis for c in costs))
    return Cost(sum(c.seconds for c in costs) / len(costs), all(c.measured for c in costs),
                "; ".join(bases))


def agent_cost(name: str, agent: str, players: int) -> Cost:
    """The CPU-seconds a game of `name` costs with `agent` in every seat, from the game's
    presets (measured at their player count, scaled in proportion to the players: each
    plays its own moves): a preset's own agent is measured; a search agent (one with
    iterations) is estimated from the plain search preset's cost per simulation (the preset
    `mcts(iterations=N)` with no other parameter), other search parameters (cutoff, stop,
    ...) left out, so rather an upper bound; another agent costs as the preset of the same
    agent, else as the fast preset.  ValueError for a bad agent string."""
    from core_cy.agents import canonical_agent, parse_agent

    game, table = load(name), presets(name)
    measured_at, entries = table["players"], table["presets"]
    scale = players / measured_at
    at = "" if players == measured_at else f" at {measured_at} players, scaled to {players}"
    own = canonical_agent(game, agent)
    for preset, entry in entries.items():
        if canonical_agent(game, entry["agent"]) == own:
            return Cost(scale / entry["games_per_cpu_second"], not at,
                        f"{'estimate' if at else 'measured'}: the {preset} preset{at}")
    kind, values = parse_agent(game, agent)
    parsed = {p: parse_agent(game, e["agent"]) for p, e in entries.items()}
    if "iterations" in values:
        _, defaults = parse_agent(game, kind)
        plain = [(v["iterations"], p) for p, (k, v) in parsed.items() if k == kind and
                 all(v[key] == defaults[key] for key in v if key != "iterations")]
        if plain:
            iterations, preset = max(plain)
            per_game = values["iterations"] / iterations / entries[preset]["games_per_cpu_second"]
            return Cost(scale * per_game, False, f"estimate: the {preset} preset's cost per "
                        f"simulation x {values['iterations']:,} simulations{at}")
    same = [p for p, (k, _) in parsed.items() if k == kind]
    preset = min(same, key=lambda p: entries[p]["games_per_cpu_second"]) if same else \
        ("strongest" if "iterations" in values else "fast")
    why = "the same agent, other parameters" if same else "this agent is not measured"
    return Cost(scale / entries[preset]["games_per_cpu_second"], False,
                f"estimate: as the {preset} preset ({why}){at}")
